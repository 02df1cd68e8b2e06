package cuckoo

import "github.com/cespare/xxhash/v2"

// A batch hashes batchGroup keys before it reads any bucket, so that the
// group's independent cache misses are in flight at once.
const batchGroup = 16

// group holds raw hashes in b1 until place replaces them with placed keys
// and, for a lookup, first reads of their words and, before them, of b1's
// wrap epoch (or packed version).
type group struct{ b1, b2, fp, w1, w2, e [batchGroup]uint64 }

// batchKeys is a batch's keys: keys, strs or hashes hs, the first not nil.
type batchKeys struct {
	keys [][]byte
	strs []string
	hs   []uint64
}

// hashGroup stores in h the raw hashes of keys [base, end) of b: a call of
// its own, returning nothing, so that few values live across hash calls
// (BENCHMARKS.md, "Tuning constants").
//
//go:noinline
func (b *batchKeys) hashGroup(h *[batchGroup]uint64, base, end int) {
	switch {
	case b.keys != nil:
		keys := b.keys[base:end]
		hh := h[:len(keys)]
		for j, k := range keys {
			var x uint64 // stored once: per-case stores reloaded hash8's constants
			switch {     // as Lookup
			case len(k) == 8:
				x = hash8(k)
			case len(k) == 16:
				x = hash16(k)
			case len(k) < 32:
				x = sum64Short(k)
			default:
				x = xxhash.Sum64(k)
			}
			hh[j] = x
		}
	case b.strs != nil:
		strs := b.strs[base:end]
		hh := h[:len(strs)]
		for j, k := range strs {
			hh[j] = xxhash.Sum64String(k)
		}
	default:
		copy(h[:], b.hs[base:end])
	}
}

// keyParams returns (seed, mul) for place's keying (h^seed)*mul: algorithm 2's
// or seed 0's (unkeyed: mul = 1), or 0, 1 after keying h in place by algorithm 1.
func (f *Filter) keyParams(h []uint64) (seed, mul uint64) {
	if !f.fmix || f.seed == 0 {
		return f.seed, f.mul
	}
	for j := range h {
		h[j] = mix64(h[j] ^ f.seed)
	}
	return 0, 1
}

func (f *Filter) placeGroup(b *batchKeys, g *group, base, end int) {
	b.hashGroup(&g.b1, base, end)
	seed, mul := f.keyParams(g.b1[:end-base])
	g.place(end-base, f.m, f.fpRange, seed, mul)
}

// place keys (keyParams) and places the first n hashes in g.b1, in search
// order. Not inlined: inlined, the loop spilled f and m for every key.
//
//go:noinline
func (g *group) place(n int, m, fpRange, seed, mul uint64) {
	h := g.b1[:n]
	for j := range h {
		b1, fp, b2 := place((h[j]^seed)*mul, m, fpRange)
		g.b1[j], g.b2[j] = searchPair(b1, b2)
		g.fp[j] = fp
	}
}

// placeForInsert hashes keys [base, end) of b, places them in g (b1 and b2
// as place gives them) and prefetches, for writing, their words (b>>shift).
func (f *Filter) placeForInsert(b *batchKeys, g *group, base, end int, shift uint64) {
	b.hashGroup(&g.b1, base, end)
	h := g.b1[:end-base]
	seed, mul := f.keyParams(h)
	m, fpRange := f.m, f.fpRange
	for j := range h {
		g.b1[j], g.fp[j], g.b2[j] = place((h[j]^seed)*mul, m, fpRange)
	}
	prefetchForWrite(f.t.words, &g.b1, &g.b2, len(h), shift)
}

// LookupBatch stores Lookup(keys[i]) in found[i] for every i below n =
// min(len(keys), len(found)) and returns n. Issuing a group's bucket loads
// together, it beats a loop of Lookups on tables larger than the caches.
func (f *Filter) LookupBatch(keys [][]byte, found []bool) (n int) {
	return f.lookupBatch(&batchKeys{keys: keys}, found[:min(len(keys), len(found))])
}

// lookupBatch is LookupBatch for the first len(found) keys of b.
func (f *Filter) lookupBatch(b *batchKeys, found []bool) int {
	n := len(found)
	if f.m == 0 {
		clear(found)
		return n
	}
	if n > batchGroup && len(f.t.words) >= batchPrefetchWords {
		return f.lookupBatchPrefetched(b, found)
	}
	var g group
	for base := 0; base < n; base += batchGroup {
		end := min(base+batchGroup, n)
		f.placeGroup(b, &g, base, end)
		f.lookupGroup(&g, found[base:end])
	}
	return n
}

// batchPrefetchWords: from this many table words on, a LookupBatch or
// InsertBatch of more than one group prefetches the next; below, the table's
// lines mostly come from the last-level cache, whose short misses do not repay
// prefetching (BENCHMARKS.md, "Tuning constants"). A variable for tests.
var batchPrefetchWords = 1 << 21

// lookupBatchPrefetched is lookupBatch placing the next group and prefetching
// its words before answering this one, so its misses overlap this group's work.
func (f *Filter) lookupBatchPrefetched(b *batchKeys, found []bool) int {
	n := len(found)
	shift := f.lay.wordShift()
	var gs [2]group
	f.placeGroup(b, &gs[0], 0, batchGroup)
	for base, i := 0, 0; base < n; base, i = base+batchGroup, i^1 {
		if next := base + batchGroup; next < n {
			g, end := &gs[i^1], min(next+batchGroup, n)
			f.placeGroup(b, g, next, end)
			prefetchReadPairs(&f.t.words[0], &g.b1[0], &g.b2[0], end-next, shift)
		}
		f.lookupGroup(&gs[i], found[base:min(base+batchGroup, n)])
	}
	return n
}

// lookupGroup answers a placed group's first len(found) keys as Lookup does: it
// reads each key's epoch, then its buckets, loads back to back, then decides.
func (f *Filter) lookupGroup(g *group, found []bool) {
	if f.lay.packed {
		f.pkLookupGroup(g, found)
		return
	}
	found = found[:min(len(found), batchGroup)] // no bounds checks on j below
	t := &f.t
	words, eps := t.words, t.versIndex()
	for j := range found {
		b1 := g.b1[j]
		g.e[j] = eps.of(b1).Load()
		g.w1[j] = wordAt(words, b1).Load()
		searchStalled(f, b1, 1) // the tests' stall points (twophase.go, searchStalls)
		g.w2[j] = wordAt(words, g.b2[j]).Load()
		searchStalled(f, b1, 2)
	}
	for j := range found {
		w1, w2 := g.w1[j], g.w2[j]
		if (w1|w2)&tagMask == 0 {
			// As Lookup (Locked words have no tags): "absent" if b1 and the
			// plain epoch are unchanged.
			if found[j] = f.lay.containsEither(w1, w2, g.fp[j]); found[j] {
				continue
			}
			b1, e := g.b1[j], g.e[j]
			r1 := wordAt(t.words, b1).Load()
			searchStalled(f, b1, 3) // between b1's re-read and the epoch's
			if (r1^w1)|(t.epochOf(b1).Load()^e)|e&tagMask == 0 {
				continue
			}
		}
		if f.mode == Locked {
			found[j] = f.lookupUnderLocks(g.b1[j], g.b2[j], g.fp[j])
		} else {
			found[j] = f.findAfter(g.b1[j], g.b2[j], g.fp[j], w1, w2, g.e[j])
		}
	}
}

// InsertBatch inserts keys in order, as Insert does, and returns how many
// it inserted: if fewer, keys[n] did not fit and err is ErrFull. On a zero
// Filter it returns ErrZeroFilter (nil for no keys).
func (f *Filter) InsertBatch(keys [][]byte) (n int, err error) {
	return f.insertBatch(&batchKeys{keys: keys}, len(keys))
}

// insertBatch is InsertBatch for the n keys of b.
func (f *Filter) insertBatch(b *batchKeys, n int) (int, error) {
	if f.m == 0 && n > 0 {
		return 0, ErrZeroFilter
	}
	shift := f.lay.wordShift()
	if n > batchGroup && len(f.t.words) >= batchPrefetchWords {
		return f.insertBatchPrefetched(b, n, shift)
	}
	var g group
	for base := 0; base < n; base += batchGroup {
		k := min(batchGroup, n-base)
		f.placeForInsert(b, &g, base, base+k, shift)
		if j, ok := f.insertPlaced(&g, k); !ok {
			return base + j, ErrFull
		}
	}
	return n, nil
}

// insertBatchPrefetched is insertBatch that places the next group, its
// words prefetched, before it inserts this one (lookupBatchPrefetched).
func (f *Filter) insertBatchPrefetched(b *batchKeys, n int, shift uint64) (int, error) {
	var gs [2]group
	f.placeForInsert(b, &gs[0], 0, batchGroup, shift)
	for base, i := 0, 0; base < n; base, i = base+batchGroup, i^1 {
		if next := base + batchGroup; next < n {
			f.placeForInsert(b, &gs[i^1], next, min(next+batchGroup, n), shift)
		}
		if j, ok := f.insertPlaced(&gs[i], min(batchGroup, n-base)); !ok {
			return base + j, ErrFull
		}
	}
	return n, nil
}

// insertPlaced inserts the first k keys of a placed group (insertGroup).
func (f *Filter) insertPlaced(g *group, k int) (int, bool) {
	if f.lay.packed {
		return f.pkInsertGroup(g, k)
	}
	return f.insertGroup(g, k)
}
