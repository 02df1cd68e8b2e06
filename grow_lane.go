package cuckoo

import "math/bits"

// The bucket word of a Growing filter:
//
//	bit 63 62   61        60        59 ... 45  44 ... 30  29 ... 15  14 ... 0
//	   [tags] [frozen] [counter]   [lane 3 ]  [lane 2 ]  [lane 1 ]  [lane 0]
//
// A lane is 0 (empty) or an entry: a 6-bit tag above a 9-bit tail, non-zero
// by its marker. The tag is fixed; the tail holds the next position bits of
// the entry's bucket (grow_table.go) above a 1 marker: tail = p<<1 | 1 with
// 8 bits p when fresh, the first in bit 8. A split takes bit 8 (which half)
// and shifts the tail left, so the marker rises: an entry of age a (splits
// since written, less levels moved down) has its marker at bit a and 8-a
// position bits. At age 8 (tail 0x100) it is void and a split copies it
// into both halves. A query matches an entry whose tag and bits above the
// marker equal its own: older entries match more keys.
//
// Frozen: an expansion has copied or is copying the word (grow.go); no
// operation changes it again. Counter: one bit, bumped by each move through
// the bucket (move.go.tmpl) and each Delete from its pair (grow_table.go,
// "Deletes move both counters"), not by inserts or freezing; every second
// bump wraps it, and each wrap is counted in the epoch of the bucket's
// stripe (twophase.go, "Counter wraps"). Four 15-bit lanes leave four bits,
// three of them taken by the frozen bit and the tags; a 15-bit lane
// compares one bit more than a 14-bit one, halving the false-positive rate.

const (
	laneBits     = 15
	laneMask     = 1<<laneBits - 1
	laneLO       = 1 | 1<<laneBits | 1<<(2*laneBits) | 1<<(3*laneBits) // bit 0 of every lane
	laneHI       = laneLO << (laneBits - 1)                            // bit 14 of every lane
	lanesMask    = 1<<(4*laneBits) - 1
	tailBits     = 9 // up to 8 position bits and the marker
	tailMask     = 1<<tailBits - 1
	tailVoid     = 1 << (tailBits - 1)     // a void entry's tail: the marker alone
	laneTailLow  = (tailVoid - 1) * laneLO // tail bits 0..7 of every lane
	laneTailTop  = tailVoid * laneLO       // tail bit 8 of every lane
	laneAboveTl  = 1 << tailBits * laneLO  // bit 9 of every lane
	tagShift     = tailBits
	growCtrShift = 4 * laneBits
	growCtrMask  = 1
	frozenBit    = 1 << 61
)

// laneLow returns, per lane of w, bits 0 up to its marker (the bits a
// query ignores); an empty lane gets bits 0..13. Setting bit 14 first
// keeps the subtraction from borrowing across lanes.
func laneLow(w uint64) uint64 { return (w ^ ((w | laneHI) - laneLO)) &^ laneHI }

// laneDiff returns w with a zero lane exactly where its entry matches the
// fresh lane value q. An empty lane's low bits include bit 9, so it never
// matches; bits above the lanes never carry into a lane's bit 14.
func laneDiff(w, q uint64) uint64 {
	low := laneLow(w)
	return (w^q*laneLO)&^low | low&laneAboveTl
}

// matchLanes returns bit 14 of every lane of w whose entry matches q.
func matchLanes(w, q uint64) uint64 {
	x := laneDiff(w, q)
	return laneHI &^ ((x&^laneHI + (laneHI - laneLO)) | x)
}

// matchEither reports whether laneDiff x1 or x2 has a zero lane: zeroSlots
// (bucket.go) of both, one mask. Apart from laneDiff so that both inline.
func matchEither(x1, x2 uint64) bool { return ((x1-laneLO)&^x1|(x2-laneLO)&^x2)&laneHI != 0 }

// emptyLanes returns bit 8 of every lane whose tail is 0: adding 0xff to
// tail bits 0..7 carries into bit 8 unless they are all 0.
func emptyLanes(w uint64) uint64 { return laneTailTop &^ ((w & laneTailLow) + laneTailLow | w) }

// matchCount returns the number of lanes of w whose entry matches q1 or q2.
func matchCount(w, q1, q2 uint64) int { return bits.OnesCount64(matchLanes(w, q1) | matchLanes(w, q2)) }

func laneCount(w uint64) int { return slotsPerBucket - bits.OnesCount64(emptyLanes(w)) }

// putLane returns w with v in its first empty lane, and whether it had one.
func putLane(w, v uint64) (uint64, bool) {
	e := emptyLanes(w)
	unit := (e & -e) >> (tailBits - 1)
	return w | v*unit, e != 0
}

func lane(w uint64, s int) uint64 { return w >> (uint(s) * laneBits) & laneMask }

func setLane(w uint64, s int, v uint64) uint64 {
	sh := uint(s) * laneBits
	return w&^(laneMask<<sh) | v<<sh
}

// laneAge returns the age of entry v: the position of its marker.
func laneAge(v uint64) int { return bits.TrailingZeros64(v | 1<<tailBits) }

// longestMatch returns the lane of w matching q with the most position bits
// (the youngest, which Delete removes), its age, and whether any does.
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

// growCounter returns w's one-bit migration counter, growWraps reports
// whether bumping it wraps it to 0, and growBump returns w with it bumped.
func growCounter(w uint64) uint64 { return w >> growCtrShift & growCtrMask }
func growWraps(w uint64) bool     { return growCounter(w) == growCtrMask }
func growBump(w uint64) uint64    { return w ^ growCtrMask<<growCtrShift }

// splitLane returns where entry v goes when its bucket j splits: bucket
// 2j+half as nv, or both halves for a void entry (nv = v).
func splitLane(v uint64) (nv, half uint64, both bool) {
	tail := v & tailMask
	if tail == tailVoid {
		return v, 0, true
	}
	return v&^tailMask | tail<<1&tailMask, tail >> (tailBits - 1), false
}

// splitWord returns the halves' words when the bucket of word w splits, each
// entry as splitLane writes it, in its lane, and the number of void entries.
func splitWord(w uint64) (h0, h1 uint64, voids int) {
	low := w&laneTailLow + laneTailLow // bit 8: tail bits 0..7 not all 0
	void, lanes := w&^low&laneTailTop, w&^(laneTailLow|laneTailTop)|w&laneTailLow<<1
	kept := w & (void >> (tailBits - 1) * laneMask)
	h0 = lanes&((low&^w&laneTailTop)>>(tailBits-1)*laneMask) | kept
	h1 = lanes&((low&w&laneTailTop)>>(tailBits-1)*laneMask) | kept
	return h0, h1, bits.OnesCount64(void)
}

// gainLane returns entry v as written one level lower (grow_table.go,
// "Relocation across levels"): g, the bit the higher bucket's index held,
// becomes its first tail bit; an entry that held 8 bits drops its last.
func gainLane(v, g uint64) uint64 {
	t := v & tailMask
	return v&^tailMask | g<<(tailBits-1) | t>>1 | t&1
}

// matchBits returns the hash bits entry v compares: tag and position bits.
func matchBits(v uint64) int { return growTagBits + tailBits - 1 - laneAge(v) }
