package cuckoo

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// TestLookupSurvivesCounterWrap stalls a lookup by hand between its reads
// while its first bucket takes part in 2^c, 2^(c+1) and 3*2^c relocations,
// moving the victim fingerprint back and forth, so that b1's migration
// counter wraps around to exactly the value the lookup first read. It then
// runs the real decision code on the real words. Without the wrap epoch
// (twophase.go, locked.go) each of these decisions answers "absent" for a
// key that was in the filter throughout.
//
// At f=8 the counter has 30 bits; the test shortens it to 14 (the layout's
// mask is the only place the width is read), which keeps 3*2^c moves
// cheap and exercises the same code. Counters in the bucket words and the
// epoch exist only in the one-bucket-per-word layouts, so f=8 is that
// layout (bits8OneWord); the packed layout counts moves in 64-bit version
// words that never wrap (packed.go, tested in packed_test.go).
func TestLookupSurvivesCounterWrap(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, fb := range []int{bits8OneWord, 12, 15, Bits12x5} {
			for _, cycles := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("mode=%v/bits=%s/cycles=%d", mode, layoutName(fb), cycles), func(t *testing.T) {
					testLookupAcrossWraps(t, mode, fb, cycles)
				})
			}
		}
	}
}

func testLookupAcrossWraps(t *testing.T, mode Mode, fb, cycles int) {
	f := NewTestFilter(t, 1000, mode, fb, 7)
	if fb == bits8OneWord {
		f.lay.ctrMask = 1<<14 - 1
	}
	l := &f.lay
	c := bits.Len64(l.ctrMask)
	moves := cycles << c

	// A key with two distinct buckets, stored in b2.
	var key []byte
	var b1, b2, fp uint64
	for i := 0; ; i++ {
		key = []byte(fmt.Sprintf("victim-%d", i))
		b1, fp, _ = f.hash(key)
		if b2 = f.alt(b1, fp); b2 != b1 {
			break
		}
	}
	if err := f.Insert(key); err != nil {
		t.Fatal(err)
	}
	var my *descLease
	defer func() {
		if my != nil {
			my.release()
		}
	}()
	moveVictim := func(src, dst uint64) {
		t.Helper()
		s := l.match(f.t.load(src), fp)
		if s < 0 || !f.move(src, s, fp, dst, &my) {
			t.Fatalf("could not move the victim from bucket %d to %d", src, dst)
		}
	}
	if l.contains(f.t.load(b1), fp) {
		moveVictim(b1, b2)
	}

	// The stalled lookup: epoch, then b1 (the victim is in b2) ...
	e := f.t.epoch.Load()
	w1 := f.t.words[b1].Load()
	// ... the victim moves to b1 before the lookup reads b2 ...
	moveVictim(b2, b1)
	w2 := f.t.words[b2].Load()
	// ... and goes back and forth until b1 has taken part in `moves`
	// relocations, ending in b2.
	for i := 1; i < moves; i++ {
		if i%2 == 1 {
			moveVictim(b1, b2)
		} else {
			moveVictim(b2, b1)
		}
	}

	if l.containsEither(w1, w2, fp) {
		t.Fatal("phase 1 saw the victim; the schedule is wrong")
	}
	if f.t.words[b1].Load() != w1 {
		t.Fatalf("b1 after %d relocations = %#x, want the first read %#x: the counter did not wrap back", moves, f.t.words[b1].Load(), w1)
	}
	if f.unchanged(b1, w1, e) {
		t.Errorf("fast path (Lookup, LookupBatch, lookupLocked): b1 and the epoch look unchanged after %d relocations through b1; the lookup would answer absent", moves)
	}
	switch mode {
	case LockFree:
		if _, ok, done := f.phase2(b1, b2, fp, w1, w2, e); done && !ok {
			t.Errorf("phase2 decided absent after %d relocations through b1", moves)
		}
		if !f.findAfter(b1, b2, fp, w1, w2, e) {
			t.Errorf("findAfter answered absent after %d relocations through b1", moves)
		}
	case Locked:
		if !f.lookupUnderLocks(b1, b2, fp) {
			t.Error("lookupUnderLocks missed the victim")
		}
	}
	// The public operations agree, and Delete's search finds the victim.
	if !f.Lookup(key) {
		t.Error("Lookup missed the victim")
	}
	found := []bool{false}
	if f.LookupBatch([][]byte{key}, found); !found[0] {
		t.Error("LookupBatch missed the victim")
	}
	if f.Count(key) != 1 {
		t.Errorf("Count = %d; want 1", f.Count(key))
	}
	h := xxhash.Sum64(key)
	if !f.LookupHash(h) {
		t.Error("LookupHash missed the victim")
	}
	if f.LookupBatchHash([]uint64{h}, found[:1]); !found[0] {
		t.Error("LookupBatchHash missed the victim")
	}
	if !f.Delete(key) {
		t.Error("Delete did not find the victim")
	}
}
