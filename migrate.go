package cuckoo

//go:generate go run gen_variants.go

// Making room for an insert whose two buckets are full (both modes).
//
// Path discovery and migration are kept apart, as in Algorithm 3 of the
// lock-free cuckoo filter paper. Discovery is a breadth-first search from
// both candidate buckets over the graph "a fingerprint in bucket b can move to
// its other bucket", reading buckets without modifying anything. It stops at
// the first bucket with an empty slot, so the path it finds is a shortest
// one. A path is stored in one integer: bit 0 says which candidate bucket it
// starts from, then bfsSlotBits bits per step give the slot whose
// fingerprint moves.
// The buckets along it are recomputed from the fingerprints when the path is
// replayed.
//
// Migration then walks the path backwards: first the last fingerprint moves
// into the empty slot at the end, which frees the slot the one before it
// moves into, and so on, until a slot in the candidate bucket is free. Each
// step is one atomic move of one fingerprint (a K-CAS of the two bucket words
// in LockFree mode, the two stripes' locks in Locked mode) that also adds one
// to both buckets' migration counters (in the packed layout, to the
// destination bucket's version word, packed.go). Because every step only moves a
// fingerprint from one of its buckets to the other, every fingerprint stays
// findable at every instant, and a step that fails to validate (the
// fingerprint is gone or the destination filled up meanwhile) leaves the
// filter consistent: the path is then discovered anew. When no path exists,
// Insert returns ErrFull and nothing has been lost.
//
// Discovery and the step are each written once, in search.go.tmpl and
// move.go.tmpl, and generated per word codec by gen_variants.go
// (ARCHITECTURE.md): discover, discoverDeep, search, moveLockFree and
// moveLocked in zz_search_word.go and zz_move_word.go, their pk-prefixed
// twins in zz_search_packed.go and zz_move_packed.go.
//
// The paper sets the destination counter to max(src, dst)+1, for a
// cross-bucket comparison in its lookup that is only sound with unbounded
// counters. Our counters are 14 bits wide at f=12 (2 at f=15); the lookup
// compares each bucket only with itself (twophase.go), for which +1 on both
// is what the argument needs, and a max() of wrapped counters could jump a
// counter by up to 2^c-1 in one step, defeating the wrap bound.

const (
	// maxPathLen is the most fingerprints one insert relocates. With
	// four-slot buckets a breadth-first search to depth 5 reaches the 95%
	// load factor the filter is sized for (libcuckoo uses the same bound);
	// measured first-failure load factors are in the tests.
	maxPathLen = 5
	// bfsQueueLen bounds the nodes discovery queues: both roots and up to
	// maxSlots children per node, down to depth maxPathLen-1 (2·(5^5-1)/4
	// nodes). Nodes at depth maxPathLen are only tested, when their parent
	// is expanded.
	bfsQueueLen = 2 * (maxSlotsPow5 - 1) / (maxSlots - 1)
	// maxSlotsPow5 is maxSlots^maxPathLen.
	maxSlotsPow5 = maxSlots * maxSlots * maxSlots * maxSlots * maxSlots
	// bfsSlotBits is the bits of one move's slot in a path code.
	bfsSlotBits = 3
	// bfsShortQueue is the queue the Growing filter's discovery tries
	// first (grow_table.go; discover's is discoverShortQueue, pkDiscover's
	// pkShortQueue). Go zeroes a local array on every call, and at 95%
	// load a search typically ends after a handful of buckets, so zeroing
	// the full queue for every search would cost more than the search.
	// 128 nodes hold every bucket within two moves and most within three;
	// only a search that outgrows them runs again with the full queue
	// (BENCHMARKS.md, "Tuning constants", for this length and the two
	// others).
	bfsShortQueue = 128
	// discoverShortQueue is the queue discover tries first: 64 nodes
	// hold every bucket within two moves (2 + 10 + 50 with five slots). A
	// search that outgrows the queue expands the nodes it queued in the
	// same order, so it finds what a longer queue finds first, or runs
	// again.
	discoverShortQueue = 64
)

// A BFS node is bucket<<32 | in<<20 | depth<<16 | path: path holds the
// start bit and bfsSlotBits bits of slot per move (at most 16 bits); in is
// the fingerprint that would move into the bucket (at most 12 bits), for
// the codecs whose room depends on it (the packed one), else 0.
func bfsNode(b uint64, depth int, path uint64) uint64 {
	return b<<32 | uint64(depth)<<16 | path
}

// bfsNodeIn is bfsNode with the incoming fingerprint in.
func bfsNodeIn(b, in uint64, depth int, path uint64) uint64 {
	return b<<32 | in<<20 | uint64(depth)<<16 | path
}

// makeRoom frees a slot in b1 or b2 that may take fp by relocating
// fingerprints (in the one-bucket-per-word layouts any free slot takes
// any fingerprint; in the packed layout, packed_migrate.go, slot 3 of an
// odd bucket takes only fingerprints below 64). It returns false if
// discovery finds no path (the filter is full around these buckets) or
// if maxRoomRounds paths in a row went stale before their moves applied. A
// true result does not reserve the slot; the caller retries its insert,
// and a concurrent insert may take the slot first.
func (f *Filter) makeRoom(b1, b2, fp uint64) bool {
	// Sized for the longest path of any layout (the packed layout's).
	var buckets [pkMaxPathLen + 1]uint64
	var slots [pkMaxPathLen]int
	var fps [pkMaxPathLen]uint64
retry:
	for tries := 0; tries < maxRoomRounds; tries++ {
		var path uint64
		var depth int
		var ok bool
		if f.lay.packed {
			path, depth, ok = f.pkDiscover(b1, b2, fp)
		} else {
			path, depth, ok = f.discover(b1, b2)
		}
		if !ok {
			return false
		}
		// Replay the path: recompute its buckets from the fingerprints now
		// in the slots it names. Concurrent changes may make it stale;
		// each move below re-validates.
		buckets[0] = b1
		if path&1 != 0 {
			buckets[0] = b2
		}
		for k := 0; k < depth; k++ {
			s := int(path >> (1 + bfsSlotBits*k) & (1<<bfsSlotBits - 1))
			fp := f.slotAt(buckets[k], s)
			if fp == 0 {
				// The slot emptied meanwhile: a shorter path.
				depth = k
				break
			}
			slots[k], fps[k] = s, fp
			buckets[k+1] = f.alt(buckets[k], fp)
		}
		if depth > 0 {
			pathReplayed(f, buckets[0], slots[0], fps[0])
		}
		if !f.migrate(buckets[:], slots[:], fps[:], depth) {
			continue retry
		}
		return true
	}
	return false // every path found went stale first: see maxRoomRounds
}

// slotAt returns the fingerprint in slot s of bucket b, from the logical
// value of its word (0 when empty), in either kind of layout.
func (f *Filter) slotAt(b uint64, s int) uint64 {
	if f.lay.packed {
		return f.t.loadWord(b>>1) >> (pkShift(b) + uint64(s)*8) & 0xff
	}
	return f.lay.slot(f.t.loadWord(b), s)
}

// migrate applies the moves of a replayed path backwards, from the free slot
// at its end to the candidate bucket, and reports whether all of them
// applied. The whole path runs under one entry of the snapshot gate and one
// descriptor lease: a relocation touches the gate's and the lease cache's
// lines once per path, not once per move.
//
// buckets holds depth+1 buckets, slots and fps depth entries.
func (f *Filter) migrate(buckets []uint64, slots []int, fps []uint64, depth int) bool {
	if depth == 0 {
		return true
	}
	defer f.gate.exitMove(f.gate.enterMove())
	var my *descLease // leased by the first move, released after the last
	ok := true
	for k := depth - 1; k >= 0; k-- {
		if !f.move(buckets[k], slots[k], fps[k], buckets[k+1], &my) {
			ok = false
			break
		}
		f.stats.add(statRelocations, 1)
	}
	if my != nil {
		my.release()
	}
	return ok
}

// move relocates fp from slot s of bucket src to a slot of dst that may
// take it, adding one to both migration counters (the packed layout: to
// dst's version), in one atomic step: the codec's and mode's step of
// move.go.tmpl. It reports false if the step no longer applies (fp left
// that slot, or dst has no room). The caller holds the snapshot gate; in
// LockFree mode *my is the caller's descriptor lease, or nil until a step
// needs one (the step leases it then, and migrate releases it after the
// path).
//
// LockFree mode moves with one K-CAS of the bucket words (and of the
// epoch of a wrapping counter's stripe, twophase.go "Counter wraps", or of
// dst's version): fp leaves src and enters dst at one instant, so no
// operation can see a half-done move (twophase.go, "Moves are atomic",
// says what each operation relies on). Locked mode stores the destination
// first, under both stripes' locks (locked.go, packed_locked.go).
func (f *Filter) move(src uint64, s int, fp uint64, dst uint64, my **descLease) bool {
	if src == dst {
		return false
	}
	if f.lay.packed {
		if f.mode == Locked {
			return f.pkMoveLocked(src, s, fp, dst)
		}
		return f.pkMoveLockFree(src, s, fp, dst, my)
	}
	if f.mode == Locked {
		return f.moveLocked(src, s, fp, dst)
	}
	return f.moveLockFree(src, s, fp, dst, my)
}

// maxRoomRounds bounds the rounds of an insert that frees a slot with
// makeRoom and then finds its buckets full again, and makeRoom's own
// searches whose path went stale before its moves applied: each such round
// means that concurrent writers (their inserts, or their relocations along
// paths of their own) changed the table first. Near full, a few writers
// can keep undoing each other's room without end: four writers churning a
// Locked filter at 1.03 times its capacity on one P (GOMAXPROCS=1, no
// hardware transactions) kept relocating for minutes with no insert
// returning. After this many rounds in a row the insert returns ErrFull,
// having changed nothing but the places of fingerprints within their
// pairs. A round is lost only to a concurrent change of the same buckets
// or path, so an insert that is not contending near full load stops long
// before the bound.
const maxRoomRounds = 1024

// roomMadeHook, in race builds only, is called after makeRoom freed a slot
// for an insert, before the insert tries its buckets again; tests set it
// to take the slot, as a concurrent writer would.
var roomMadeHook func(f *Filter, b1, b2 uint64)

// pathReplayedHook, in race builds only, is called when makeRoom has
// replayed a path of at least one move, before it applies the moves; b, s
// and fp are the first move's bucket, slot and fingerprint. Tests set it
// to change the path, as a concurrent writer would.
var pathReplayedHook func(f *Filter, b uint64, s int, fp uint64)

// roomMade and pathReplayed call the hooks; other builds compile them out.
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
