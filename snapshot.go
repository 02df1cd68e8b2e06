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
// Waiting is not fair: a mover waits until it finds no snapshot at all, so
// snapshots that keep overlapping (several goroutines writing snapshots in
// a loop) hold movers back for as long as they go on (an adversarial
// reviewer measured a growing filter's Delete still waiting after 3 s
// beside 8 such goroutines). Letting waiting movers go first (a snapshot
// beginning only when no mover waits) was tried and dropped: with 100
// goroutines relocating on 2 processors, each waiting mover needs a turn
// of the scheduler before it gets in, and TestEncodeSnapshotUnderLoad's 4
// snapshotters took 9 snapshots in 10 s, 22.5 s of their time spent
// waiting for movers (purego, 8-bit LockFree case), where without it they
// took 32 in 0.2 s. Snapshots taken one at a time hold movers back for
// one table copy each.
type snapshotGate struct {
	movers    shardSet[moverShard] // read-only header: the shards are elsewhere
	snapshots atomic.Int32         // snapshots in progress
}

type moverShard struct {
	n atomic.Int32 // relocations in progress in this shard
	_ [60]byte
}

// enterMove waits until no snapshot runs and registers a relocation step (or
// a growing filter's Delete). It returns the shard to pass to exitMove.
func (g *snapshotGate) enterMove() *atomic.Int32 {
	m := &g.movers.mine().n
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
				return m
			}
			m.Add(-1)
		}
		runtime.Gosched()
	}
}

func (g *snapshotGate) exitMove(m *atomic.Int32) { m.Add(-1) }

// beginSnapshot returns once no relocation is in progress; none starts until
// endSnapshot.
func (g *snapshotGate) beginSnapshot() {
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
