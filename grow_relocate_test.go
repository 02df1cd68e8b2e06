package cuckoo

import (
	"math/rand/v2"
	"testing"
	"time"
)

// Tests of growRelocate (relocate.go.tmpl, lanes codec) against a copy in
// progress: discovery ignores frozen bits, so the write that follows must
// catch a frozen word and report growFrozen, never growStale (which would
// rediscover the same path for ever) nor growFull (ErrFull during a copy).

// finishes runs f and fails the test if it does not return within a
// generous bound: a relocation that rediscovers a frozen path loops.
func finishes(t *testing.T, what string, f func() int) int {
	t.Helper()
	done := make(chan int, 1)
	go func() { done <- f() }()
	select {
	case st := <-done:
		return st
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: did not return (a relocation looping on a frozen path?)", what)
		return -1
	}
}

// fillUntil inserts random keys into shard 0's table of g until stop
// reports true for a key about to be inserted (returned), or an insert finds
// no path (growFull, returned with the key).
func fillUntil(t *testing.T, g *Growing, r *rand.Rand, stop func(x *growTable, k growKey) bool) (*growTable, growKey, int) {
	t.Helper()
	x := g.st.shards[0].cur.Load()
	for range 100000 {
		k := x.place(r.Uint64())
		if stop(x, k) {
			return x, k, growDone
		}
		if st := g.addIn(x, k); st == growFull {
			return x, k, st
		} else if st != growDone {
			t.Fatalf("fill: status %d", st)
		}
	}
	t.Fatal("fill: never stopped")
	return nil, growKey{}, 0
}

// TestGrowRelocateDuringCopy: with a copy begun, a relocation whose path
// meets a frozen word, or that finds no path, reports growFrozen (the
// insert then moves on to the next table); with none begun, no path is
// growFull. A frozen key bucket with room is caught by the add.
func TestGrowRelocateDuringCopy(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		r := rand.New(rand.NewPCG(7, uint64(mode)))
		// A key whose buckets are both full and which has a path.
		g := tinyStepGrowing(mode, 16)
		x, k, st := fillUntil(t, g, r, func(x *growTable, k growKey) bool {
			if laneCount(x.t.load(k.b1)) < slotsPerBucket || laneCount(x.t.load(k.b2)) < slotsPerBucket {
				return false
			}
			_, depth, ok := x.growDiscover(k.b1, k.b2)
			return ok && depth >= 1
		})
		if st != growDone {
			t.Fatalf("%v: the table filled before a key needed a path", mode)
		}
		path, depth, _ := x.growDiscover(k.b1, k.b2)
		end := k.b1 // the path's bucket with room, replayed as growRelocate does
		if path&1 != 0 {
			end = k.b2
		}
		for d := range depth {
			s := int(path >> (1 + bfsSlotBits*d) & (1<<bfsSlotBits - 1))
			end, _, _ = x.alt(end, lane(x.t.load(end), s))
		}
		before := make([]uint64, len(x.t.words))
		for i := range before {
			before[i] = x.t.load(uint64(i))
		}
		unchanged := func(what string, frozen func(i int) bool) {
			t.Helper()
			for i, w := range before {
				want := w
				if frozen(i) {
					want |= frozenBit
				}
				if got := x.t.load(uint64(i)); got != want {
					t.Fatalf("%v, %s: word %d is %#x, was %#x", mode, what, i, got, want)
				}
			}
		}
		x.next.Store(&growTable{}) // a copy has begun
		// Only the path's last bucket frozen: its move is refused.
		x.t.words[end].Store(before[end] | frozenBit)
		if st := finishes(t, "frozen end", func() int { return g.growRelocate(x, k.b1, k.b2) }); st != growFrozen {
			t.Fatalf("%v: path into a frozen bucket: status %d, want growFrozen", mode, st)
		}
		unchanged("frozen end", func(i int) bool { return uint64(i) == end })
		// Every word frozen, as the copy leaves the table.
		for i, w := range before {
			x.t.words[i].Store(w | frozenBit)
		}
		if st := finishes(t, "all frozen", func() int { return g.addIn(x, k) }); st != growFrozen {
			t.Fatalf("%v: insert into a frozen table: status %d, want growFrozen", mode, st)
		}
		unchanged("all frozen", func(int) bool { return true })
		// A key bucket with room, frozen: discovery reports room (depth 0),
		// the add that follows sees the frozen word.
		for i, w := range before {
			x.t.words[i].Store(w)
		}
		w1 := setLane(before[k.b1], 0, 0)
		x.t.words[k.b1].Store(w1 | frozenBit)
		if st := finishes(t, "frozen room", func() int { return g.addIn(x, k) }); st != growFrozen {
			t.Fatalf("%v: frozen bucket with room: status %d, want growFrozen", mode, st)
		}
		x.t.words[k.b1].Store(before[k.b1])
		x.next.Store(nil)

		// A key with no path: growFull before a copy, growFrozen after one began.
		g = tinyStepGrowing(mode, 16)
		x, k, st = fillUntil(t, g, r, func(*growTable, growKey) bool { return false })
		if st != growFull {
			t.Fatalf("%v: fill ended with status %d", mode, st)
		}
		if st := finishes(t, "no path", func() int { return g.growRelocate(x, k.b1, k.b2) }); st != growFull {
			t.Fatalf("%v: no path, no copy: status %d, want growFull", mode, st)
		}
		x.next.Store(&growTable{})
		if st := finishes(t, "no path, copy", func() int { return g.growRelocate(x, k.b1, k.b2) }); st != growFrozen {
			t.Fatalf("%v: no path during a copy: status %d, want growFrozen", mode, st)
		}
		x.next.Store(nil)
	}
}
