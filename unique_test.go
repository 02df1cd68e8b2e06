package cuckoo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Tests of the one-instant protocol of InsertUnique and Count
// (decidePair, unique.go). They pass on the code as it is; each says what
// it would catch.

// decidePairStall runs decidePair(i1, w1, n1, i2, w2, n2) on tb and calls
// act at the owner's at-th descFieldsWritten call: the first is after the
// K-CAS part is written, before any install; the second is the RDCSS part
// of the install of its second word, when the first word (the lower
// index) already holds the operation's reference and the second is not
// yet installed. It reports decidePair's result and whether act ran.
func decidePairStall(t *testing.T, tb *kcasTable, at int, i1, w1, n1, i2, w2, n2 uint64, act func(owner uint32)) (ok, acted bool) {
	t.Helper()
	var owner uint32
	calls := 0
	busy := false
	descFieldsWritten = func(slot uint32) {
		if busy {
			return // a helper's install inside act
		}
		calls++
		if calls == 1 {
			owner = slot // the K-CAS part, written before any install
		}
		if calls == at && slot == owner {
			busy = true
			act(owner)
			busy = false
			acted = true
		}
	}
	defer func() { descFieldsWritten = nil }()
	ok = tb.decidePair(i1, w1, n1, i2, w2, n2)
	return ok, acted
}

// TestDecidePairComparesUnchangedWords: a word that decidePair
// writes back unchanged (old == new: the bucket InsertUnique does not add
// to, both words of "both full" and of a Count) must still be compared at
// the K-CAS's decision point. kcas.go installs a reference in every word
// of the operation, equal old and new values included, so (a) an
// unchanged first word holds the reference while the second is installed
// and a writer's CAS on it fails until the operation is decided, and (b)
// an unchanged second word that a writer changes after the first word's
// install but before the decision makes the whole operation fail, leaving
// the first word as it was. Fails if kcas or decidePair skipped words
// whose old and new values are equal (no second install: act never runs,
// or the change goes unseen), or compared them only before the decision
// (the writer's CAS on the first word succeeds and the K-CAS still
// succeeds).
func TestDecidePairComparesUnchangedWords(t *testing.T) {
	if !raceEnabled {
		t.Skip("descFieldsWritten is called in race builds only")
	}
	t.Run("unchanged-first-holds-reference", func(t *testing.T) {
		tb := newTestTable(4, 10)
		casOK := false
		ok, acted := decidePairStall(t, tb, 2, 1, 10, 10, 2, 10, 11, func(uint32) {
			if v := tb.words[1].Load(); v&tagKCAS == 0 {
				t.Errorf("word 1 (old == new) holds %#x during the install of word 2; want the K-CAS reference", v)
			}
			if got := tb.load(1); got != 10 {
				t.Errorf("logical value of word 1 while undecided: %d; want 10", got)
			}
			casOK = tb.cas(1, 10, 99) // a writer's CAS on the unchanged word
		})
		if !acted {
			t.Fatal("decidePair never installed its second word after its first")
		}
		if casOK && ok {
			t.Errorf("a CAS changed word 1 (10 -> 99) between its install and the decision, and the K-CAS expecting 10 there still succeeded")
		}
		if !ok {
			t.Errorf("decidePair failed with both words unchanged by anyone else")
		}
		if w1, w2 := tb.load(1), tb.load(2); w1 != 10 || w2 != 11 {
			t.Errorf("words after decidePair: %d, %d; want 10, 11", w1, w2)
		}
	})
	for _, c := range []struct {
		name   string
		at     int
		n1, n2 uint64
	}{
		{"changed-first-unchanged-second", 2, 11, 10}, // InsertUnique adding to b1
		{"both-unchanged", 2, 10, 10},                 // both full, or a Count
		// A change before any install: caught by a K-CAS that compares
		// the unchanged word when it installs it, not by one that
		// validated it by a read before it began.
		{"changed-first-unchanged-second-early", 1, 11, 10},
		{"both-unchanged-early", 1, 10, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := newTestTable(4, 10)
			ok, acted := decidePairStall(t, tb, c.at, 1, 10, c.n1, 2, 10, c.n2, func(uint32) {
				if !tb.cas(2, 10, 99) { // a writer changes the unchanged second word
					t.Errorf("word 2 held %#x before its install; want 10", tb.words[2].Load())
				}
			})
			if !acted {
				t.Fatalf("decidePair never reached its descFieldsWritten call %d", c.at)
			}
			if ok {
				t.Errorf("decidePair succeeded although word 2 changed 10 -> 99 before the decision")
			}
			if w1, w2 := tb.load(1), tb.load(2); w1 != 10 || w2 != 99 {
				t.Errorf("words after the failed decidePair: %d, %d; want 10, 99", w1, w2)
			}
			for i := range tb.words {
				if v := tb.words[i].Load(); v&tagMask != 0 {
					t.Errorf("word %d still holds reference %#x", i, v)
				}
			}
		})
	}
	// One word (b1 == b2, or two packed buckets of one word): the one read
	// decides when nothing changes, and a change is one CAS against it.
	t.Run("one-word", func(t *testing.T) {
		tb := newTestTable(4, 10)
		if !tb.decidePair(3, 10, 10, 3, 10, 10) {
			t.Error("one-word decidePair with the word's value and no change failed")
		}
		if !tb.decidePair(3, 10, 12, 3, 10, 12) || tb.load(3) != 12 {
			t.Errorf("one-word decidePair 10 -> 12 failed or left %d", tb.load(3))
		}
		if tb.decidePair(3, 10, 13, 3, 10, 13) || tb.load(3) != 12 {
			t.Errorf("one-word decidePair from a stale 10 succeeded or changed the word to %d", tb.load(3))
		}
	})
}

// TestCountLivenessUnderChurn: a writer Inserts and then Deletes a
// key that is stored once, so its pair holds one or two copies at every
// instant, while InsertUniques of the key (which must refuse: the key is
// present throughout) and Counts (which must answer 1 or 2) run against
// it, more goroutines than CPUs, in both modes. Count and InsertUnique now
// retry when a word changes between their read and their K-CAS; the
// deadline catches a livelock of that retry against the churn, and the
// answers catch a decision taken from two instants.
func TestCountLivenessUnderChurn(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{8, 12, Bits12x5} {
			t.Run(fmt.Sprintf("%v/bits=%s", mode, layoutName(bits)), func(t *testing.T) {
				testCountLivenessUnderChurn(t, mode, bits)
			})
		}
	}
}

func testCountLivenessUnderChurn(t *testing.T, mode Mode, bits int) {
	f := NewTestFilter(t, 1<<10, mode, bits, 7)
	key := []byte("review-key")
	if err := f.Insert(key); err != nil {
		t.Fatal(err)
	}
	rounds := RaceScaled(4000, 4)
	var stop atomic.Bool
	var writer, readers sync.WaitGroup
	var bad atomic.Int64
	var churn atomic.Int64
	// Writer: Insert then Delete of the key: the pair holds 1 or 2
	// copies at every instant (the Delete may take either copy).
	writer.Add(1)
	go func() {
		defer writer.Done()
		for !stop.Load() {
			if err := f.Insert(key); err != nil {
				bad.Add(1)
				return
			}
			if !f.Delete(key) {
				bad.Add(1)
				return
			}
			churn.Add(1)
		}
	}()
	// InsertUnique racers: the key is present at every instant, so each
	// must refuse without error.
	for g := 0; g < 2; g++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; i < rounds; i++ {
				if ins, err := f.InsertUnique(key); ins || err != nil {
					bad.Add(1 << 20)
					return
				}
			}
		}()
	}
	for g := 0; g < 3; g++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; i < rounds; i++ {
				if n := f.Count(key); n < 1 || n > 2 {
					bad.Add(1 << 40)
					return
				}
			}
		}()
	}
	WaitOrFail(t, Done(&readers), 90*time.Second, "Count and InsertUnique against Insert/Delete churn")
	stop.Store(true)
	WaitOrFail(t, Done(&writer), 30*time.Second, "the Insert/Delete churn")
	if b := bad.Load(); b != 0 {
		t.Fatalf("churn: writer failures %d, InsertUnique added or failed %d, Count outside [1, 2] %d",
			b&(1<<20-1), b>>20&(1<<20-1), b>>40)
	}
	if f.Count(key) != 1 {
		t.Errorf("Count after churn: %d; want 1", f.Count(key))
	}
	if churn.Load() == 0 {
		t.Error("no Insert/Delete round ran during the Counts")
	}
}

// growStepNow makes sh's table x grow by one step and copies it, as expand
// and writable do, without expand's load check: the test filter is almost
// empty.
func growStepNow(g *Growing, sh *growShard, x *growTable) *growTable {
	d, p := x.nextStep()
	n := g.st.newTable(sh, d, p, g.mode)
	n.old.Store(x)
	x.next.CompareAndSwap(nil, n)
	sh.cur.CompareAndSwap(x, n)
	return g.writable(sh)
}

// reviewGrowKey returns a hash whose key has two distinct buckets in its
// shard's table, the shard and the table (seed 0: the keyed hash is the
// hash).
func reviewGrowKey(g *Growing, salt uint64) (uint64, *growShard, *growTable, growKey) {
	for i := uint64(1); ; i++ {
		h := (i + salt<<32) * 0x9e3779b97f4a7c15
		sh := g.shardOf(h)
		x := sh.cur.Load()
		if k := x.place(h); k.b1 != k.b2 {
			return h, sh, x, k
		}
	}
}

// TestGrowingUniqueAcrossGrowthStep stalls a LockFree Count and
// InsertUnique of the growing filter after their read of the key's first
// bucket in table x, and in the stall runs a whole growth step: x's words
// are all frozen and copied into the next table, which takes every write
// from then on. What the stalled call reads of x afterwards is x's frozen
// words, the shard's state when the copy ended, an instant inside the
// call; its first read (unfrozen) must fail its decidePair.
//
//   - Count: the key's one entry, then in the new table a Delete of it and
//     an Insert again (0 then 1): the stalled Count must answer 0 or 1,
//     and 1 after.
//   - InsertUnique of a key with one entry, with nothing else done: it must
//     refuse (present throughout), leave one entry (Count 1), and not
//     write into the frozen table.
//   - InsertUnique of a key with one entry, deleted in the new table
//     during the stall: it may add the key again (after the Delete) or
//     refuse (before it), and then Count must be 1 or 0 accordingly.
//   - InsertUnique of an absent key: it must add it to the new table.
func TestGrowingUniqueAcrossGrowthStep(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	type stallFn = func(sx *growTable, b1 uint64, stage int)
	run := func(t *testing.T, name string, pre bool, op func(g *Growing, h uint64) (int, bool, error), during func(g *Growing, h uint64), check func(t *testing.T, g *Growing, h uint64, n int, ins bool, err error)) {
		t.Run(name, func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(LockFree), WithSeed(0))
			h, sh, x, k := reviewGrowKey(g, 1)
			if pre {
				if err := g.InsertHash(h); err != nil {
					t.Fatal(err)
				}
			}
			stalled := false
			var nx *growTable
			stall := stallFn(func(sx *growTable, b1 uint64, stage int) {
				if sx != x || b1 != k.b1 || stage != 1 || stalled {
					return
				}
				stalled = true
				nx = growStepNow(g, sh, x)
				during(g, h)
			})
			growSearchStalls.Store(&stall)
			n, ins, err := op(g, h)
			growSearchStalls.Store(nil)
			if !stalled {
				t.Fatal("the call did not reach its stall point after reading its first bucket")
			}
			if nx == x || x.next.Load() != nx {
				t.Fatal("no growth step ran in the stall")
			}
			for b := range x.m {
				if x.t.words[b].Load()&frozenBit == 0 {
					t.Fatalf("word %d of the old table not frozen after the step", b)
				}
			}
			check(t, g, h, n, ins, err)
		})
	}
	count := func(g *Growing, h uint64) (int, bool, error) { return g.CountHash(h), false, nil }
	unique := func(g *Growing, h uint64) (int, bool, error) {
		ins, err := g.InsertUniqueHash(h)
		return 0, ins, err
	}
	run(t, "count/delete-insert", true, count, func(g *Growing, h uint64) {
		if !g.DeleteHash(h) {
			t.Error("Delete in the new table found no entry")
		}
		if err := g.InsertHash(h); err != nil {
			t.Error(err)
		}
	}, func(t *testing.T, g *Growing, h uint64, n int, _ bool, _ error) {
		if n != 0 && n != 1 {
			t.Errorf("stalled CountHash: %d; want 0 or 1 (one entry, none, one)", n)
		}
		if c := g.CountHash(h); c != 1 {
			t.Errorf("CountHash after: %d; want 1", c)
		}
	})
	run(t, "unique/present", true, unique, func(*Growing, uint64) {}, func(t *testing.T, g *Growing, h uint64, _ int, ins bool, err error) {
		if ins || err != nil {
			t.Errorf("InsertUniqueHash of a key present throughout: inserted=%v, err=%v; want false, nil", ins, err)
		}
		if c := g.CountHash(h); c != 1 {
			t.Errorf("CountHash after: %d; want 1", c)
		}
	})
	run(t, "unique/deleted", true, unique, func(g *Growing, h uint64) {
		if !g.DeleteHash(h) {
			t.Error("Delete in the new table found no entry")
		}
	}, func(t *testing.T, g *Growing, h uint64, _ int, ins bool, err error) {
		if err != nil {
			t.Fatalf("InsertUniqueHash: %v", err)
		}
		want := 0
		if ins {
			want = 1
		}
		if c := g.CountHash(h); c != want {
			t.Errorf("CountHash after InsertUniqueHash (inserted=%v): %d; want %d", ins, c, want)
		}
	})
	run(t, "unique/absent", false, unique, func(*Growing, uint64) {}, func(t *testing.T, g *Growing, h uint64, _ int, ins bool, err error) {
		if !ins || err != nil {
			t.Errorf("InsertUniqueHash of an absent key: inserted=%v, err=%v; want true, nil", ins, err)
		}
		if c := g.CountHash(h); c != 1 {
			t.Errorf("CountHash after: %d; want 1 (added to the table writes go to, not the frozen one)", c)
		}
	})
}

// TestLockedCountWaitsForHalfDoneMove: a Locked relocation step
// stores its destination before it clears its source, under both stripes,
// so a copy is in both of its buckets for a while; an unlocked reader
// would count it twice. The test plays that step: it takes the stripes a
// move from Q to P takes, stores the copy into P, lets a Count of the key
// run for a while, then clears Q and releases the stripes. Count holds the
// stripes of both of its buckets (locked.go, packed_locked.go, countIn),
// so it must wait and answer 1. Fails if Locked Count read its words
// without both stripes (it answers 2 during the step).
func TestLockedCountWaitsForHalfDoneMove(t *testing.T) {
	if RTMActive() {
		t.Skip("the test holds stripes across a sleep, which an elided section cannot")
	}
	withPin(t, false) // holds a section while it blocks
	half := func(t *testing.T, lock func() func(), store, clear func(), count func() int) {
		t.Helper()
		unlock := lock()
		store() // the destination, first
		started := make(chan struct{})
		res := make(chan int, 1)
		go func() {
			close(started)
			res <- count()
		}()
		<-started
		time.Sleep(30 * time.Millisecond)
		select {
		case n := <-res:
			unlock()
			t.Fatalf("Count returned %d while a move held its stripes; want it to wait", n)
		default:
		}
		clear() // then the source
		unlock()
		if n := <-res; n != 1 {
			t.Errorf("Count across a Locked move: %d; want 1", n)
		}
	}
	for _, bits := range []int{8, bits8OneWord, 12, Bits12x5} {
		t.Run("bits="+layoutName(bits), func(t *testing.T) {
			f := NewTestFilter(t, 1<<10, Locked, bits, 3)
			var key []byte
			var b1, fp, b2 uint64
			for i := 0; ; i++ {
				key = key8('l', i)
				if b1, fp, b2 = f.hash(key); wordOf(f, b1) != wordOf(f, b2) && (!f.lay.packed || fp < pkTopLimit) {
					break
				}
			}
			p, q := b1, b2
			setSlotOf(f, q, 0, fp)
			half(t, func() func() {
				var g lockGuard
				if f.lay.packed {
					g = f.pkLockedWords(q, p)
				} else {
					g = f.locks.lockBuckets(q, p)
				}
				return func() { f.locks.unlockBuckets(g) }
			}, func() { setSlotOf(f, p, 0, fp) }, func() { setSlotOf(f, q, 0, 0) }, func() int { return f.Count(key) })
		})
	}
	t.Run("growing", func(t *testing.T) {
		g := newTestGrowing(t, 1000, WithMode(Locked), WithSeed(0))
		h, _, x, k := reviewGrowKey(g, 2)
		p, q := k.b1, k.b2
		x.t.words[q].Store(setLane(0, 0, k.q2))
		half(t, func() func() {
			gd := x.locks.lockBuckets(q, p)
			return func() { x.locks.unlockBuckets(gd) }
		}, func() {
			x.t.words[p].Store(setLane(0, 0, altValueOf(x, q, k.q2)))
		}, func() {
			x.t.words[q].Store(0)
		}, func() int { return g.CountHash(h) })
	})
}

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
		if st := g.moveIn(x, q, 0, k.q2, p, altValueOf(x, q, k.q2), &my); st != growDone {
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

// TestInsertUniqueRace has more goroutines than processors call InsertUnique
// on one shared key set, each in its own order, while churn goroutines insert
// and delete other keys at high load so that fingerprints relocate. Every
// shared key that shares its fingerprint and buckets with no other key must
// end with exactly one copy: exactly one InsertUnique call reported it
// inserted, Count is 1, one Delete removes it, and then Count is 0 and
// Lookup false.
func TestInsertUniqueRace(t *testing.T) {
	for _, mode := range apiModes {
		t.Run("mode="+mode.String(), func(t *testing.T) {
			const capacity = 8000
			f, err := New(capacity, WithMode(mode), WithSeed(rand.Uint64()))
			if err != nil {
				t.Fatal(err)
			}
			background := capacity * 85 / 100
			shared, rounds := 1000, scaled(20, 5)
			churners, churnKeys := 2, 150
			for i := 0; i < background; i++ {
				if err := f.Insert(apiKey('b', i)); err != nil {
					t.Fatalf("filling key %d: %v", i, err)
				}
			}
			// How many keys of any class take each pair.
			uses := map[[3]uint64]int{}
			for i := 0; i < background; i++ {
				uses[pairOf(f, apiKey('b', i))]++
			}
			for i := 0; i < shared*rounds; i++ {
				uses[pairOf(f, apiKey('s', i))]++
			}
			for c := 0; c < churners; c++ {
				for i := 0; i < churnKeys; i++ {
					uses[pairOf(f, apiKey(byte('c'+c), i))]++
				}
			}

			var stop atomic.Bool
			var churn sync.WaitGroup
			for c := 0; c < churners; c++ {
				churn.Add(1)
				go func(c int) {
					defer churn.Done()
					for !stop.Load() {
						n := 0
						for i := 0; i < churnKeys; i++ {
							if f.Insert(apiKey(byte('c'+c), i)) == nil {
								n++
							}
						}
						for i := 0; i < churnKeys && n > 0; i++ {
							if f.Delete(apiKey(byte('c'+c), i)) {
								n--
							}
						}
					}
				}(c)
			}
			goroutines := max(8, 4*runtime.GOMAXPROCS(0))
			wins := make([]atomic.Int32, shared)
			clean, checked := 0, 0
			for round := 0; round < rounds && !t.Failed(); round++ {
				base := round * shared
				for i := range wins {
					wins[i].Store(0)
				}
				var wg sync.WaitGroup
				start := make(chan struct{})
				for g := 0; g < goroutines; g++ {
					wg.Add(1)
					go func(g int) {
						defer wg.Done()
						<-start
						// Half the goroutines take the keys in the same
						// order, so that they race on one key at a time;
						// the others in orders of their own.
						order := rand.New(rand.NewPCG(uint64(g), uint64(round))).Perm(shared)
						if g%2 == 0 {
							for i := range order {
								order[i] = i
							}
						}
						for _, i := range order {
							for try := 0; try < 50; try++ {
								ok, err := f.InsertUnique(apiKey('s', base+i))
								if ok {
									wins[i].Add(1)
								}
								if !errors.Is(err, ErrFull) {
									break
								}
								runtime.Gosched()
							}
						}
					}(g)
				}
				close(start)
				apiWait(t, &wg, "InsertUnique goroutines")
				// Check and delete while the churn goes on.
				for i := 0; i < shared; i++ {
					key := apiKey('s', base+i)
					checked++
					if uses[pairOf(f, key)] != 1 {
						continue
					}
					clean++
					if w := wins[i].Load(); w != 1 {
						t.Errorf("key %d: InsertUnique reported inserted %d times; want exactly once", base+i, w)
					}
					if c := f.Count(key); c != 1 {
						t.Errorf("key %d: Count: got %d; want 1", base+i, c)
					}
					if !f.Delete(key) {
						t.Errorf("key %d: Delete: got false; want true", base+i)
					}
					if c := f.Count(key); c != 0 {
						t.Errorf("key %d: Count after Delete: got %d; want 0", base+i, c)
					}
					if f.Lookup(key) {
						t.Errorf("key %d: Lookup after Delete: got true; want false", base+i)
					}
				}
			}
			stop.Store(true)
			apiWait(t, &churn, "churn goroutines")

			st := f.Stats()
			t.Logf("goroutines %d, rounds %d, load %.3f, relocations %d, ErrFull %d, K-CAS retries %d, helps %d, lookup retries %d, lock waits %d",
				goroutines, rounds, st.LoadFactor, st.Relocations, st.Full, st.KCASRetries, st.KCASHelps, st.LookupRetries, st.Lock.Waits)
			if st.Relocations == 0 {
				t.Errorf("Stats().Relocations: got 0; want relocations during the run (load %.3f)", st.LoadFactor)
			}
			if clean < checked*9/10 {
				t.Errorf("keys without a colliding neighbour: got %d of %d; want most", clean, checked)
			}
		})
	}
}

// TestCountNeverUndercounts has goroutines insert and delete copies of their
// own keys at high load while others churn, and checks after every change
// that Count of each own key is at least the copies the goroutine holds:
// nobody else touches those keys, so every one of those copies is in the
// filter throughout the Count call.
func TestCountNeverUndercounts(t *testing.T) {
	for _, mode := range apiModes {
		t.Run("mode="+mode.String(), func(t *testing.T) {
			const capacity = 4000
			f, err := New(capacity, WithMode(mode), WithSeed(rand.Uint64()))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < capacity*93/100; i++ {
				if err := f.Insert(apiKey('b', i)); err != nil {
					t.Fatalf("filling key %d: %v", i, err)
				}
			}
			goroutines := max(8, 4*runtime.GOMAXPROCS(0))
			rounds := scaled(3000, 5)
			var wg sync.WaitGroup
			var counts atomic.Int64
			for g := 0; g < goroutines; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), 2))
					const own = 8
					held := make([]int, own)
					for n := 0; n < rounds; n++ {
						i := r.IntN(own)
						key := apiKey(byte(0x40+g), i)
						if held[i] < 3 && r.IntN(2) == 0 {
							if f.Insert(key) == nil {
								held[i]++
							}
						} else if held[i] > 0 {
							if !f.Delete(key) {
								t.Errorf("goroutine %d: Delete(own key %d) with %d copies held: got false", g, i, held[i])
								return
							}
							held[i]--
						}
						for j := 0; j < own; j++ {
							if c := f.Count(apiKey(byte(0x40+g), j)); c < held[j] {
								t.Errorf("goroutine %d: Count(own key %d): got %d; want at least %d", g, j, c, held[j])
								return
							}
							counts.Add(1)
						}
					}
				}(g)
			}
			apiWait(t, &wg, "Count goroutines")
			st := f.Stats()
			t.Logf("%d counts, load %.3f, relocations %d, lookup retries %d", counts.Load(), st.LoadFactor, st.Relocations, st.LookupRetries)
			if st.Relocations == 0 {
				t.Errorf("Stats().Relocations: got 0; want relocations during the run")
			}
		})
	}
}

// TestInsertUniqueSequential checks InsertUnique and Count against their
// definitions one call at a time, including ErrFull and the zero Filter.
func TestInsertUniqueSequential(t *testing.T) {
	for _, mode := range apiModes {
		t.Run("mode="+mode.String(), func(t *testing.T) {
			f, err := New(1000, WithMode(mode), WithSeed(3))
			if err != nil {
				t.Fatal(err)
			}
			k := []byte("k")
			if c := f.Count(k); c != 0 {
				t.Fatalf("Count on empty: got %d; want 0", c)
			}
			for i, want := range []bool{true, false, false} {
				ok, err := f.InsertUnique(k)
				if ok != want || err != nil {
					t.Fatalf("InsertUnique #%d: got %v, %v; want %v, nil", i, ok, err, want)
				}
			}
			if c, n := f.Count(k), f.Len(); c != 1 || n != 1 {
				t.Fatalf("Count, Len: got %d, %d; want 1, 1", c, n)
			}
			_ = f.Insert(k)
			if c := f.Count(k); c != 2 {
				t.Fatalf("Count after Insert: got %d; want 2", c)
			}
			// Fill until ErrFull: InsertUnique of new keys then reports
			// ErrFull and changes nothing.
			i := 0
			for ; f.Insert(apiKey('f', i)) == nil; i++ {
			}
			before := f.Len()
			fulls := 0
			for j := 0; j < 100; j++ {
				key := apiKey('g', j)
				ok, err := f.InsertUnique(key)
				switch {
				case errors.Is(err, ErrFull):
					fulls++
					if ok {
						t.Fatalf("InsertUnique: got true with ErrFull")
					}
				case ok:
					before++
				}
			}
			if fulls == 0 {
				t.Errorf("InsertUnique on a full filter: got no ErrFull in 100 new keys; want some")
			}
			if f.Len() != before {
				t.Errorf("Len after InsertUnique on a full filter: got %d; want %d", f.Len(), before)
			}
			for j := 0; j < i; j++ {
				if f.Count(apiKey('f', j)) < 1 {
					t.Fatalf("Count(inserted key %d) after ErrFull: got 0; want >= 1", j)
				}
			}
		})
	}
	var z Filter
	if ok, err := z.InsertUnique([]byte("x")); ok || !errors.Is(err, ErrZeroFilter) {
		t.Errorf("zero Filter InsertUnique: got %v, %v; want false, ErrZeroFilter", ok, err)
	}
	if c := z.Count([]byte("x")); c != 0 {
		t.Errorf("zero Filter Count: got %d; want 0", c)
	}
}

// apiWait waits for wg, failing the test if that takes over two minutes (a
// deadlock or livelock).
func apiWait(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	WaitOrFail(t, Done(wg), 2*time.Minute, what)
}

// TestCountUnderRelocation counts keys of a tiny, nearly full filter in
// which every insert relocates fingerprints, so that copies move between
// the two reads of a Count far more often than in a large filter. Each
// counted key has one copy that nobody deletes: Count must never be 0.
func TestCountUnderRelocation(t *testing.T) {
	for _, mode := range apiModes {
		t.Run("mode="+mode.String(), func(t *testing.T) {
			f, err := New(60, WithMode(mode), WithSeed(rand.Uint64()))
			if err != nil {
				t.Fatal(err)
			}
			const counted = 4
			for i := 0; i < counted; i++ {
				if err := f.Insert(apiKey('k', i)); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; f.Len() < f.Cap()-4; i++ {
				_ = f.Insert(apiKey('b', i))
			}
			var stop atomic.Bool
			var churn, counters sync.WaitGroup
			churners := max(2, runtime.GOMAXPROCS(0))
			for c := 0; c < churners; c++ {
				churn.Add(1)
				go func(c int) {
					defer churn.Done()
					for i := 0; !stop.Load(); i++ {
						key := apiKey(byte('c'+c), i%64)
						if f.Insert(key) == nil {
							f.Delete(key)
						}
					}
				}(c)
			}
			rounds := Sized(20000, 200000, 200000)
			if raceEnabled {
				rounds = Sized(6000, 20000, 66000)
			}
			for g := 0; g < counted; g++ {
				counters.Add(1)
				go func(g int) {
					defer counters.Done()
					key := apiKey('k', g)
					for n := 0; n < rounds; n++ {
						if c := f.Count(key); c < 1 {
							t.Errorf("Count(key %d) with one copy held: got %d; want at least 1", g, c)
							return
						}
					}
				}(g)
			}
			apiWait(t, &counters, "Count goroutines")
			stop.Store(true)
			apiWait(t, &churn, "churn goroutines")
			st := f.Stats()
			t.Logf("load %.3f, relocations %d, lookup retries %d", st.LoadFactor, st.Relocations, st.LookupRetries)
			if st.Relocations == 0 {
				t.Errorf("Stats().Relocations: got 0; want relocations during the run")
			}
		})
	}
}
