package cuckoo

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"unsafe"
)

// Tests of memory: the bits per key a filter's tables and heap take,
// against the bounds the package states.

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

// TestSmallFiltersAreCheap holds 100,000 filters of 100 keys, the
// per-tenant case, and measures their heap with runtime.MemStats. The
// fixed state used to be about 14 KB per filter (LockFree) and 20.5 KB
// (Locked), 1.4-2 GB for this test; with the shards and stripes sized by
// the table (shardBitsFor, lockStripeCount) a 100-key filter measures
// about 900 bytes (LockFree) and 1.6 KB (Locked) on a 2-core machine
// (five-slot buckets, New's default).
func TestSmallFiltersAreCheap(t *testing.T) {
	n := 100000
	if testing.Short() || raceEnabled {
		n = 10000
	}
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run(mode.String(), func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			fs := make([]*Filter, n)
			for i := range fs {
				f, err := New(100, WithMode(mode))
				if err != nil {
					t.Fatal(err)
				}
				fs[i] = f
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(n)
			table := int64(len(fs[0].t.words)) * 8
			t.Logf("%v: %d filters of 100 keys: %d bytes each (table %d, Filter struct %d)", mode, n, per, table, unsafe.Sizeof(Filter{}))
			// 2 KiB each: 200 MB for 100,000 filters.
			if per > 2048 {
				t.Errorf("a 100-key %v filter costs %d bytes of heap; want at most 2048", mode, per)
			}
			runtime.KeepAlive(fs)
		})
	}
}

// TestGrowingMemoryPerKey grows a filter from 1,000 keys to 2,000,000 and
// checks, every 20,000 keys from 1,000 times the start on, that its
// tables take at most 1.15 times the bits per key of a four-slot fixed
// filter sized for the same keys (WithSlotsPerBucket(4): 95% load). Both
// store 64 bits per bucket of four slots, so the ratio is one of slots per
// key. Today's steps measured 1.109x at 1,000x growth and at most
// 1.118x; doubling at once (growStepParts = 1) fails it at 1.540x, and
// TestGrowingHeapAgainstStandard at 1.98x.
// Under the race detector or -short, from 100 keys to 200,000.
func TestGrowingMemoryPerKey(t *testing.T) {
	start, end := 1000, 2_000_000
	if raceEnabled || testing.Short() {
		start, end = 100, 200_000
	}
	g := newTestGrowing(t, start, WithSeed(9))
	var k [8]byte
	worst, worstAt := 0.0, 0
	for i := range end {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		if err := g.Insert(k[:]); err != nil {
			t.Fatal(err)
		}
		n := i + 1
		if n < 1000*start || n%20_000 != 0 {
			continue
		}
		fixedSlots := bucketsFor(n) * slotsPerBucket
		ratio := float64(g.Cap()) / float64(fixedSlots)
		if ratio > worst {
			worst, worstAt = ratio, n
		}
		if ratio > 1.15 {
			t.Fatalf("%d keys (%dx the start): %d slots against a fixed filter's %d: %.3fx, above 1.15x", n, n/start, g.Cap(), fixedSlots, ratio)
		}
		if n == 1000*start {
			t.Logf("at 1,000x growth (%d keys): %.3fx the fixed filter's memory per key", n, ratio)
		}
	}
	t.Logf("worst from 1,000x to %dx: %.3fx at %d keys", end/start, worst, worstAt)
}

// TestGrowingHeapAgainstStandard measures the heap a filter grown from
// NewGrowing(1000) holds (runtime.MemStats, the tables and every
// per-filter structure) at 2^20 keys and at five sizes from 1.1M to 2M,
// against New(n)'s (the standard class, five 12-bit slots) for the same
// n: at most 1.45 times its bits per key. Measured: 1.404x to 1.413x.
// The bound is one of large filters: from 100 keys to 2^17 to 200,000,
// each shard's table is a few pages and their rounding to whole 8 KiB
// pages took the ratio to 1.44x-1.48x. So the race build, which could
// not fill 2M keys in its time, does not run it; the test has no
// concurrency to check.
func TestGrowingHeapAgainstStandard(t *testing.T) {
	if raceEnabled {
		t.Skip("a single-goroutine heap measurement at 1M-2M keys: run without -race")
	}
	start, sizes := 1000, []int{1 << 20, 1_100_000, 1_300_000, 1_500_000, 1_700_000, 1_880_000, 2_000_000}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	h0 := heap()
	g, err := NewGrowing(start, WithSeed(9))
	if err != nil {
		t.Fatal(err)
	}
	var k [8]byte
	next := 0
	for _, n := range sizes {
		for ; next < n; next++ {
			binary.LittleEndian.PutUint64(k[:], uint64(next))
			if err := g.Insert(k[:]); err != nil {
				t.Fatal(err)
			}
		}
		grown := float64(int64(heap())-int64(h0)) * 8 / float64(n)
		h1 := heap()
		f, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		fixed := float64(int64(heap())-int64(h1)) * 8 / float64(n)
		runtime.KeepAlive(f)
		f = nil
		t.Logf("%d keys: growing %.2f heap bits per key, New(n) %.2f: %.3fx", n, grown, fixed, grown/fixed)
		if grown > 1.45*fixed {
			t.Errorf("%d keys: growing %.2f heap bits per key, more than 1.45 times New(n)'s %.2f", n, grown, fixed)
		}
	}
	runtime.KeepAlive(g)
}
