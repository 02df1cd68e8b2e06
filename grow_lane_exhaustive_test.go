package cuckoo

import (
	"math/rand/v2"
	"testing"
)

// hasZeroLane is the definition matchEither's test must equal: some
// 15-bit lane (bits 0..59) of x is zero; bits 60..63 play no part.
func hasZeroLane(x uint64) bool {
	for s := range 4 {
		if lane(x, s) == 0 {
			return true
		}
	}
	return false
}

// TestGrowMatchEitherEveryLaneClass: matchEither(x1, x2) equals
// hasZeroLane(x1) || hasZeroLane(x2), and matchLanes' own zero test on the
// same x, for (a) every value of each lane with the other lanes drawn from
// the borrow classes (0, 1, >= 2, with and without bit 14) and bits 60..63
// varied, and (b) every pair of words built of those representatives. The
// subtraction's per-lane behaviour depends only on the lane's class and
// the borrow in, so (a) and (b) cover every word.
func TestGrowMatchEitherEveryLaneClass(t *testing.T) {
	reps := []uint64{0, 1, 2, 0x3fff, 0x4000, 0x4001, 0x7fff}
	tops := []uint64{0, 1, 2, 4, 8, 0xf}
	if testing.Short() || raceEnabled { // no concurrency to check
		reps = []uint64{0, 1, 0x4000, 0x7fff}
		tops = []uint64{0, 0xf}
	}
	noZero := uint64(0x7fff) * laneLO // a word with no zero lane
	exact := func(x uint64) bool {    // matchLanes' zero test, from laneDiff's output
		return laneHI&^((x&^laneHI+(laneHI-laneLO))|x) != 0
	}
	for pos := range 4 {
		for _, o0 := range reps {
			for _, o1 := range reps {
				for _, o2 := range reps {
					others := [3]uint64{o0, o1, o2}
					var base uint64
					for i, s := 0, 0; s < 4; s++ {
						if s == pos {
							continue
						}
						base = setLane(base, s, others[i])
						i++
					}
					for _, top := range tops {
						b := base | top<<60
						for v := range uint64(1 << laneBits) {
							x := setLane(b, pos, v)
							want := hasZeroLane(x)
							if matchEither(x, noZero) != want || matchEither(noZero, x) != want || exact(x) != want {
								t.Fatalf("x %#016x: matchEither %v/%v, exact %v; want %v", x, matchEither(x, noZero), matchEither(noZero, x), exact(x), want)
							}
						}
					}
				}
			}
		}
	}
	var words []uint64
	for _, a := range reps {
		for _, b := range reps {
			for _, c := range reps {
				for _, d := range reps {
					words = append(words, a|b<<15|c<<30|d<<45|uint64(len(words)%16)<<60)
				}
			}
		}
	}
	for _, x1 := range words {
		for _, x2 := range words {
			if got, want := matchEither(x1, x2), hasZeroLane(x1) || hasZeroLane(x2); got != want {
				t.Fatalf("matchEither(%#016x, %#016x) = %v; want %v", x1, x2, got, want)
			}
		}
	}
}

// TestGrowMatchEitherAgainstMatchLanes: the lookup condition before and
// after, on words a table can hold (every lane empty, void or an entry of
// any age, counter and frozen bits, and tag bits too), with queries whose
// tails have any bits, and the last lane matching only.
func TestGrowMatchEitherAgainstMatchLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	entry := func(q uint64) uint64 { // an entry matching q, or a near miss, of any age
		switch r.IntN(5) {
		case 0:
			return 0
		case 1:
			return r.Uint64()&(laneMask&^tailMask) | tailVoid // void
		}
		v := q
		if r.IntN(2) == 0 {
			v ^= 1 << r.IntN(laneBits)
		}
		a := uint(r.IntN(tailBits))
		return v&^(1<<(a+1)-1) | 1<<a
	}
	n := 3_000_000
	if testing.Short() || raceEnabled {
		n = 300_000
	}
	for range n {
		q1 := r.Uint64()&(laneMask&^tailMask) | (r.Uint64()&(tailVoid-1))<<1 | 1
		q2 := r.Uint64()&(laneMask&^tailMask) | (r.Uint64()&(tailVoid-1))<<1 | 1
		w1, w2 := r.Uint64()&^lanesMask, r.Uint64()&^lanesMask // counter, frozen, tags
		for s := range 4 {
			w1 = setLane(w1, s, entry(q1))
			w2 = setLane(w2, s, entry(q2))
		}
		old := matchLanes(w1, q1)|matchLanes(w2, q2) != 0
		model := slowMatch(w1, q1)|slowMatch(w2, q2) != 0
		if got := matchEither(laneDiff(w1, q1), laneDiff(w2, q2)); got != old || got != model {
			t.Fatalf("w1 %#016x q1 %#04x w2 %#016x q2 %#04x: matchEither %v, matchLanes %v, model %v", w1, q1, w2, q2, got, old, model)
		}
	}
}

// slotShift is slot as it was: a variable shift chooses.
func slotShift(x *growTable, J, T, tv uint64) (b, q uint64) {
	un := (J-x.p2)>>63 ^ 1
	return J>>un + x.p&-un, tv | T>>un&(1<<growTailBits-1)<<1
}

// TestGrowSlotAgainstShiftForm: slot equals the shift form for J, p2
// below 2^33, at J = p2 - 1, p2, p2 + 1, at 0 and the top, and at random.
func TestGrowSlotAgainstShiftForm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const top = 1 << 33
	check := func(J, p2, T, tv uint64) {
		x := &growTable{p: p2 / 2, p2: p2}
		b, q := x.slot(J, T, tv)
		wb, wq := slotShift(x, J, T, tv)
		if b != wb || q != wq {
			t.Fatalf("slot(J %#x, p2 %#x, T %#x, tv %#x) = %#x, %#x; shift form %#x, %#x", J, p2, T, tv, b, q, wb, wq)
		}
	}
	n := 2_000_000
	if testing.Short() || raceEnabled {
		n = 200_000
	}
	for range n {
		p2 := r.Uint64N(top/2) * 2
		T, tv := r.Uint64()>>r.IntN(64), r.Uint64()&(laneMask&^tailMask)|1
		for _, J := range []uint64{0, 1, top - 1, top - 2, r.Uint64N(top), p2, p2 + 1, p2 - 1, p2 + 2, p2 - 2} {
			if J < top {
				check(J, p2, T, tv)
			}
		}
	}
	for _, p2 := range []uint64{0, 2, top - 2} {
		for _, J := range []uint64{0, 1, p2 - 1, p2, p2 + 1, top - 1} {
			if J < top {
				check(J, p2, r.Uint64(), 1)
			}
		}
	}
}
