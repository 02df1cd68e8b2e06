package cuckoo

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestGrowingLookupBatchTableChosenBeforeSteps: K, the 17th key of a batch, has
// its table chosen while the first group is placed; stalled at the first
// group's first read, K's shard then finishes any copy under way and makes
// two more steps, and keys of K's shard are deleted and inserted in the new
// tables. K, inserted before the call and never deleted, must be found by
// reads of the table chosen before all that (frozen by now). Scenarios:
// the chosen table is the shard's current one, or the old table of a copy
// that had not begun (searched() returns old).
func TestGrowingLookupBatchTableChosenBeforeSteps(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only")
	}
	for _, pre := range []bool{false, true} {
		for _, mode := range growModes {
			for _, pending := range []bool{false, true} {
				t.Run(fmt.Sprintf("prefetch=%v/mode=%v/pending=%v", pre, mode, pending), func(t *testing.T) {
					if pre {
						PrefetchEveryBatch(t)
					}
					g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(0))
					r := rand.New(rand.NewPCG(1, uint64(mode)))
					kHash := r.Uint64()
					sh := g.shardOf(g.keyed(kHash))
					var others, same []uint64 // keys of other shards; keys of K's shard
					for len(others) < batchGroup || len(same) < 100 {
						h := r.Uint64()
						if g.shardOf(g.keyed(h)) != sh {
							others = append(others, h)
						} else {
							same = append(same, h)
						}
						if err := g.InsertHash(h); err != nil {
							t.Fatal(err)
						}
					}
					if err := g.InsertHash(kHash); err != nil {
						t.Fatal(err)
					}
					if pending { // a step begun, its copy not: lookups search old
						x := sh.cur.Load()
						d, p := x.nextStep()
						n := g.st.newTable(sh, d, p, g.mode)
						n.old.Store(x)
						x.next.Store(n)
						sh.cur.Store(n)
					}
					chosen := sh.searched()
					stalled, busy := false, false
					stall := func(sx *growTable, _ uint64, stage int) {
						if stalled || busy || stage != 1 {
							return
						}
						stalled, busy = true, true
						defer func() { busy = false }()
						for range 3 {
							g.forceStep(sh)
						}
						for i, h := range same[:50] {
							if !g.DeleteHash(h) {
								t.Fatalf("Delete of inserted key %d found nothing", i)
							}
							if err := g.InsertHash(r.Uint64()); err != nil {
								t.Fatal(err)
							}
						}
					}
					growSearchStalls.Store(&stall)
					defer growSearchStalls.Store(nil)
					hs := append(others[:batchGroup:batchGroup], kHash)
					found := make([]bool, len(hs))
					g.LookupBatchHash(hs, found)
					growSearchStalls.Store(nil)
					if !stalled {
						t.Fatal("the batch never reached its stall point")
					}
					if sh.searched() == chosen || chosen.next.Load() == nil || chosen.next.Load().next.Load() == nil {
						t.Fatal("K's shard did not step twice past the table chosen for K")
					}
					for i, f := range found {
						if !f {
							t.Errorf("key %d of %d (K is %d), inserted before the call, not found", i, len(hs), batchGroup)
						}
					}
					if !g.LookupHash(kHash) {
						t.Error("K not found after the call")
					}
				})
			}
		}
	}
}
