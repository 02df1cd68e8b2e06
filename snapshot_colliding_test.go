package cuckoo

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// Snapshots against keys that collide with a key already in the filter.
// A snapshot copies the table word by word, lower words first, while
// other goroutines insert and delete (relocations wait for it). As with a
// search (lookup_test.go), a colliding key c whose first bucket is the
// second bucket q of key a can be inserted into a's first bucket p after
// the copy read p; were c's Delete to take a copy from q first, it would
// take a's, and the snapshot would hold a in neither bucket. These tests
// stall a snapshot right after it read p's word (the stall point of
// snapshot.go, race builds) and run that schedule: a was inserted before
// the snapshot and never deleted, so the loaded snapshot must hold it.

func TestSnapshotAgainstCollidingKeys(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	captures := []struct {
		name string
		copy func(t *testing.T, f *Filter) *Filter
	}{
		{"WriteTo", func(t *testing.T, f *Filter) *Filter {
			var b bytes.Buffer
			if _, err := f.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			var g Filter
			if _, err := g.ReadFrom(&b); err != nil {
				t.Fatal(err)
			}
			return &g
		}},
		{"Clone", func(t *testing.T, f *Filter) *Filter { return f.Clone() }},
	}
	for _, bits := range []int{8, 12, 15, Bits12x5} {
		for _, mode := range []Mode{LockFree, Locked} {
			for _, c := range captures {
				t.Run(fmt.Sprintf("bits=%d/mode=%v/%s", bits, mode, c.name), func(t *testing.T) {
					f := NewTestFilter(t, 64, mode, bits, 99)
					x := newCollision(t, f)
					pw := x.p // the word holding p
					if f.lay.packed {
						pw >>= 1
					}
					done := false
					stall := func(owner any, i uint64) {
						if owner != f || i != pw || done {
							return
						}
						done = true
						x.churn(x.p) // c lands in p, the emptier, and is deleted
					}
					snapshotStalls.Store(&stall)
					defer snapshotStalls.Store(nil)
					g := c.copy(t, f)
					if !done {
						t.Fatal("the snapshot did not reach its stall point")
					}
					if !g.Lookup(x.a) {
						t.Errorf("a key inserted before the snapshot and never deleted is missing from it (p %d: %v, q %d: %v in the copy)",
							x.p, bucketFps(g, x.p), x.q, bucketFps(g, x.q))
					}
				})
			}
		}
	}
}

// TestGrowingSnapshotAgainstCollidingDeletes runs the schedule above on a
// growing filter's table, where a Delete takes the youngest matching
// entry, a tie going to the deleting key's first bucket, so that no order
// of reads makes a snapshot safe by itself: C (first bucket Q, K's second)
// is inserted into P after the snapshot read P, and C's Delete, were it to
// run at once, would take K's entry from Q. Deletes wait for a snapshot
// (they hold the snapshot gate, as relocations do), so the snapshot reads
// Q before C's Delete runs. The stall gives that Delete a quarter of a second to
// finish before the snapshot goes on, long enough for a Delete that does
// not wait.
func TestGrowingSnapshotAgainstCollidingDeletes(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run(fmt.Sprintf("mode=%v", mode), func(t *testing.T) {
			// P = k.b1 is the lower word: the snapshot reads it first.
			g, x, k, c := growCollision(t, mode, func(k growKey) bool { return k.b1 < k.b2 })
			p, q := k.b1, k.b2
			churned := make(chan string, 1)
			stalled := false
			stall := func(owner any, i uint64) {
				if owner != x || i != p || stalled {
					return
				}
				stalled = true
				go func() {
					if st := g.addIn(x, c); st != growDone {
						churned <- fmt.Sprintf("insert of C: status %d", st)
						return
					}
					if matchLanes(x.t.load(p), k.q1) == 0 {
						churned <- "C did not land in P"
						return
					}
					if ok, st := g.deleteIn(x, c); !ok || st != growDone {
						churned <- fmt.Sprintf("delete of C: %v, status %d", ok, st)
						return
					}
					churned <- ""
				}()
				select {
				case msg := <-churned:
					churned <- msg // the Delete did not wait: the check below will tell
				case <-time.After(250 * time.Millisecond):
				}
			}
			snapshotStalls.Store(&stall)
			defer snapshotStalls.Store(nil)
			data, err := g.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if msg := <-churned; msg != "" {
				t.Fatal(msg)
			}
			if !stalled {
				t.Fatal("the snapshot did not reach its stall point")
			}
			var h Growing
			if err := h.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			y := h.st.shards[0].searched()
			if !h.lookupIn(y, k) {
				t.Errorf("a key inserted before the snapshot and never deleted is missing from it (P: %#x, Q: %#x in the copy)",
					y.t.load(p), y.t.load(q))
			}
			if !g.lookupIn(x, k) {
				t.Errorf("K is missing from the filter itself")
			}
		})
	}
}
