package cuckoo

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// snapshotGate keeps relocations and snapshots apart. A snapshot (WriteTo,
// MarshalBinary) reads the table bucket by bucket while other goroutines keep
// inserting and deleting; a fingerprint moving from a bucket not yet written
// to one already written would be missing from it. So while a snapshot runs,
// relocations wait, and so do a growing filter's deletes (grow_table.go);
// inserts into free slots, lookups and the fixed filter's deletes go on.
//
// The protocol is Dekker's: a mover announces itself in a movers shard and
// then checks snapshots; a snapshot announces itself in snapshots and then
// waits for every movers shard to drain. With sequentially consistent
// atomics at least one of them sees the other, so a move and a snapshot
// never overlap. A mover that sees a snapshot withdraws and yields until it
// ends. Movers count in the shard of their goroutine's stack (shard.go), so
// that two cores relocating at once do not pass one counter's cache line
// back and forth twice per move.
//
// Snapshots cannot shut movers out. A mover that finds a snapshot running
// retries, yielding; once it has done so for moverPatience, it starves: it counts itself in waiting and
// sleeps until the last snapshot ends (endSnapshot wakes the starving
// movers when snapshots drops to 0), then retries. A snapshot that finds
// a mover starving does not join the snapshots in progress: it sleeps
// until a starving mover has got in and finished its move (admitted moved;
// that mover wakes the sleeping snapshots in exitMove) or none starves,
// and only then adds itself to snapshots.
//
// Claim (movers are not shut out): if a mover starves from time t, then
// once the snapshots in progress at t have ended, at most one more
// snapshot per goroutine inside beginSnapshot at t can begin before some
// starving mover gets in. Proof. A snapshot adds itself to snapshots only
// after it read waiting. One that read it after t, while movers starve,
// adds itself only after it saw admitted move, which a starving mover does
// after it got in, so after t. Only the snapshots that read waiting
// before t, at most one per goroutine then inside beginSnapshot, can add
// themselves without that. When the last of those ends, snapshots drops to
// 0 with movers starving, the starving movers wake and retry, and no
// snapshot can add itself until one of them got in (a straggler of the
// bounded set above can, and the argument repeats when it ends). □
// Without the admission wait, TestMoverGetsInBetweenOverlappingSnapshots
// (every build), TestRelocationsGetInBetweenOverlappingSnapshots and
// TestGrowingDeletesGetInBetweenOverlappingSnapshots (race builds) hang.
//
// This bounds the progress of movers as a whole, not of each one: which
// starving mover gets in first is the scheduler's choice, and each
// admission lets the snapshots that waited for it begin, so one mover can
// lose several rounds (BENCHMARKS.md, "Tuning constants").
//
// No lost wake-up. Each sleeper takes the channel it sleeps on (signal)
// before it checks its condition, and a waker closes the channel current
// when it wakes (broadcast) after it changed what the sleeper checks; a
// channel is replaced only after it was closed. A starving mover takes the
// channel, then reads snapshots != 0 (in tryMove); the decrement that later
// brings snapshots to 0 comes after that read, and the snapshot that made
// it reads waiting after it, sees the mover still counted (a mover leaves
// waiting only in exitMove), and closes the current channel: the mover's,
// or a later one made after the mover's was closed. A snapshot takes its
// channel, then reads admitted unchanged and waiting != 0; the exitMove
// that changes either comes after those reads and broadcasts after it.
// With sequentially consistent atomics these orders hold. □
//
// The price. A snapshot that meets starving movers waits until one of
// them has been scheduled and moved, which with far more goroutines than
// processors can be a turn of the scheduler. Snapshots taken now and then
// do not meet starving movers (movers starve only while snapshots keep
// coming) and pay nothing; back-to-back snapshots beside relocating
// goroutines are fewer than if movers could be shut out (BENCHMARKS.md,
// "Tuning constants"). Making a snapshot wait until no mover waits at all
// would starve snapshots instead. The starving mover yields in exitMove so
// that the snapshot it woke runs next on its processor rather than after
// the rest of its time slice.
type snapshotGate struct {
	movers        shardSet[moverShard] // read-only header: the shards are elsewhere
	snapshots     atomic.Int32         // snapshots in progress
	waiting       atomic.Int32         // starving movers not yet in
	admitted      atomic.Uint32        // starving movers that got in, ever (wraps)
	mu            sync.Mutex           // guards the two channels
	moversWake    chan struct{}        // closed when the last snapshot ends while movers wait
	snapshotsWake chan struct{}        // closed when a waiting mover gets in
}

type moverShard struct {
	n atomic.Int32 // relocations in progress in this shard
	_ [60]byte
}

// moveTicket is what enterMove returns and exitMove takes: the movers
// shard the move counts in, and whether the mover starved on its way in.
type moveTicket struct {
	m       *atomic.Int32
	starved bool
}

// enterMove waits until no snapshot runs and registers a relocation step (or
// a growing filter's Delete, or a chunk of its copy). Pass what it returns
// to exitMove.
func (g *snapshotGate) enterMove() moveTicket {
	m := &g.movers.mine().n
	if g.tryMove(m) {
		return moveTicket{m: m}
	}
	start := time.Now()
	for time.Since(start) < moverPatience {
		runtime.Gosched()
		if g.tryMove(m) {
			return moveTicket{m: m}
		}
	}
	// Starving: count in waiting, so that new snapshots let a starving
	// mover in first, and sleep until the snapshots end.
	g.waiting.Add(1)
	for {
		wake := g.signal(&g.moversWake)
		if g.tryMove(m) {
			return moveTicket{m: m, starved: true}
		}
		<-wake
	}
}

// exitMove ends the move that t registered. A mover that starved then
// counts itself admitted, leaves waiting, wakes the snapshots that wait for
// that and yields to them: a woken snapshot runs next on this processor
// instead of after the rest of this goroutine's time slice.
func (g *snapshotGate) exitMove(t moveTicket) {
	t.m.Add(-1)
	if t.starved {
		g.admitted.Add(1)
		g.waiting.Add(-1)
		g.broadcast(&g.snapshotsWake)
		runtime.Gosched()
	}
}

// signal returns the channel *c, made if there is none, that the next
// broadcast on c closes. Take it before checking the condition it
// signals, so that no broadcast is lost between the check and the wait.
func (g *snapshotGate) signal(c *chan struct{}) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if *c == nil {
		*c = make(chan struct{})
	}
	return *c
}

// broadcast wakes every goroutine waiting on the channel *c.
func (g *snapshotGate) broadcast(c *chan struct{}) {
	g.mu.Lock()
	if *c != nil {
		close(*c)
		*c = nil
	}
	g.mu.Unlock()
}

// tryMove registers a relocation in m and reports true if no snapshot runs,
// and registers nothing otherwise: Dekker's announce-then-check.
func (g *snapshotGate) tryMove(m *atomic.Int32) bool {
	if g.snapshots.Load() != 0 {
		return false
	}
	if raceEnabled {
		// Race builds only: widen the window between the first check
		// and the announcement, which the second check closes, so that
		// TestSnapshotGateStress catches a gate without that check in
		// every race run. Compiled out of other builds.
		runtime.Gosched()
	}
	m.Add(1)
	if g.snapshots.Load() == 0 {
		return true
	}
	m.Add(-1)
	return false
}

// beginSnapshot returns once no relocation is in progress; none starts until
// endSnapshot.
func (g *snapshotGate) beginSnapshot() {
	if g.waiting.Load() != 0 {
		// Movers starve: let one of them in first (the claim above).
		a := g.admitted.Load()
		for {
			wake := g.signal(&g.snapshotsWake)
			if g.waiting.Load() == 0 || g.admitted.Load() != a {
				break
			}
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

// snapshotStalls, in race builds only, is called by every snapshot's copy
// of a table (appendTable, copyTable, and the growing filter's capture)
// after it reads word i, with the table's owner (the *Filter, or the
// *growTable of a growing filter's shard): tests set it to write while a
// snapshot is stalled between its reads (TestSnapshotAgainstCollidingKeys).
// It must act only on its own table, since other tests' snapshots call it
// too. In other builds the calls are compiled out.
var snapshotStalls atomic.Pointer[func(owner any, i uint64)]

// snapshotStalled calls snapshotStalls, if set.
func snapshotStalled(owner any, i uint64) {
	if h := snapshotStalls.Load(); h != nil {
		(*h)(owner, i)
	}
}

// moverPatience is how long a mover retries before it starves: counts
// itself in waiting, so that new snapshots let a starving mover in first,
// and sleeps until the snapshots end.
const moverPatience = time.Millisecond
