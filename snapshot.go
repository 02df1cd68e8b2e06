package cuckoo

import (
	"runtime"
	"sync/atomic"
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
// Turns. A mover that had to wait counts itself in waiting until it gets
// in, and a snapshot starts only when no mover waits. Otherwise snapshots
// that kept overlapping (several goroutines writing snapshots in a loop)
// would keep snapshots above zero and hold a mover back for as long as
// they went on. Claim: a mover waits only for the snapshots that passed
// their waiting check before it counted itself. Proof: once a waiting
// mover M has counted itself, no snapshot passes its check until M, and
// every other waiting mover, got in; the snapshots that passed it before
// end at memory speed, snapshots then drops to 0 and M's next look gets
// it in. waiting is a hint for the order only: mutual exclusion rests on
// the two announcements above, which it does not touch.
// TestSnapshotGateTakesTurns fails without the snapshot's wait for
// waiting movers.
//
// What snapshots pay: a snapshot waits while any mover waits, and a mover
// waits only while another snapshot is admitted, so with one goroutine
// taking snapshots it waits at most for the movers that met the previous
// one. With several, the order among snapshots is not first come, first
// served: a snapshot that yields while waiting movers get in can find
// that a later snapshot was admitted meanwhile, and new movers waiting
// behind that one. A reviewer's gate-only test (8 snapshotting and 32
// moving goroutines on 2 processors, one run) saw the longest snapshot
// wait go from about 0.12 s to 0.35 s, and the longest mover wait from
// about 2 s to 70 µs.
type snapshotGate struct {
	movers    shardSet[moverShard] // read-only header: the shards are elsewhere
	snapshots atomic.Int32         // snapshots in progress
	waiting   atomic.Int32         // movers that met a snapshot and wait for their turn
}

type moverShard struct {
	n atomic.Int32 // relocations in progress in this shard
	_ [60]byte
}

// enterMove waits until no snapshot runs and registers a relocation step (or
// a growing filter's Delete). It returns the shard to pass to exitMove.
func (g *snapshotGate) enterMove() *atomic.Int32 {
	m := &g.movers.mine().n
	waited := false
	for {
		if g.snapshots.Load() == 0 {
			if raceEnabled {
				// Race builds only: widen the window between the
				// first check and the announcement, which the second
				// check closes, so that TestSnapshotGateStress
				// catches a gate without that check in every race run
				// (about one in four without this yield). Compiled
				// out of other builds.
				runtime.Gosched()
			}
			m.Add(1)
			if g.snapshots.Load() == 0 {
				if waited {
					g.waiting.Add(-1)
				}
				return m
			}
			m.Add(-1)
		}
		if !waited {
			waited = true
			g.waiting.Add(1) // snapshots not yet begun wait for this mover
		}
		runtime.Gosched()
	}
}

func (g *snapshotGate) exitMove(m *atomic.Int32) { m.Add(-1) }

// beginSnapshot returns once no relocation is in progress; none starts until
// endSnapshot. Movers that were waiting for an earlier snapshot get in
// first ("Turns" above).
func (g *snapshotGate) beginSnapshot() {
	for g.waiting.Load() != 0 {
		runtime.Gosched()
	}
	g.snapshots.Add(1)
	for i := range g.movers.shards {
		for g.movers.shards[i].n.Load() != 0 {
			runtime.Gosched()
		}
	}
}

func (g *snapshotGate) endSnapshot() { g.snapshots.Add(-1) }

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
