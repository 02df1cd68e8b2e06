package cuckoo_test

import (
	"bytes"
	"encoding"
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
// on batch lengths around the group size, for inserted and absent keys,
// with and without the prefetching path of large tables.
func TestLookupBatchMatchesLookup(t *testing.T) {
	eachBatchPath(t, allLayouts, testLookupBatchMatchesLookup)
}

// allLayouts are the fixed filter's layouts, by LayoutOptions' bits.
var allLayouts = []int{8, 12, 15, cuckoo.Bits12x5}

// eachBatchPath runs test as a subtest in both modes and each of layouts,
// on the batches' plain path and on their prefetching path (forced on).
func eachBatchPath(t *testing.T, layouts []int, test func(t *testing.T, mode cuckoo.Mode, bits int)) {
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		for _, bits := range layouts {
			for _, prefetch := range []bool{false, true} {
				t.Run(fmt.Sprintf("mode=%v/bits=%d/prefetch=%v", mode, bits, prefetch), func(t *testing.T) {
					if prefetch {
						cuckoo.PrefetchEveryBatch(t)
					}
					test(t, mode, bits)
				})
			}
		}
	}
}

func testLookupBatchMatchesLookup(t *testing.T, mode cuckoo.Mode, bits int) {
	f, err := cuckoo.New(20000, append(cuckoo.LayoutOptions(bits), cuckoo.WithMode(mode))...)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range batchKeys(0, 19000, 0) {
		if err := f.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{0, 1, 15, 16, 17, 32, 33, 1000} {
		for _, salt := range []uint64{0, 1 << 62} {
			keys := batchKeys(n*7, n, salt)
			found := make([]bool, n)
			f.LookupBatch(keys, found)
			strs, viaStrings := make([]string, n), make([]bool, n)
			for i, k := range keys {
				strs[i] = string(k)
			}
			f.LookupBatchString(strs, viaStrings)
			positives := 0
			for i, k := range keys {
				if want := f.Lookup(k); found[i] != want || viaStrings[i] != want {
					t.Fatalf("n=%d salt=%#x key %d: LookupBatch says %v, LookupBatchString %v; Lookup says %v", n, salt, i, found[i], viaStrings[i], want)
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
}

// TestLookupBatchNoFalseNegatives runs batches over stable keys while other
// goroutines churn the filter at high load, forcing relocations.
func TestLookupBatchNoFalseNegatives(t *testing.T) {
	eachBatchPath(t, []int{8}, testLookupBatchNoFalseNegatives)
}

func testLookupBatchNoFalseNegatives(t *testing.T, mode cuckoo.Mode, bits int) {
	const capacity = 8000
	f, err := cuckoo.New(capacity, append(cuckoo.LayoutOptions(bits), cuckoo.WithMode(mode))...)
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
}

// TestInsertBatchMatchesInsert inserts the same keys through InsertBatch into
// one filter and through Insert into another with the same seed: from one
// goroutine the two must do the same inserts in the same order, so they must
// stop at the same key and hold bit-identical tables. The filter is small
// enough to fill up, so the ErrFull path is checked as well.
func TestInsertBatchMatchesInsert(t *testing.T) {
	eachBatchPath(t, allLayouts, testInsertBatchMatchesInsert)
}

func testInsertBatchMatchesInsert(t *testing.T, mode cuckoo.Mode, bits int) {
	opts := append(cuckoo.LayoutOptions(bits), cuckoo.WithMode(mode), cuckoo.WithSeed(7))
	batched, err := cuckoo.New(5000, opts...)
	if err != nil {
		t.Fatal(err)
	}
	single, err := cuckoo.New(5000, opts...)
	if err != nil {
		t.Fatal(err)
	}
	keys := batchKeys(0, 6000, 0) // more than fit
	want := len(keys)
	for i, k := range keys {
		if err := single.Insert(k); err != nil {
			want = i
			break
		}
	}
	if want == len(keys) {
		t.Fatalf("Insert took all %d keys into a filter for 5000; the test needs it to fill up", want)
	}
	// Batches of uneven lengths, so groups straddle calls.
	got := 0
	for lo := 0; lo < len(keys); {
		hi := min(lo+1+lo%37, len(keys))
		n, err := batched.InsertBatch(keys[lo:hi])
		got += n
		if err != nil {
			if err != cuckoo.ErrFull {
				t.Fatalf("InsertBatch error %v; want ErrFull", err)
			}
			if n >= hi-lo {
				t.Fatalf("InsertBatch returned ErrFull with n=%d of %d", n, hi-lo)
			}
			break
		}
		if n != hi-lo {
			t.Fatalf("InsertBatch returned n=%d of %d with nil error", n, hi-lo)
		}
		lo = hi
	}
	if got != want {
		t.Fatalf("InsertBatch stopped after %d keys; Insert after %d", got, want)
	}
	if batched.Len() != got {
		t.Fatalf("Len %d after %d inserted keys", batched.Len(), got)
	}
	for i, k := range keys[:got] {
		if !batched.Lookup(k) {
			t.Fatalf("inserted key %d not found", i)
		}
	}
	if !sameEncoding(t, batched, single) {
		t.Fatal("InsertBatch and Insert of the same keys left different tables")
	}
}

func TestInsertBatchEdgeCases(t *testing.T) {
	var zero cuckoo.Filter
	if n, err := zero.InsertBatch(nil); n != 0 || err != nil {
		t.Fatalf("zero Filter, no keys: got %d, %v; want 0, nil", n, err)
	}
	if n, err := zero.InsertBatch(batchKeys(0, 3, 0)); n != 0 || err != cuckoo.ErrZeroFilter {
		t.Fatalf("zero Filter: got %d, %v; want 0, ErrZeroFilter", n, err)
	}
	f, err := cuckoo.New(100)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.InsertBatch(nil); n != 0 || err != nil {
		t.Fatalf("no keys: got %d, %v; want 0, nil", n, err)
	}
	// Empty and nil keys are keys like any other.
	if n, err := f.InsertBatch([][]byte{nil, {}, []byte("x")}); n != 3 || err != nil {
		t.Fatalf("got %d, %v; want 3, nil", n, err)
	}
	if !f.Lookup(nil) || !f.Lookup([]byte("x")) || f.Len() != 3 {
		t.Fatalf("after InsertBatch: Lookup(nil)=%v Lookup(x)=%v Len=%d", f.Lookup(nil), f.Lookup([]byte("x")), f.Len())
	}
}

// TestInsertBatchConcurrent has goroutines insert disjoint key sets in
// batches while others look up keys inserted before, under churn; every key
// a goroutine's InsertBatch reported inserted must be found afterwards, and
// none inserted before may ever be missed.
func TestInsertBatchConcurrent(t *testing.T) {
	eachBatchPath(t, []int{cuckoo.Bits12x5}, testInsertBatchConcurrent)
}

func testInsertBatchConcurrent(t *testing.T, mode cuckoo.Mode, bits int) {
	capacity := cuckoo.Sized(10000, 20000, 20000)
	if cuckoo.RaceEnabled {
		capacity = cuckoo.Sized(10000, 10000, 20000)
	}
	f, err := cuckoo.New(capacity, append(cuckoo.LayoutOptions(bits), cuckoo.WithMode(mode))...)
	if err != nil {
		t.Fatal(err)
	}
	stable := batchKeys(0, capacity/2, 0)
	if n, err := f.InsertBatch(stable); err != nil {
		t.Fatalf("stable keys: %d inserted, %v", n, err)
	}
	procs := runtime.GOMAXPROCS(0)
	writers := 4 * procs
	per := capacity * 45 / 100 / writers
	inserted := make([][][]byte, writers)
	var misses atomic.Int64
	var stop atomic.Bool
	var readers, ws sync.WaitGroup
	for g := 0; g < 2*procs; g++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			found := make([]bool, len(stable))
			for !stop.Load() {
				f.LookupBatch(stable, found)
				for _, ok := range found {
					if !ok {
						misses.Add(1)
					}
				}
			}
		}()
	}
	for g := 0; g < writers; g++ {
		ws.Add(1)
		go func(g int) {
			defer ws.Done()
			keys := batchKeys(1<<24*(g+1), per, 1<<60)
			for lo := 0; lo < len(keys); lo += 50 {
				hi := min(lo+50, len(keys))
				n, err := f.InsertBatch(keys[lo:hi])
				inserted[g] = append(inserted[g], keys[lo:lo+n]...)
				if err != nil {
					return
				}
			}
		}(g)
	}
	ws.Wait()
	stop.Store(true)
	readers.Wait()
	if n := misses.Load(); n != 0 {
		t.Fatalf("%d lookups of stable keys missed during concurrent InsertBatch", n)
	}
	total := len(stable)
	for g, keys := range inserted {
		total += len(keys)
		for i, k := range keys {
			if !f.Lookup(k) {
				t.Fatalf("writer %d: key %d reported inserted but not found", g, i)
			}
		}
	}
	if f.Len() != total {
		t.Fatalf("Len %d; %d keys reported inserted", f.Len(), total)
	}
}

// TestLookupBatchLengths checks what LookupBatch does when keys and found
// differ in length: it looks up min(len(keys), len(found)) keys, returns that
// count, and writes no element of found past it.
func TestLookupBatchLengths(t *testing.T) {
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		t.Run("mode="+mode.String(), func(t *testing.T) {
			f, err := cuckoo.New(1000, cuckoo.WithMode(mode))
			if err != nil {
				t.Fatal(err)
			}
			keys := batchKeys(0, 40, 0)
			if n, err := f.InsertBatch(keys); n != len(keys) || err != nil {
				t.Fatalf("InsertBatch = %d, %v", n, err)
			}
			for _, tc := range []struct{ keys, found int }{{40, 3}, {40, 17}, {3, 40}, {0, 5}, {5, 0}, {40, 40}} {
				found := make([]bool, tc.found)
				n := f.LookupBatch(keys[:tc.keys], found)
				if want := min(tc.keys, tc.found); n != want {
					t.Fatalf("keys=%d found=%d: LookupBatch = %d; want %d", tc.keys, tc.found, n, want)
				}
				for i := range n {
					if !found[i] {
						t.Fatalf("keys=%d found=%d: found[%d] = false for an inserted key", tc.keys, tc.found, i)
					}
				}
			}
			// Past n, found keeps what it held.
			found := []bool{false, false, false, false, false}
			if n := f.LookupBatch(keys[:2], found); n != 2 || !found[0] || !found[1] || found[2] || found[3] || found[4] {
				t.Fatalf("LookupBatch(2 keys, 5 results) = %d, %v; want 2, [true true false false false]", n, found)
			}
			var zero cuckoo.Filter
			found = []bool{true, true, true}
			if n := zero.LookupBatch(keys[:2], found); n != 2 || found[0] || found[1] || !found[2] {
				t.Fatalf("zero Filter: LookupBatch = %d, %v; want 2, [false false true]", n, found)
			}
		})
	}
}

// sameEncoding reports whether a and b marshal to the same bytes.
func sameEncoding(t *testing.T, a, b encoding.BinaryMarshaler) bool {
	t.Helper()
	x, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	y, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

// TestInsertBatchStopsAtFirstFull starts batches at keys before the first
// one a loop of Inserts cannot fit, so that it falls in the first, second,
// third or fourth group of the batch, on both paths: each batch must stop
// at that key with ErrFull, the same table as the loop's behind it.
func TestInsertBatchStopsAtFirstFull(t *testing.T) {
	for _, bits := range []int{8, cuckoo.Bits12x5} {
		for _, prefetch := range []bool{false, true} {
			t.Run(fmt.Sprintf("bits=%d/prefetch=%v", bits, prefetch), func(t *testing.T) {
				if prefetch {
					cuckoo.PrefetchEveryBatch(t)
				}
				keys := batchKeys(0, 4000, 0)
				loop, err := cuckoo.New(2000, append(cuckoo.LayoutOptions(bits), cuckoo.WithSeed(3))...)
				if err != nil {
					t.Fatal(err)
				}
				full := -1
				for i, k := range keys {
					if loop.Insert(k) != nil {
						full = i
						break
					}
				}
				if full < 64 {
					t.Fatalf("the first key Insert could not fit is %d; the test needs one past 64", full)
				}
				for _, before := range []int{0, 1, 15, 16, 17, 31, 40, 63} {
					start := full - before
					batched, err := cuckoo.New(2000, append(cuckoo.LayoutOptions(bits), cuckoo.WithSeed(3))...)
					if err != nil {
						t.Fatal(err)
					}
					for _, k := range keys[:start] {
						if err := batched.Insert(k); err != nil {
							t.Fatalf("key before %d: %v", full, err)
						}
					}
					n, err := batched.InsertBatch(keys[start : full+20])
					if n != before || err != cuckoo.ErrFull {
						t.Fatalf("batch from %d keys before the full one: n=%d, err %v; want %d, ErrFull", before, n, err, before)
					}
					if !sameEncoding(t, batched, loop) {
						t.Fatalf("batch from %d keys before the full one: the table differs from the loop's", before)
					}
				}
			})
		}
	}
}

// TestBatchesOnALargeTable runs InsertBatch and LookupBatch on a table past
// the size from which they prefetch (16 MiB), without forcing the path:
// every inserted key is found, and every answer is Lookup's.
func TestBatchesOnALargeTable(t *testing.T) {
	f, err := cuckoo.New(12_000_000, cuckoo.WithSeed(5)) // 2.47M words
	if err != nil {
		t.Fatal(err)
	}
	keys := batchKeys(0, 20000, 0)
	if n, err := f.InsertBatch(keys); n != len(keys) || err != nil {
		t.Fatalf("InsertBatch: %d of %d, %v", n, len(keys), err)
	}
	probe := append(keys[:len(keys):len(keys)], batchKeys(0, 20000, 1<<62)...)
	found := make([]bool, len(probe))
	f.LookupBatch(probe, found)
	for i, k := range probe {
		if want := f.Lookup(k); found[i] != want || i < len(keys) && !want {
			t.Fatalf("key %d: LookupBatch %v, Lookup %v (inserted: %v)", i, found[i], want, i < len(keys))
		}
	}
}
