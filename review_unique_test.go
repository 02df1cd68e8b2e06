package cuckoo

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Review tests of the one-instant protocol of InsertUnique and Count
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

// TestReviewDecidePairComparesUnchangedWords: a word that decidePair
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
func TestReviewDecidePairComparesUnchangedWords(t *testing.T) {
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

// TestReviewCountLivenessUnderChurn: a writer Inserts and then Deletes a
// key that is stored once, so its pair holds one or two copies at every
// instant, while InsertUniques of the key (which must refuse: the key is
// present throughout) and Counts (which must answer 1 or 2) run against
// it, more goroutines than CPUs, in both modes. Count and InsertUnique now
// retry when a word changes between their read and their K-CAS; the
// deadline catches a livelock of that retry against the churn, and the
// answers catch a decision taken from two instants.
func TestReviewCountLivenessUnderChurn(t *testing.T) {
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

// TestReviewGrowingAcrossGrowthStep stalls a LockFree Count and
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
func TestReviewGrowingAcrossGrowthStep(t *testing.T) {
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

// TestReviewLockedCountWaitsForHalfDoneMove: a Locked relocation step
// stores its destination before it clears its source, under both stripes,
// so a copy is in both of its buckets for a while; an unlocked reader
// would count it twice. The test plays that step: it takes the stripes a
// move from Q to P takes, stores the copy into P, lets a Count of the key
// run for a while, then clears Q and releases the stripes. Count holds the
// stripes of both of its buckets (locked.go, packed_locked.go, countIn),
// so it must wait and answer 1. Fails if Locked Count read its words
// without both stripes (it answers 2 during the step).
func TestReviewLockedCountWaitsForHalfDoneMove(t *testing.T) {
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
