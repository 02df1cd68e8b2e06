package cuckoo

import (
	"fmt"
	"testing"
)

// Tests of the two-phase search (twophase.go): the retry decision as a table
// of constructed bucket words, and the interleavings of the claim's proof
// replayed with real relocations between the reads.

// tpWord returns a bucket word with migration counter ctr (reduced modulo
// the counter width) and the given fingerprints in its first slots.
func tpWord(l *layout, ctr uint64, fps ...uint64) uint64 {
	w := (ctr & l.ctrMask) << l.ctrShift
	for s, fp := range fps {
		w = l.setSlot(w, s, fp)
	}
	return w
}

// tpBuckets returns a LockFree filter and a fingerprint fp whose two buckets
// b1 != b2 are distinct, all empty. The two-phase search and the migration
// counters it reads are the one-bucket-per-word layouts' (the packed layout
// searches with version words, tested in packed_test.go), so bits is one of
// those layouts: bits8OneWord for 8-bit fingerprints.
func tpBuckets(t *testing.T, bits int) (f *Filter, b1, b2, fp uint64) {
	t.Helper()
	f = NewTestFilter(t, 1000, LockFree, bits, 1)
	b1 = 10
	for fp = 1; ; fp++ {
		if b2 = f.alt(b1, fp); b2 != b1 {
			return f, b1, b2, fp
		}
	}
}

// TestPhase2Decision drives phase2 with constructed words: w1 and w2 are
// what phase 1 read from b1 and b2 (neither holds fp), v1 and v2 what the
// table holds when phase 2 reads it again. d1 and d2 are the counter
// differences v1-w1 and v2-w2 modulo the counter width. The search
// answers "absent" only for d1 = 0 (twophase.go, "One order for every
// search": a single move through b1 can hide a colliding key's insert and
// delete) and retries for any other d1, whatever d2 is (the search has no
// epoch for b2's stripe, so it draws no conclusion from b2's counter),
// unless the read of b2 that follows finds fp. The paper's rule, d1 < 2,
// fails the d1=1 rows (checked). When the rows were written for that rule
// they failed under these mutations of phase2, each checked and reverted:
// a bound of 1, 3 or "exactly 2" instead of 2; a difference taken without
// the counter mask, the wrong way round, or against the other bucket's
// first read; b2 read although the counters already decide; no look for
// fp in the re-read b1; a key with one bucket not answered from its single
// read.
func TestPhase2Decision(t *testing.T) {
	for _, bits := range []int{bits8OneWord, 12, 15, Bits12x5} {
		t.Run(fmt.Sprintf("bits=%s", layoutName(bits)), func(t *testing.T) {
			f, b1, b2, fp := tpBuckets(t, bits)
			other := fp + 1 // another fingerprint in every word, so no word is empty
			l := &f.lay
			top := l.ctrMask // the largest counter: +1 wraps to 0
			type want struct {
				b        uint64
				ok, done bool
			}
			absent, retry := want{done: true}, want{}
			rows := []struct {
				name           string
				oneBucket      bool
				w1c, w2c       uint64 // counters phase 1 read
				v1c, v2c       uint64 // counters phase 2 reads
				fpInV1, fpInV2 bool   // fp arrived in b1 / b2 since phase 1
				want           want
			}{
				{name: "d1=0", w1c: 5, w2c: 9, v1c: 5, v2c: 12, want: absent},
				{name: "d1=1", w1c: 5, w2c: 9, v1c: 6, v2c: 12, want: retry},
				{name: "d1=1/fp-now-in-b2", w1c: 5, w2c: 9, v1c: 6, v2c: 12, fpInV2: true, want: want{b: b2, ok: true, done: true}},
				{name: "d1=2/d2=0", w1c: 5, w2c: 9, v1c: 7, v2c: 9, want: retry},
				{name: "d1=2/d2=1", w1c: 5, w2c: 9, v1c: 7, v2c: 10, want: retry},
				{name: "d1=2/d2=2", w1c: 5, w2c: 9, v1c: 7, v2c: 11, want: retry},
				{name: "d1=3/d2=7", w1c: 5, w2c: 9, v1c: 8, v2c: 16, want: retry},
				{name: "fp-in-b1/d1=0", w1c: 5, w2c: 9, v1c: 5, v2c: 9, fpInV1: true, want: want{b: b1, ok: true, done: true}},
				{name: "fp-in-b2/d1=2", w1c: 5, w2c: 9, v1c: 7, v2c: 9, fpInV2: true, want: want{b: b2, ok: true, done: true}},
				{name: "wrap/d1=1", w1c: top, w2c: 9, v1c: top + 1, v2c: 12, want: retry},
				{name: "wrap/d1=2/d2=2", w1c: top - 1, w2c: top, v1c: top + 1, v2c: top + 2, want: retry},
				{name: "wrap/d1=2/d2=1", w1c: top, w2c: top, v1c: top + 2, v2c: top + 1, want: retry},
				{name: "wrap/d1=2/d2=0", w1c: top, w2c: top, v1c: top + 2, v2c: top, want: retry},
				{name: "b1==b2/d=5", oneBucket: true, w1c: 5, v1c: 10, want: absent},
			}
			for _, r := range rows {
				t.Run(r.name, func(t *testing.T) {
					c1, c2 := b1, b2
					if r.oneBucket {
						c2 = c1
						r.w2c, r.v2c = r.w1c, r.v1c
					}
					// Phase 1's read of b2 (w2c) is not an argument of
					// phase2, which takes no decision from b2's counter;
					// the rows keep w2c to show that d2 does not matter.
					w1 := tpWord(l, r.w1c, other)
					v1, v2 := tpWord(l, r.v1c, other), tpWord(l, r.v2c, other)
					if r.fpInV1 {
						v1 = tpWord(l, r.v1c, other, fp)
					}
					if r.fpInV2 {
						v2 = tpWord(l, r.v2c, other, fp)
					}
					f.t.words[c1].Store(v1)
					if c2 != c1 {
						f.t.words[c2].Store(v2)
					}
					b, ok, done := f.phase2(c1, c2, fp, w1, f.t.epochOf(c1).Load())
					if got := (want{b, ok, done}); got != r.want {
						t.Errorf("phase2: got b=%d ok=%v done=%v; want b=%d ok=%v done=%v",
							b, ok, done, r.want.b, r.want.ok, r.want.done)
					}
				})
			}
		})
	}
}

// tpRelocate moves fp from bucket src to bucket dst with one relocation
// step, failing the test if the step does not apply.
func tpRelocate(t *testing.T, f *Filter, src, dst, fp uint64) {
	t.Helper()
	s := f.lay.match(f.t.load(src), fp)
	if s < 0 || !f.testMove(src, s, fp, dst) {
		t.Fatalf("moving fp %d from bucket %d to %d: the step did not apply", fp, src, dst)
	}
}

// TestTwoPhaseInterleavings replays the moves of the claim's proof between
// the reads of a search, with real relocation steps: phase 1 reads b1 (t1)
// and b2 (t2) by hand, the moves of each row happen before or after t2, and
// phase2 then reads b1 (t3) and, if it must, b2 (t4). A fingerprint that is
// in the filter throughout is found, whatever moved; an absent one whose
// first bucket saw two relocations is retried, and find then answers
// "absent" from fresh reads.
func TestTwoPhaseInterleavings(t *testing.T) {
	rows := []struct {
		name          string
		present       bool   // fp is stored (in b2 at the start)
		before, after string // moves in (t1, t2) and in (t2, t3): "21" is b2 -> b1
		want          want2
	}{
		{name: "b2->b1 in (t1,t2)", present: true, before: "21", want: want2{in: 1, ok: true, done: true}},
		{name: "b2->b1 in (t1,t2), b1->b2 in (t2,t3)", present: true, before: "21", after: "12", want: want2{in: 2, ok: true, done: true}},
		{name: "absent, 2 relocations through each bucket in (t2,t3)", after: "xx", want: want2{done: false}},
		{name: "absent, 2 relocations through each bucket in (t1,t2)", before: "xx", want: want2{done: false}},
		{name: "absent, 2 relocations through b1 only", after: "x1", want: want2{done: false}},
	}
	for _, bits := range []int{bits8OneWord, 12, 15, Bits12x5} {
		for _, r := range rows {
			t.Run(fmt.Sprintf("bits=%s/%s", layoutName(bits), r.name), func(t *testing.T) {
				f, b1, b2, fp := tpBuckets(t, bits)
				l := &f.lay
				bucket := map[byte]uint64{'1': b1, '2': b2}
				if r.present {
					f.t.words[b2].Store(l.setSlot(0, 0, fp))
				}
				// Relocations that do not involve fp: a fingerprint g
				// stored in b1 is moved away and back. Its other bucket is
				// b2 for "xx", so both counters move by 2, and a third
				// bucket for "x1", so only b1's does.
				relocs := func(moves string) {
					switch moves {
					case "xx", "x1":
						g := fp + 1
						for {
							peer := f.alt(b1, g)
							if moves == "xx" && peer == b2 || moves == "x1" && peer != b2 && peer != b1 {
								break
							}
							g++
						}
						peer := f.alt(b1, g)
						w := f.t.load(b1)
						f.t.words[b1].Store(l.setSlot(w, l.emptySlot(w), g))
						tpRelocate(t, f, b1, peer, g)
						tpRelocate(t, f, peer, b1, g)
					default:
						for i := 0; i+1 < len(moves); i += 2 {
							tpRelocate(t, f, bucket[moves[i]], bucket[moves[i+1]], fp)
						}
					}
				}
				w1 := f.t.load(b1) // t1
				relocs(r.before)
				w2 := f.t.load(b2) // t2
				relocs(r.after)
				if l.contains(w1, fp) || l.contains(w2, fp) {
					t.Fatalf("phase 1 saw fp; the row must make it miss")
				}
				b, ok, done := f.phase2(b1, b2, fp, w1, f.t.epochOf(b1).Load())
				got := want2{ok: ok, done: done}
				if ok {
					got.in = 1
					if b == b2 {
						got.in = 2
					}
				}
				if got != r.want {
					t.Errorf("phase2: got %+v; want %+v", got, r.want)
				}
				if _, ok := f.find(b1, b2, fp); ok != r.present {
					t.Errorf("find after the moves: got %v; want %v", ok, r.present)
				}
			})
		}
	}
}

// want2 is the outcome of phase2 in TestTwoPhaseInterleavings: in is 1 or 2
// for the bucket it found fp in, 0 when it did not.
type want2 struct {
	in       int
	ok, done bool
}
