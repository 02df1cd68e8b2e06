package cuckoo

import "github.com/cespare/xxhash/v2"

// batchGroup is how many keys LookupBatch and InsertBatch hash before they
// read any bucket. The bucket loads of a group are independent, so the
// processor keeps many cache misses in flight at once instead of one
// operation's two.
const batchGroup = 16

// group holds one group of keys hashed, with a first read of both of each
// key's buckets.
type group struct {
	b1, b2, fp, w1, w2 [batchGroup]uint64
	// e holds each key's raw read of the wrap epoch of b1's stripe,
	// taken before its bucket reads (one-word layouts; twophase.go).
	// Insert groups (readForInsert) leave it unset.
	e [batchGroup]uint64
}

// hashAndRead hashes keys (at most batchGroup of them), then reads both
// buckets of every key, all loads issued back to back.
//
// It does what hash and alt do, in loops of one step each: one with
// nothing but the xxhash call, the seed mixing only for a non-zero seed,
// and place with the table size in registers; faster than hashing and
// placing per key (BENCHMARKS.md, "Tuning constants").
func (f *Filter) hashAndRead(g *group, keys [][]byte) {
	hashKeys(g.b1[:], keys)
	f.placeAndRead(g, len(keys))
}

// hashKeys stores the raw hash of keys[j] in h[j] (len(h) >= len(keys)):
// the loop with nothing but the xxhash call that every batch starts with.
func hashKeys(h []uint64, keys [][]byte) {
	h = h[:len(keys)]
	for j, k := range keys {
		h[j] = xxhash.Sum64(k)
	}
}

// keyHashes keys the raw hashes h with the filter's seed, in place, one
// loop per hash algorithm (a seed of 0 leaves them as they are).
func (f *Filter) keyHashes(h []uint64) {
	if seed := f.seed; seed != 0 {
		if f.fmix {
			for j := range h {
				h[j] = mix64(h[j] ^ seed)
			}
		} else {
			mul := f.mul
			for j := range h {
				h[j] = (h[j] ^ seed) * mul
			}
		}
	}
}

// placeAndRead keys the first n raw key hashes held in g.b1 with the seed,
// places them, and reads both buckets of every key: the part of
// hashAndRead that LookupBatchHash, whose keys come hashed, shares with
// it.
func (f *Filter) placeAndRead(g *group, n int) {
	h := g.b1[:n] // the raw hashes, until place replaces them
	f.keyHashes(h)
	g.place(n, f.m, f.fpRange)
	// Each key's epoch is read before its buckets, as in Lookup. The
	// epochs are few and usually in cache, and one loop keeps the bucket
	// loads back to back.
	words, eps := f.t.words, f.t.versIndex()
	for j := range n {
		b1 := g.b1[j]
		g.e[j] = eps.of(b1).Load()
		g.w1[j] = words[b1].Load()
		if raceEnabled {
			searchStalled(f, b1, 1) // the tests' stall points (twophase.go, searchStalls)
		}
		g.w2[j] = words[g.b2[j]].Load()
		if raceEnabled {
			searchStalled(f, b1, 2)
		}
	}
}

// place replaces the first n keyed hashes held in g.b1 by their buckets
// in search order (searchPair) and their fingerprints. It is a call of its
// own so that the filter is not live in the loop, whose multiply
// (altBucket) takes two registers: inlined, the loop spilled the filter
// and m for every key.
//
//go:noinline
func (g *group) place(n int, m, fpRange uint64) {
	h := g.b1[:n]
	for j := range h {
		b1, fp, b2 := place(h[j], m, fpRange)
		g.b1[j], g.b2[j] = searchPair(b1, b2)
		g.fp[j] = fp
	}
}

// hashForInsert hashes keys (at most batchGroup of them) into g.b1 and
// reads the group for InsertBatch (readForInsert). As a call of its own it
// keeps InsertBatch's live values out of the hashing loop: with hashKeys
// inlined into InsertBatch, seven of them were reloaded from the stack
// after every xxhash call.
func (f *Filter) hashForInsert(g *group, keys [][]byte) {
	hashKeys(g.b1[:], keys)
	f.readForInsert(&g.b1, &g.fp, &g.b2, &g.w1, &g.w2, len(keys), 0)
}

// pkHashForInsert is hashForInsert for a packed group.
func (f *Filter) pkHashForInsert(g *pkGroup, keys [][]byte) {
	hashKeys(g.b1[:], keys)
	f.readForInsert(&g.b1, &g.fp, &g.b2, &g.w1, &g.w2, len(keys), 1)
}

// readForInsert is the group read of InsertBatch and InsertBatchHash in
// every layout: it keys the first n raw key hashes held in b1 with the
// seed, places them (b1, fp, b2), prefetches the words of both buckets of
// every key for writing (prefetch.go) and reads them into w1 and w2, the
// inserts' first tries. Bucket b is in word b>>shift (1 in the packed
// layout, 0 in the others). It reads no epochs or versions, which only
// searches use. A wrong first read would cost an insert only a failed CAS
// or a needless search: the adds build the word they write from the value
// their CAS compares (or read under the lock, in Locked mode).
func (f *Filter) readForInsert(b1, fp, b2, w1, w2 *[batchGroup]uint64, n int, shift uint64) {
	h := b1[:n]
	f.keyHashes(h)
	m, fpRange := f.m, f.fpRange
	for j := range h {
		b1[j], fp[j], b2[j] = place(h[j], m, fpRange)
	}
	words := f.t.words
	prefetchForWrite(words, b1, b2, n, shift)
	shift &= 63
	for j := range n {
		w1[j] = words[b1[j]>>shift].Load()
		w2[j] = words[b2[j]>>shift].Load()
	}
}

// LookupBatch looks up keys[i] and stores the answer in found[i], with the
// same guarantees as Lookup for each key, for every i below n =
// min(len(keys), len(found)), and returns n. Like the copy built-in it
// handles what both slices can hold and says how much that was: when found
// is shorter than keys, keys[n:] are not looked up and the result is less
// than len(keys); found[n:] is never written. Give found the length of keys
// to look them all up. It is faster than calling Lookup in a loop when the
// table does not fit in the processor's caches, because it hashes a group of
// keys first and then issues all of their bucket loads together.
func (f *Filter) LookupBatch(keys [][]byte, found []bool) (n int) {
	n = min(len(keys), len(found))
	if f.m == 0 {
		clear(found[:n])
		return n
	}
	if f.lay.packed {
		var g pkGroup
		for base := 0; base < n; base += batchGroup {
			keys := keys[base:min(base+batchGroup, n)]
			f.pkHashAndRead(&g, keys)
			f.pkLookupGroup(&g, found[base:base+len(keys)])
		}
		return n
	}
	var g group
	for base := 0; base < n; base += batchGroup {
		keys := keys[base:min(base+batchGroup, n)]
		found := found[base : base+len(keys)]
		f.hashAndRead(&g, keys)
		f.lookupGroup(&g, found)
	}
	return n
}

// lookupGroup answers the first len(found) keys of a group that was read
// (hashAndRead, placeAndRead), each after its epoch read g.e[j]:
// LookupBatch's and LookupBatchHash's decision for each key. found holds
// at most batchGroup answers.
func (f *Filter) lookupGroup(g *group, found []bool) {
	found = found[:min(len(found), batchGroup)] // no bounds checks on j below
	t := &f.t
	for j := range found {
		w1, w2 := g.w1[j], g.w2[j]
		if (w1|w2)&tagMask == 0 {
			// As in Lookup and lookupLocked: found, or absent with b1
			// unchanged (words never hold tags in Locked mode). A plain
			// read that shows fp answers "present" whatever the epoch
			// read held (the epoch decides only "absent"), so b1 and e
			// are loaded only on the way to "absent".
			if f.lay.containsEither(w1, w2, g.fp[j]) {
				found[j] = true
				continue
			}
			// Absent when b1 read again is bit for bit w1 and then the
			// epoch still holds e, a plain value (unchanged), or when
			// the key has one bucket. The three tests are folded into
			// one word, so no bool is built between the reads.
			b1, e := g.b1[j], g.e[j]
			r1 := t.words[b1].Load()
			if raceEnabled {
				searchStalled(f, b1, 3) // between b1's re-read and the epoch's
			}
			moved := (r1 ^ w1) | (t.epochOf(b1).Load() ^ e) | e&tagMask
			if moved == 0 || b1 == g.b2[j] && e&tagMask == 0 {
				found[j] = false
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

// InsertBatch inserts keys in order, each with the same guarantees as
// Insert, and returns how many it inserted. If that is less than len(keys),
// keys[n] did not fit, err is ErrFull, and keys[n:] were not inserted
// (keys[:n] were); on a zero Filter n is 0 and err is ErrZeroFilter (unless
// keys is empty). Like LookupBatch it hashes a group of keys and reads all
// their buckets before it writes any, so the cache misses of a group overlap;
// each insert then finds its buckets in cache. The filter's count is updated
// once per group.
func (f *Filter) InsertBatch(keys [][]byte) (n int, err error) {
	if f.m == 0 {
		if len(keys) == 0 {
			return 0, nil
		}
		return 0, ErrZeroFilter
	}
	if f.lay.packed {
		var g pkGroup
		for base := 0; base < len(keys); base += batchGroup {
			keys := keys[base:min(base+batchGroup, len(keys))]
			f.pkHashForInsert(&g, keys)
			if j, ok := f.pkInsertGroup(&g, len(keys)); !ok {
				return base + j, ErrFull
			}
		}
		return len(keys), nil
	}
	var g group
	for base := 0; base < len(keys); base += batchGroup {
		keys := keys[base:min(base+batchGroup, len(keys))]
		f.hashForInsert(&g, keys)
		if j, ok := f.insertGroup(&g, len(keys)); !ok {
			return base + j, ErrFull
		}
	}
	return len(keys), nil
}
