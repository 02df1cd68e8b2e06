package cuckoo

import "math/bits"

// The bucket word of a Growing filter: four 14-bit lanes, a 5-bit migration
// counter, a frozen bit and the two K-CAS tag bits:
//
//	bit 63 62   61      60 .. 56   55 ... 42  41 ... 28  27 ... 14  13 ... 0
//	   [tags] [frozen] [counter ]  [lane 3 ]  [lane 2 ]  [lane 1 ]  [lane 0]
//
// A lane holds one entry or is 0 (empty):
//
//	bit 13 ... 8   7 ........ 0
//	   [  tag   ]  [   tail   ]
//
// The tag is 6 bits of the key's hash that never change; the entry's
// other bucket is a function of its bucket and its tag (altBucket), so an
// entry can be moved between its two buckets at any size of the table. The
// tail holds the next index bits of the entry's bucket (its position bits:
// the key's in the key's first bucket, those XOR the tag's mask in the
// second; grow_table.go), which a doubling consumes one at a time, in
// unary-terminated form: an entry written when the table had doubled d
// times holds 7 bits p_d .. p_d+6 above a 1 marker, tail = p<<1 | 1, with
// p_d in bit 7. Each
// doubling takes bit 7 (it chooses between the two new buckets the old one
// splits into) and shifts the tail left by one, so the marker rises: an
// entry of age a (doublings since it was written) has its marker at bit a
// and 7-a index bits above it. An entry of age 7 has only its marker (tail
// 0x80): it is void, it knows nothing more about its key's position, and
// a doubling puts a copy of it into both new buckets.
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
// the bucket's pair (grow_table.go, "Deletes move both counters"); it is 5
// bits wide, and its wraps are counted in the table's epoch.

const (
	laneBits     = 14
	laneMask     = 1<<laneBits - 1
	laneLO       = 1 | 1<<laneBits | 1<<(2*laneBits) | 1<<(3*laneBits) // bit 0 of every lane
	laneHI       = laneLO << (laneBits - 1)                            // bit 13 of every lane
	lanesMask    = 1<<(4*laneBits) - 1
	laneTail7    = 0x7f * laneLO // tail bits 0..6 of every lane
	laneTailTop  = 0x80 * laneLO // tail bit 7 of every lane
	laneBit8     = 0x100 * laneLO
	tailVoid     = 0x80
	tagShift     = 8
	growCtrShift = 4 * laneBits
	growCtrMask  = 1<<5 - 1
	frozenBit    = 1 << 61
)

// laneLow returns, for every lane of w, the bits from bit 0 up to and
// including its marker (the lowest set bit): the bits a query ignores. An
// empty lane gets bits 0..12, which no entry has (its marker is at most
// bit 7). Or-ing bit 13 into every lane first keeps the subtraction of 1
// from borrowing out of a lane, so the bits above the lanes cancel.
func laneLow(w uint64) uint64 {
	return (w ^ ((w | laneHI) - laneLO)) &^ laneHI
}

// matchLanes returns bit 13 of every lane of w whose entry matches the
// query q (a fresh lane value: the key's tag and its full tail): the tag
// and the index bits above the entry's marker equal q's. Bit 8 of an
// empty lane's low bits makes its difference non-zero. The bits of w above
// the lanes reach x but never carry into a lane's bit 13.
func matchLanes(w, q uint64) uint64 {
	low := laneLow(w)
	x := (w^q*laneLO)&^low | low&laneBit8
	return laneHI &^ ((x&^laneHI + (laneHI - laneLO)) | x)
}

// occupiedLanes returns bit 7 of every lane of w holding an entry (a
// non-zero tail): adding 0x7f to the low seven bits of a tail carries into
// its bit 7 exactly when they are not all zero, and or-ing w adds the tails
// whose bit 7 was set.
func occupiedLanes(w uint64) uint64 {
	return ((w & laneTail7) + laneTail7 | w) & laneTailTop
}

// laneCount returns the number of entries in w.
func laneCount(w uint64) int { return bits.OnesCount64(occupiedLanes(w)) }

// putLane returns w with v in its first empty lane, and whether it had one.
func putLane(w, v uint64) (uint64, bool) {
	e := laneTailTop &^ occupiedLanes(w)
	unit := (e & -e) >> 7
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
func laneAge(v uint64) int { return bits.TrailingZeros64(v | 0x100) }

// longestMatch returns the lane of w whose entry matches q with the most
// index bits (the youngest), its age, and whether any matches. Delete
// removes that one (see grow_table.go, "Why Delete removes the youngest
// match").
func longestMatch(w, q uint64) (s, age int, ok bool) {
	m := matchLanes(w, q)
	age = 8
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
// to 0.
func growWraps(w uint64) bool { return growCounter(w) == growCtrMask }

// growBump returns w with its migration counter increased by one, wrapping
// within its five bits.
func growBump(w uint64) uint64 {
	c := (growCounter(w) + 1) & growCtrMask
	return w&^(growCtrMask<<growCtrShift) | c<<growCtrShift
}

// splitLane returns where entry v of a bucket goes when the table doubles:
// into the new bucket 2j+half with value nv, or, for a void entry, into
// both (both true, nv = v).
func splitLane(v uint64) (nv, half uint64, both bool) {
	tail := v & 0xff
	if tail == tailVoid {
		return v, 0, true
	}
	return v&^0xff | tail<<1&0xff, tail >> 7, false
}

// matchBits returns the number of hash bits entry v is compared on: its
// tag and the index bits above its marker.
func matchBits(v uint64) int { return 6 + 7 - laneAge(v) }
