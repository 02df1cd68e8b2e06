package cuckoo

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pkNaiveSlots returns the four slots of bucket b of word w.
func pkNaiveSlots(w, b uint64) [4]uint64 {
	var s [4]uint64
	for i := range s {
		s[i] = w >> (32*(b&1) + 8*uint64(i)) & 0xff
	}
	return s
}

// TestPackedBucketOps checks the packed layout's SWAR helpers against a
// slot-by-slot reading of random words (with many empty and equal slots):
// membership of one bucket and of two at once, exact matches and free
// slots, and that pkPut never puts a fingerprint of 64 or more into the
// restricted top slot, so a plain word never has a tag bit set.
func TestPackedBucketOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	slot := func() uint64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return 7
		}
		return rng.Uint64N(256)
	}
	word := func() uint64 {
		var w uint64
		for i := range 8 {
			x := slot()
			if i == 7 {
				x &= pkTopLimit - 1
			}
			w |= x << (8 * i)
		}
		return w
	}
	for range 200_000 {
		w1, w2 := word(), word()
		b1, b2 := rng.Uint64N(1000), rng.Uint64N(1000)
		fp := 1 + rng.Uint64N(255)
		if rng.IntN(4) == 0 {
			fp = 7
		}
		s1, s2 := pkNaiveSlots(w1, b1), pkNaiveSlots(w2, b2)
		in1, in2, n1, free1 := false, false, 0, 0
		for i, x := range s1 {
			if x == fp {
				in1 = true
				n1++
			}
			if x == 0 && !(b1&1 != 0 && i == 3 && fp >= pkTopLimit) {
				free1++
			}
			in2 = in2 || s2[i] == fp
		}
		if got := pkHas(pkHalf(w1, b1), fp); got != in1 {
			t.Fatalf("pkHas(%#x, bucket %d, %d) = %v; want %v", w1, b1, fp, got, in1)
		}
		if got := pkHasEither(w1, w2, b1, b2, fp); got != (in1 || in2) {
			t.Fatalf("pkHasEither(%#x, %#x, %d, %d, %d) = %v; want %v", w1, w2, b1, b2, fp, got, in1 || in2)
		}
		if got := bits.OnesCount64(pkMatches(pkHalf(w1, b1), fp)); got != n1 {
			t.Fatalf("pkMatches(%#x, bucket %d, %d) counts %d; want %d", w1, b1, fp, got, n1)
		}
		fr := pkFree(pkHalf(w1, b1), b1, fp)
		if got := bits.OnesCount64(fr); got != free1 {
			t.Fatalf("pkFree(%#x, bucket %d, %d) counts %d; want %d", w1, b1, fp, got, free1)
		}
		if fr == 0 {
			continue
		}
		nw := pkPut(w1, b1, fp, fr)
		if nw&tagMask != 0 {
			t.Fatalf("pkPut(%#x, bucket %d, %d) = %#x: a tag bit set", w1, b1, fp, nw)
		}
		if got := bits.OnesCount64(pkMatches(pkHalf(nw, b1), fp)); got != n1+1 || nw&^w1 == 0 || (nw^w1)>>pkShift(b1)&^pkHalfMask != 0 {
			t.Fatalf("pkPut(%#x, bucket %d, %d) = %#x: not one more copy in that bucket alone", w1, b1, fp, nw)
		}
	}
}

// TestPackedFirstFailure fills packed tables (both modes, 2,000 to 1M
// keys, three seeds) until the first ErrFull and checks the load reached
// against the 92% New sizes the layout for, and the false-positive rate
// against 2·4·α/255 at that load.
func TestPackedFirstFailure(t *testing.T) {
	sizes := []int{2000, 10_000, 100_000, 1 << 20}
	if testing.Short() || raceEnabled {
		// Sequential fills: the race detector finds nothing here and
		// slows the 2^20-key fills to half a minute.
		sizes = sizes[:3]
	}
	if testing.Short() || raceEnabled && !LongTests() {
		sizes = sizes[:2]
	}
	for _, mode := range []Mode{LockFree, Locked} {
		for _, n := range sizes {
			for seed := uint64(1); seed <= 3; seed++ {
				f := NewTestFilter(t, n, mode, 8, seed)
				var k [8]byte
				i := 0
				for ; ; i++ {
					binary.LittleEndian.PutUint64(k[:], uint64(i))
					if f.Insert(k[:]) != nil {
						break
					}
				}
				load := float64(i) / float64(f.Cap())
				if i < n || load < float64(packedLoadNum)/packedLoadDen {
					t.Errorf("%v n=%d seed=%d: first ErrFull after %d keys, %.4f load; New promises %d keys, %d%%", mode, n, seed, i, load, n, packedLoadNum)
				}
				if f.Len() != i {
					t.Errorf("Len %d after %d inserts", f.Len(), i)
				}
				const probes = 200_000
				fps := 0
				for j := range probes {
					binary.LittleEndian.PutUint64(k[:], uint64(j)|1<<40)
					if f.Lookup(k[:]) {
						fps++
					}
				}
				rate, want := float64(fps)/probes, 8*load/255
				if rate < 0.8*want || rate > 1.2*want {
					t.Errorf("%v n=%d: false-positive rate %.3f%%; want about %.3f%%", mode, n, 100*rate, 100*want)
				}
				t.Logf("%v n=%d seed=%d: first ErrFull at %.4f load, false positives %.3f%%", mode, n, seed, load, 100*rate)
			}
		}
	}
}

// TestPackedLockedMoveOrder enumerates every interleaving of Locked mode's
// unlocked lookup (read V(b1), b1's word, b2's word, V(b1)) with two
// relocation steps of the one copy of fp, b2 -> b1 and then b1 -> b2 (the
// lookup holds no lock, the two steps are ordered by their locks), each
// step as the stores of pkMoveLocked: destination, the destination's
// version, source (so only the step into b1 changes V(b1)). A lookup that
// answers "absent" without the locks while the copy is present throughout
// is a failure. It also checks that the enumeration catches the two wrong
// orders, the version before the destination store and the version after
// the source store, and a step that adds to its source's version instead.
func TestPackedLockedMoveOrder(t *testing.T) {
	const (
		stDst = iota
		stVer
		stSrc
	)
	orders := []struct {
		name   string
		steps  [3]int
		srcVer bool // the step adds to its source's version, not its destination's
		ok     bool
	}{
		{"dst,version,src (pkMoveLocked)", [3]int{stDst, stVer, stSrc}, false, true},
		{"version,dst,src", [3]int{stVer, stDst, stSrc}, false, false},
		{"dst,src,version", [3]int{stDst, stSrc, stVer}, false, false},
		{"dst,source's version,src", [3]int{stDst, stVer, stSrc}, true, false},
	}
	for _, o := range orders {
		misses := 0
		// The lookup's 4 reads among the moves' 6 writes: choose the
		// positions of the reads among 10 actions.
		for mask := 0; mask < 1<<10; mask++ {
			if bits.OnesCount(uint(mask)) != 4 {
				continue
			}
			// State: the copy in b2; in[0] = b1 holds it, in[1] = b2.
			in := [2]bool{false, true}
			ver := uint64(0)
			moves := [2][2]int{{1, 0}, {0, 1}} // src, dst
			mv, st := 0, 0
			var reads []uint64
			for a := range 10 {
				if mask&(1<<a) != 0 {
					switch len(reads) {
					case 0, 3:
						reads = append(reads, ver)
					case 1:
						reads = append(reads, b2u(in[0]))
					case 2:
						reads = append(reads, b2u(in[1]))
					}
					continue
				}
				src, dst := moves[mv][0], moves[mv][1]
				switch o.steps[st] {
				case stDst:
					in[dst] = true
				case stVer:
					// ver is V(b1), bucket 0: it changes when b1 is the
					// bucket whose version the step adds to.
					if (o.srcVer && src == 0) || (!o.srcVer && dst == 0) {
						ver++
					}
				case stSrc:
					in[src] = false
				}
				if !in[0] && !in[1] {
					t.Fatalf("%s: the copy left both buckets", o.name)
				}
				if st++; st == 3 {
					mv, st = mv+1, 0
				}
			}
			if reads[1] == 0 && reads[2] == 0 && reads[0] == reads[3] {
				misses++
			}
		}
		switch {
		case o.ok && misses > 0:
			t.Errorf("%s: %d interleavings answer absent without the locks while the copy is present", o.name, misses)
		case !o.ok && misses == 0:
			t.Errorf("%s: a wrong order passed every interleaving: the enumeration cannot fail", o.name)
		}
	}
}

// TestPackedMoveBumpsDestinationOnly moves one fingerprint b2 -> b1 and
// back with the real move of each mode, for a pair whose buckets lie in
// different words under different version words: each move must add one
// to its destination's version and leave its source's alone (the claims of
// packed.go and packed_locked.go rest on the first; Count, which checks
// both, on the first too). The stress tests catch a LockFree move that
// adds to the wrong version, but not a Locked one: its unlocked lookups
// miss only in a narrow window.
func TestPackedMoveBumpsDestinationOnly(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run(mode.String(), func(t *testing.T) {
			f, b1, b2, fp := pkModelPair(t, mode, false, false) // different words and version words
			f.t.words[b2>>1].Store(fp << pkShift(b2))           // the copy in slot 0 of b2
			for i, step := range [][2]uint64{{b2, b1}, {b1, b2}} {
				src, dst := step[0], step[1]
				vs, vd := f.t.verOf(src).Load(), f.t.verOf(dst).Load()
				if !f.testMove(src, 0, fp, dst) {
					t.Fatalf("move %d (%d -> %d) did not apply", i, src, dst)
				}
				if got := f.t.verOf(dst).Load(); got != vd+1 {
					t.Errorf("move %d: V(dst) %d -> %d; want one more", i, vd, got)
				}
				if got := f.t.verOf(src).Load(); got != vs {
					t.Errorf("move %d: V(src) %d -> %d; want unchanged", i, vs, got)
				}
				if !pkHas(pkHalf(f.t.words[dst>>1].Load(), dst), fp) || pkHas(pkHalf(f.t.words[src>>1].Load(), src), fp) {
					t.Fatalf("move %d: the fingerprint is not in dst alone", i)
				}
			}
		})
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// pkHashFor returns a key hash that a seed-0 filter of m buckets places in
// bucket b1 with fingerprint fp (f=8).
func pkHashFor(m, b1, fp uint64) uint64 {
	hi := (b1<<32 + m - 1) / m     // the least hi with hi·m>>32 = b1
	lo := ((fp-1)<<32 + 254) / 255 // the least lo with lo·255>>32 = fp-1
	return hi<<32 | lo
}

// TestPackedOneWordLookupUnderMoves keeps the one copy of a key whose two
// buckets are the two halves of one word moving between them, as
// relocations do, while other goroutines look it up: every lookup must
// find it. A lookup that decided such a pair from two separate reads of
// the word (a move between them hides the copy from both) missed 1 to 3
// times in each of three 1.5-second runs on two cores; the model checker's
// packed/one-word/lookup-from-two-reads is the same mistake.
func TestPackedOneWordLookupUnderMoves(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		f := NewTestFilter(t, 30, mode, 8, 0)
		b1, fp := uint64(0), uint64(0)
	search:
		for b := range f.m {
			for x := uint64(1); x < 256; x++ {
				if a := f.alt(b, x); a != b && a>>1 == b>>1 {
					b1, fp = b, x
					break search
				}
			}
		}
		if fp == 0 {
			t.Fatal("no bucket pair within one word")
		}
		h := pkHashFor(f.m, b1, fp)
		if pb1, pfp, pb2 := f.placeHash(h); pb1 != b1 || pfp != fp || pb2>>1 != b1>>1 {
			t.Fatalf("hash %#x places at %d, %d, %d; want %d, %d and the same word", h, pb1, pfp, pb2, b1, fp)
		}
		if err := f.InsertHash(h); err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		var misses, lookups, moves atomic.Int64
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				for _, src := range []uint64{b1, f.alt(b1, fp)} {
					if z := pkMatches(pkHalf(f.t.load(src>>1), src), fp); z != 0 {
						m := f.gate.enterMove()
						if f.testMove(src, pkSlotOf(z), fp, f.alt(src, fp)) {
							moves.Add(1)
						}
						f.gate.exitMove(m)
					}
				}
			}
		}()
		for range 2 * runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					lookups.Add(1)
					if !f.LookupHash(h) {
						misses.Add(1)
					}
				}
			}()
		}
		time.Sleep(time.Duration(RaceScaled(Sized(250, 1000, 2000), 2)) * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		t.Logf("%v: %d lookups, %d moves, %d misses", mode, lookups.Load(), moves.Load(), misses.Load())
		if misses.Load() != 0 {
			t.Errorf("%v: %d of %d lookups missed a key present throughout (%d moves)", mode, misses.Load(), lookups.Load(), moves.Load())
		}
		if moves.Load() == 0 {
			t.Errorf("%v: no move ran: the test checked nothing", mode)
		}
	}
}

// TestVersionsFor checks the version-word counts New documents: a power
// of two; 64 for tables of 512 to 16,383 words; one per 8 to 15 words
// below, one per 128 to 255 words above, at most 16,384.
func TestVersionsFor(t *testing.T) {
	for _, n := range []uint64{1, 7, 15, 16, 100, 511, 512, 1000, 16383, 16384, 135_870, 1 << 21, 1<<22 - 1, 1 << 22, 1 << 31} {
		v := versionsFor(n)
		per := n / v
		var ok bool
		switch {
		case v&(v-1) != 0:
		case n < 16:
			ok = v == 1
		case n < 512:
			ok = per >= 8 && per < 16
		case n < 16384:
			ok = v == 64
		case n < 1<<22:
			ok = per >= 128 && per < 256
		default:
			ok = v == 1<<14
		}
		if !ok {
			t.Errorf("versionsFor(%d) = %d (%d words each)", n, v, per)
		}
	}
}

// TestPackedPlacementRule checks pkChoose (both buckets in one word) and
// pkFree and pkPut (one bucket, as moves use them), which choose without
// branches, against the placement rule written out slot by slot:
// the bucket with more free slots that may take fp wins, b1 on a tie, but
// a free top slot of an odd bucket wins outright for a fingerprint below
// 64; the fingerprint then goes into that top slot, or else into the
// lowest free slot it may take (never slot 3 of an odd bucket for 64 or
// more). Every fingerprint, both parities of both buckets, random words
// with every pattern of free slots, and one-word pairs.
func TestPackedPlacementRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	may := func(b uint64, s int, fp uint64) bool { return !(b&1 != 0 && s == 3 && fp >= pkTopLimit) }
	// want returns the bucket and slot the rule chooses, or ok=false.
	want := func(w1, w2, b1, b2, fp uint64) (b uint64, slot int, ok bool) {
		type choice struct {
			n     int
			top   bool
			first int
		}
		pick := func(w, b uint64) choice {
			c := choice{first: -1}
			for s, x := range pkNaiveSlots(w, b) {
				if x == 0 && may(b, s, fp) {
					c.n++
					if c.first < 0 {
						c.first = s
					}
				}
			}
			c.top = b&1 != 0 && fp < pkTopLimit && pkNaiveSlots(w, b)[3] == 0
			return c
		}
		c1, c2 := pick(w1, b1), pick(w2, b2)
		b, c := b1, c1
		if c2.top && !c1.top || c2.top == c1.top && c2.n > c1.n {
			b, c = b2, c2
		}
		switch {
		case c.n == 0:
			return 0, 0, false
		case c.top:
			return b, 3, true
		}
		return b, c.first, true
	}
	word := func(free uint64) uint64 { // free: bit i set = slot i of the word empty
		var w uint64
		for i := range 8 {
			if free&(1<<i) == 0 {
				x := 1 + rng.Uint64N(255)
				if i == 7 {
					x = 1 + rng.Uint64N(pkTopLimit-1)
				}
				w |= x << (8 * i)
			}
		}
		return w
	}
	checked := 0
	for pattern := range uint64(1 << 16) {
		w1, w2 := word(pattern&0xff), word(pattern>>8)
		for _, bb := range [][2]uint64{{10, 21}, {11, 20}, {12, 22}, {13, 23}, {14, 15}, {15, 14}, {16, 16}} {
			b1, b2 := bb[0], bb[1]
			w2 := w2
			if b1>>1 == b2>>1 {
				w2 = w1 // one word, one read
			}
			for fp := uint64(1); fp <= 255; fp += 1 + rng.Uint64N(8) {
				b, w, put := pkChoose(b1, b2, fp, w1, w2)
				wb, ws, wok := want(w1, w2, b1, b2, fp)
				if (put != 0) != wok {
					t.Fatalf("words %#x, %#x, buckets %d, %d, fp %d: room %v; want %v", w1, w2, b1, b2, fp, put != 0, wok)
				}
				if !wok {
					continue
				}
				ww := w1
				if wb == b2 {
					ww = w2
				}
				exp := ww | fp<<(pkShift(wb)+8*uint64(ws))
				if nw := w | put; b != wb || w != ww || nw != exp || nw&tagMask != 0 {
					t.Fatalf("words %#x, %#x, buckets %d, %d, fp %d: bucket %d, word %#x; want bucket %d, slot %d (%#x)", w1, w2, b1, b2, fp, b, nw, wb, ws, exp)
				}
				// pkFree and pkPut, for the bucket the rule chooses.
				if nw := pkPut(ww, wb, fp, pkFree(pkHalf(ww, wb), wb, fp)); nw != exp {
					t.Fatalf("word %#x, bucket %d, fp %d: pkPut gives %#x; want slot %d (%#x)", ww, wb, fp, nw, ws, exp)
				}
				checked++
			}
		}
	}
	t.Logf("%d placements checked", checked)
}

// TestPackedLockedAddPlacement checks that pkAddLocked, which chooses from
// unlocked reads and locks one word, stores exactly what pkAddHeld, which
// locks both words first, would: the same bucket and slot for every
// pattern of free slots, both parities of both buckets, one-word pairs and
// full pairs. (Concurrent inserts whose chosen bucket filled up meanwhile
// are TestUniqueOwnersAgainstRelocation's and TestQuiescentCopiesEqualLen's:
// both fail when pkAddLocked writes from its unlocked read.)
func TestPackedLockedAddPlacement(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	f, err := New(1000, WithFingerprintBits(8), WithMode(Locked))
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(1000, WithFingerprintBits(8), WithMode(Locked))
	if err != nil {
		t.Fatal(err)
	}
	word := func() uint64 {
		var w uint64
		for i := range 8 {
			if rng.IntN(2) == 0 {
				x := 1 + rng.Uint64N(255)
				if i == 7 {
					x = 1 + rng.Uint64N(pkTopLimit-1)
				}
				w |= x << (8 * i)
			}
		}
		return w
	}
	pairs := [][2]uint64{{10, 21}, {11, 20}, {12, 22}, {13, 23}, {14, 15}, {15, 14}, {16, 16}}
	for range 20000 {
		bb := pairs[rng.IntN(len(pairs))]
		b1, b2 := bb[0], bb[1]
		w1, w2 := word(), word()
		fp := 1 + rng.Uint64N(255)
		for _, x := range []*Filter{f, g} {
			x.t.words[b1>>1].Store(w1)
			x.t.words[b2>>1].Store(w2)
		}
		got := f.pkAddLocked(b1, b2, fp)
		want := g.pkAddHeld(b1, b2, fp)
		if got != want {
			t.Fatalf("words %#x, %#x, buckets %d, %d, fp %d: pkAddLocked %v, pkAddHeld %v", w1, w2, b1, b2, fp, got, want)
		}
		for _, i := range []uint64{b1 >> 1, b2 >> 1} {
			if a, b := f.t.words[i].Load(), g.t.words[i].Load(); a != b {
				t.Fatalf("words %#x, %#x, buckets %d, %d, fp %d: word %d is %#x; pkAddHeld makes %#x", w1, w2, b1, b2, fp, i, a, b)
			}
		}
	}
}

const pkHalfMask = 0xffffffff

// pkUnit turns a mask of slot high bits into a word with 1 in the lowest
// bit of the lowest marked slot (0 for 0).
func pkUnit(z uint64) uint64 { return (z & -z) >> 7 }

// pkSlotOf returns the slot index of the lowest marked slot of z (z != 0).
func pkSlotOf(z uint64) int { return bits.TrailingZeros64(z) >> 3 }
