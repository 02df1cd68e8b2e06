package cuckoo

import "math/bits"

// A bucket is one 64-bit word: b slots of f bits (four, or five of 12), a
// migration counter in the 62-bf bits above them (30 bits at f=8, 14 at f=12,
// 2 at f=15 and at five 12-bit slots), and two K-CAS tag bits on top:
//
//	bit 63 62 | 61 ........ bf | bf-1 ... (b-1)f | ... | f-1 ... 0
//	 K-CAS tags | migration counter | slot b-1      | ... | slot 0
//
// Fingerprints are never 0: 0 marks an empty slot. A word with a tag bit set
// refers to a K-CAS descriptor (kcas.go); the pure functions here never get one.

const (
	slotsPerBucket = 4 // the four-slot layouts' and every Growing filter's
	maxSlots       = 5 // five 12-bit slots
	tagBits        = 2
	payloadBits    = 64 - tagBits
)

// layout holds a bucket layout's masks, fixed when the table is set up.
type layout struct {
	f, b, f1               uint   // fingerprint bits (8, 12 or 15), slots (4, or 5 with f = 12), f-1
	slotMask               uint64 // (1<<f)-1
	fpMask                 uint64 // the slots: (1<<bf)-1
	lo, hi                 uint64 // 1 in the lowest, the highest bit of every slot
	neLow, neAdd           uint64 // nonEmpty's masks: fpMask &^ hi, hi - lo
	ctrShift               uint   // bf
	ctrMask, sumMask, sumB uint64 // the counter shifted down, (1<<(62-bf))-1; choose's 15<<(bf-1), b<<(bf-1)
	packed                 bool   // the packed layout (packed.go); the fields above describe its eight slots
}

// newLayout returns the layout of b slots of f bits, one of validLayout's.
func newLayout(f, b uint) layout {
	l := layout{f: f, b: b, f1: f - 1, slotMask: 1<<f - 1, fpMask: 1<<(b*f) - 1, ctrShift: b * f}
	for s := range b {
		l.lo |= 1 << (s * f)
	}
	l.hi, l.ctrMask = l.lo<<(f-1), 1<<(payloadBits-b*f)-1
	l.neLow, l.neAdd, l.sumMask, l.sumB = l.fpMask&^l.hi, l.hi-l.lo, 15<<(b*f-1), uint64(b)<<(b*f-1)
	return l
}

// validLayout reports whether b slots of f bits is a fixed filter's
// layout; each leaves the counter at least 2 bits.
func validLayout(f, b uint) bool { return b == 4 && validFingerprintBits(int(f)) || b == 5 && f == 12 }

// zeroSlots returns the high bit of every zero slot of x (SWAR): a lane's -1
// borrows into its high bit only if it is zero (&^x drops set ones), and may
// make the lane above look zero: only the lowest set bit, which every caller
// uses, is exact. Borrows run upward: counter and tags change nothing.
func (l *layout) zeroSlots(x uint64) uint64 { return (x - l.lo) &^ x & l.hi }

func (l *layout) contains(w, fp uint64) bool { return l.zeroSlots(w^fp*l.lo) != 0 }

// containsEither reports whether w1 or w2 holds fp, without a branch
// between the words: which one holds a key is a coin toss.
func (l *layout) containsEither(w1, w2, fp uint64) bool {
	x1, x2 := w1^fp*l.lo, w2^fp*l.lo
	return ((x1-l.lo)&^x1|(x2-l.lo)&^x2)&l.hi != 0 // zeroSlots of both, one mask
}

// slotUnit returns 1 in the lowest bit of the slot whose top bit is z's
// lowest set bit (z from zeroSlots or choose; 0 for z = 0): f-1 < 64.
func (l *layout) slotUnit(z uint64) uint64 { return (z & -z) >> (l.f1 & 63) }

// wordShift returns how far a bucket index shifts down to its word's: 1 in
// the packed layout (two buckets a word), else 0.
func (l *layout) wordShift() uint64 {
	if l.packed {
		return 1
	}
	return 0
}

// take returns w with its first copy of fp emptied, and whether it had one.
func (l *layout) take(w, fp uint64) (uint64, bool) {
	z := l.zeroSlots(w ^ fp*l.lo)
	return w &^ (l.slotMask * l.slotUnit(z)), z != 0
}

// nonEmpty returns the top bit of every non-empty slot of w, exactly: 2^(f-1)-1
// plus a slot's low f-1 bits carries into its top bit iff they are not all 0.
func (l *layout) nonEmpty(w uint64) uint64 { return ((w & l.neLow) + l.neAdd | w) & l.hi }

func (l *layout) occupied(w uint64) int { return bits.OnesCount64(l.nonEmpty(w)) }

// choose applies the placement rule to buckets b1, b2 of words w1, w2: the
// one with fewer fingerprints (b1 on a tie), its word, its empty slots' top
// bits (0: none). w1's non-empty and w2's empty slots' top bits sum to s_k <=
// 2 at slot k's; times lo, bit f-1+fm holds the sum over k <= m, m-k < b (<=
// 2b < 16: no overlap), bf-1 <= 59 all s_k, occupied(w1)+b-occupied(w2).
func (l *layout) choose(b1, b2, w1, w2 uint64) (b, w, room uint64) {
	n1, e2 := l.nonEmpty(w1), l.hi&^l.nonEmpty(w2)
	b, w, room = b1, w1, l.hi&^n1
	if (n1+e2)*l.lo&l.sumMask > l.sumB { // a coin toss: no branch
		b, w, room = b2, w2, e2
	}
	return b, w, room
}

func (l *layout) slot(w uint64, s int) uint64 { return w >> (uint(s) * l.f) & l.slotMask }

func (l *layout) setSlot(w uint64, s int, fp uint64) uint64 {
	sh := uint(s) * l.f
	return w&^(l.slotMask<<sh) | fp<<sh
}

func (l *layout) counter(w uint64) uint64 { return w >> l.ctrShift & l.ctrMask }

// wraps reports whether bumpCounter(w) wraps the counter to 0.
func (l *layout) wraps(w uint64) bool { return l.counter(w) == l.ctrMask }

// bumpCounter returns plain word w with its counter plus one, modulo its
// width (twophase.go: a wrap is harmless): a wrap's carry, in the bit above
// the counter, is cleared. Only word layouts (bf <= 60) have a counter.
func (l *layout) bumpCounter(w uint64) uint64 {
	return (w + 1<<(l.ctrShift&63)) &^ ((l.ctrMask + 1) << (l.ctrShift & 63))
}
