package cuckoo

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// oldGT is growTable's placement state as of the code before the
// per-tag constants; its methods are that code, copied.
type oldGT struct {
	d, p, c                       uint64
	off, mask                     [growTags]uint32
	uShift, uMask, tShift, d1, p2 uint64
}

func newOldGT(c, d, p uint64, off, mask [growTags]uint32) *oldGT {
	x := &oldGT{d: d, p: p, c: c, off: off, mask: mask}
	x.uShift, x.uMask, x.tShift = growPosBits-d-1, 1<<(d+1)-1, growPosBits-growTailBits-d
	x.d1, x.p2 = d+1, 2*p
	return x
}

func (x *oldGT) place(kh uint64) growKey {
	r1 := (kh >> 32 * x.c) >> 32
	lo := uint64(uint32(kh) ^ uint32(kh>>32))
	tag := lo >> growIndexBits & (growTags - 1)
	p := lo << 1
	tv := tag << tagShift
	b1, q1 := x.slot(r1, p, tv)
	b2, q2 := x.slot(oldGrowAltBase(r1, uint64(x.off[tag]), x.c), p^uint64(x.mask[tag]), tv)
	return growKey{b1: b1, b2: b2, q1: q1, q2: q2}
}

func (x *oldGT) slot(r, p, tv uint64) (b, q uint64) {
	J := r<<(x.d1&63) | p>>(x.uShift&63)&x.uMask
	lt := (J - x.p2) >> 63
	b = (J>>1+x.p)&(lt-1) | J&-lt
	return b, tv | p>>((x.tShift-lt)&63)&(1<<growTailBits-1)<<1 | 1
}

func (x *oldGT) split(b uint64) int {
	if b < x.p2 {
		return 1
	}
	return 0
}

func oldGrowAltBase(r, o, c uint64) uint64 {
	d, borrow := bits.Sub64(o, r, 0)
	return d + c&-borrow
}

func (x *oldGT) alt(b, v uint64) (nb, nv uint64, ok bool) {
	nb, ok = x.altBucket(b, v)
	if !ok {
		return 0, 0, false
	}
	m := uint64(x.mask[v>>tagShift&(growTags-1)])
	d := x.d & 63
	from, to := x.split(b), x.split(nb)
	l := d + uint64(from)
	tail := v & tailMask
	above := -(tail & -tail) << 1
	v ^= m >> (growPosBits - growTailBits - l) & (1<<growTailBits - 1) << 1 & above & tailMask
	switch {
	case from > to:
		return nb, gainLane(v, (b^m>>(growPosBits-1-d))&1), true
	case from < to:
		nv, _, _ = splitLane(v)
		return nb, nv, true
	}
	return nb, v, true
}

func (x *oldGT) altBucket(b, v uint64) (uint64, bool) {
	tag := v >> tagShift & (growTags - 1)
	m := uint64(x.mask[tag])
	d := x.d & 63
	if b < x.p2 {
		l := d + 1
		r2 := oldGrowAltBase(b>>l, uint64(x.off[tag]), x.c)
		u2 := (b ^ m>>(growPosBits-l)) & (1<<l - 1)
		if j2 := r2<<d | u2>>1; j2 >= x.p {
			return j2 + x.p, true
		}
		return r2<<l | u2, true
	}
	j := b - x.p
	j2 := oldGrowAltBase(j>>d, uint64(x.off[tag]), x.c)<<d | (j^m>>(growPosBits-d))&(1<<d-1)
	if j2 >= x.p {
		return j2 + x.p, true
	}
	if v&tailMask == tailVoid {
		return 0, false
	}
	return j2<<1 | (v>>(tailBits-1)^m>>(growPosBits-1-d))&1, true
}

// TestReviewGrowPlacementMatchesOld compares place, split, altBucket and alt
// with the code they replaced, for random bases (small, and up to the
// largest), every level a base allows, and random split pointers (0 at the
// level bound, as expansion and decoding keep them).
func TestReviewGrowPlacementMatchesOld(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shapes := 0
	for round := range 3000 {
		var c uint64
		switch round % 4 {
		case 0:
			c = 1 + r.Uint64N(200)
		case 1:
			c = 1 + r.Uint64N(1<<20)
		case 2:
			c = maxBuckets - r.Uint64N(1<<10)
		default:
			c = 1 + r.Uint64N(maxBuckets)
		}
		maxD := uint64(growMaxDoublings)
		for maxD > 0 && c<<maxD > maxBuckets {
			maxD--
		}
		d := r.Uint64N(maxD + 1)
		if round%5 == 0 {
			d = maxD
		}
		var p uint64
		switch r.Uint64N(4) {
		case 0:
		case 1:
			p = c<<d - 1
		default:
			p = r.Uint64N(c << d)
		}
		if d == maxD { // as expansion and the format's checks keep it
			p = 0
		}
		var st growState
		sh := &st.shards[0]
		sh.base = c
		for tg := range growTags {
			st.mask[tg] = uint32(r.Uint64()) & (1<<growIndexBits - 1) << 1
			sh.off[tg] = uint32(r.Uint64N(c))
		}
		if round%7 == 0 { // extremes
			for tg := range growTags {
				st.mask[tg] = (1<<growIndexBits - 1) << 1
				sh.off[tg] = uint32(c - 1)
			}
		}
		x := st.tableShape(sh, d, p)
		o := newOldGT(c, d, p, sh.off, st.mask)
		shapes++
		for range 2000 {
			kh := r.Uint64()
			k, ok := x.place(kh), o.place(kh)
			if k != ok {
				t.Fatalf("c=%d d=%d p=%d kh=%#x: place %+v, old %+v", c, d, p, kh, k, ok)
			}
			if k.b1 >= x.m || k.b2 >= x.m {
				t.Fatalf("c=%d d=%d p=%d kh=%#x: place %+v out of m=%d", c, d, p, kh, k, x.m)
			}
			for _, bv := range [][2]uint64{{k.b1, k.q1}, {k.b2, k.q2}} {
				b, v := bv[0], bv[1]
				// also aged versions of the fresh entry: marker at bit a
				a := r.Uint64N(tailBits)
				va := v&^tailMask | (v&tailMask)<<a&tailMask | 1<<a
				for _, v := range []uint64{v, va} {
					if x.split(b) != o.split(b) {
						t.Fatalf("split(%d)", b)
					}
					nb, nok := x.altBucket(b, v)
					onb, onok := o.altBucket(b, v)
					if nb != onb || nok != onok {
						t.Fatalf("c=%d d=%d p=%d b=%d v=%#x: altBucket %d %v, old %d %v", c, d, p, b, v, nb, nok, onb, onok)
					}
					nb, nv, nok := x.alt(b, v)
					onb, onv, onok := o.alt(b, v)
					if nb != onb || nv != onv || nok != onok {
						t.Fatalf("c=%d d=%d p=%d b=%d v=%#x: alt %d %#x %v, old %d %#x %v", c, d, p, b, v, nb, nv, nok, onb, onv, onok)
					}
				}
			}
			// random bucket, random entry
			b := r.Uint64N(x.m)
			v := r.Uint64N(growTags)<<tagShift | r.Uint64N(1<<tailBits) | 1<<r.Uint64N(tailBits) // any non-zero tail
			for _, v := range []uint64{v, v&^tailMask | tailVoid} {
				nb, nok := x.altBucket(b, v)
				onb, onok := o.altBucket(b, v)
				if nb != onb || nok != onok || nok && nb >= x.m {
					t.Fatalf("c=%d d=%d p=%d b=%d v=%#x: altBucket %d %v, old %d %v", c, d, p, b, v, nb, nok, onb, onok)
				}
				nb, nv, nok := x.alt(b, v)
				onb, onv, onok := o.alt(b, v)
				if nb != onb || nv != onv || nok != onok {
					t.Fatalf("c=%d d=%d p=%d b=%d v=%#x: alt %d %#x %v, old %d %#x %v", c, d, p, b, v, nb, nv, nok, onb, onv, onok)
				}
			}
		}
	}
	t.Logf("%d shapes", shapes)
}

func oldOccupiedLanes(w uint64) uint64 { return ((w & laneTailLow) + laneTailLow | w) & laneTailTop }

// TestReviewSplitWordMatchesSplitLane: splitWord against the per-lane loop it
// replaced, as multisets of lanes, and laneCount/putLane against occupiedLanes.
func TestReviewSplitWordMatchesSplitLane(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	randLane := func() uint64 {
		switch r.Uint64N(4) {
		case 0:
			return 0
		case 1:
			return r.Uint64N(growTags)<<tagShift | tailVoid
		}
		a := r.Uint64N(tailBits)
		return r.Uint64N(growTags)<<tagShift | (r.Uint64()<<(a+1)|1<<a)&tailMask
	}
	for range 1 << 20 {
		var w uint64
		for s := range slotsPerBucket {
			w = setLane(w, s, randLane())
		}
		w |= r.Uint64() &^ lanesMask &^ tagMask // counter, frozen
		var half [2]uint64
		voids := 0
		for s := range slotsPerBucket {
			if v := lane(w, s); v != 0 {
				nv, h, both := splitLane(v)
				half[h], _ = putLane(half[h], nv)
				if both {
					half[1], _ = putLane(half[1], nv)
					voids++
				}
			}
		}
		h0, h1, nv := splitWord(w)
		lanesOf := func(x uint64) []uint64 {
			var l []uint64
			for s := range slotsPerBucket {
				if v := lane(x, s); v != 0 {
					l = append(l, v)
				}
			}
			slices.Sort(l)
			return l
		}
		if nv != voids || h0&^lanesMask != 0 || h1&^lanesMask != 0 ||
			!slices.Equal(lanesOf(h0), lanesOf(half[0])) || !slices.Equal(lanesOf(h1), lanesOf(half[1])) {
			t.Fatalf("w=%#x: splitWord %#x %#x %d, old %#x %#x %d", w, h0, h1, nv, half[0], half[1], voids)
		}
		if emptyLanes(w) != laneTailTop&^oldOccupiedLanes(w) || laneCount(w) != bits.OnesCount64(oldOccupiedLanes(w)) {
			t.Fatalf("w=%#x: emptyLanes", w)
		}
	}
}

// oldCopyChunk is copyChunk's non-Reset copy as it was (per bucket, per lane
// by putLane), returning the void entries it added.
func oldCopyChunk(g *Growing, n, o *growTable, lo, hi uint64) int {
	end := n.p
	if n.d > o.d {
		end = o.c << o.d
	}
	voids := 0
	for i := lo; i < hi; i++ {
		w := g.freezeIn(o, i)
		if i < o.p2 {
			n.t.words[i].Store(w & lanesMask)
			continue
		}
		j := i - o.p
		if j >= end {
			n.t.words[j+n.p].Store(w & lanesMask)
			continue
		}
		var half [2]uint64
		for s := range slotsPerBucket {
			if v := lane(w, s); v != 0 {
				nv, h, both := splitLane(v)
				half[h], _ = putLane(half[h], nv)
				if both {
					half[1], _ = putLane(half[1], nv)
					voids++
				}
			}
		}
		n.t.words[2*j].Store(half[0])
		n.t.words[2*j+1].Store(half[1])
	}
	return voids
}

// TestReviewCopyChunkMatchesOld: copyChunk (copyRun, splitWord, the inline
// freeze) against the old per-bucket copy, on random words, random chunk
// bounds, both modes, steps within a level and to the next.
func TestReviewCopyChunkMatchesOld(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	sortedLanes := func(w uint64) []uint64 {
		var l []uint64
		for s := range slotsPerBucket {
			if v := lane(w, s); v != 0 {
				l = append(l, v)
			}
		}
		slices.Sort(l)
		return l
	}
	for round := range 400 {
		c := 1 + r.Uint64N(300)
		st := modelState(r.Uint64(), c)
		sh := &st.shards[0]
		mode := []Mode{LockFree, Locked}[round%2]
		g := &Growing{}
		g.setup(1, mode, st)
		d := r.Uint64N(4)
		p := edgeSplitPointer(r, c<<d)
		o1, o2 := st.newTable(sh, d, p, mode), st.newTable(sh, d, p, mode)
		nd, np := o1.nextStep()
		n1, n2 := st.newTable(sh, nd, np, mode), st.newTable(sh, nd, np, mode)
		for i := range o1.m {
			var w uint64
			for s := range slotsPerBucket {
				var v uint64
				switch r.IntN(4) {
				case 0:
				case 1:
					v = r.Uint64N(growTags)<<tagShift | tailVoid
				default:
					a := r.Uint64N(tailBits)
					v = r.Uint64N(growTags)<<tagShift | (r.Uint64()<<(a+1)|1<<a)&tailMask
				}
				w = setLane(w, s, v)
			}
			w |= r.Uint64N(2) << growCtrShift
			if r.IntN(8) == 0 {
				w |= frozenBit // frozen by an earlier copier's try
			}
			o1.t.words[i].Store(w)
			o2.t.words[i].Store(w)
		}
		before := sh.count.sum()
		oldVoids := 0
		for lo := uint64(0); lo < o1.m; {
			hi := min(o1.m, lo+1+r.Uint64N(2*c))
			g.copyChunk(sh, n1, o1, lo, hi)
			oldVoids += oldCopyChunk(g, n2, o2, lo, hi)
			lo = hi
		}
		if got := sh.count.sum() - before; got != int64(oldVoids) {
			t.Fatalf("c=%d d=%d p=%d: count +%d, old +%d voids", c, d, p, got, oldVoids)
		}
		for i := range o1.m {
			if o1.t.words[i].Load() != o2.t.words[i].Load() {
				t.Fatalf("c=%d d=%d p=%d: old word %d %#x, %#x", c, d, p, i, o1.t.words[i].Load(), o2.t.words[i].Load())
			}
		}
		for i := range n1.m {
			w1, w2 := n1.t.words[i].Load(), n2.t.words[i].Load()
			if w1&^lanesMask != 0 || !slices.Equal(sortedLanes(w1), sortedLanes(w2)) {
				t.Fatalf("c=%d d=%d p=%d -> d=%d p=%d: new word %d %#x, old copy %#x", c, d, p, nd, np, i, w1, w2)
			}
		}
	}
}
