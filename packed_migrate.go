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
)

// pkNode is a search node: bucket<<32 | incoming fingerprint<<20 |
// depth<<16 | path, the path coded as in migrate.go.
func pkNode(b, fp uint64, depth int, path uint64) uint64 {
	return b<<32 | fp<<20 | uint64(depth)<<16 | path
}

// pkDiscover is discover for the packed layout.
func (f *Filter) pkDiscover(b1, b2, fp uint64) (path uint64, depth int, ok bool) {
	var q [bfsShortQueue]uint64
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
// fingerprint to insert.
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
		w := t.words[b>>1].Load()
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
		var cb, cw, cf [packedSlots]uint64
		for s := range packedSlots {
			cf[s] = hb >> (8 * s) & 0xff
			cb[s] = f.alt(b, cf[s])
		}
		for s := range packedSlots {
			cw[s] = t.words[cb[s]>>1].Load()
		}
		for s := range packedSlots {
			if cb[s] == b || cf[s] == 0 {
				continue // cannot move, or an empty slot in may not take
			}
			if s == packedSlots-1 && b&1 != 0 && in >= pkTopLimit {
				continue // freeing this slot does not make room for in
			}
			cp := p | uint64(s)<<(1+bfsSlotBits*d)
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
			if n == len(q) {
				truncated = true
				continue
			}
			q[n] = pkNode(cb[s], cf[s], d+1, cp)
			n++
		}
	}
	return 0, 0, false, truncated
}
