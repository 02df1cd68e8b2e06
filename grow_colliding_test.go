package cuckoo

import (
	"fmt"
	"math/bits"
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
// and finds D's entry in Q.
func TestGrowingSearchAgainstCollidingDeletes(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run(fmt.Sprintf("mode=%v", mode), func(t *testing.T) {
			g, x, k, c := growCollision(t, mode, func(k growKey) bool { return k.b1 != k.b2 })
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
				if sx != x || b1 != p || done[stage] || stage == 2 && !done[1] {
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
		})
	}
}

// growCollision returns a growing filter in mode, the table of its shard 0,
// and two colliding keys of that table: K, the first placement that keep
// accepts, inserted with its entry in its second bucket Q (moved there as a
// relocation would if it landed in P), and C, K in the opposite bucket
// order, not inserted.
func growCollision(t *testing.T, mode Mode, keep func(growKey) bool) (g *Growing, x *growTable, k, c growKey) {
	t.Helper()
	g, err := NewGrowing(1000, WithMode(mode), WithSeed(7))
	if err != nil {
		t.Fatal(err)
	}
	x = g.st.shards[0].cur.Load()
	for h := uint64(1); ; h++ {
		if k = x.place(h * 0x9e3779b97f4a7c15); keep(k) {
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
		if st := g.moveIn(x, p, s, v, q, x.altValue(v), my); st != growDone {
			t.Fatalf("move of K's entry: status %d", st)
		}
		if my != nil {
			my.release()
		}
	}
	return g, x, k, c
}
