package cuckoo

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"testing"
)

// TestGrowingSearchAgainstCollidingDeletes stalls a growing table's search
// (lookupIn) between its reads and, as in TestSearchAgainstCollidingKeys,
// inserts and deletes keys that collide with the searched key K (same
// tag, position bits and buckets, in either bucket order): C, whose first
// bucket is K's second, after the search read K's first bucket P; D, in
// K's order, after it read K's second bucket Q. K's entry starts in Q.
// C lands in P (the emptier), and C's Delete, its tie going to C's own
// first bucket, takes K's entry from Q; D lands in Q, and D's Delete, its
// tie going to P, takes C's entry from P. No entry moves. A search that
// trusted P's unchanged counter would find P empty at both reads and Q
// empty between them and miss K, inserted before it and never deleted;
// deletes move both of their buckets' counters, so the search starts over
// and finds D's entry in Q. The deletes wrap P's one-bit counter once,
// in the same step as Q's; with stripes=1024 the table gets that many
// wrap epochs and P and Q are in different stripes, so that step must
// count both wraps, each in its bucket's stripe (the small tables of the
// other tests have one stripe).
func TestGrowingSearchAgainstCollidingDeletes(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	for _, mode := range []Mode{LockFree, Locked} {
		for _, stripes := range []int{0, 1024} {
			t.Run(fmt.Sprintf("mode=%v/stripes=%d", mode, stripes), func(t *testing.T) {
				testGrowingSearchAgainstCollidingDeletes(t, mode, stripes)
			})
		}
	}
}

func testGrowingSearchAgainstCollidingDeletes(t *testing.T, mode Mode, stripes int) {
	g, x, k, c := growCollisionStriped(t, mode, stripes, func(k growKey) bool { return k.b1 != k.b2 })
	p, q := k.b1, k.b2
	churn := func(key growKey, want uint64, wantQ uint64) {
		if st := g.addIn(x, key); st != growDone {
			t.Fatalf("insert of a colliding key: status %d", st)
		}
		if matchLanes(x.t.load(want), wantQ) == 0 {
			t.Fatalf("the colliding key did not land in bucket %d", want)
		}
		if ok, st := g.deleteIn(x, key); !ok || st != growDone {
			t.Fatalf("delete of a colliding key: %v, status %d", ok, st)
		}
	}
	var done [3]bool
	stall := func(sx *growTable, b1 uint64, stage int) {
		if sx != x || b1 != p || stage > 2 || done[stage] || stage == 2 && !done[1] {
			return
		}
		done[stage] = true
		if stage == 1 {
			churn(c, p, k.q1) // C's entry in p matches K there
		} else {
			churn(k, q, k.q2) // D: K's placement, another key
		}
	}
	growSearchStalls.Store(&stall)
	defer growSearchStalls.Store(nil)
	if !g.lookupIn(x, k) {
		t.Errorf("a key inserted before the search and never deleted was not found")
	}
	if !done[1] || !done[2] {
		t.Fatalf("the search did not reach its stall points (stage 1: %v, stage 2: %v)", done[1], done[2])
	}
}

// growCollision returns a growing filter in mode, the table of its shard 0,
// and two colliding keys of that table: K, the first placement that keep
// accepts, inserted with its entry in its second bucket Q (moved there as a
// relocation would if it landed in P), and C, K in the opposite bucket
// order, not inserted.
func growCollision(t *testing.T, mode Mode, keep func(growKey) bool) (g *Growing, x *growTable, k, c growKey) {
	t.Helper()
	return growCollisionStriped(t, mode, 0, keep)
}

// growCollisionStriped is growCollision with the table given stripes wrap
// epochs (if not 0) and K's buckets in different stripes.
func growCollisionStriped(t *testing.T, mode Mode, stripes int, keep func(growKey) bool) (g *Growing, x *growTable, k, c growKey) {
	t.Helper()
	g, err := NewGrowing(1000, WithMode(mode), WithSeed(7))
	if err != nil {
		t.Fatal(err)
	}
	x = g.st.shards[0].cur.Load()
	if stripes != 0 {
		x.t.setVers(make([]atomic.Uint64, stripes))
	}
	for h := uint64(1); ; h++ {
		k = x.place(h * 0x9e3779b97f4a7c15)
		if keep(k) && (stripes == 0 || x.t.epochIdx(k.b1) != x.t.epochIdx(k.b2)) {
			break
		}
	}
	c = growKey{b1: k.b2, b2: k.b1, q1: k.q2, q2: k.q1}
	p, q := k.b1, k.b2
	if st := g.addIn(x, k); st != growDone {
		t.Fatalf("insert of K: status %d", st)
	}
	if matchLanes(x.t.load(p), k.q1) != 0 {
		s := bits.TrailingZeros64(matchLanes(x.t.load(p), k.q1)) / laneBits // as longestMatch
		v := lane(x.t.load(p), s)
		var my *descLease
		if mode == LockFree {
			my = leaseDesc()
		}
		if st := g.moveIn(x, p, s, v, q, altValueOf(x, p, v), &my); st != growDone {
			t.Fatalf("move of K's entry: status %d", st)
		}
		if my != nil {
			my.release()
		}
	}
	return g, x, k, c
}

// TestGrowingSearchesReadTheirFirstBucketsEpoch stalls each growing search
// (lookupIn in both modes, LookupHash's fast path, lookupGroup) at its
// stall points (growSearchStalls, race builds only) and moves key K's
// entry under it so that the first bucket P's one-bit counter wraps back
// to what the search first read: K's entry starts in the second bucket Q;
// after the search's first read of P it moves Q -> P, and between the
// search's re-read of P and its re-read of P's epoch (stage 3) it moves
// back P -> Q, wrapping P's counter. P then reads bit for bit as at first,
// and only the epoch shows the two moves; a search that re-read the epoch
// before P would take both re-reads as unchanged and answer "absent" for a
// key present throughout. (Where a search finds K before stage 3, it
// passes without the second move.)
func TestGrowingSearchesReadTheirFirstBucketsEpoch(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	PrefetchEveryBatch(t)
	searches := []struct {
		name   string
		search func(g *Growing, x *growTable, h uint64, k growKey) bool
	}{
		{"lookupIn", func(g *Growing, x *growTable, _ uint64, k growKey) bool { return g.lookupIn(x, k) }},
		{"LookupHash", func(g *Growing, _ *growTable, h uint64, _ growKey) bool { return g.LookupHash(h) }},
		{"LookupBatchHash", func(g *Growing, _ *growTable, h uint64, _ growKey) bool {
			var found [1]bool
			g.LookupBatchHash([]uint64{h}, found[:])
			return found[0]
		}},
		// K last, after a group of keys of other shards: its table chosen while
		// the first group is answered, its words prefetched (PrefetchEveryBatch).
		{"LookupBatchHash/prefetched", func(g *Growing, x *growTable, h uint64, _ growKey) bool {
			hs, found := []uint64{}, make([]bool, batchGroup+1)
			for i := uint64(1); len(hs) < batchGroup; i++ {
				if o := i * 0x9e3779b97f4a7c15; g.shardOf(g.keyed(o)).searched() != x {
					hs = append(hs, o)
				}
			}
			g.LookupBatchHash(append(hs, h), found)
			return found[batchGroup]
		}},
	}
	for _, mode := range []Mode{LockFree, Locked} {
		for _, s := range searches {
			t.Run(fmt.Sprintf("mode=%v/%s", mode, s.name), func(t *testing.T) {
				g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(0)) // seed 0: the keyed hash is the hash
				h, x, k := keyWithTwoBuckets(g)
				p, q := k.b1, k.b2
				w, _ := putLane(0, k.q2) // K's entry in Q, both counters 0
				x.t.words[q].Store(w)
				move := func(src, dst, v uint64) {
					var my *descLease
					if mode == LockFree {
						my = leaseDesc()
						defer my.release()
					}
					if st := g.moveIn(x, src, 0, v, dst, altValueOf(x, src, v), &my); st != growDone {
						t.Fatalf("move %d -> %d: status %d", src, dst, st)
					}
				}
				var done [4]bool
				stall := func(sx *growTable, b1 uint64, stage int) {
					if sx != x || b1 != p || stage > 3 || done[stage] {
						return
					}
					switch {
					case stage == 1:
						done[1] = true
						move(q, p, k.q2)
					case stage == 3 && done[1]:
						done[3] = true
						move(p, q, k.q1)
						if growCounter(x.t.load(p)) != 0 {
							t.Fatal("P's counter did not wrap back")
						}
					}
				}
				growSearchStalls.Store(&stall)
				defer growSearchStalls.Store(nil)
				if !s.search(g, x, h, k) {
					t.Errorf("K, in the filter throughout, not found (stage 3 reached: %v)", done[3])
				}
				if !done[1] {
					t.Fatal("the search did not reach stage 1")
				}
			})
		}
	}
}

// altValueOf returns entry v of bucket b of x as it is written in its
// other bucket.
func altValueOf(x *growTable, b, v uint64) uint64 {
	_, nv, _ := x.alt(b, v)
	return nv
}

// keyWithTwoBuckets returns the first hash of the sequence i·φ (i = 1, 2,
// ...) whose key has two distinct buckets in its shard's current table,
// with that table and the key's placement there.
func keyWithTwoBuckets(g *Growing) (h uint64, x *growTable, k growKey) {
	for i := uint64(1); ; i++ {
		h = i * 0x9e3779b97f4a7c15
		x = g.shardOf(h).cur.Load()
		if k = x.place(h); k.b1 != k.b2 {
			return h, x, k
		}
	}
}

// TestGrowFindSeesACounterWrappedBack drives the full search (growFind)
// with K's entry moved Q -> P after its read of P and back after its read
// of Q: P reads the same again (a one-bit counter bumped twice), only the
// epoch shows the moves, and K, present throughout, must be found.
// Ignoring the epoch in the second phase makes it fail.
func TestGrowFindSeesACounterWrappedBack(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	g := newTestGrowing(t, 1000, WithSeed(0))
	_, x, k := keyWithTwoBuckets(g)
	p, q := k.b1, k.b2
	w, _ := putLane(0, k.q2)
	x.t.words[q].Store(w)
	move := func(src, dst, v uint64) {
		my := leaseDesc()
		defer my.release()
		if st := g.moveIn(x, src, 0, v, dst, altValueOf(x, src, v), &my); st != growDone {
			t.Fatalf("move %d -> %d: status %d", src, dst, st)
		}
	}
	var done [3]bool
	stall := func(sx *growTable, b1 uint64, stage int) {
		if sx != x || b1 != p || stage > 2 || done[stage] || stage == 2 && !done[1] {
			return
		}
		done[stage] = true
		if stage == 1 {
			move(q, p, k.q2)
			return
		}
		move(p, q, k.q1)
		if growCounter(x.t.load(p)) != 0 {
			t.Fatal("P's counter did not come back to 0")
		}
	}
	growSearchStalls.Store(&stall)
	defer growSearchStalls.Store(nil)
	if _, ok := x.growFind(p, q, k.q1, k.q2); !ok {
		t.Errorf("growFind: K, present throughout, reported absent")
	}
	if !done[2] {
		t.Fatal("the search did not reach stall point 2")
	}
}
