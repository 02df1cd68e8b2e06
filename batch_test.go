package cuckoo_test

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

func batchKeys(lo, n int, salt uint64) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = binary.LittleEndian.AppendUint64(nil, uint64(lo+i)|salt)
	}
	return keys
}

// TestLookupBatchMatchesLookup checks LookupBatch against Lookup key by key,
// on batch lengths around the group size, for inserted and absent keys.
func TestLookupBatchMatchesLookup(t *testing.T) {
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		for _, bits := range []int{8, 12} {
			t.Run(fmt.Sprintf("mode=%v/bits=%d", mode, bits), func(t *testing.T) {
				f, err := cuckoo.New(20000, cuckoo.WithMode(mode), cuckoo.WithFingerprintBits(bits))
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range batchKeys(0, 19000, 0) {
					if err := f.Insert(k); err != nil {
						t.Fatal(err)
					}
				}
				for _, n := range []int{0, 1, 15, 16, 17, 33, 1000} {
					for _, salt := range []uint64{0, 1 << 62} {
						keys := batchKeys(n*7, n, salt)
						found := make([]bool, n)
						f.LookupBatch(keys, found)
						positives := 0
						for i, k := range keys {
							if want := f.Lookup(k); found[i] != want {
								t.Fatalf("n=%d salt=%#x key %d: batch says %v; Lookup says %v", n, salt, i, found[i], want)
							}
							if found[i] {
								positives++
							}
						}
						if salt == 0 && positives != n {
							t.Fatalf("n=%d: %d of %d inserted keys found; want all", n, positives, n)
						}
					}
				}
				// found shorter than keys: only len(found) answers.
				found := make([]bool, 3)
				f.LookupBatch(batchKeys(0, 10, 0), found)
				if !found[0] || !found[1] || !found[2] {
					t.Fatalf("short found slice: got %v; want all true", found)
				}
			})
		}
	}
}

// TestLookupBatchNoFalseNegatives runs batches over stable keys while other
// goroutines churn the filter at high load, forcing relocations.
func TestLookupBatchNoFalseNegatives(t *testing.T) {
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		t.Run(fmt.Sprintf("mode=%v", mode), func(t *testing.T) {
			const capacity = 8000
			f, err := cuckoo.New(capacity, cuckoo.WithMode(mode), cuckoo.WithFingerprintBits(8))
			if err != nil {
				t.Fatal(err)
			}
			stable := batchKeys(0, capacity*80/100, 0)
			for _, k := range stable {
				if err := f.Insert(k); err != nil {
					t.Fatal(err)
				}
			}
			rounds := 200
			if testing.Short() {
				rounds = 40
			}
			var misses atomic.Int64
			var stop atomic.Bool
			var churn sync.WaitGroup
			procs := runtime.GOMAXPROCS(0)
			for g := 0; g < 2*procs; g++ {
				churn.Add(1)
				go func(g int) {
					defer churn.Done()
					mine := batchKeys(1<<20*(g+1), capacity*15/100/(2*procs), 1<<61)
					for !stop.Load() {
						for _, k := range mine {
							_ = f.Insert(k)
						}
						for _, k := range mine {
							f.Delete(k)
						}
					}
				}(g)
			}
			var readers sync.WaitGroup
			for g := 0; g < 2*procs; g++ {
				readers.Add(1)
				go func() {
					defer readers.Done()
					found := make([]bool, len(stable))
					for r := 0; r < rounds/(2*procs)+1; r++ {
						f.LookupBatch(stable, found)
						for _, ok := range found {
							if !ok {
								misses.Add(1)
							}
						}
					}
				}()
			}
			readers.Wait()
			stop.Store(true)
			churn.Wait()
			if n := misses.Load(); n != 0 {
				t.Fatalf("LookupBatch missed %d stable keys; want 0", n)
			}
		})
	}
}
