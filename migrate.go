package cuckoo

//go:generate go run gen_variants.go

// Making room for an insert whose two buckets are full (both modes), as in
// Algorithm 3 of the lock-free cuckoo filter paper: discovery, a BFS over
// "a fingerprint in b can move to its other bucket" that changes nothing and
// stops at the first bucket with room (a shortest path), then migration: the
// path replayed (buckets recomputed from the fingerprints), its moves applied
// backwards, from the free slot to the candidate bucket. Each move is one
// atomic step bumping the counters (packed: dst's version), so every
// fingerprint stays findable; a step that no longer applies changes nothing,
// and the path is discovered anew (search, relocate and move.go.tmpl).
//
// The paper sets the destination counter to max(src, dst)+1, sound only
// unbounded. Ours wrap, and the lookup compares each bucket only with itself
// (twophase.go), for which +1 on both is what the argument needs; a max() of
// wrapped counters could jump one by up to 2^c-1, defeating the wrap bound.

const (
	// maxPathLen is the most fingerprints one insert relocates: depth 5
	// reaches the 95% load four-slot tables are sized for (libcuckoo's
	// bound; first-failure loads are in the tests).
	maxPathLen = 5
	// bfsQueueLen bounds discovery's nodes: both roots and maxSlots children
	// per node down to depth maxPathLen-1 (deeper only tested).
	bfsQueueLen  = 2 * (maxSlotsPow5 - 1) / (maxSlots - 1)
	maxSlotsPow5 = maxSlots * maxSlots * maxSlots * maxSlots * maxSlots
	// bfsSlotBits is the bits of one move's slot in a path code (bit 0
	// the start bucket, then a slot per move).
	bfsSlotBits = 3
	// The queues searches try first, as Go zeroes local arrays per call and
	// most end after a few buckets (lengths and pkShortQueue: BENCHMARKS.md,
	// "Tuning constants"): the growing filter's, every path of up to two
	// moves and most of three (a table that can grow searches no further);
	// discover's, every search ending within two moves (2+10 buckets).
	bfsShortQueue      = 34
	discoverShortQueue = 32
)

// A BFS node is bucket<<32 | in<<20 | depth<<16 | path (16 bits at most); in:
// the fingerprint moving in (12 bits) where room depends on it (packed), else 0.
func bfsNode(b, in uint64, depth int, path uint64) uint64 {
	return b<<32 | in<<20 | uint64(depth)<<16 | path
}

// makeRoom frees a slot in b1 or b2 that may take fp by relocating
// fingerprints (relocate.go.tmpl). It returns false if discovery finds no
// path or maxRoomRounds paths in a row went stale. True reserves nothing:
// the caller adds again, and a concurrent insert may take the slot first.
func (f *Filter) makeRoom(b1, b2, fp uint64) bool {
	if f.lay.packed {
		return f.pkRelocate(b1, b2, fp)
	}
	return f.relocate(b1, b2)
}

// move relocates fp from slot s of src to dst in one step (move.go.tmpl),
// false if the step no longer applies. The caller holds the snapshot gate;
// *my is its descriptor lease, leased by the first step that needs one.
func (f *Filter) move(src uint64, s int, fp uint64, dst uint64, my **descLease) bool {
	switch { // inline, pkDirect: LockFree not packed, packed (adopt)
	case src == dst:
		return false
	case f.inline:
		return f.moveLockFree(src, s, fp, dst, my)
	case f.pkDirect:
		return f.pkMoveLockFree(src, s, fp, dst, my)
	case f.lay.packed:
		return f.pkMoveLocked(src, s, fp, dst)
	}
	return f.moveLocked(src, s, fp, dst)
}

// maxRoomRounds bounds an insert's rounds of makeRoom then buckets full
// again, and makeRoom's stale paths: each means concurrent writers changed
// the table first (near full, a few can undo each other's room without end).
// The insert then returns ErrFull, having only moved fingerprints in pairs.
const maxRoomRounds = 1024

// Test hooks, called in race builds only: roomMadeHook after makeRoom freed
// a slot, before the insert adds again (tests take the slot, as a concurrent
// writer would); pathReplayedHook when makeRoom replayed a path of at least
// one move, with its first move's bucket, slot and fingerprint, before the
// moves (tests change the path).
var (
	roomMadeHook     func(f *Filter, b1, b2 uint64)
	pathReplayedHook func(f *Filter, b uint64, s int, fp uint64)
)

func roomMade(f *Filter, b1, b2 uint64) {
	if raceEnabled && roomMadeHook != nil {
		roomMadeHook(f, b1, b2)
	}
}

func pathReplayed(f *Filter, b uint64, s int, fp uint64) {
	if raceEnabled && pathReplayedHook != nil {
		pathReplayedHook(f, b, s, fp)
	}
}
