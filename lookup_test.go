package cuckoo

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// Tests of the searches (lookup.go.tmpl, search.go.tmpl) against what could
// hide a key between their reads: counter wraps, a move counted in the
// wrong stripe, colliding keys inserted and deleted around the search.

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
	// Several epoch stripes, and a victim whose buckets are in different
	// ones: a wrap counted in the other bucket's stripe must not pass.
	setEpochs(f, 64)
	l := &f.lay
	c := bits.Len64(l.ctrMask)
	moves := cycles << c

	// A key with two distinct buckets, stored in b2.
	var key []byte
	var b1, b2, fp uint64
	for i := 0; ; i++ {
		key = []byte(fmt.Sprintf("victim-%d", i))
		b1, fp, _ = f.hash(key)
		if b2 = f.alt(b1, fp); b2 != b1 && f.t.epochIdx(b1) != f.t.epochIdx(b2) {
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

	// The stalled lookup: b1's stripe's epoch, then b1 (the victim is in
	// b2) ...
	e := f.t.epochOf(b1).Load()
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
		if _, ok, done := f.phase2(b1, b2, fp, w1, e); done && !ok {
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

// TestMoveCountsWrapInItsStripe checks the accounting that the search's
// claim relies on (twophase.go, "Counter wraps"): a move that takes a
// bucket's counter from its maximum to 0 adds to the epoch of that
// bucket's stripe, not of the other bucket's, and a move that wraps
// neither counter leaves every epoch alone. LockFree adds one in the
// move's K-CAS; Locked adds one before and one after its stores.
func TestMoveCountsWrapInItsStripe(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, fb := range []int{12, 15, Bits12x5} {
			for _, sameStripe := range []bool{false, true} {
				name := fmt.Sprintf("mode=%v/bits=%s/same-stripe=%v", mode, layoutName(fb), sameStripe)
				t.Run(name, func(t *testing.T) {
					testMoveCountsWrap(t, mode, fb, sameStripe)
				})
			}
		}
	}
}

func testMoveCountsWrap(t *testing.T, mode Mode, fb int, sameStripe bool) {
	f := NewTestFilter(t, 1000, mode, fb, 3)
	setEpochs(f, 64)
	l := &f.lay
	perWrap := uint64(1)
	if mode == Locked {
		perWrap = 2
	}
	var src, dst, fp uint64
	for src, fp = 7, 1; ; fp++ {
		dst = f.alt(src, fp)
		if dst != src && (f.t.epochIdx(src) == f.t.epochIdx(dst)) == sameStripe {
			break
		}
	}
	for _, c := range []struct {
		name         string
		wrapS, wrapD bool
	}{{"neither", false, false}, {"source", true, false}, {"destination", false, true}, {"both", true, true}} {
		ctr := func(wraps bool) uint64 {
			if wraps {
				return l.ctrMask
			}
			return 0
		}
		f.t.words[src].Store(l.setSlot(ctr(c.wrapS)<<l.ctrShift, 0, fp))
		f.t.words[dst].Store(ctr(c.wrapD) << l.ctrShift)
		es, ed := f.t.epochOf(src).Load(), f.t.epochOf(dst).Load()
		if !f.testMove(src, 0, fp, dst) {
			t.Fatalf("%s: the move did not apply", c.name)
		}
		var wantS, wantD uint64
		if c.wrapS {
			wantS += perWrap
		}
		if c.wrapD {
			wantD += perWrap
		}
		if sameStripe {
			// One epoch for both: at least one wrap's worth when
			// either wraps (LockFree adds once for both).
			got := f.t.epochOf(src).Load() - es
			if (got == 0) != (wantS+wantD == 0) || got > wantS+wantD {
				t.Errorf("%s: the shared stripe's epoch grew by %d; want %d to %d", c.name, got, min(perWrap, wantS+wantD), wantS+wantD)
			}
			continue
		}
		if got := f.t.epochOf(src).Load() - es; got != wantS {
			t.Errorf("%s: the source's stripe's epoch grew by %d; want %d", c.name, got, wantS)
		}
		if got := f.t.epochOf(dst).Load() - ed; got != wantD {
			t.Errorf("%s: the destination's stripe's epoch grew by %d; want %d", c.name, got, wantD)
		}
	}
}

// TestSearchesReadTheirFirstBucketsEpoch stalls every search entry point
// (and find, the search of Delete) between its reads (searchStalls, race builds only) and relocates under
// it so that b1's counter wraps back to what the search first read while
// b2's does not wrap: the victim moves b2 -> b1 after the first read of
// b1, and after the read of b2 it moves back to b2 while another
// fingerprint leaves b1 for a third bucket and returns, four moves through
// b1 (2-bit counters: one wrap) and two through b2. Only the epoch of
// b1's stripe shows the wrap, so a search that read another stripe's epoch
// (b2's, say) would find b1 bit for bit unchanged and answer "absent" for
// a key present throughout. The buckets are in different stripes.
func TestSearchesReadTheirFirstBucketsEpoch(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	type entry struct {
		name  string
		modes []Mode
		found func(f *Filter, key []byte) bool
	}
	entries := []entry{
		{"Lookup", []Mode{LockFree, Locked}, func(f *Filter, k []byte) bool { return f.Lookup(k) }},
		{"LookupHash", []Mode{LockFree, Locked}, func(f *Filter, k []byte) bool { return f.LookupHash(xxhash.Sum64(k)) }},
		{"LookupBatch", []Mode{LockFree, Locked}, func(f *Filter, k []byte) bool {
			found := make([]bool, 1)
			f.LookupBatch([][]byte{k}, found)
			return found[0]
		}},
		{"LookupBatchHash", []Mode{LockFree, Locked}, func(f *Filter, k []byte) bool {
			found := make([]bool, 1)
			f.LookupBatchHash([]uint64{xxhash.Sum64(k)}, found)
			return found[0]
		}},
		{"LookupBatch/prefetched", []Mode{LockFree, Locked}, lookupBatchLast},
		{"Count", []Mode{LockFree}, func(f *Filter, k []byte) bool { return f.Count(k) > 0 }},
		// Delete's own first reads answer only when they show the key;
		// otherwise it searches with find.
		{"find", []Mode{LockFree}, func(f *Filter, k []byte) bool {
			b1, fp, b2 := f.hash(k)
			_, ok := f.find(b1, b2, fp)
			return ok
		}},
	}
	for _, en := range entries {
		for _, mode := range en.modes {
			for _, wrapAt := range []int{2, 3} {
				if en.name == "Count" && wrapAt == 3 {
					continue // Count reads no epoch: no stage 3 (unique.go)
				}
				t.Run(fmt.Sprintf("%s/mode=%v/wrap-at-stage=%d", en.name, mode, wrapAt), func(t *testing.T) {
					testSearchStalledAcrossWrap(t, mode, en.found, wrapAt)
				})
			}
		}
	}
}

// testSearchStalledAcrossWrap stalls a search of a present key and moves
// fingerprints through its first bucket b1 four times, so that b1's 2-bit
// counter wraps back to the value the search first read and b1 holds the
// same word again, the key having been in b1 only while the search read
// b2. With wrapAt 2 all the moves after the first are made at stage 2
// (after the first read of b2); with wrapAt 3 the last one, the wrap, is
// made at stage 3, between the search's re-read of b1 and its re-read of
// the epoch: a search that re-read the epoch first would see it unchanged
// and then b1 unchanged, and miss the key.
func testSearchStalledAcrossWrap(t *testing.T, mode Mode, found func(*Filter, []byte) bool, wrapAt int) {
	f := NewTestFilter(t, 1000, mode, Bits12x5, 11)
	setEpochs(f, 64)
	l := &f.lay
	if l.ctrMask != 3 {
		t.Fatalf("counter mask %d; the schedule assumes 2-bit counters", l.ctrMask)
	}
	// The victim: a key whose buckets are in different stripes; another
	// fingerprint g in b1 whose other bucket b3 is neither.
	var key []byte
	var b1, b2, fp, g, b3 uint64
	for i := 0; ; i++ {
		key = []byte(fmt.Sprintf("stalled-%d", i))
		b1, fp, b2 = f.hash(key)
		// b1 < b2: searches read the lower bucket first (searchPair).
		if b1 < b2 && f.t.epochIdx(b1) != f.t.epochIdx(b2) {
			break
		}
	}
	for g = 1; ; g++ {
		if g > f.fpRange {
			t.Fatal("no fingerprint has a third bucket as its other bucket")
		}
		if b3 = f.alt(b1, g); g != fp && b3 != b1 && b3 != b2 {
			break
		}
	}
	f.t.words[b1].Store(l.setSlot(0, 0, g))
	f.t.words[b2].Store(l.setSlot(0, 0, fp))
	f.t.words[b3].Store(0)
	f.count.add(2)

	move := func(src, dst, v uint64) {
		s := l.match(f.t.load(src), v)
		if s < 0 || !f.testMove(src, s, v, dst) {
			t.Errorf("could not move %d from bucket %d to %d", v, src, dst)
		}
	}
	var done [4]bool
	stall := func(sf *Filter, sb1 uint64, stage int) {
		if sf != f || sb1 != b1 || done[stage] || stage > 1 && !done[stage-1] || stage > wrapAt {
			return
		}
		done[stage] = true
		switch stage {
		case 1:
			move(b2, b1, fp)
		case 2:
			move(b1, b2, fp)
			move(b1, b3, g)
			if wrapAt == 2 {
				move(b3, b1, g)
			}
		case 3:
			move(b3, b1, g)
		}
	}
	searchStalls.Store(&stall)
	defer searchStalls.Store(nil)
	e1, e2 := f.t.epochOf(b1).Load(), f.t.epochOf(b2).Load()

	if !found(f, key) {
		t.Errorf("the victim, present throughout, was reported absent")
	}
	if !done[1] || !done[2] || wrapAt == 3 && !done[3] {
		t.Fatalf("the search did not reach its stall points (stage 1: %v, stage 2: %v, stage 3: %v)", done[1], done[2], done[3])
	}
	// The schedule did what it says: one wrap in b1's stripe, none in b2's.
	if f.t.epochOf(b1).Load() == e1 || f.t.epochOf(b2).Load() != e2 {
		t.Fatalf("epochs: b1's stripe %d -> %d, b2's %d -> %d; want a change in b1's only",
			e1, f.t.epochOf(b1).Load(), e2, f.t.epochOf(b2).Load())
	}
}

// Searches against keys that collide with the searched one. Keys that
// share a fingerprint and a bucket pair have interchangeable copies, and
// may have the pair in either order (one key's first bucket is the
// other's second). Inserts and deletes change no migration counter or
// version, so a search that reads the pair's buckets one after another
// can see a colliding key's copy arrive in the bucket it already read
// while a Delete takes the searched key's copy out of the bucket it has
// yet to read. These tests stall a search between its reads (the stall
// points of twophase.go, race builds) and run such a schedule; the key
// searched for is inserted before and never deleted, so every answer must
// be "present" (and a Delete must find a copy).

// collidingKeys returns two keys a and c with one fingerprint and one
// bucket pair p < q, a's first bucket p and c's first bucket q; for the
// packed layout the two buckets are in different words and the
// fingerprint is 64 or more (any slot takes it).
func collidingKeys(t *testing.T, f *Filter) (a, c []byte, p, q, fp uint64) {
	t.Helper()
	type class struct{ fp, p, q uint64 }
	first := map[class][]byte{} // a key of each class whose first bucket is p
	for i := 0; i < 1<<22; i++ {
		k := key8('c', i)
		b1, kfp, b2 := f.hash(k)
		if b1 == b2 || f.lay.packed && (b1>>1 == b2>>1 || kfp < pkTopLimit) {
			continue
		}
		cl := class{kfp, min(b1, b2), max(b1, b2)}
		if b1 < b2 {
			if first[cl] == nil {
				first[cl] = k
			}
			continue
		}
		if o := first[cl]; o != nil {
			return o, k, cl.p, cl.q, kfp
		}
	}
	t.Fatal("no two keys collide with their buckets in opposite orders")
	return
}

// collision is a filter holding key a, whose only copy is in q, and a key c
// that collides with it in the opposite bucket order (collidingKeys).
type collision struct {
	t        *testing.T
	f        *Filter
	a, c     []byte
	p, q, fp uint64
}

// newCollision inserts a into f and moves its copy to q if it landed in p.
func newCollision(t *testing.T, f *Filter) *collision {
	t.Helper()
	x := &collision{t: t, f: f}
	x.a, x.c, x.p, x.q, x.fp = collidingKeys(t, f)
	if err := f.Insert(x.a); err != nil {
		t.Fatal(err)
	}
	if slotOf(f, x.p, x.fp) >= 0 {
		x.move(x.p, x.q)
	}
	return x
}

// move relocates one copy of the fingerprint from src to dst, as a
// relocation step does (holding the snapshot gate).
func (x *collision) move(src, dst uint64) {
	m := x.f.gate.enterMove()
	defer x.f.gate.exitMove(m)
	if s := slotOf(x.f, src, x.fp); s < 0 || !x.f.testMove(src, s, x.fp, dst) {
		x.t.Fatalf("could not move %d from bucket %d to %d", x.fp, src, dst)
	}
}

// churn inserts c, checks that its copy landed in bucket want, and
// deletes c.
func (x *collision) churn(want uint64) {
	if err := x.f.Insert(x.c); err != nil {
		x.t.Fatal(err)
	}
	if slotOf(x.f, want, x.fp) < 0 {
		x.t.Fatalf("the colliding key did not land in bucket %d", want)
	}
	if !x.f.Delete(x.c) {
		x.t.Fatal("Delete of the colliding key returned false")
	}
}

// slotOf returns the slot of bucket b holding fp, or -1.
func slotOf(f *Filter, b, fp uint64) int {
	for s, x := range bucketFps(f, b) {
		if x == fp {
			return s
		}
	}
	return -1
}

func TestSearchAgainstCollidingKeys(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	type search struct {
		name     string
		lockFree bool // Locked mode's version takes both locks: no stall point
		found    func(f *Filter, k []byte) bool
	}
	searches := []search{
		{"Lookup", false, func(f *Filter, k []byte) bool { return f.Lookup(k) }},
		{"LookupHash", false, func(f *Filter, k []byte) bool { return f.LookupHash(xxhash.Sum64(k)) }},
		{"LookupBatch", false, func(f *Filter, k []byte) bool {
			found := make([]bool, 1)
			f.LookupBatch([][]byte{k}, found)
			return found[0]
		}},
		{"LookupBatch/prefetched", false, lookupBatchLast},
		{"Delete", false, func(f *Filter, k []byte) bool { return f.Delete(k) }},
		{"Count", true, func(f *Filter, k []byte) bool { return f.Count(k) > 0 }},
	}
	for _, sc := range []string{"opposite", "moved"} {
		for _, bits := range []int{8, 12, 15, Bits12x5} {
			for _, mode := range []Mode{LockFree, Locked} {
				for _, s := range searches {
					if s.lockFree && mode == Locked {
						continue // under both locks: no stall point
					}
					t.Run(fmt.Sprintf("%s/bits=%d/mode=%v/%s", sc, bits, mode, s.name), func(t *testing.T) {
						testSearchAgainstColliding(t, sc, bits, mode, s.found)
					})
				}
			}
		}
	}
}

// testSearchAgainstColliding runs one schedule. Key a's copy starts in q,
// the bucket searches read second.
//
//   - opposite: stalled after reading p, the search sees key c (first
//     bucket q) inserted, landing in p (the emptier bucket), and deleted.
//     If c's Delete looked in q first, it would take a's copy, and the
//     search would find p empty (read before the insert) and q empty.
//   - moved: stalled after reading p, the search sees a's copy moved from
//     q to p (one move through p); stalled after reading q, it sees c
//     inserted, landing in q (the emptier now), and deleted, which takes
//     the copy in p (p is read first). A search that let one move through
//     p pass (the paper's rule, counter difference below 2) would read p
//     empty again with its counter moved once, and answer absent.
func testSearchAgainstColliding(t *testing.T, sc string, bits int, mode Mode, found func(*Filter, []byte) bool) {
	f := NewTestFilter(t, 64, mode, bits, 99)
	x := newCollision(t, f)
	a, p, q := x.a, x.p, x.q
	move, churn := x.move, x.churn
	var done [3]bool
	stall := func(sf *Filter, sb1 uint64, stage int) {
		if sf != f || sb1 != p || stage > 2 || done[stage] || stage == 2 && !done[1] { // stage 3 (the re-reads) plays no part here
			return
		}
		done[stage] = true
		switch {
		case sc == "opposite" && stage == 1:
			churn(p)
		case sc == "moved" && stage == 1:
			move(q, p)
		case sc == "moved" && stage == 2:
			churn(q)
		}
	}
	searchStalls.Store(&stall)
	defer searchStalls.Store(nil)
	if !found(f, a) {
		t.Errorf("a key inserted before the search and never deleted was not found (p %d: %v, q %d: %v)",
			p, bucketFps(f, p), q, bucketFps(f, q))
	}
	if !done[1] || sc == "moved" && !done[2] {
		t.Fatalf("the search did not reach its stall points (stage 1: %v, stage 2: %v)", done[1], done[2])
	}
}

// lookupBatchLast looks k up as the last key of a LookupBatch of two groups
// that takes the prefetching path, the other keys chosen away from k's
// buckets: the schedules' stall points, which watch k's first bucket, fire
// for k alone, in its group placed while the first group was answered.
func lookupBatchLast(f *Filter, k []byte) bool {
	old := batchPrefetchWords
	batchPrefetchWords = 0
	defer func() { batchPrefetchWords = old }()
	b1, _, b2 := f.hash(k)
	keys := make([][]byte, 0, batchGroup+1)
	for i := 0; len(keys) < batchGroup; i++ {
		o := []byte(fmt.Sprintf("other-%d", i))
		if c1, _, c2 := f.hash(o); c1 != b1 && c1 != b2 && c2 != b1 && c2 != b2 {
			keys = append(keys, o)
		}
	}
	found := make([]bool, batchGroup+1)
	f.LookupBatch(append(keys, k), found)
	return found[batchGroup]
}
