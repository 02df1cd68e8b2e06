package cuckoo

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// snapshotGate keeps relocations and snapshots apart. A snapshot (WriteTo,
// MarshalBinary) copies the table bucket by bucket while others write; a
// fingerprint moving from a bucket not yet copied to one already copied
// would be missing. So while a snapshot runs, moves wait (relocation steps,
// a growing filter's deletes and copy chunks); inserts into free slots,
// lookups and the fixed filter's deletes go on.
//
// Exclusion (Dekker). Claim: no move overlaps a snapshot. Proof: a mover adds
// itself to its movers shard, then checks snapshots (tryMove); a snapshot adds
// itself to snapshots, then waits for every shard to drain. With sequentially
// consistent atomics one sees the other; a mover that sees a snapshot withdraws.
//
// Starving. A mover that still finds snapshots after moverPatience counts itself
// in waiting and sleeps until the last snapshot ends; a snapshot that finds
// waiting != 0 joins only once admitted moved (a starving mover got in and
// finished) or none starves. Claim: if a mover starves from time t, then once the
// snapshots running at t have ended, at most one more snapshot per goroutine
// inside beginSnapshot at t begins before some starving mover gets in. Proof: a
// snapshot that read waiting after t joins only after admitted moved. When the
// last of those that read it before t ends, snapshots drops to 0 with movers
// starving; they wake and retry, and no snapshot joins until one got in. □ This
// bounds movers as a whole, not each one (BENCHMARKS.md, "Tuning constants");
// without the admission wait TestMoverGetsInBetweenOverlappingSnapshots hangs.
//
// No lost wake-up. Claim: no sleeper misses its wake. Proof: a sleeper takes
// its channel (signal) before checking its condition, a waker closes the
// current channel (broadcast) after changing what the sleeper checks, and a
// channel is replaced only once closed. A starving mover takes the channel,
// then reads snapshots != 0; the decrement to 0 comes after that read, and
// its snapshot then reads waiting, still counting the mover (it leaves only
// in exitMove), and closes the mover's channel or a later one. A snapshot
// takes its channel, then reads admitted unchanged and waiting != 0; the
// exitMove that changes either broadcasts after it. □
type snapshotGate struct {
	movers        shardSet[moverShard] // read-only header
	snapshots     atomic.Int32         // snapshots in progress
	waiting       atomic.Int32         // starving movers not yet in
	admitted      atomic.Uint32        // starving movers that got in, ever (wraps)
	mu            sync.Mutex           // guards the two channels
	moversWake    chan struct{}        // closed when the last snapshot ends while movers wait
	snapshotsWake chan struct{}        // closed when a waiting mover gets in
}

type moverShard struct {
	n atomic.Int32 // moves in progress
	_ [60]byte
}

// moverPatience is how long a mover retries, yielding, before it starves.
const moverPatience = time.Millisecond

type moveTicket struct {
	m       *atomic.Int32
	starved bool
}

// enterMove returns once a move may run, registered until exitMove.
func (g *snapshotGate) enterMove() moveTicket {
	m := &g.movers.mine().n
	if g.tryMove(m) {
		return moveTicket{m: m}
	}
	for start := time.Now(); time.Since(start) < moverPatience; {
		runtime.Gosched()
		if g.tryMove(m) {
			return moveTicket{m: m}
		}
	}
	g.waiting.Add(1)
	for wake := g.signal(&g.moversWake); !g.tryMove(m); wake = g.signal(&g.moversWake) {
		<-wake
	}
	return moveTicket{m: m, starved: true}
}

// exitMove ends the move. One that starved wakes the snapshots waiting for
// it and yields, so that one runs next here, not after this time slice.
func (g *snapshotGate) exitMove(t moveTicket) {
	t.m.Add(-1)
	if t.starved {
		g.admitted.Add(1)
		g.waiting.Add(-1)
		g.broadcast(&g.snapshotsWake)
		runtime.Gosched()
	}
}

// signal returns the channel that the next broadcast on c closes.
func (g *snapshotGate) signal(c *chan struct{}) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if *c == nil {
		*c = make(chan struct{})
	}
	return *c
}

func (g *snapshotGate) broadcast(c *chan struct{}) {
	g.mu.Lock()
	if *c != nil {
		close(*c)
		*c = nil
	}
	g.mu.Unlock()
}

// tryMove reports whether it registered a move in m: only if no snapshot runs.
func (g *snapshotGate) tryMove(m *atomic.Int32) bool {
	if g.snapshots.Load() != 0 {
		return false
	}
	if raceEnabled {
		runtime.Gosched() // widen the window the second check closes (TestSnapshotGateStress)
	}
	m.Add(1)
	if g.snapshots.Load() == 0 {
		return true
	}
	m.Add(-1)
	return false
}

// beginSnapshot returns once no move runs; none starts until endSnapshot.
func (g *snapshotGate) beginSnapshot() {
	if g.waiting.Load() != 0 {
		a := g.admitted.Load()
		for wake := g.signal(&g.snapshotsWake); g.waiting.Load() != 0 && g.admitted.Load() == a; wake = g.signal(&g.snapshotsWake) {
			<-wake
		}
	}
	g.snapshots.Add(1)
	for i := range g.movers.shards {
		for g.movers.shards[i].n.Load() != 0 {
			runtime.Gosched()
		}
	}
}

func (g *snapshotGate) endSnapshot() {
	if g.snapshots.Add(-1) == 0 && g.waiting.Load() != 0 {
		g.broadcast(&g.moversWake)
	}
}

// snapshotStalls, in race builds, is called by a snapshot's copy after it
// reads word i of owner (*Filter or *growTable): tests write in between.
var snapshotStalls atomic.Pointer[func(owner any, i uint64)]

func snapshotStalled(owner any, i uint64) {
	if h := snapshotStalls.Load(); h != nil {
		(*h)(owner, i)
	}
}
