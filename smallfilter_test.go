package cuckoo

import (
	"runtime"
	"testing"
	"unsafe"
)

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
