package cuckoo

import "testing"

// InsertUnique against a copy that moves between its reads. An
// InsertUnique that finds both of its buckets full and without the
// fingerprint goes on to make room, and reports ErrFull ("absent, and no
// room") when no path frees a slot; so "full and absent" must hold at one
// instant. These tests stall InsertUnique (LockFree) after its read of the
// key's first bucket P, which is full without the key's copy, and then: a
// slot of P is emptied (a Delete of the key there), the copy in the second
// bucket Q moves to P in one relocation step, and Q's freed slot is
// filled again (an Insert). The copy is in the filter throughout, so
// InsertUnique must refuse (inserted=false, nil), not report ErrFull: were
// "full and absent" taken from a read of P before the move and a read of
// Q after it, it would, since every bucket of the table is full and no
// path frees a slot. The stall points are those of the searches
// (searchStalls, growSearchStalls), in race builds only.

func TestInsertUniqueAgainstMove(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	for _, bits := range []int{8, bits8OneWord, 12, 15, Bits12x5} {
		t.Run("bits="+layoutName(bits), func(t *testing.T) {
			testInsertUniqueAgainstMove(t, bits)
		})
	}
}

func testInsertUniqueAgainstMove(t *testing.T, bits int) {
	f := NewTestFilter(t, 64, LockFree, bits, 5)
	var (
		key       []byte
		p, fp, q  uint64
		available bool
	)
	for i := 0; i < 1<<16 && !available; i++ {
		key = key8('u', i)
		p, fp, q = f.hash(key)
		// Two buckets in two words; in the packed layout a fingerprint
		// every slot takes (fillBucket's fillers are 1 to 63).
		available = p != q && wordOf(f, p) != wordOf(f, q) && (!f.lay.packed || fp >= pkTopLimit)
	}
	if !available {
		t.Fatal("no key with two buckets in two words")
	}
	// Every bucket full, the key's copy in slot 0 of Q, nothing else
	// matching it: no path frees a slot anywhere.
	for b := range f.m {
		fillBucket(f, b, b, fp)
	}
	setSlotOf(f, q, 0, fp)
	stalled := false
	stall := func(sf *Filter, b1 uint64, stage int) {
		if sf != f || b1 != p || stage != 1 || stalled {
			return
		}
		stalled = true
		setSlotOf(f, p, 0, 0) // a Delete frees slot 0 of P
		m := f.gate.enterMove()
		if !f.testMove(q, 0, fp, p) { // the copy moves Q -> P
			t.Fatal("could not move the copy from Q to P")
		}
		f.gate.exitMove(m)
		fillBucket(f, q, 99, fp) // an Insert takes Q's freed slot
	}
	searchStalls.Store(&stall)
	inserted, err := f.InsertUnique(key)
	searchStalls.Store(nil)
	if !stalled {
		t.Fatal("InsertUnique did not reach its stall point after reading P")
	}
	if inserted || err != nil {
		t.Errorf("InsertUnique of a key present throughout: inserted=%v, err=%v; want false, nil (P %v, Q %v)",
			inserted, err, bucketFps(f, p), bucketFps(f, q))
	}
	if n := f.Count(key); n != 1 {
		t.Errorf("Count after InsertUnique: %d; want 1 (the copy, moved once)", n)
	}
}

// TestGrowingInsertUniqueAgainstMove is TestInsertUniqueAgainstMove for
// the growing filter: every bucket of the shard's table full of entries
// that match no key of K's tag, K's entry in lane 0 of Q; stalled after
// reading P, InsertUniqueHash sees a lane of P emptied, K's entry moved Q
// -> P, and Q filled again. The shard counts no entries, so it may not
// grow (less than half full): a "full and absent" decided from the two
// reads would end in ErrFull.
func TestGrowingInsertUniqueAgainstMove(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	g := newTestGrowing(t, 1000, WithMode(LockFree), WithSeed(0)) // seed 0: the keyed hash is the hash
	h, x, k := keyWithTwoBuckets(g)
	p, q := k.b1, k.b2
	other := k.q1 ^ 1<<tagShift // another tag: matches no key of K's
	full := uint64(0)
	for range slotsPerBucket {
		full, _ = putLane(full, other)
	}
	for b := range x.m {
		x.t.words[b].Store(full)
	}
	x.t.words[q].Store(setLane(full, 0, k.q2))
	stalled := false
	stall := func(sx *growTable, b1 uint64, stage int) {
		if sx != x || b1 != p || stage != 1 || stalled {
			return
		}
		stalled = true
		x.t.words[p].Store(setLane(x.t.load(p), 0, 0)) // a Delete frees lane 0 of P
		my := leaseDesc()
		if st := g.moveIn(x, q, 0, k.q2, p, altValueOf(x, q, k.q2), my); st != growDone {
			t.Fatalf("move of K's entry Q -> P: status %d", st)
		}
		my.release()
		x.t.words[q].Store(setLane(x.t.load(q), 0, other)) // an Insert takes Q's freed lane
	}
	growSearchStalls.Store(&stall)
	inserted, err := g.InsertUniqueHash(h)
	growSearchStalls.Store(nil)
	if !stalled {
		t.Fatal("InsertUniqueHash did not reach its stall point after reading P")
	}
	if inserted || err != nil {
		t.Errorf("InsertUniqueHash of a key present throughout: inserted=%v, err=%v; want false, nil", inserted, err)
	}
	if n := g.CountHash(h); n != 1 {
		t.Errorf("CountHash after InsertUniqueHash: %d; want 1", n)
	}
}

// TestCountAgainstDeleteThenInsert stalls Count (LockFree) after its read
// of the pair's first bucket P, which holds the key's one copy; a Delete
// then takes that copy and, after it has returned, an Insert of a key
// that collides with it puts a copy into the second bucket Q. The pair
// held one copy, then none, then one, and the Delete returned before the
// Insert began, so no order of the operations shows two copies: Count
// must not answer 2, which P's read added to Q's gives. (No copy moves, so
// the counters and versions cannot tell.)
func TestCountAgainstDeleteThenInsert(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	for _, bits := range []int{8, bits8OneWord, 12, 15, Bits12x5} {
		t.Run("bits="+layoutName(bits), func(t *testing.T) {
			f := NewTestFilter(t, 64, LockFree, bits, 5)
			var key []byte
			var b1, fp, b2 uint64
			for i := 0; ; i++ {
				key = key8('n', i)
				if b1, fp, b2 = f.hash(key); b1 != b2 && wordOf(f, b1) != wordOf(f, b2) {
					break
				}
			}
			p, q := searchPair(b1, b2)
			setSlotOf(f, p, 0, fp)
			stalled := false
			stall := func(sf *Filter, sb1 uint64, stage int) {
				if sf != f || sb1 != p || stage != 1 || stalled {
					return
				}
				stalled = true
				setSlotOf(f, p, 0, 0)  // a Delete takes the copy
				setSlotOf(f, q, 0, fp) // then an Insert puts one into Q
			}
			searchStalls.Store(&stall)
			n := f.Count(key)
			searchStalls.Store(nil)
			if !stalled {
				t.Fatal("Count did not reach its stall point after reading P")
			}
			if n != 1 {
				t.Errorf("Count: %d; want 1 (one copy, then none, then one)", n)
			}
		})
	}
}

// TestGrowingCountAgainstDeleteThenInsert is TestCountAgainstDeleteThenInsert
// for the growing filter's countIn.
func TestGrowingCountAgainstDeleteThenInsert(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	g := newTestGrowing(t, 1000, WithMode(LockFree), WithSeed(0)) // seed 0: the keyed hash is the hash
	h, x, k := keyWithTwoBuckets(g)
	p, q := k.b1, k.b2
	x.t.words[p].Store(setLane(0, 0, k.q1))
	stalled := false
	stall := func(sx *growTable, b1 uint64, stage int) {
		if sx != x || b1 != p || stage != 1 || stalled {
			return
		}
		stalled = true
		x.t.words[p].Store(setLane(x.t.load(p), 0, 0))    // a Delete takes the entry
		x.t.words[q].Store(setLane(x.t.load(q), 0, k.q2)) // then an Insert puts one into Q
	}
	growSearchStalls.Store(&stall)
	n := g.CountHash(h)
	growSearchStalls.Store(nil)
	if !stalled {
		t.Fatal("CountHash did not reach its stall point after reading P")
	}
	if n != 1 {
		t.Errorf("CountHash: %d; want 1 (one entry, then none, then one)", n)
	}
}
