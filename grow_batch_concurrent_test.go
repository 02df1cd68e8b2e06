package cuckoo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGrowingLookupBatchNoFalseNegativesWhileGrowing: keys inserted before the
// readers start and never deleted are found by every LookupBatch form, at
// lengths around the group edges, while writers insert (growing the small
// filter many steps), insert and delete their own keys, and InsertUnique;
// with and without the prefetch; more goroutines than CPUs.
func TestGrowingLookupBatchNoFalseNegativesWhileGrowing(t *testing.T) {
	dur := 1500 * time.Millisecond
	if testing.Short() {
		dur = 250 * time.Millisecond
	} else if raceEnabled {
		dur = 600 * time.Millisecond
	}
	for _, pre := range []bool{false, true} {
		for _, mode := range growModes {
			t.Run(fmt.Sprintf("prefetch=%v/mode=%v", pre, mode), func(t *testing.T) {
				if pre {
					PrefetchEveryBatch(t)
				}
				g := tinyStepGrowing(mode, 4) // steps of one bucket: many during the run
				stable := make([]uint64, 600)
				r := rand.New(rand.NewPCG(5, uint64(mode)))
				for i := 0; i < len(stable); {
					// A tiny table can be full below half load, rightly (no path).
					if stable[i] = r.Uint64(); g.InsertHash(stable[i]) == nil {
						i++
					}
				}
				c0 := g.Cap()
				var stop atomic.Bool
				var fails atomic.Int64
				var msg atomic.Pointer[string]
				report := func(s string) {
					if fails.Add(1) == 1 {
						msg.Store(&s)
					}
				}
				var wg sync.WaitGroup
				for w := range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := rand.New(rand.NewPCG(uint64(w), 77))
						var mine []uint64
						for i := 0; !stop.Load(); i++ {
							h := r.Uint64()
							switch i % 4 {
							case 0, 1: // grow
								if err := g.InsertHash(h); err != nil && !errors.Is(err, ErrFull) {
									report(fmt.Sprintf("InsertHash: %v", err))
								}
							case 2:
								if err := g.InsertHash(h); err == nil {
									mine = append(mine, h)
								}
								if len(mine) > 64 {
									j := r.IntN(len(mine))
									if !g.DeleteHash(mine[j]) {
										report("Delete of an inserted key found nothing")
									}
									mine[j] = mine[len(mine)-1]
									mine = mine[:len(mine)-1]
								}
							case 3:
								if _, err := g.InsertUniqueHash(h); err != nil && !errors.Is(err, ErrFull) {
									report(fmt.Sprintf("InsertUniqueHash: %v", err))
								}
							}
						}
					}()
				}
				for rd := range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := rand.New(rand.NewPCG(uint64(rd), 99))
						hs := make([]uint64, 300)
						found := make([]bool, 300)
						for !stop.Load() {
							n := growBatchLens[r.IntN(len(growBatchLens))]
							n = min(n, len(hs))
							for i := range n {
								hs[i] = stable[r.IntN(len(stable))]
							}
							if rd == 0 { // the single lookup too
								if h := hs[0]; n > 0 && !g.LookupHash(h) {
									report(fmt.Sprintf("LookupHash(%#x) false", h))
								}
							}
							g.LookupBatchHash(hs[:n], found)
							for i := range n {
								if !found[i] {
									report(fmt.Sprintf("LookupBatchHash n=%d: key %d (%#x) false", n, i, hs[i]))
								}
							}
						}
					}()
				}
				// Run at least dur, longer (up to 5x) until the tables doubled.
				for start := time.Now(); time.Since(start) < dur || g.Cap() < 2*c0 && time.Since(start) < 5*dur; {
					time.Sleep(10 * time.Millisecond)
				}
				stop.Store(true)
				wg.Wait()
				if fails.Load() != 0 {
					t.Fatalf("%d failures; first: %s", fails.Load(), *msg.Load())
				}
				if g.Cap() == c0 {
					t.Fatalf("the filter did not grow from %d slots while the readers ran", c0)
				}
				t.Logf("cap %d -> %d, len %d", c0, g.Cap(), g.Len())
			})
		}
	}
}

// TestGrowingLookupBatchAcrossResets: keys inserted after a Reset finished and
// before a batch began are all found when no Reset began during the batch,
// while Resets, inserts (growth) and batches run together; prefetching.
func TestGrowingLookupBatchAcrossResets(t *testing.T) {
	PrefetchEveryBatch(t)
	dur := 1200 * time.Millisecond
	if testing.Short() {
		dur = 200 * time.Millisecond
	} else if raceEnabled {
		dur = 500 * time.Millisecond
	}
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := tinyStepGrowing(mode, 4)
			type set struct {
				epoch int64
				hs    []uint64
			}
			var begun atomic.Int64
			var published atomic.Pointer[set]
			published.Store(&set{})
			var stop atomic.Bool
			var fails, checked atomic.Int64
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // resetter
				defer wg.Done()
				r := rand.New(rand.NewPCG(3, 4))
				for !stop.Load() {
					e := begun.Add(1)
					g.Reset()
					s := &set{epoch: e}
					for len(s.hs) < 200 {
						if h := r.Uint64(); g.InsertHash(h) == nil {
							s.hs = append(s.hs, h)
						}
					}
					published.Store(s)
					time.Sleep(time.Millisecond)
				}
			}()
			wg.Add(1)
			go func() { // growth
				defer wg.Done()
				r := rand.New(rand.NewPCG(5, 6))
				for !stop.Load() {
					g.InsertHash(r.Uint64()) // ErrFull allowed in tiny tables
				}
			}()
			for rd := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					found := make([]bool, 200)
					r := rand.New(rand.NewPCG(uint64(rd), 8))
					for !stop.Load() {
						b := begun.Load()
						s := published.Load()
						n := growBatchLens[r.IntN(len(growBatchLens))]
						n = min(n, len(s.hs))
						g.LookupBatchHash(s.hs[:n], found)
						if s.epoch != b || begun.Load() != b {
							continue // a Reset overlapped: either answer
						}
						checked.Add(1)
						for i := range n {
							if !found[i] {
								fails.Add(1)
							}
						}
					}
				}()
			}
			time.Sleep(dur)
			stop.Store(true)
			wg.Wait()
			if fails.Load() != 0 {
				t.Fatalf("%d keys inserted after the last Reset and before the batch not found", fails.Load())
			}
			if checked.Load() == 0 {
				t.Fatal("no batch ran between Resets")
			}
			t.Logf("%d batches checked, %d resets", checked.Load(), begun.Load())
		})
	}
}
