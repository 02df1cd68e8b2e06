package cuckoo

// Making room in a packed table (packed.go): makeRoom (migrate.go) with
// this file's search: a breadth-first search over the buckets finds a
// shortest path to a slot that may take the fingerprint moving into it,
// and migrate applies the moves backwards, each one atomic (pkMove,
// pkMoveLocked). The only difference is the restricted top slot: a node
// remembers the fingerprint that would move into it, and a path never
// frees slot 3 of an odd bucket for a fingerprint of 64 or more, nor ends
// in it.

const (
	// pkMaxPathLen is the most fingerprints one insert relocates in a
	// packed table.
	pkMaxPathLen = 6
	// pkQueueLen bounds the nodes of a search: both roots and four
	// children per node down to depth pkMaxPathLen-1.
	pkQueueLen = 2 * (1<<(2*pkMaxPathLen) - 1) / 3
	// pkShortQueue is the queue pkDiscover tries first
	// (discoverShortQueue is discover's): 48 nodes hold every bucket
	// within two moves (2 + 8 + 32). A search at the packed layout's load
	// expands about three nodes, and zeroing 128 nodes cost more than a
	// search that outgrows 48 and runs again with the full queue: a fill
	// of 2^20 keys took 5.7M instructions more with 128 and 0.8M more
	// with 64, and 40 did no better (cachegrind, bench/cmd/opcount -bits
	// 8; runs of one build differ by up to 0.1M). A truncated search
	// finds what the full one would, or runs again (pkSearch).
	pkShortQueue = 48
)

// pkNode is a search node: bucket<<32 | incoming fingerprint<<20 |
// depth<<16 | path, the path coded as in migrate.go.
func pkNode(b, fp uint64, depth int, path uint64) uint64 {
	return b<<32 | fp<<20 | uint64(depth)<<16 | path
}

// pkDiscover is discover for the packed layout.
func (f *Filter) pkDiscover(b1, b2, fp uint64) (path uint64, depth int, ok bool) {
	var q [pkShortQueue]uint64
	path, depth, ok, truncated := f.pkSearch(q[:], b1, b2, fp)
	if ok || !truncated {
		return path, depth, ok
	}
	return f.pkDiscoverDeep(b1, b2, fp)
}

//go:noinline
func (f *Filter) pkDiscoverDeep(b1, b2, fp uint64) (path uint64, depth int, ok bool) {
	var q [pkQueueLen]uint64
	path, depth, ok, _ = f.pkSearch(q[:], b1, b2, fp)
	return path, depth, ok
}

// pkSearch is search (migrate.go) for the packed layout, fp being the
// fingerprint to insert. A search whose queue q fills up (truncated) still
// expands, in the same order, every node it queued, so a path it finds is
// the one a search with a larger queue would find first; one that finds
// none is run again with the full queue (pkDiscover).
//
// A node's four children are computed and their words read in straight
// code, not in loops over the slots, with the table's words and m in
// locals: with the loops (which kept every value in memory) and t.words
// loaded again for every read, a fill of 2^20 keys took 19.5M more
// instructions, 18.6 per insert (cachegrind, bench/cmd/opcount -bits 8).
// The locals are taken afresh for each node: held across the whole
// search, they kept two registers that the loop over the children then
// restored on every round (2.9M instructions more in that fill).
func (f *Filter) pkSearch(q []uint64, b1, b2, fp uint64) (path uint64, depth int, ok, truncated bool) {
	t := &f.t
	n := 0
	for i, b := range [2]uint64{b1, b2} {
		if i == 1 && b2 == b1 {
			break
		}
		w := t.words[b>>1].Load()
		if w&tagMask != 0 {
			w = t.load(b >> 1) // as below
		}
		if pkFree(pkHalf(w, b), b, fp) != 0 {
			return uint64(i), 0, true, false
		}
		q[n] = pkNode(b, fp, 0, uint64(i))
		n++
	}
	for h := 0; h < n; h++ {
		x := q[h]
		b, in, d, p := x>>32, x>>20&0xff, int(x>>16&0xf), x&0xffff
		words, m := t.words, f.m
		w := words[b>>1].Load()
		if w&tagMask != 0 {
			// load is not inlined: called only where needed (through
			// it on every node, a fill of 2^20 keys took 9 more
			// instructions per insert; cachegrind, bench/cmd/opcount
			// -bits 8)
			w = t.load(b >> 1)
		}
		hb := pkHalf(w, b)
		if pkFree(hb, b, in) != 0 {
			return p, d, true, false // room since it was tested
		}
		cf := [packedSlots]uint64{hb & 0xff, hb >> 8 & 0xff, hb >> 16 & 0xff, hb >> 24}
		cb := [packedSlots]uint64{altBucket(b, cf[0], m), altBucket(b, cf[1], m), altBucket(b, cf[2], m), altBucket(b, cf[3], m)}
		cw := [packedSlots]uint64{words[cb[0]>>1].Load(), words[cb[1]>>1].Load(), words[cb[2]>>1].Load(), words[cb[3]>>1].Load()}
		sh := 1 + bfsSlotBits*uint64(d)
		for s := range packedSlots {
			if cb[s] == b || cf[s] == 0 {
				continue // cannot move, or an empty slot in may not take
			}
			if s == packedSlots-1 && b&1 != 0 && in >= pkTopLimit {
				continue // freeing this slot does not make room for in
			}
			cp := p | uint64(s)<<sh
			wc := cw[s]
			if wc&tagMask != 0 {
				wc = t.load(cb[s] >> 1)
			}
			if pkFree(pkHalf(wc, cb[s]), cb[s], cf[s]) != 0 {
				return cp, d + 1, true, false
			}
			if d+1 == pkMaxPathLen {
				continue
			}
			if n >= len(q) {
				truncated = true
				continue
			}
			q[n] = pkNode(cb[s], cf[s], d+1, cp)
			n++
		}
	}
	return 0, 0, false, truncated
}
