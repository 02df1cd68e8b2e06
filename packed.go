package cuckoo

import (
	"math/bits"
	"sync/atomic"
)

// The packed layout: 8-bit fingerprints, two four-slot buckets per word.
// Bucket b lives in word b>>1, slot s at bits 32·(b&1) + 8s to +8:
//
//	bit 63 62 61 .. 56  55 .. 48  47 .. 40  39 .. 32  31 .. 0
//	   [slot 3 of b|1 ][slot 2  ][slot 1  ][slot 0  ][bucket b&^1]
//
// The top slot of a word (slot 3 of an odd bucket) takes only fingerprints
// 1 to 63, so a plain word's two tag bits are clear and the K-CAS (kcas.go)
// runs over these words unchanged: no precision lost (every slot matches a
// random query with probability 1/255), some placement freedom (packedLoad).
//
// Migration counters are striped versions outside the table (kcasTable.vers,
// bucket b in (b>>1) mod len(vers)), which never wrap, so no epoch. A
// relocation adds one to its destination's version in the step that moves
// the fingerprint (LockFree: its K-CAS; Locked: packed_locked.go); adds and
// deletes are one CAS and leave versions alone.
//
// The LockFree search (pkFind) reads V(b1) (t0), b1's word (t1), b2's (t2)
// and V(b1) (t3), b1 the lower bucket. It answers "present" when a read
// shows fp, else "absent" when the versions are equal or the buckets share
// a word (decided from the first read alone: a move between two reads of
// one word could hide the copy from both), else starts over.
//
// Claim: if a key with fp and this pair was inserted before t1 and no
// Delete of it takes effect before t3, the search answers "present".
// Proof: equal versions mean no move entered b1 in (t1, t2) (each adds one
// to V(b1) at its decision point; V only grows), all that the counting
// proof of twophase.go ("One order for every search") uses of counters
// (TestSearchAgainstCollidingKeys). A shared word is read atomically. □

const (
	pkLo        = 0x01010101         // 1 in the lowest bit of every slot of a bucket
	pkHi        = 0x80808080         // 1 in the highest bit of every slot of a bucket
	pkLo2       = 0x0101010101010101 // pkLo in both halves
	pkHi2       = 0x8080808080808080
	pkTopSlot   = 0x80000000 // the high bit of slot 3 of a bucket
	pkTopLimit  = 64         // slot 3 of an odd bucket takes fp < 64: tag bits stay clear
	pkWordMask  = ^tagMask   // the bits a plain packed word may have set
	packedSlots = 4          // the slots of a packed bucket
	// Version words: versionsFor.
	pkWordsPerVersion, maxVersions    = 128, 1 << 14
	minVersions, pkMinWordsPerVersion = 64, 8
	// packedLoad is the load a packed table is sized for, below the lowest
	// first-ErrFull load measured (BENCHMARKS.md, "Tuning constants").
	packedLoadNum, packedLoadDen = 92, 100
)

// packedLayout is a packed table's layout: eight 8-bit lanes per word, for
// the code that works on whole words (occupied, encode, reset).
func packedLayout() layout {
	l := newLayout(8, 8)
	l.fpMask, l.ctrMask, l.packed = pkWordMask, 0, true
	return l
}

// pkShift returns the position of bucket b's half in its word.
func pkShift(b uint64) uint64 { return (b & 1) << 5 }

// pkHalf returns bucket b's 32 bits of its word w, by a conditional move
// (b's parity is a coin toss per key; cheaper than a shift by pkShift(b)).
func pkHalf(w, b uint64) uint64 {
	x := uint64(uint32(w))
	if b&1 != 0 {
		x = w >> 32
	}
	return x
}

// pkOccupiedLanes returns the high bit of every non-empty slot of bucket x,
// exactly: adding 0x7f to a slot's low seven bits carries into its high
// bit when they are not all zero, and never out of the slot.
func pkOccupiedLanes(x uint64) uint64 { return ((x &^ pkHi) + (pkHi - pkLo) | x) & pkHi }

// pkFree returns the high bit of every empty slot of bucket b (bits x)
// that may take fp: not slot 3 of an odd bucket for fp >= pkTopLimit
// (branch-free: (fp+192)>>8 is 1 exactly for fp 64 to 255).
func pkFree(x, b, fp uint64) uint64 {
	return pkHi &^ pkOccupiedLanes(x) &^ (pkTopSlot * (b & 1 & ((fp + 256 - pkTopLimit) >> 8)))
}

// pkMatches returns exactly the high bits of bucket x's slots holding fp != 0.
func pkMatches(x, fp uint64) uint64 { return pkHi &^ pkOccupiedLanes(x^fp*pkLo) }

// pkHas reports whether bucket x holds fp (fp non-zero).
func pkHas(x, fp uint64) bool { return (x^fp*pkLo-pkLo)&^(x^fp*pkLo)&pkHi != 0 }

func pkMatchCount(w, b, fp uint64) int { return bits.OnesCount64(pkMatches(pkHalf(w, b), fp)) }

// pkHasEither reports whether bucket b1 of w1 or b2 of w2 holds fp, by one
// SWAR test over b1's bits below b2's: a borrow out of b1's top slot
// reaches b2's only when that slot matched, so the answer is exact.
func pkHasEither(w1, w2, b1, b2, fp uint64) bool {
	y := (pkHalf(w1, b1) | pkHalf(w2, b2)<<32) ^ fp*pkLo2
	return (y-pkLo2)&^y&pkHi2 != 0
}

// pkPut returns w with fp in a slot of bucket b that fr (pkFree's result,
// non-zero) marks: the restricted top slot when fp may take it (no other
// fingerprint can), else the lowest. This raises the first-ErrFull load
// (TestPackedFirstFailure; BENCHMARKS.md, "Tuning constants").
func pkPut(w, b, fp, fr uint64) uint64 {
	z := fr & -fr
	if t := fr & pkTopSlot * (b & 1 &^ ((fp + 256 - pkTopLimit) >> 8)); t != 0 {
		z = t // the top slot is free and fp may take it
	}
	return w | fp*(z>>7)<<pkShift(b)
}

// pkChoose is the placement rule for fp and buckets b1, b2 of words w1, w2
// (w1 == w2 when shared): the bucket with more free slots that may take
// fp, b1 on a tie, but a free restricted top slot first (pkPut). It returns
// the bucket, its word, and the bits that put fp into it (0 when neither
// has room), looked up in pkChoice, cheaper than counting free slots, by
// both buckets' empty slots (bits 0-7, one SWAR test gathered by pkGather),
// their parities (bits 8, 9) and fp >= pkTopLimit (bit 10).
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

const (
	// pkGather, multiplied by a word whose bytes are 0 or 1, gathers them
	// into its top byte, byte i into bit i (no two partial products meet).
	pkGather   = 0x0102040810204080
	pkChoiceB2 = 0x80 // marks a pkChoice entry that chooses b2
)

// pkChoice is pkChoose's rule for every index, by pkFree and pkPut: the
// position in its word of fp's slot, 32·parity + 8·slot (64 when neither
// bucket has room), plus pkChoiceB2 for b2.
var pkChoice = func() (t [1 << 11]uint8) {
	for i := range t {
		fp := uint64(1 + 63*(i>>10)) // bit 10: fp >= pkTopLimit
		var score, pos [2]int
		for c := range 2 {
			b, x := uint64(i>>(8+c)&1), uint64(0)
			for s := range packedSlots {
				x |= uint64(^i>>(4*c+s)&1) << (8 * s) // a 1 in each occupied slot
			}
			fr := pkFree(x, b, fp)
			pos[c] = bits.TrailingZeros64(pkPut(0, b, fp, fr) / fp) // 64: no room
			score[c] = bits.OnesCount64(fr)
			if pos[c] == 56 {
				score[c] += 8 // the restricted top slot first
			}
		}
		c := 0 // b1 on a tie
		if score[1] > score[0] {
			c = 1
		}
		t[i] = uint8(pos[c] | c*pkChoiceB2)
	}
	return t
}()

// versionsFor returns the version words of a packed table of n words, one
// per pkWordsPerVersion words but up to minVersions, one per
// pkMinWordsPerVersion: a reader retries on any move in its stripe, so few
// stripes would make every reader retry while anything relocates.
func versionsFor(n uint64) uint64 {
	return max(stripesFor(n, pkWordsPerVersion, maxVersions), stripesFor(n, pkMinWordsPerVersion, minVersions))
}

func (t *kcasTable) verIdx(b uint64) uint64 { return t.epochIdx(b >> 1) }

// verOf returns the version word of bucket b (as epochOf: no bounds check).
func (t *kcasTable) verOf(b uint64) *atomic.Uint64 { return t.epochOf(b >> 1) }

// plainWord returns the logical value of word i, helping a K-CAS found there
// first (a writer's read, which it then CASes against).
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

func (f *Filter) pkReadPair(b1, b2 uint64) (w1, w2 uint64) {
	hookRead(&f.t, b1>>1)
	w1 = f.t.words[b1>>1].Load()
	if b2>>1 == b1>>1 {
		return w1, w1
	}
	hookRead(&f.t, b2>>1)
	return w1, f.t.words[b2>>1].Load()
}

// pkReadSearch is readPair for packed words (two reads even of a shared one).
func (f *Filter) pkReadSearch(b1, b2 uint64) (w1, w2 uint64) { return f.readSearch(b1>>1, b2>>1, b1) }

// pkTake takes one copy of fp from bucket b of w, reporting whether b held one.
func pkTake(w, b, fp uint64) (uint64, bool) {
	z := pkMatches(pkHalf(w, b), fp)
	return w &^ (0xff * ((z & -z) >> 7) << pkShift(b)), z != 0
}

// lookupOther is Lookup once placed, for Locked mode and the packed layout.
func (f *Filter) lookupOther(b1, b2, fp uint64) bool {
	if f.lay.packed {
		if f.mode == Locked {
			return f.pkLookupLocked(b1, b2, fp)
		}
		return f.pkLookup(b1, b2, fp)
	}
	return f.lookupLocked(b1, b2, fp)
}

type pkGroup = group // the packed codec's batch group, e holding V(b1)

// pkLookupGroup is lookupGroup for the packed layout: reads in pkFind's
// order, answers as pkLookup and pkLookupLocked decide.
func (f *Filter) pkLookupGroup(g *group, found []bool) {
	found = found[:min(len(found), batchGroup)] // no bounds checks on j below
	words, vers := f.t.words, f.t.versIndex()
	for j := range found {
		b1 := g.b1[j]
		g.e[j] = vers.of(b1 >> 1).Load()
		g.w1[j] = words[b1>>1].Load()
		searchStalled(f, b1, 1) // the tests' stall points (twophase.go, searchStalls)
		g.w2[j] = words[g.b2[j]>>1].Load()
		searchStalled(f, b1, 2)
	}
	for j := range found {
		b1, b2, fp, w1, w2 := g.b1[j], g.b2[j], g.fp[j], g.w1[j], g.w2[j]
		if (w1|w2)&tagMask == 0 {
			// Only "absent" needs the version, so it is loaded last.
			if pkHasEither(w1, w2, b1, b2, fp) {
				found[j] = true
				continue
			}
			if b1>>1 == b2>>1 {
				found[j] = pkHas(pkHalf(w1, b2), fp)
				continue
			}
			v := g.e[j]
			if (f.t.versIndex().of(b1>>1).Load()^v)|v&tagMask == 0 {
				found[j] = false
				continue
			}
		}
		found[j] = f.lookupOther(g.b1[j], g.b2[j], g.fp[j])
	}
}
