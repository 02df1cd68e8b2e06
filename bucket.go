package cuckoo

import "math/bits"

// A bucket is one uint64 word holding b fingerprint slots of f bits (four,
// or five of 12 bits) and a migration counter; for b = 4:
//
//	bit 63      62      61 ............ 4f   4f-1 ... 3f ... 2f ... f ... 0
//	   [K-CAS tags]    [migration counter ]  [slot 3][slot 2][slot 1][slot 0]
//
// Slot s occupies bits [s*f, (s+1)*f). A fingerprint is never 0, so 0 marks
// an empty slot. The counter takes the 62-bf bits left between the slots
// and the two tag bits: 30 bits at f=8, 14 bits at f=12, 2 bits at f=15 and
// at five 12-bit slots. The two top bits belong to the K-CAS (kcas.go): a
// word with either of them set is a reference to a descriptor, not a
// bucket, and is never interpreted by this file.
//
// Every word of the table is read and written only through sync/atomic
// (kcas.go and locked.go); the functions here are pure functions of a word.

const (
	// slotsPerBucket is the slots of a bucket in the fixed filter's
	// four-slot layouts and in every Growing filter's.
	slotsPerBucket = 4
	// maxSlots is the most slots a bucket has in any layout: five 12-bit
	// slots (layout with b = 5).
	maxSlots    = 5
	tagBits     = 2
	payloadBits = 64 - tagBits
)

// layout holds the masks for one fingerprint size. It is computed once when
// the table is set up (New, or loading an encoding) and never changes; the
// hot paths read it through a pointer (l := &f.lay).
type layout struct {
	f        uint   // fingerprint bits: 8, 12 or 15
	b        uint   // slots per bucket: 4, or 5 with f = 12
	slotMask uint64 // (1<<f)-1
	fpMask   uint64 // the slots: (1<<bf)-1
	lo       uint64 // 1 in the lowest bit of every slot
	hi       uint64 // 1 in the highest bit of every slot
	ctrShift uint   // bf
	ctrMask  uint64 // counter mask after shifting down: (1<<(62-b*f))-1
	// packed marks the packed layout (packed.go): two buckets of four
	// 8-bit slots per word, the fields above describing the word's eight
	// slots.
	packed bool
}

// newLayout returns the layout of b slots of f bits. (f, b) must be one of
// validLayout's.
func newLayout(f, b uint) layout {
	l := layout{f: f, b: b}
	l.slotMask = 1<<f - 1
	l.fpMask = 1<<(b*f) - 1
	for s := uint(0); s < b; s++ {
		l.lo |= 1 << (s * f)
	}
	l.hi = l.lo << (f - 1)
	l.ctrShift = b * f
	l.ctrMask = 1<<(payloadBits-b*f) - 1
	return l
}

// validLayout reports whether a bucket of b slots of f bits is one of the
// layouts the fixed filter has: four slots of 8, 12 or 15 bits, or five of
// 12. Each leaves at least 2 bits of the word's 62 to the counter.
func validLayout(f, b uint) bool {
	return b == 4 && (f == 8 || f == 12 || f == 15) || b == 5 && f == 12
}

// counterBits reports the width of the migration counter.
func (l *layout) counterBits() uint { return payloadBits - l.b*l.f }

// zeroSlots returns a word with the high bit of every slot of x that is zero
// set, and no other bit. It is the classic SWAR "has zero byte" test for
// f-bit lanes: subtracting 1 from every lane borrows into the lane's high bit
// only when the lane is zero, and masking with ^x drops lanes whose high bit
// was already set. A borrow out of a zero lane can make the lane above it look
// zero as well, so only the lowest set bit of the result is exact; every
// caller either tests the result against zero or takes its lowest set bit.
func (l *layout) zeroSlots(x uint64) uint64 {
	x &= l.fpMask
	return (x - l.lo) &^ x & l.hi
}

// slotOf converts the lowest set bit of a zeroSlots result to a slot index.
func (l *layout) slotOf(z uint64) int {
	tz := uint(bits.TrailingZeros64(z))
	switch l.f {
	case 8:
		return int(tz >> 3)
	case 12:
		return int(tz / 12)
	}
	return int(tz / 15)
}

// match returns the slot of w holding fp, or -1. fp must be non-zero.
func (l *layout) match(w, fp uint64) int {
	z := l.zeroSlots(w ^ fp*l.lo)
	if z == 0 {
		return -1
	}
	return l.slotOf(z)
}

// contains reports whether any slot of w holds fp. fp must be non-zero.
func (l *layout) contains(w, fp uint64) bool {
	return l.zeroSlots(w^fp*l.lo) != 0
}

// containsEither reports whether w1 or w2 holds fp, testing both words
// without a branch between them: which bucket holds a key is a coin toss,
// and a mispredicted branch there cost more than the second test.
func (l *layout) containsEither(w1, w2, fp uint64) bool {
	x := fp * l.lo
	return l.zeroSlots(w1^x)|l.zeroSlots(w2^x) != 0
}

// emptySlot returns the index of the first empty slot of w, or -1.
func (l *layout) emptySlot(w uint64) int {
	z := l.zeroSlots(w)
	if z == 0 {
		return -1
	}
	return l.slotOf(z)
}

// slotUnit turns a zeroSlots result z into a word with 1 in the lowest bit
// of the slot that z's lowest set bit marks (the slot's high bit), or 0 when
// z is 0. Multiplying a fingerprint or slotMask by it addresses that slot
// without computing the slot's index (a division by f). The shift is
// masked to 63, which f-1 never exceeds, so that it compiles without the
// test for shifts of 64 or more.
func (l *layout) slotUnit(z uint64) uint64 {
	return (z & -z) >> ((l.f - 1) & 63)
}

// put returns w with fp in its first empty slot, and whether w had one
// (otherwise w is returned unchanged). fp must be non-zero.
func (l *layout) put(w, fp uint64) (uint64, bool) {
	z := l.zeroSlots(w)
	return w | fp*l.slotUnit(z), z != 0
}

// take returns w with the first slot holding fp emptied, and whether w had
// one (otherwise w is returned unchanged). fp must be non-zero.
func (l *layout) take(w, fp uint64) (uint64, bool) {
	z := l.zeroSlots(w ^ fp*l.lo)
	return w &^ (l.slotMask * l.slotUnit(z)), z != 0
}

// occupied returns the number of non-empty slots of w. Adding 2^(f-1)-1 to
// the low f-1 bits of a slot carries into the slot's top bit exactly when
// they are not all zero, and never out of the slot; or-ing in w adds the
// slots whose top bit was set.
func (l *layout) occupied(w uint64) int {
	w &= l.fpMask
	return bits.OnesCount64(((w &^ l.hi) + (l.hi - l.lo) | w) & l.hi)
}

// emptier reports whether w2 has fewer non-empty slots than w1, that is
// occupied(w2) < occupied(w1), with one population count instead of two:
// the top bits of w1's non-empty slots, and one bit above the top bit of
// each empty slot of w2, never share a position, so together they count
// occupied(w1) + (b - occupied(w2)), which exceeds b exactly when w2 has
// fewer. The highest slot's extra bit lands on bit bf (at most 60), inside
// the word.
func (l *layout) emptier(w2, w1 uint64) bool {
	n1 := ((w1 & l.fpMask &^ l.hi) + (l.hi - l.lo) | w1) & l.hi
	n2 := ((w2 & l.fpMask &^ l.hi) + (l.hi - l.lo) | w2) & l.hi
	return bits.OnesCount64(n1|(l.hi&^n2)<<1) > int(l.b)
}

// slot returns the fingerprint in slot s of w (0 when empty).
func (l *layout) slot(w uint64, s int) uint64 {
	return w >> (uint(s) * l.f) & l.slotMask
}

// setSlot returns w with slot s set to fp.
func (l *layout) setSlot(w uint64, s int, fp uint64) uint64 {
	sh := uint(s) * l.f
	return w&^(l.slotMask<<sh) | fp<<sh
}

// counter returns the migration counter of w.
func (l *layout) counter(w uint64) uint64 {
	return w >> l.ctrShift & l.ctrMask
}

// wraps reports whether bumpCounter(w) takes w's counter from its maximum
// back to 0.
func (l *layout) wraps(w uint64) bool { return l.counter(w) == l.ctrMask }

// bumpCounter returns w with its migration counter increased by one, wrapping
// within the counter's width (see the argument in twophase.go for why a wrap
// is harmless unless a single lookup overlaps 2^c-1 migrations of a bucket).
func (l *layout) bumpCounter(w uint64) uint64 {
	c := (l.counter(w) + 1) & l.ctrMask
	return w&^(l.ctrMask<<l.ctrShift) | c<<l.ctrShift
}
