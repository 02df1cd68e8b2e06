package cuckoo

import (
	"math/bits"
	"sync/atomic"
)

// The packed layout: 8-bit fingerprints, two buckets of four slots per
// 64-bit word. Bucket b lives in word b>>1, slot s at bits
// [32·(b&1) + 8s, 32·(b&1) + 8s + 8):
//
//	bit 63 62 61 .. 56  55 .. 48  47 .. 40  39 .. 32  31 .. 0
//	   [slot 3 of b|1 ][slot 2  ][slot 1  ][slot 0  ][bucket b&^1]
//
// The top slot of every word (slot 3 of each odd bucket) takes only
// fingerprints 1 to 63, so the word's two tag bits are clear in every plain
// word and the K-CAS (kcas.go) runs over these words unchanged. This costs
// no precision (every slot still matches a random query with probability
// 1/255) but costs placement freedom, hence the lower load (packedLoad).
//
// Migration counters live outside the table in striped 64-bit versions
// (kcasTable.vers): bucket b counts in version (b>>1) mod len(vers). Every
// relocation adds one to its destination's version in the same atomic step
// that moves the fingerprint (LockFree: one K-CAS over the bucket words and
// the version; Locked: under the locks, packed_locked.go). The versions
// never wrap, so this layout needs no epoch. Inserts into an empty slot and
// deletes are one CAS and leave the versions alone.
//
// Search (LockFree), claim-and-proof. A search for fp in the pair b1, b2 (b1
// the lower bucket, searchPair; see twophase.go, "One order for every
// search") reads v = V(b1) at t0, the word of b1 at t1, the word of b2 at
// t2, and V(b1) again at t3 (t0 < t1 < t2 < t3, logical reads). It answers
// "present" when a read shows fp in its bucket; otherwise "absent" when the
// two version reads are equal, or when b1 and b2 share a word; else it
// starts over.
//
// Claim: if a key with fingerprint fp and this pair was inserted before t1
// and no Delete of it takes effect before t3, the search answers "present".
// Proof: equal version reads mean no move entered b1 in (t1, t2) (each adds
// one to V(b1) at its decision point, and V only grows). That is all the
// counting proof of twophase.go uses of the counters: copies enter b1 only
// by inserts, leave b2 only by deletes, and a Delete takes from b2 only
// after a read of b1 that showed none; so b1 empty at t1 and b2 empty at t2
// cannot both hold. A shared word is read atomically at t1. The pair order
// matters: with the key's own order, a colliding key could be inserted into
// b1 after t1 and, reading b2 first, delete the searched copy from b2
// before t2 without changing a version (TestSearchAgainstCollidingKeys). □
//
// pkFind is this search. pkLookup answers from plain loads when none holds
// a K-CAS reference, deciding a one-word pair from its first read only (a
// move between two reads of one word could hide the copy from both).
//
// The other operations rely on the same facts as in twophase.go:
//   - Insert and Delete CAS one word against a value they read, so the copy
//     they add or take is logically present (or the slot empty) at the CAS.
//   - InsertUnique and Count compare both words in one K-CAS (one read or
//     CAS when they are one word; decidePair, unique.go), so "fp in
//     neither bucket", "both full" and the count hold at that instant.
//   - Snapshots and Reset exclude moves with the snapshot gate.

const (
	pkLo       = 0x01010101         // 1 in the lowest bit of every slot of a bucket
	pkHi       = 0x80808080         // 1 in the highest bit of every slot of a bucket
	pkLo2      = 0x0101010101010101 // pkLo in both halves
	pkHi2      = 0x8080808080808080
	pkHalfMask = 0xffffffff
	pkTopSlot  = 0x80000000 // the high bit of slot 3 of a bucket
	// pkTopLimit bounds the fingerprints slot 3 of an odd bucket takes:
	// 1 to pkTopLimit-1, so the word's two tag bits stay clear.
	pkTopLimit = 64
	// pkWordMask is the bits a plain packed word may have set.
	pkWordMask = ^tagMask
	// packedSlots is the slots of a packed bucket.
	packedSlots = 4
	// Version words (versionsFor): a power of two, at least minVersions
	// when the table has pkMinWordsPerVersion words per version, else one
	// per pkWordsPerVersion words, at most maxVersions (128 KiB).
	pkWordsPerVersion                 = 128
	maxVersions                       = 1 << 14
	minVersions, pkMinWordsPerVersion = 64, 8
	// packedLoad is the load a packed table is sized for: below the lowest
	// load of a first ErrFull measured (BENCHMARKS.md, "Tuning constants").
	packedLoadNum, packedLoadDen = 92, 100
)

// packedLayout is the layout value of a packed table. Seen as one word it
// is eight 8-bit lanes (b = 8, so occupied, encode and reset count and
// clear whole words); lay.packed selects the packed code paths.
func packedLayout() layout {
	l := newLayout(8, 8)
	l.fpMask = pkWordMask
	l.ctrMask = 0
	l.packed = true
	return l
}

// pkShift returns the position of bucket b's half in its word.
func pkShift(b uint64) uint64 { return (b & 1) << 5 }

// pkHalf returns bucket b's 32 bits from its word w. The select on b's
// parity (a coin toss per key) must stay branch-free: it compiles to a
// conditional move, cheaper than a shift by pkShift(b).
func pkHalf(w, b uint64) uint64 {
	x := uint64(uint32(w))
	if b&1 != 0 {
		x = w >> 32
	}
	return x
}

// pkOccupiedLanes returns the high bit of every non-empty slot of the
// 32-bit bucket x, exactly: adding 0x7f to a slot's low seven bits
// carries into its high bit when they are not all zero, and never out of
// the slot.
func pkOccupiedLanes(x uint64) uint64 {
	return ((x &^ pkHi) + (pkHi - pkLo) | x) & pkHi
}

// pkFree returns the high bit of every empty slot of bucket b (its 32 bits
// x) that may take fp: all empty slots, except slot 3 of an odd bucket for
// fp >= pkTopLimit.
func pkFree(x, b, fp uint64) uint64 {
	return pkHi &^ pkOccupiedLanes(x) &^ pkBarred(b, fp)
}

// pkBarred returns pkTopSlot when fp may not take slot 3 of bucket b (b
// odd, fp >= pkTopLimit), else 0, without a branch: (fp+192)>>8 is 1
// exactly when fp is 64 to 255, and fingerprints are 1 to 255 (place).
func pkBarred(b, fp uint64) uint64 {
	return pkTopSlot * (b & 1 & ((fp + 256 - pkTopLimit) >> 8))
}

// pkTopFirst returns pkTopSlot when fr (pkFree's result for fp in bucket
// b) has the restricted top slot free and fp may take it (b odd, fp below
// pkTopLimit), else 0.
func pkTopFirst(fr, b, fp uint64) uint64 {
	return fr & pkTopSlot * (b & 1 &^ ((fp + 256 - pkTopLimit) >> 8))
}

// pkMatches returns the high bit of every slot of bucket x holding fp
// (exactly; fp non-zero).
func pkMatches(x, fp uint64) uint64 {
	return pkHi &^ pkOccupiedLanes(x^fp*pkLo)
}

// pkHas reports whether bucket x holds fp (fp non-zero).
func pkHas(x, fp uint64) bool {
	y := x ^ fp*pkLo
	return (y-pkLo)&^y&pkHi != 0
}

// pkHasEither reports whether bucket b1 of word w1 or bucket b2 of word w2
// holds fp, testing both buckets with one SWAR test over a word that holds
// b1's 32 bits below b2's. A borrow out of b1's top slot reaches b2's
// bottom slot only when b1's top slot matched, so the answer is exact.
func pkHasEither(w1, w2, b1, b2, fp uint64) bool {
	y := (pkHalf(w1, b1) | pkHalf(w2, b2)<<32) ^ fp*pkLo2
	return (y-pkLo2)&^y&pkHi2 != 0
}

// pkUnit turns a mask of slot high bits into a word with 1 in the lowest
// bit of the lowest marked slot (0 for 0).
func pkUnit(z uint64) uint64 { return (z & -z) >> 7 }

// pkPut returns word w with fp in a slot of bucket b that fr (pkFree's
// result, non-zero) marks. A fingerprint below pkTopLimit goes into the
// restricted top slot of an odd bucket when that slot is free, since no
// other fingerprint can use it; any other goes into the lowest free slot.
// This raises the load of the first ErrFull (TestPackedFirstFailure;
// BENCHMARKS.md, "Tuning constants").
func pkPut(w, b, fp, fr uint64) uint64 {
	z := fr & -fr
	if t := pkTopFirst(fr, b, fp); t != 0 {
		z = t
	}
	return w | fp*(z>>7)<<pkShift(b)
}

// pkChoose applies the placement rule to fp and the buckets b1 and b2 of
// words w1 and w2 (one word, w1 == w2, when they share it): the bucket with
// more free slots that may take fp, b1 on a tie, except that a fingerprint
// below pkTopLimit goes first to a free restricted top slot (see pkPut). It
// returns the chosen bucket, its word, and the bits that put fp into its
// slot there (pkPut's addition), or put == 0 when neither bucket has a slot
// that may take fp.
//
// The choice is looked up in pkChoice, indexed by both buckets' empty
// slots (b1's in bits 0 to 3, b2's in bits 4 to 7), their parities (bits
// 8 and 9) and whether fp is pkTopLimit or more (bit 10). The empty slots
// come from one SWAR test over a word that holds b1's 32 bits below b2's,
// gathered into one byte by a multiplication (pkGather). The table lookup
// is cheaper than counting and comparing free slots with bit arithmetic.
func pkChoose(b1, b2, fp, w1, w2 uint64) (b, w, put uint64) {
	s1, s2 := (b1&1)<<5, (b2&1)<<5 // pkShift(b1), pkShift(b2)
	y := uint64(uint32(w1>>s1)) | w2>>s2<<32
	empty := pkHi2 &^ ((y&^pkHi2 + (pkHi2 - pkLo2)) | y)
	i := (empty>>7)*pkGather>>56 | s1<<3 | s2<<4 | (fp+256-pkTopLimit)>>8<<10
	x := pkChoice[i&(uint64(len(pkChoice))-1)]
	b, w = b1, w1
	if x&pkChoiceB2 != 0 {
		b, w = b2, w2
	}
	return b, w, fp << (x &^ pkChoiceB2) // x&^pkChoiceB2 = 64 gives 0
}

// pkGather, multiplied by a word whose bytes are 0 or 1, gathers them
// into its top byte, byte i into bit i (no two partial products meet).
const pkGather = 0x0102040810204080

// pkChoiceB2 marks a pkChoice entry that chooses b2.
const pkChoiceB2 = 0x80

// pkChoice is pkChoose's placement rule, written out slot by slot for
// every index (see pkChoose): an entry is the position in its word of
// the slot fp goes into, 32·parity + 8·slot, or 64 when neither bucket
// has a slot that may take fp, plus pkChoiceB2 when the bucket is b2.
// Free slots are the empty ones fp may take (not slot 3 of an odd bucket
// for fp >= pkTopLimit); a free slot 3 of an odd bucket, for fp below
// pkTopLimit, counts 8 more, and the fingerprint then goes there (pkPut);
// b2 is chosen when its count is higher, and the fingerprint goes into
// the top slot or else the lowest free one.
var pkChoice = func() (t [1 << 11]uint8) {
	for i := range t {
		big := i >> 10 // fp >= pkTopLimit
		var score, slot [2]int
		for c := range 2 {
			empty, odd := i>>(4*c)&0xf, i>>(8+c)&1
			slot[c] = -1
			for s := packedSlots - 1; s >= 0; s-- {
				if empty>>s&1 == 0 || s == 3 && odd == 1 && big == 1 {
					continue // occupied, or fp may not take it
				}
				score[c]++
				slot[c] = s
			}
			if empty>>3&1 == 1 && odd == 1 && big == 0 {
				score[c] += 8
				slot[c] = 3
			}
		}
		c := 0
		if score[1] > score[0] {
			c = 1
		}
		x := 64
		if slot[c] >= 0 {
			x = 32*(i>>(8+c)&1) + 8*slot[c]
		}
		t[i] = uint8(x | c*pkChoiceB2)
	}
	return t
}()

// pkSlotOf returns the slot index of the lowest marked slot of z (z != 0).
func pkSlotOf(z uint64) int { return bits.TrailingZeros64(z) >> 3 }

// versionsFor returns the number of version words for a packed table of n
// words: the largest power of two that gives each at least
// pkWordsPerVersion words, 1 to maxVersions; but at least the largest
// power of two up to minVersions that gives each pkMinWordsPerVersion
// words. A reader starts over when any move in its first bucket's stripe
// falls between its two version reads, so a small table with few stripes
// would make every reader retry while anything relocates; 64 versions cost
// 512 bytes, at most 1/8 of the table.
func versionsFor(n uint64) uint64 {
	v := uint64(1)
	for v < maxVersions && (2*v*pkWordsPerVersion <= n || v < minVersions && 2*v*pkMinWordsPerVersion <= n) {
		v <<= 1
	}
	return v
}

// newVersions returns the version words of a packed table of n words.
func newVersions(n uint64) []atomic.Uint64 {
	return make([]atomic.Uint64, versionsFor(n))
}

// verIdx returns the K-CAS index of the version word of bucket b.
func (t *kcasTable) verIdx(b uint64) uint64 {
	return t.epochIdx(b >> 1)
}

// verOf returns the version word of bucket b, indexed as epochOf indexes,
// without a bounds check (lookups are hot).
func (t *kcasTable) verOf(b uint64) *atomic.Uint64 {
	return t.epochOf(b >> 1)
}

// plainWord returns the logical value of word i, helping a K-CAS it finds
// there first (writers' reads, which then CAS the value they return).
func (f *Filter) plainWord(i uint64) uint64 {
	for {
		hookRead(&f.t, i)
		w := f.t.words[i].Load()
		if w&tagMask == 0 {
			return w
		}
		f.helpWord(w)
	}
}

// pkFind runs the search above and returns the bucket where a read saw fp.
func (f *Filter) pkFind(b1, b2, fp uint64) (uint64, bool) {
	t := &f.t
	vi := t.verIdx(b1)
	for {
		v := t.load(vi)
		w1 := t.load(b1 >> 1)
		if raceEnabled {
			searchStalled(f, b1, 1)
		}
		if pkHas(pkHalf(w1, b1), fp) {
			return b1, true
		}
		if b1>>1 == b2>>1 {
			if pkHas(pkHalf(w1, b2), fp) {
				return b2, true
			}
			return 0, false
		}
		w2 := t.load(b2 >> 1)
		if raceEnabled {
			searchStalled(f, b1, 2)
		}
		if pkHas(pkHalf(w2, b2), fp) {
			return b2, true
		}
		if t.load(vi) == v {
			return 0, false
		}
		f.stats.add(statLookupRetries, 1)
	}
}

// pkAdd puts fp into whichever of b1 and b2 has more slots that may take
// it (b1 on a tie, pkChoose) with one CAS and reports whether it did;
// false means neither has such a slot. w1 and w2 are the caller's reads of
// the words of b1 and b2 (one read, w1 == w2, when they are one word). A
// stale read of the chosen word fails the CAS, and the choice is made again
// from fresh reads; a stale read of the other word can only have changed
// which bucket was chosen, never what is written: the new word is always
// built from the value the CAS compares.
func (f *Filter) pkAdd(b1, b2, fp, w1, w2 uint64) bool {
	words := f.t.words
	for {
		if (w1|w2)&tagMask == 0 {
			b, w, put := pkChoose(b1, b2, fp, w1, w2)
			if put == 0 {
				return false
			}
			hookWrite(&f.t, b>>1)
			if words[b>>1].CompareAndSwap(w, w|put) {
				return true
			}
		} else {
			if w1&tagMask != 0 {
				f.helpWord(w1)
			}
			if w2&tagMask != 0 && w2 != w1 {
				f.helpWord(w2)
			}
		}
		w1, w2 = f.pkReadPair(b1, b2)
	}
}

// pkReadPair reads the words of b1 and b2: one read when they are one
// word.
func (f *Filter) pkReadPair(b1, b2 uint64) (w1, w2 uint64) {
	hookRead(&f.t, b1>>1)
	w1 = f.t.words[b1>>1].Load()
	if b2>>1 == b1>>1 {
		return w1, w1
	}
	hookRead(&f.t, b2>>1)
	return w1, f.t.words[b2>>1].Load()
}

// pkReadSearch reads the words of b1 and then b2 with plain loads (two
// reads even when they are one word), stopping at the tests' stall points
// after each in race builds: the first reads of a packed lookup, as
// readPair is a one-word search's.
func (f *Filter) pkReadSearch(b1, b2 uint64) (w1, w2 uint64) {
	words := f.t.words // one load of the slice header for both reads
	hookRead(&f.t, b1>>1)
	w1 = words[b1>>1].Load()
	if raceEnabled {
		searchStalled(f, b1, 1)
	}
	hookRead(&f.t, b2>>1)
	w2 = words[b2>>1].Load()
	if raceEnabled {
		searchStalled(f, b1, 2)
	}
	return w1, w2
}

// pkTake returns word w with one copy of fp taken from bucket b, and
// whether b held one (w itself when it did not).
func pkTake(w, b, fp uint64) (uint64, bool) {
	z := pkMatches(pkHalf(w, b), fp)
	return w &^ (0xff * pkUnit(z) << pkShift(b)), z != 0
}

// pkAddUnique is addUniqueLockFree for the packed layout: fp goes into the
// bucket with more room for it only if neither bucket holds it, and every
// outcome but "present" (a read that shows fp) is decided by one
// decidePair over both words (unique.go): with fp added, or both words
// unchanged when neither bucket has a slot that may take fp. The claim and
// proof of addUniqueLockFree carry over word for word; when b1 and b2
// share a word, its one read decides.
func (f *Filter) pkAddUnique(b1, b2, fp uint64) (present, added bool) {
	for {
		w1 := f.plainWord(b1 >> 1)
		if raceEnabled {
			searchStalled(f, b1, 1) // the tests' stall point (twophase.go, searchStalls)
		}
		w2 := w1
		if b2>>1 != b1>>1 {
			w2 = f.plainWord(b2 >> 1)
		}
		if pkHasEither(w1, w2, b1, b2, fp) {
			return true, false
		}
		b, _, put := pkChoose(b1, b2, fp, w1, w2)
		n1, n2 := w1, w2
		if b == b1 {
			n1 |= put
		} else {
			n2 |= put
		}
		if b1>>1 == b2>>1 {
			n1 |= put
			n2 = n1
		}
		if f.t.decidePair(b1>>1, w1, n1, b2>>1, w2, n2) {
			return false, put != 0
		}
		f.stats.add(statKCASRetries, 1)
	}
}

// pkCount is countCopies for a packed LockFree table: both words read,
// then decidePair (unique.go) confirms that they held those values at one
// instant, which it counts; a word that changed in between starts it over.
// When b1 and b2 share a word, its one read is the instant.
func (f *Filter) pkCount(b1, b2, fp uint64) int {
	t := &f.t
	for {
		w1 := t.load(b1 >> 1)
		n := bits.OnesCount64(pkMatches(pkHalf(w1, b1), fp))
		if b1 == b2 {
			return n
		}
		if b1>>1 == b2>>1 {
			return n + bits.OnesCount64(pkMatches(pkHalf(w1, b2), fp))
		}
		if raceEnabled {
			searchStalled(f, b1, 1) // the tests' stall points (twophase.go, searchStalls)
		}
		w2 := t.load(b2 >> 1)
		if raceEnabled {
			searchStalled(f, b1, 2)
		}
		if t.decidePair(b1>>1, w1, w1, b2>>1, w2, w2) {
			return n + bits.OnesCount64(pkMatches(pkHalf(w2, b2), fp))
		}
		f.stats.add(statLookupRetries, 1)
	}
}

// pkInsert is Insert for a packed table once the key is placed. It writes
// out pkInsertRead's LockFree first try to save a call per insert.
func (f *Filter) pkInsert(b1, b2, fp uint64) error {
	w1, w2 := f.pkReadPair(b1, b2)
	if f.mode != Locked && (w1|w2)&tagMask == 0 {
		b, w, put := pkChoose(b1, b2, fp, w1, w2)
		if put == 0 {
			if !f.pkMakeRoomAndAdd(b1, b2, fp) {
				return ErrFull
			}
			f.count.add(1)
			return nil
		}
		hookWrite(&f.t, b>>1)
		if f.t.words[b>>1].CompareAndSwap(w, w|put) {
			f.count.add(1)
			return nil
		}
		w1, w2 = f.pkReadPair(b1, b2)
	}
	if !f.pkInsertRead(b1, b2, fp, w1, w2) {
		return ErrFull
	}
	f.count.add(1)
	return nil
}

// pkInsertRead stores fp in b1 or b2, relocating fingerprints when neither
// has a slot that may take it, and reports whether it did; it does not
// count it. w1 and w2 are recent reads of the words (pkReadPair), which
// LockFree mode tries first.
//
// A LockFree insert's first try, pkAdd's first round, is written out here
// to save a call per insert; a failed CAS or a word holding a K-CAS
// reference goes on in pkAdd with fresh reads.
func (f *Filter) pkInsertRead(b1, b2, fp, w1, w2 uint64) bool {
	if f.mode == Locked {
		return f.pkAddLocked(b1, b2, fp) || f.pkMakeRoomAndAdd(b1, b2, fp)
	}
	if (w1|w2)&tagMask == 0 {
		b, w, put := pkChoose(b1, b2, fp, w1, w2)
		if put == 0 {
			return f.pkMakeRoomAndAdd(b1, b2, fp)
		}
		hookWrite(&f.t, b>>1)
		if f.t.words[b>>1].CompareAndSwap(w, w|put) {
			return true
		}
		w1, w2 = f.pkReadPair(b1, b2)
	}
	return f.pkAdd(b1, b2, fp, w1, w2) || f.pkMakeRoomAndAdd(b1, b2, fp)
}

// pkMakeRoomAndAdd is pkInsertRead after an add found no slot that may
// take fp: up to maxRoomRounds times it makes room and adds again, and
// reports whether fp went in.
func (f *Filter) pkMakeRoomAndAdd(b1, b2, fp uint64) bool {
	for round := 0; ; round++ {
		if round == maxRoomRounds || !f.makeRoom(b1, b2, fp) {
			f.stats.add(statFull, 1)
			return false
		}
		roomMade(f, b1, b2)
		var ok bool
		if f.mode == Locked {
			ok = f.pkAddLocked(b1, b2, fp)
		} else {
			w1, w2 := f.pkReadPair(b1, b2)
			ok = f.pkAdd(b1, b2, fp, w1, w2)
		}
		if ok {
			return true
		}
	}
}

// lookupOther is Lookup once the key is placed, for the filters whose
// search is not inlined in Lookup: Locked mode and the packed layout.
func (f *Filter) lookupOther(b1, b2, fp uint64) bool {
	if f.lay.packed {
		if f.mode == Locked {
			return f.pkLookupLocked(b1, b2, fp)
		}
		return f.pkLookup(b1, b2, fp)
	}
	return f.lookupLocked(b1, b2, fp)
}

// pkGroup holds one group of placed keys of a packed batch, with first
// reads of both of each key's words and, in a lookup's group
// (pkReadGroup), the version of each key's b1; an insert's group
// (readForInsert) leaves v unset.
type pkGroup struct {
	b1, b2, fp, v, w1, w2 [batchGroup]uint64
}

// pkHashAndRead is hashAndRead for a packed lookup: it hashes keys (at most
// batchGroup of them) into g.b1 and reads the group (pkReadGroup). It is a
// call of its own so that LookupBatch's live values are not spilled around
// every xxhash call.
func (f *Filter) pkHashAndRead(g *pkGroup, keys [][]byte) {
	hashKeys(g.b1[:], keys)
	f.pkReadGroup(g, len(keys))
}

// pkReadGroup places the first n raw key hashes held in g.b1 and reads,
// for every key, V(b1) and then the words of b1 and b2, in that order
// (the order the search needs), all in one loop so that the cache misses
// of the group overlap; the versions are few and usually in cache.
func (f *Filter) pkReadGroup(g *pkGroup, n int) {
	h := g.b1[:n]
	f.keyHashes(h)
	m, fpRange := f.m, f.fpRange
	for j := range h {
		b1, fp, b2 := place(h[j], m, fpRange)
		g.b1[j], g.b2[j] = searchPair(b1, b2)
		g.fp[j] = fp
	}
	// pkReadSearch's reads, written out with the slice header and the
	// versions' base and mask loaded once for the group.
	words, vers := f.t.words, f.t.versIndex()
	for j := range n {
		b1 := g.b1[j]
		g.v[j] = vers.of(b1 >> 1).Load()
		g.w1[j] = words[b1>>1].Load()
		if raceEnabled {
			searchStalled(f, b1, 1) // the tests' stall points (twophase.go, searchStalls)
		}
		g.w2[j] = words[g.b2[j]>>1].Load()
		if raceEnabled {
			searchStalled(f, b1, 2)
		}
	}
}

// pkInsertGroup inserts the first k keys of a group read by readForInsert
// in order, as a loop of Inserts would place them, and counts them once
// for the group. It returns how many it inserted and false if the next
// one did not fit. A key's first attempt uses the group's reads of its
// words (one read when its buckets share a word; later keys of the group
// may have changed them, which only fails that attempt's CAS).
//
// The LockFree first try is written out, as in pkInsert.
func (f *Filter) pkInsertGroup(g *pkGroup, k int) (int, bool) {
	k = min(k, batchGroup) // k is at most batchGroup; no bounds checks on j below
	lockFree := f.mode != Locked
	for j := range k {
		b1, b2, fp, w1, w2 := g.b1[j], g.b2[j], g.fp[j], g.w1[j], g.w2[j]
		if b1>>1 == b2>>1 {
			w2 = w1
		}
		var ok bool
		if lockFree && (w1|w2)&tagMask == 0 {
			b, w, put := pkChoose(b1, b2, fp, w1, w2)
			if put == 0 {
				ok = f.pkMakeRoomAndAdd(b1, b2, fp)
			} else if f.t.words[b>>1].CompareAndSwap(w, w|put) {
				continue
			} else {
				w1, w2 = f.pkReadPair(b1, b2)
				ok = f.pkInsertRead(b1, b2, fp, w1, w2)
			}
		} else {
			ok = f.pkInsertRead(b1, b2, fp, w1, w2)
		}
		if !ok {
			f.count.add(int64(j))
			return j, false
		}
	}
	f.count.add(int64(k))
	return k, true
}

// pkLookupGroup answers the first len(found) keys of a group read by
// pkReadGroup, as pkLookup (LockFree) and pkLookupLocked decide: present
// when a read shows the fingerprint, absent when the version of b1 did not
// move (or both buckets share a word), else the full search of the mode.
func (f *Filter) pkLookupGroup(g *pkGroup, found []bool) {
	found = found[:min(len(found), batchGroup)] // no bounds checks on j below
	for j := range found {
		b1, b2, fp, w1, w2 := g.b1[j], g.b2[j], g.fp[j], g.w1[j], g.w2[j]
		if (w1|w2)&tagMask == 0 {
			// A plain read that shows fp answers "present", and the
			// one read of a shared word decides, whatever the version
			// read held; so v is loaded only on the way to "absent"
			// (as in lookupGroup).
			if pkHasEither(w1, w2, b1, b2, fp) {
				found[j] = true
				continue
			}
			if b1>>1 == b2>>1 {
				found[j] = pkHas(pkHalf(w1, b2), fp)
				continue
			}
			v := g.v[j]
			if (f.t.versIndex().of(b1>>1).Load()^v)|v&tagMask == 0 {
				found[j] = false
				continue
			}
		}
		found[j] = f.lookupOther(g.b1[j], g.b2[j], g.fp[j])
	}
}
