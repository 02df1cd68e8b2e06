package cuckoo

import (
	"fmt"
	"math/bits"
	"testing"
)

// The packed layout's protocol (packed.go) in the model checker of
// relocation_model_test.go: the same explorer, configurations and
// linearizability check, with the operations taking the packed code's
// steps one atomic action at a time. The pair's two buckets lie in two
// different words, their version words two or one (sameVersion), or both
// buckets lie in one word (sameWord).
// Both version words share one action mask, which only makes the explorer
// treat more actions as dependent (more interleavings, none fewer).

// pkModelPair returns a packed filter in mode, a fingerprint of 64 or more
// (so that the odd bucket's restricted slot is in play) and its two
// buckets, one of them odd: in different words under one version word or
// two, or (sameWord) the two halves of one word.
func pkModelPair(t *testing.T, mode Mode, sameVersion, sameWord bool) (f *Filter, b1, b2, fp uint64) {
	t.Helper()
	f = NewTestFilter(t, 4000, mode, 8, 1)
	if len(f.t.vers) < 2 {
		t.Fatalf("%d version words; the model needs two", len(f.t.vers))
	}
	for b1 = 5; b1 < f.m; b1++ {
		for fp = pkTopLimit; fp <= 255; fp++ {
			b2 = f.alt(b1, fp)
			if b1 == b2 || (b1>>1 == b2>>1) != sameWord {
				continue
			}
			if sameWord || (f.t.verIdx(b1) == f.t.verIdx(b2)) == sameVersion {
				return f, b1, b2, fp
			}
		}
	}
	t.Fatal("no pair found")
	return
}

func (r *mrun) pkMaskOf(i uint64) uint8 {
	switch {
	case i == r.b1>>1:
		return mB1
	case i == r.b2>>1:
		return mB2
	case i >= versionBase:
		return mEpoch
	}
	panic(fmt.Sprintf("model: word %d outside the pair", i))
}

// pkResetPair empties the pair's words and versions and puts in1 copies of
// fp into b1 and in2 into b2.
func pkResetPair(f *Filter, b1, b2, fp uint64, in1, in2 int) {
	f.t.words[b1>>1].Store(0)
	f.t.words[b2>>1].Store(0)
	for i := range f.t.vers {
		f.t.vers[i].Store(0)
	}
	for b, n := range map[uint64]int{b1: in1, b2: in2} {
		for range n {
			w := f.t.words[b>>1].Load()
			f.t.words[b>>1].Store(pkPut(w, b, fp, pkFree(pkHalf(w, b), b, fp)))
		}
	}
}

// pkPairCopies returns the copies of fp in the pair at the end of a run,
// or what is wrong with the words.
func pkPairCopies(f *Filter, b1, b2, fp uint64) (int, string) {
	w1, w2 := f.t.words[b1>>1].Load(), f.t.words[b2>>1].Load()
	if (w1|w2)&tagMask != 0 {
		return 0, fmt.Sprintf("a K-CAS reference is left in the pair: %#x %#x", w1, w2)
	}
	for i := range f.t.vers {
		if v := f.t.vers[i].Load(); v&tagMask != 0 {
			return 0, fmt.Sprintf("a K-CAS reference is left in version word %d: %#x", i, v)
		}
	}
	if w1>>56 >= pkTopLimit || w2>>56 >= pkTopLimit {
		return 0, fmt.Sprintf("a fingerprint of %d or more in a restricted slot: %#x %#x", pkTopLimit, w1, w2)
	}
	n := bits.OnesCount64(pkMatches(pkHalf(w1, b1), fp)) + bits.OnesCount64(pkMatches(pkHalf(w2, b2), fp))
	return n, ""
}

// pkOp runs one operation of a script.
func (c *mctx) pkOp(kind string) int {
	switch kind {
	case "insert":
		return b2i(c.pkInsert())
	case "delete":
		return b2i(c.pkRemove())
	case "unique":
		return b2i(c.pkInsertUnique())
	case "count":
		return c.pkCount()
	case "lookup":
		return b2i(c.pkLookup())
	}
	panic("model: unknown operation " + kind)
}

// pkLookup is Filter.pkLookup: one round of plain reads that decides
// most lookups, then pkFind. With lookupTwoReads it decides a one-word
// pair from its two reads of that word: broken on purpose (a move between
// them hides the copy from both).
func (c *mctx) pkLookup() bool {
	r := c.r
	b1, b2 := c.searchOrder()
	fp := r.fp
	vi := r.f.t.verIdx(b1)
	v := c.load(vi)
	w1 := c.load(b1 >> 1)
	w2 := c.load(b2 >> 1)
	if pkHasEither(w1, w2, b1, b2, fp) {
		return true
	}
	if b1>>1 == b2>>1 {
		if r.proto.lookupTwoReads {
			return false
		}
		return pkHas(pkHalf(w1, b2), fp)
	}
	if c.load(vi) == v {
		return false
	}
	_, ok := c.pkFind()
	return ok
}

// pkFind is Filter.pkFind, the search of Delete and of Lookup after its
// first round. With lateVersion it reads the version after b1's word:
// broken on purpose.
func (c *mctx) pkFind() (uint64, bool) {
	r := c.r
	b1, b2 := c.searchOrder()
	fp := r.fp
	vi := r.f.t.verIdx(b1)
	for {
		var v, w1 uint64
		if r.proto.lateVersion {
			w1 = c.load(b1 >> 1)
			v = c.load(vi)
		} else {
			v = c.load(vi)
			w1 = c.load(b1 >> 1)
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
		if pkHas(pkHalf(c.load(b2>>1), b2), fp) {
			return b2, true
		}
		if c.load(vi) == v {
			return 0, false
		}
	}
}

// pkRemove is Filter.pkRemove (delete.go.tmpl, zz_delete_packed.go): its
// first attempt reads the version of b1, then b1's and b2's words (one
// read decides a one-word pair), takes a copy from the bucket whose read
// shows one (b1 first), or answers "absent" when the pair is one word or
// the version read again is unchanged; anything else takes pkFind's loop.
func (c *mctx) pkRemove() bool {
	r := c.r
	b1, b2 := c.searchOrder()
	fp := r.fp
	vi := r.f.t.verIdx(b1)
	e := c.load(vi)
	w1, w2 := c.load(b1>>1), c.load(b2>>1)
	if b1>>1 == b2>>1 {
		w2 = w1
	}
	if (w1|w2)&tagMask == 0 {
		n1, _ := pkTake(w1, b1, fp)
		n2, _ := pkTake(w2, b2, fp)
		b, w, nw := b2, w2, n2
		if n1 != w1 && !(r.proto.deleteB2First && n2 != w2) {
			b, w, nw = b1, w1, n1
		}
		if nw != w {
			if c.cas(b>>1, w, nw) {
				return true
			}
		} else if e&tagMask == 0 && (b1>>1 == b2>>1 || r.proto.deleteUnsettled || c.load(vi) == e) {
			return false
		}
	}
	for {
		b, ok := c.pkFind()
		if !ok {
			return false
		}
		for {
			w := c.load(b >> 1)
			nw, ok := pkTake(w, b, fp)
			if !ok {
				break
			}
			if c.cas(b>>1, w, nw) {
				return true
			}
		}
	}
}

// loadPair reads the words of b1 and b2 as the writers do: one read when
// they are one word.
func (c *mctx) loadPair() (w1, w2 uint64) {
	b1, b2 := c.keyPair()
	w1 = c.load(b1 >> 1)
	if b2>>1 == b1>>1 {
		return w1, w1
	}
	return w1, c.load(b2 >> 1)
}

// pkInsert is Filter.pkAdd; the model keeps room in the pair.
func (c *mctx) pkInsert() bool {
	r := c.r
	b1, b2 := c.keyPair()
	fp := r.fp
	for {
		w1, w2 := c.loadPair()
		b, w, put := pkChoose(b1, b2, fp, w1, w2)
		if put == 0 {
			panic("model: the pair is full")
		}
		if c.cas(b>>1, w, w|put) {
			return true
		}
	}
}

// pkInsertUnique is Filter.pkAddUnique.
func (c *mctx) pkInsertUnique() bool {
	r := c.r
	b1, b2 := c.keyPair()
	fp := r.fp
	for {
		w1, w2 := c.loadPair()
		if pkHasEither(w1, w2, b1, b2, fp) {
			return false
		}
		b, _, put := pkChoose(b1, b2, fp, w1, w2)
		if put == 0 {
			panic("model: the pair is full")
		}
		if b1>>1 == b2>>1 {
			if c.cas(b1>>1, w1, w1|put) {
				return true
			}
			continue
		}
		n1, n2 := w1, w2
		if b == b1 {
			n1 |= put
		} else {
			n2 |= put
		}
		var op kcasOp
		op.add(b1>>1, w1, n1)
		op.add(b2>>1, w2, n2)
		c.step(maction{write: true, mask: mB1 | mB2})
		if r.f.t.kcas(&op) {
			return true
		}
	}
}

// pkCount is Filter.pkCount: both words read (one read when they are
// one), then one K-CAS that compares both with what was read and changes
// neither (decidePair).
func (c *mctx) pkCount() int {
	r := c.r
	b1, b2 := c.searchOrder()
	fp := r.fp
	for {
		w1 := c.load(b1 >> 1)
		n := bits.OnesCount64(pkMatches(pkHalf(w1, b1), fp))
		if b1>>1 == b2>>1 {
			return n + bits.OnesCount64(pkMatches(pkHalf(w1, b2), fp))
		}
		w2 := c.load(b2 >> 1)
		var op kcasOp
		op.add(b1>>1, w1, w1)
		op.add(b2>>1, w2, w2)
		c.step(maction{write: true, mask: mB1 | mB2})
		if r.f.t.kcas(&op) {
			return n + bits.OnesCount64(pkMatches(pkHalf(w2, b2), fp))
		}
	}
}

// pkModelMove is one relocation of a copy of fp: Filter.pkMoveLockFree, one K-CAS
// and so one action.
func pkModelMove(c *mctx, src, dst uint64) {
	r := c.r
	c.step(maction{write: true, mask: mB1 | mB2 | mEpoch})
	if z := pkMatches(pkHalf(r.f.t.load(src>>1), src), r.fp); z != 0 {
		r.f.testMove(src, pkSlotOf(z), r.fp, dst)
	}
}

// pkModelMoveSourceVersion is pkMoveLockFree adding one to the source's version
// instead of the destination's: broken on purpose, a search can then miss
// a copy that moves b2 -> b1 between its bucket reads (V(b1) unchanged).
func pkModelMoveSourceVersion(c *mctx, src, dst uint64) {
	r := c.r
	t := &r.f.t
	c.step(maction{write: true, mask: mB1 | mB2 | mEpoch})
	ws, wd := t.load(src>>1), t.load(dst>>1)
	z := pkMatches(pkHalf(ws, src), r.fp)
	if z == 0 {
		return
	}
	var op kcasOp
	if src>>1 == dst>>1 {
		w := ws &^ (0xff * pkUnit(z) << pkShift(src))
		fr := pkFree(pkHalf(w, dst), dst, r.fp)
		if fr == 0 {
			return
		}
		op.add(src>>1, ws, pkPut(w, dst, r.fp, fr))
	} else {
		fr := pkFree(pkHalf(wd, dst), dst, r.fp)
		if fr == 0 {
			return
		}
		op.add(src>>1, ws, ws&^(0xff*pkUnit(z)<<pkShift(src)))
		op.add(dst>>1, wd, pkPut(wd, dst, r.fp, fr))
	}
	vs := t.verIdx(src)
	v := t.load(vs)
	op.add(vs, v, v+1)
	if !t.kcas(&op) {
		panic("model: a move's K-CAS failed with nothing running beside it")
	}
}

// pkModelMoveNoVersions is pkMoveLockFree without the versions in its K-CAS:
// broken on purpose, a search can then miss a copy that moves b2 -> b1
// between its reads and back.
func pkModelMoveNoVersions(c *mctx, src, dst uint64) {
	r := c.r
	t := &r.f.t
	c.step(maction{write: true, mask: mB1 | mB2})
	ws, wd := t.load(src>>1), t.load(dst>>1)
	z := pkMatches(pkHalf(ws, src), r.fp)
	fr := pkFree(pkHalf(wd, dst), dst, r.fp)
	if z == 0 || fr == 0 {
		return
	}
	var op kcasOp
	op.add(src>>1, ws, ws&^(0xff*pkUnit(z)<<pkShift(src)))
	op.add(dst>>1, wd, pkPut(wd, dst, r.fp, fr))
	if !t.kcas(&op) {
		panic("model: a move's K-CAS failed with nothing running beside it")
	}
}
