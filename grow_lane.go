package cuckoo

import "math/bits"

// The bucket word of a Growing filter: four 15-bit lanes, a 1-bit migration
// counter, a frozen bit and the two K-CAS tag bits:
//
//	bit 63 62   61        60        59 ... 45  44 ... 30  29 ... 15  14 ... 0
//	   [tags] [frozen] [counter]   [lane 3 ]  [lane 2 ]  [lane 1 ]  [lane 0]
//
// A lane holds one entry or is 0 (empty):
//
//	bit 14 ... 9   8 ........ 0
//	   [  tag   ]  [   tail   ]
//
// The tag is 6 bits of the key's hash that never change; the entry's
// other bucket is a function of its bucket, its tag and (across levels)
// its first tail bit (alt, grow_table.go), so an entry can be moved
// between its two buckets at any size of the table. The tail holds the
// next index bits of the entry's bucket (its position bits: the key's in
// the key's first bucket, those XOR the tag's mask in the second;
// grow_table.go), which each split of its bucket consumes one at a time,
// in unary-terminated form: an entry written into a bucket of level L
// holds 8 bits p_L .. p_L+7 above a 1 marker, tail = p<<1 | 1, with p_L in
// bit 8 (at L = 19 the key has 7 such bits, and the eighth is 0 for every
// key and every mask: grow_table.go). A split takes bit 8 (it chooses
// between the two new buckets the old one splits into) and shifts the
// tail left by one, so the marker rises: an entry of age a (splits since
// it was written, less the levels it went down by moves: gainLane) has its
// marker at bit a and 8-a index bits above it. An entry of age 8 has only
// its marker (tail 0x100): it is void, it knows nothing more about its
// key's position, and a split puts a copy of it into both new buckets.
//
// A query compares the tag and the index bits above the entry's marker
// with its own: a key written at any age matches its own entry, and an
// entry with fewer bits matches more keys (it is a shorter fingerprint).
// A lane is never 0 when it holds an entry (the marker is set).
//
// The frozen bit marks a word that an expansion has copied or is copying
// into the next table (grow.go): no operation changes a frozen word. The
// counter counts the relocations through the bucket, as in the fixed
// filter's word (twophase.go), and the deletes that remove an entry from
// the bucket's pair (grow_table.go, "Deletes move both counters"); it is 1
// bit wide, so every second change through a bucket wraps it, and the
// wraps are counted in the epoch of the bucket's stripe, as the fixed
// filter's one-word layouts count theirs (twophase.go, "Counter wraps").
// Why so narrow: four 15-bit lanes leave four bits, and the frozen bit and
// the tags need three. A lane of 15 bits compares one bit more than a
// 14-bit lane at every age, which halves the false-positive rate.

const (
	laneBits     = 15
	laneMask     = 1<<laneBits - 1
	laneLO       = 1 | 1<<laneBits | 1<<(2*laneBits) | 1<<(3*laneBits) // bit 0 of every lane
	laneHI       = laneLO << (laneBits - 1)                            // bit 14 of every lane
	lanesMask    = 1<<(4*laneBits) - 1
	tailBits     = 9 // a lane's tail: up to 8 index bits and the marker
	tailMask     = 1<<tailBits - 1
	tailVoid     = 1 << (tailBits - 1)     // the tail of a void entry: its marker alone, at the top
	laneTailLow  = (tailVoid - 1) * laneLO // tail bits 0..7 of every lane
	laneTailTop  = tailVoid * laneLO       // tail bit 8 of every lane
	laneAboveTl  = 1 << tailBits * laneLO  // bit 9 of every lane
	tagShift     = tailBits
	growCtrShift = 4 * laneBits
	growCtrMask  = 1
	frozenBit    = 1 << 61
)

// laneLow returns, for every lane of w, the bits from bit 0 up to and
// including its marker (the lowest set bit): the bits a query ignores. An
// empty lane gets bits 0..13, which no entry has (its marker is at most
// bit 8). Or-ing bit 14 into every lane first keeps the subtraction of 1
// from borrowing out of a lane, so the bits above the lanes cancel.
func laneLow(w uint64) uint64 {
	return (w ^ ((w | laneHI) - laneLO)) &^ laneHI
}

// matchLanes returns bit 14 of every lane of w whose entry matches the
// query q (a fresh lane value: the key's tag and its full tail): the tag
// and the index bits above the entry's marker equal q's. Bit 9 of an
// empty lane's low bits makes its difference non-zero. The bits of w above
// the lanes reach x but never carry into a lane's bit 14.
func matchLanes(w, q uint64) uint64 {
	low := laneLow(w)
	x := (w^q*laneLO)&^low | low&laneAboveTl
	return laneHI &^ ((x&^laneHI + (laneHI - laneLO)) | x)
}

// occupiedLanes returns bit 8 of every lane of w holding an entry (a
// non-zero tail): adding 0xff to the low eight bits of a tail carries into
// its bit 8 exactly when they are not all zero, and or-ing w adds the tails
// whose bit 8 was set.
func occupiedLanes(w uint64) uint64 {
	return ((w & laneTailLow) + laneTailLow | w) & laneTailTop
}

// laneCount returns the number of entries in w.
func laneCount(w uint64) int { return bits.OnesCount64(occupiedLanes(w)) }

// putLane returns w with v in its first empty lane, and whether it had one.
func putLane(w, v uint64) (uint64, bool) {
	e := laneTailTop &^ occupiedLanes(w)
	unit := (e & -e) >> (tailBits - 1)
	return w | v*unit, e != 0
}

// lane returns lane s of w.
func lane(w uint64, s int) uint64 { return w >> (uint(s) * laneBits) & laneMask }

// setLane returns w with lane s set to v.
func setLane(w uint64, s int, v uint64) uint64 {
	sh := uint(s) * laneBits
	return w&^(laneMask<<sh) | v<<sh
}

// laneAge returns the age of entry v: the position of its marker.
func laneAge(v uint64) int { return bits.TrailingZeros64(v | 1<<tailBits) }

// longestMatch returns the lane of w whose entry matches q with the most
// index bits (the youngest), its age, and whether any matches. Delete
// removes that one (see grow_table.go, "Why Delete removes the youngest
// match").
func longestMatch(w, q uint64) (s, age int, ok bool) {
	m := matchLanes(w, q)
	age = tailBits
	for m != 0 {
		i := bits.TrailingZeros64(m) / laneBits
		m &= m - 1
		if a := laneAge(lane(w, i)); a < age {
			s, age, ok = i, a, true
		}
	}
	return s, age, ok
}

// growCounter returns the migration counter of w.
func growCounter(w uint64) uint64 { return w >> growCtrShift & growCtrMask }

// growWraps reports whether bumping w's counter takes it from its maximum
// (1) to 0.
func growWraps(w uint64) bool { return growCounter(w) == growCtrMask }

// growBump returns w with its migration counter increased by one, wrapping
// within its one bit.
func growBump(w uint64) uint64 {
	c := (growCounter(w) + 1) & growCtrMask
	return w&^(growCtrMask<<growCtrShift) | c<<growCtrShift
}

// splitLane returns where entry v of a bucket goes when the bucket splits:
// into the new bucket 2j+half with value nv, or, for a void entry, into
// both (both true, nv = v).
func splitLane(v uint64) (nv, half uint64, both bool) {
	tail := v & tailMask
	if tail == tailVoid {
		return v, 0, true
	}
	return v&^tailMask | tail<<1&tailMask, tail >> (tailBits - 1), false
}

// gainLane returns entry v, with the next position bits its tail holds,
// as it is written in a bucket one level lower (Relocation across levels,
// grow_table.go): g, the bit the higher bucket's index held, becomes its
// first tail bit above the others; an entry that held 8 bits drops its
// last one (its marker stays at bit 0).
func gainLane(v, g uint64) uint64 {
	t := v & tailMask
	return v&^tailMask | g<<(tailBits-1) | t>>1 | t&1
}

// matchBits returns the number of hash bits entry v is compared on: its
// tag and the index bits above its marker.
func matchBits(v uint64) int { return growTagBits + tailBits - 1 - laneAge(v) }
