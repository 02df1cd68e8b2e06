package cuckoo

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
)

// TestClassMemoryAnyProcs checks the bits per key of each precision class
// at 1M keys, in both modes, with GOMAXPROCS from 2 to 64: the shards and
// lock stripes that scale with the processors are bounded by the table's
// size (shardBitsFor, lockStripeCount), so the class bounds (9.0, 13.5 and
// 17.0 heap bits per key) hold on any machine. It measures the heap New
// allocates, the table and every per-filter structure, with
// runtime.MemStats; a fill adds only the node pool of waiting goroutines
// in Locked mode (BENCHMARKS.md, "Space", measures filled filters).
// With 64 stripes per P and two shards per P, Locked mode took 17.55 bits
// per key in the high class at GOMAXPROCS=16.
func TestClassMemoryAnyProcs(t *testing.T) {
	const n = 1 << 20
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{2, 16, 64} {
		runtime.GOMAXPROCS(procs)
		for _, c := range []struct {
			name  string
			bits  int
			bound float64
		}{{"low", 8, 9.0}, {"standard", 12, 13.5}, {"high", 15, 17.0}} {
			for _, mode := range []Mode{LockFree, Locked} {
				t.Run(fmt.Sprintf("procs=%d/%s/%v", procs, c.name, mode), func(t *testing.T) {
					// The median of three filters: the heap also moves
					// with whatever else the process allocates meanwhile
					// (a few KB, 0.04 bits per key at 1M keys, seen once
					// in a few runs).
					var got [3]float64
					var f *Filter
					for i := range got {
						var before, after runtime.MemStats
						runtime.GC() // twice: the second empties sync.Pools' victim caches
						runtime.GC()
						runtime.ReadMemStats(&before)
						var err error
						f, err = New(n, WithFingerprintBits(c.bits), WithMode(mode))
						if err != nil {
							t.Fatal(err)
						}
						runtime.GC()
						runtime.ReadMemStats(&after)
						got[i] = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) * 8 / n
						runtime.KeepAlive(f)
					}
					slices.Sort(got[:])
					table := float64(len(f.t.words)*8+len(f.t.vers)*8) * 8 / n
					stripes := 0
					if f.locks != nil {
						stripes = len(f.locks.stripes)
					}
					t.Logf("%.3f heap bits per key (median of %.3f, %.3f, %.3f; table %.3f), %d shards, %d stripes", got[1], got[0], got[1], got[2], table, len(f.count.shards), stripes)
					if got[1] > c.bound {
						t.Errorf("%.3f heap bits per key; want at most %.1f", got[1], c.bound)
					}
				})
			}
		}
	}
}
