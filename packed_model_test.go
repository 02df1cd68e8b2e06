package cuckoo

import (
	"fmt"
	"math/bits"
	"testing"
)

// The packed layout's protocol (packed.go) in the model checker of
// relocation_model_test.go: the same explorer, configurations and
// linearizability check, running the packed code's own functions. The
// pair's two buckets lie in two different words, their version words two
// or one (sameVersion), or both buckets lie in one word (sameWord). Both
// version words share one action mask, which only makes the explorer
// treat more actions as dependent (more interleavings, none fewer).

// pkModelPair returns a packed filter in mode, a fingerprint of 64 or more
// (so that an odd bucket's restricted slot is in play) and its two
// buckets: in different words under one version word or two, or
// (sameWord) the two halves of one word.
func pkModelPair(t *testing.T, mode Mode, sameVersion, sameWord bool) (f *Filter, b1, b2, fp uint64) {
	f, _, b1, b2, fp = pkModelKey(t, mode, sameVersion, sameWord)
	return f, b1, b2, fp
}

// pkModelKey is pkModelPair with a key placed in the pair.
func pkModelKey(t *testing.T, mode Mode, sameVersion, sameWord bool) (f *Filter, key []byte, b1, b2, fp uint64) {
	t.Helper()
	f = NewTestFilter(t, 4000, mode, 8, 1)
	if len(f.t.vers) < 2 {
		t.Fatalf("%d version words; the model needs two", len(f.t.vers))
	}
	key = modelKey(t, f, func(b1, b2, fp uint64) bool {
		if fp < pkTopLimit || b1 == b2 || (b1>>1 == b2>>1) != sameWord {
			return false
		}
		return sameWord || (f.t.verIdx(b1) == f.t.verIdx(b2)) == sameVersion
	})
	b1, fp, b2 = f.hash(key)
	return f, key, b1, b2, fp
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

// pkOp runs one operation of a script: the library's own function once
// the key is placed, or a mutation below.
func (c *mctx) pkOp(kind string) int {
	r := c.r
	f, fp := r.f, r.fp
	b1, b2 := c.keyPair()
	// s1, s2: the order searches and deletes read the pair in, the lower
	// bucket first (searchPair), or with keyOrder, broken on purpose, in
	// the key's order.
	s1, s2 := searchPair(b1, b2)
	if r.proto.keyOrder {
		s1, s2 = b1, b2
	}
	switch kind {
	case "insert":
		return b2i(f.pkInsertKey(b1, b2, fp) == nil)
	case "delete":
		switch {
		case r.proto.deleteUnsettled || r.proto.deleteB2First:
			return b2i(c.pkBrokenRemove(s1, s2))
		case r.proto.keyOrder:
			return b2i(f.pkRemove(s1, s2, fp))
		}
		return b2i(f.deleteFp(b1, b2, fp))
	case "unique":
		return b2i(c.insertUnique())
	case "count":
		if r.proto.keyOrder {
			return f.pkCountLockFree(s1, s2, fp)
		}
		return f.countCopies(b1, b2, fp)
	case "lookup":
		switch {
		case r.proto.lookupTwoReads:
			return b2i(c.pkLookupTwoReads(s1, s2))
		case r.proto.lateVersion:
			_, ok := c.pkFindLateVersion(s1, s2)
			return b2i(ok)
		case r.proto.keyOrder:
			return b2i(f.pkLookup(s1, s2, fp))
		}
		return b2i(f.Lookup(r.key))
	}
	panic("model: unknown operation " + kind)
}

// pkLookupTwoReads is Filter.pkLookup deciding a one-word pair from its
// two reads of that word: broken on purpose (a move between them hides
// the copy from both).
func (c *mctx) pkLookupTwoReads(b1, b2 uint64) bool {
	r := c.r
	t := &r.f.t
	vi := t.verIdx(b1)
	v := t.load(vi)
	w1, w2 := t.load(b1>>1), t.load(b2>>1)
	if pkHasEither(w1, w2, b1, b2, r.fp) {
		return true
	}
	if b1>>1 == b2>>1 {
		return false
	}
	if t.load(vi) == v {
		return false
	}
	_, ok := r.f.pkFind(b1, b2, r.fp)
	return ok
}

// pkFindLateVersion is Filter.pkFind reading the version after b1's word:
// broken on purpose.
func (c *mctx) pkFindLateVersion(b1, b2 uint64) (uint64, bool) {
	r := c.r
	t := &r.f.t
	fp := r.fp
	vi := t.verIdx(b1)
	for {
		w1 := t.load(b1 >> 1)
		v := t.load(vi)
		if pkHas(pkHalf(w1, b1), fp) {
			return b1, true
		}
		if b1>>1 == b2>>1 {
			if pkHas(pkHalf(w1, b2), fp) {
				return b2, true
			}
			return 0, false
		}
		if pkHas(pkHalf(t.load(b2>>1), b2), fp) {
			return b2, true
		}
		if t.load(vi) == v {
			return 0, false
		}
	}
}

// pkBrokenRemove is Filter.pkRemove broken on purpose: with
// deleteUnsettled its first attempt answers "absent" when its reads show
// no copy, without the version's test; with deleteB2First it takes from
// b2 when both reads show a copy.
func (c *mctx) pkBrokenRemove(b1, b2 uint64) bool {
	r := c.r
	f, t := r.f, &r.f.t
	fp := r.fp
	vi := t.verIdx(b1)
	e := t.load(vi)
	w1, w2 := t.load(b1>>1), t.load(b2>>1)
	if b1>>1 == b2>>1 {
		w2 = w1
	}
	n1, _ := pkTake(w1, b1, fp)
	n2, _ := pkTake(w2, b2, fp)
	b, w, nw := b2, w2, n2
	if n1 != w1 && !(r.proto.deleteB2First && n2 != w2) {
		b, w, nw = b1, w1, n1
	}
	if nw != w {
		if t.cas(b>>1, w, nw) {
			return true
		}
	} else if b1>>1 == b2>>1 || r.proto.deleteUnsettled || t.load(vi) == e {
		return false
	}
	for {
		b, ok := f.pkFind(b1, b2, fp)
		if !ok {
			return false
		}
		for {
			w := t.load(b >> 1)
			nw, ok := pkTake(w, b, fp)
			if !ok {
				break
			}
			if t.cas(b>>1, w, nw) {
				return true
			}
		}
	}
}

// pkModelMoveSourceVersion is pkMoveLockFree adding one to the source's
// version instead of the destination's: broken on purpose, a search can
// then miss a copy that moves b2 -> b1 between its bucket reads (V(b1)
// unchanged).
func pkModelMoveSourceVersion(c *mctx, src, dst uint64) {
	pkBrokenMove(c, src, dst, true)
}

// pkModelMoveNoVersions is pkMoveLockFree without the versions in its
// K-CAS: broken on purpose, a search can then miss a copy that moves
// b2 -> b1 between its reads and back.
func pkModelMoveNoVersions(c *mctx, src, dst uint64) {
	pkBrokenMove(c, src, dst, false)
}

// pkBrokenMove moves a copy of fp from src to dst in one K-CAS that adds
// one to src's version (srcVersion) or to none.
func pkBrokenMove(c *mctx, src, dst uint64, srcVersion bool) {
	r := c.r
	t := &r.f.t
	for {
		ws := t.load(src >> 1)
		z := pkMatches(pkHalf(ws, src), r.fp)
		if z == 0 {
			return
		}
		var op kcasOp
		w := ws &^ (0xff * pkUnit(z) << pkShift(src))
		if src>>1 == dst>>1 {
			fr := pkFree(pkHalf(w, dst), dst, r.fp)
			if fr == 0 {
				return
			}
			op.add(src>>1, ws, pkPut(w, dst, r.fp, fr))
		} else {
			wd := t.load(dst >> 1)
			fr := pkFree(pkHalf(wd, dst), dst, r.fp)
			if fr == 0 {
				return
			}
			op.add(src>>1, ws, w)
			op.add(dst>>1, wd, pkPut(wd, dst, r.fp, fr))
		}
		if srcVersion {
			vs := t.verIdx(src)
			v := t.load(vs)
			op.add(vs, v, v+1)
		}
		if t.kcas(&op) {
			return
		}
	}
}
