package cuckoo_test

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/seed25b00da8/cuckoo"
)

// The canonical workloads, as mode x workload x size:
//
//	go test -run '^$' -bench . -benchtime 2s
//
// Each benchmark reports ops/s over all goroutines (runParallel runs
// GOMAXPROCS of them; use -cpu 1,2 to vary) and allocations per operation.
// Keys are 8-byte little-endian counters: positive keys are 0..n-1, negative
// keys have bit 62 set and were never inserted.

var benchSizes = []struct {
	name string
	n    int
}{
	{"1M", 1 << 20},
	{"32M", 32 << 20},
}

var benchModes = []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked}

const negativeBit = 1 << 62

func putKey(buf []byte, i uint64) []byte {
	binary.LittleEndian.PutUint64(buf, i)
	return buf
}

// benchFilter returns a filter for n keys filled with keys 0..fill-1.
func benchFilter(b *testing.B, mode cuckoo.Mode, bits, n, fill int) *cuckoo.Filter {
	b.Helper()
	// A fixed nonzero seed: reproducible, and it pays the seed mixing of
	// the default (random) seed.
	f, err := cuckoo.New(n, cuckoo.WithMode(mode), cuckoo.WithFingerprintBits(bits), cuckoo.WithSeed(0x5eed))
	if err != nil {
		b.Fatal(err)
	}
	var k [8]byte
	for i := 0; i < fill; i++ {
		if err := f.Insert(putKey(k[:], uint64(i))); err != nil {
			b.Fatalf("filling key %d of %d: %v", i, fill, err)
		}
	}
	return f
}

// runParallel runs body in GOMAXPROCS goroutines (as b.RunParallel does)
// until they have taken b.N operations from their ops between them, and
// reports allocations and ops/s over all goroutines.
//
// Why not b.RunParallel: its testing.PB takes operations from a shared
// counter in grains sized by the previous round's time, and with a fixed
// -benchtime Nx the previous round is a single operation, whose goroutine
// start-up makes the grain one or a few operations. Every goroutine then
// adds to one shared cache line every operation or so: on 16 cores the
// profiles of 8-bit fills spent 22% to 68% of their samples in
// testing.(*PB).Next, and 16 goroutines' lookups measured 33-40 Mops/s
// against 556-616 with this harness (BENCHMARKS.md, "The library's own
// benchmarks"). ops takes opBlock operations at a time instead.
func runParallel(b *testing.B, body func(o *ops)) {
	b.ReportAllocs()
	total := &opTotal{n: uint64(b.N)}
	procs := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	wg.Add(procs)
	b.ResetTimer()
	start := time.Now()
	for range procs {
		go func() {
			defer wg.Done()
			body(newOps(total))
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
}

// opBlock is how many operations a goroutine takes from opTotal at once:
// enough that the shared counter is touched once per several microseconds
// of work, few enough that goroutines finish within a block of each other.
const opBlock = 256

// opTotal is a benchmark's b.N and the count of operations taken so far,
// on a cache line of its own.
type opTotal struct {
	_    [64]byte
	n    uint64
	next atomic.Uint64
	_    [64]byte
}

// ops is one goroutine's share of a benchmark's operations, used like
// testing.PB: the loop runs while Next reports true, and over all
// goroutines Next reports true exactly b.N times. Next writes left for
// every operation, so ops keeps two cache lines clear on either side:
// unpadded, the goroutines' ops (heap objects of one size class,
// allocated one after another) shared lines, and every operation took
// the line from the other cores.
type ops struct {
	_     [linePad]byte
	total *opTotal
	left  uint64
	_     [linePad]byte
}

// linePad is two cache lines, which the spatial prefetcher pairs.
const linePad = 128

// newOps returns a goroutine's share, on the heap.
func newOps(total *opTotal) *ops { return &ops{total: total} }

// scratch returns n bytes with linePad unused bytes on either side, for a
// key buffer that a goroutine writes for every operation and that escapes
// to the heap (see ops).
func scratch(n int) []byte {
	return make([]byte, n+2*linePad)[linePad : linePad+n : linePad+n]
}

// Next reports whether there is another operation to do, and takes it.
func (o *ops) Next() bool {
	if o.left == 0 {
		end := o.total.next.Add(opBlock)
		first := end - opBlock
		if first >= o.total.n {
			return false
		}
		o.left = min(opBlock, o.total.n-first)
	}
	o.left--
	return true
}

// TestBenchScratchPadded checks that what the benchmarks' goroutines
// write for every operation (ops.left, scratch key buffers) lies at least
// linePad bytes from what any other goroutine writes.
func TestBenchScratchPadded(t *testing.T) {
	var total opTotal
	type span struct{ lo, hi uintptr }
	var spans []span
	var keep []any // on the heap, all alive at once, as in a benchmark
	for range 16 {
		o := newOps(&total)
		lo := uintptr(unsafe.Pointer(&o.left))
		spans = append(spans, span{lo, lo + 8})
		k := scratch(8)
		lo = uintptr(unsafe.Pointer(unsafe.SliceData(k)))
		spans = append(spans, span{lo, lo + 8})
		keep = append(keep, o, k)
	}
	runtime.KeepAlive(keep)
	for i, x := range spans {
		for j, y := range spans {
			if i != j && x.lo < y.hi+linePad && y.lo < x.hi+linePad {
				t.Fatalf("spans %d and %d within %d bytes: %#x and %#x", i, j, linePad, x.lo, y.lo)
			}
		}
	}
}

func BenchmarkFilter(b *testing.B) {
	for _, mode := range benchModes {
		for _, bits := range []int{12, 8} {
			for _, size := range benchSizes {
				if size.n > 1<<20 && bits != 12 {
					continue // the DRAM-sized runs use the default only
				}
				prefix := fmt.Sprintf("mode=%v/bits=%d", mode, bits)
				suffix := "n=" + size.name
				b.Run(prefix+"/workload=insert/"+suffix, func(b *testing.B) { benchInsert(b, mode, bits, size.n) })
				b.Run(prefix+"/workload=insert-batch/"+suffix, func(b *testing.B) { benchInsertBatch(b, mode, bits, size.n) })
				b.Run(prefix+"/workload=lookup-pos/"+suffix, func(b *testing.B) { benchLookup(b, mode, bits, size.n, 0) })
				b.Run(prefix+"/workload=lookup-neg/"+suffix, func(b *testing.B) { benchLookup(b, mode, bits, size.n, negativeBit) })
				b.Run(prefix+"/workload=lookup-batch/"+suffix, func(b *testing.B) { benchLookupBatch(b, mode, bits, size.n) })
				b.Run(prefix+"/workload=mixed/"+suffix, func(b *testing.B) { benchMixed(b, mode, bits, size.n) })
			}
		}
	}
}

// reportLockStats reports, for a Locked filter whose critical sections are
// elided with RTM, the transactions committed, aborted (by cause) and
// fallen back to the locks per operation.
func reportLockStats(b *testing.B, f *cuckoo.Filter) {
	st := f.LockStats()
	if !st.Elided {
		return
	}
	n := float64(b.N)
	b.ReportMetric(float64(st.TxCommits)/n, "tx-commits/op")
	b.ReportMetric(float64(st.TxAbortsLockHeld)/n, "tx-aborts-lockheld/op")
	b.ReportMetric(float64(st.TxAbortsConflict)/n, "tx-aborts-conflict/op")
	b.ReportMetric(float64(st.TxAbortsCapacity)/n, "tx-aborts-capacity/op")
	b.ReportMetric(float64(st.TxAbortsOther)/n, "tx-aborts-other/op")
	b.ReportMetric(float64(st.Fallbacks)/n, "tx-fallbacks/op")
}

// benchInsert fills the filter from empty to n keys (97% of Cap() with
// five slots, 95% with four), starting over with Reset
// whenever it gets there. Goroutines claim keys in blocks, so that the
// shared key counter is not a cache line passed between cores on every
// insert. It reports the keys not inserted (ErrFull) per operation: with
// many goroutines, keys of a round can land after its Reset, in the next
// round, and push it past the load the filter was sized for.
func benchInsert(b *testing.B, mode cuckoo.Mode, bits, n int) {
	f := benchFilter(b, mode, bits, n, 0)
	target := uint64(n) // n keys: the load New sized the table for
	var next atomic.Uint64
	var failed atomic.Int64
	runParallel(b, func(o *ops) {
		var k [8]byte
		var lost int64
		defer func() { failed.Add(lost) }()
		for {
			i, m := claim(o, &next, 64)
			if m == 0 {
				return
			}
			for ; m > 0; i, m = i+1, m-1 {
				if i%target == target-1 {
					f.Reset()
				}
				if f.Insert(putKey(k[:], i)) != nil {
					lost++
				}
			}
		}
	})
	b.ReportMetric(float64(failed.Load())/float64(b.N), "not-inserted/op")
	reportMoveStats(b, f)
	reportLockStats(b, f)
}

// reportMoveStats reports a fill's relocations and the K-CAS helps and
// retries of its moves (LockFree mode) per operation, from Stats.
func reportMoveStats(b *testing.B, f *cuckoo.Filter) {
	st := f.Stats()
	n := float64(b.N)
	b.ReportMetric(float64(st.Relocations)/n, "moves/op")
	if st.Mode == cuckoo.LockFree {
		b.ReportMetric(float64(st.KCASHelps)/n, "kcas-helps/op")
		b.ReportMetric(float64(st.KCASRetries)/n, "kcas-retries/op")
	}
}

// benchInsertBatch is benchInsert through InsertBatch, 64 keys a call.
func benchInsertBatch(b *testing.B, mode cuckoo.Mode, bits, n int) {
	f := benchFilter(b, mode, bits, n, 0)
	target := uint64(n)
	var next atomic.Uint64
	var failed atomic.Int64
	runParallel(b, func(o *ops) {
		const batch = 64
		var buf [batch * 8]byte
		keys := make([][]byte, batch)
		var lost int64
		defer func() { failed.Add(lost) }()
		for {
			i, m := claim(o, &next, batch)
			if m == 0 {
				return
			}
			if (i+m)/target != i/target {
				f.Reset()
			}
			for j := range m {
				keys[j] = putKey(buf[j*8:j*8+8], i+j)
			}
			done, _ := f.InsertBatch(keys[:m]) // ErrFull: keys[done:] not inserted
			lost += int64(m) - int64(done)
		}
	})
	b.ReportMetric(float64(failed.Load())/float64(b.N), "not-inserted/op")
	reportMoveStats(b, f)
}

// claim takes up to max operations from o and as many consecutive keys
// from next; it returns the first key and the count (0 when o is done).
func claim(o *ops, next *atomic.Uint64, max uint64) (first, m uint64) {
	for m < max && o.Next() {
		m++
	}
	return next.Add(m) - m, m
}

// benchLookup looks up inserted keys (salt 0) or never-inserted keys (salt
// negativeBit) in a filter holding the n keys it was made for (97% load
// with five slots, 95% with four).
func benchLookup(b *testing.B, mode cuckoo.Mode, bits, n int, salt uint64) {
	runLookup(b, benchFilter(b, mode, bits, n, n), n, salt)
}

// runLookup times Lookup on f, which holds keys 0..n-1, of keys i|salt for
// i below n, and returns how many it found (the growing filter's
// benchmarks use it too).
func runLookup(b *testing.B, f interface{ Lookup(key []byte) bool }, n int, salt uint64) int64 {
	var seq atomic.Uint64
	var hits atomic.Int64
	runParallel(b, func(o *ops) {
		k := scratch(8) // f is an interface, so the key escapes
		// Each goroutine walks its own stride of a multiplicative
		// permutation of 0..n-1, so accesses are random in the table.
		i := seq.Add(1) * 0x9e3779b97f4a7c15
		h := 0
		for o.Next() {
			i += 0x9e3779b97f4a7c15
			if f.Lookup(putKey(k, i%uint64(n)|salt)) {
				h++
			}
		}
		hits.Add(int64(h))
	})
	return hits.Load()
}

// benchMixed runs 90% lookups, 5% inserts and 5% deletes with 90/95 of
// the n keys in (92% load with five slots, 90% with four): each
// goroutine deletes keys of its own and inserts them back.
func benchMixed(b *testing.B, mode cuckoo.Mode, bits, n int) {
	fill := n * 90 / 95
	f := benchFilter(b, mode, bits, n, fill)
	var seq atomic.Uint64
	runParallel(b, func(o *ops) {
		var k [8]byte
		g := seq.Add(1)
		i := g * 0x9e3779b97f4a7c15
		// This goroutine owns the keys congruent to g mod 64 among the
		// inserted ones; it deletes one and later inserts it back.
		own := g % 64
		var pending []uint64
		step := uint64(0)
		for o.Next() {
			step++
			i += 0x9e3779b97f4a7c15
			switch r := step % 20; {
			case r == 0:
				key := (i%uint64(fill))&^63 | own
				if key >= uint64(fill) {
					key = own
				}
				if f.Delete(putKey(k[:], key)) {
					pending = append(pending, key)
				}
			case r == 10 && len(pending) > 0:
				key := pending[len(pending)-1]
				pending = pending[:len(pending)-1]
				_ = f.Insert(putKey(k[:], key))
			default:
				f.Lookup(putKey(k[:], i%uint64(fill)))
			}
		}
		for _, key := range pending {
			_ = f.Insert(putKey(k[:], key))
		}
	})
	reportMoveStats(b, f)
	b.ReportMetric(float64(f.Stats().LookupRetries)/float64(b.N), "search-retries/op")
	reportLockStats(b, f)
}

// benchLookupBatch looks up groups of 64 keys, half inserted and half not,
// with LookupBatch; ops/s counts keys.
func benchLookupBatch(b *testing.B, mode cuckoo.Mode, bits, n int) {
	runLookupBatch(b, benchFilter(b, mode, bits, n, n), n)
}

// runLookupBatch times LookupBatch on f, which holds keys 0..n-1 (the
// growing filter's benchmarks use it too).
func runLookupBatch(b *testing.B, f interface {
	LookupBatch(keys [][]byte, found []bool) int
}, n int) {
	const group = 64
	var seq atomic.Uint64
	runParallel(b, func(o *ops) {
		buf := make([]byte, 8*group)
		keys := make([][]byte, group)
		for j := range keys {
			keys[j] = buf[8*j : 8*j+8]
		}
		found := make([]bool, group)
		i := seq.Add(1) * 0x9e3779b97f4a7c15
		j := group
		for o.Next() {
			if j == group {
				for j = range keys {
					i += 0x9e3779b97f4a7c15
					putKey(keys[j], i%uint64(n)|uint64(j&1)<<62)
				}
				f.LookupBatch(keys, found)
				j = 0
			}
			j++
		}
	})
}

// TestOpsHandOutExactlyN checks the benchmarks' harness: over all
// goroutines Next reports true exactly n times, for n below, at and
// above a block.
func TestOpsHandOutExactlyN(t *testing.T) {
	for _, n := range []uint64{0, 1, opBlock - 1, opBlock, opBlock + 1, 10*opBlock + 7} {
		total := &opTotal{n: n}
		var got atomic.Uint64
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := ops{total: total}
				for o.Next() {
					got.Add(1)
				}
				if o.Next() {
					t.Error("Next reported true after reporting false")
				}
			}()
		}
		wg.Wait()
		if got.Load() != n {
			t.Errorf("n = %d: Next reported true %d times", n, got.Load())
		}
	}
}

// BenchmarkLookupUnderRelocation looks up inserted keys in a full filter
// (n keys in New(n)) while one goroutine churns it: it deletes the oldest
// key and inserts a new one, so that its inserts relocate as they do near
// full load. It reports the search retries per lookup (searches that read
// their buckets again because a relocation moved their first bucket's
// counter or version meanwhile, Stats.LookupRetries) and the relocations
// per churn step; ops/s counts lookups and churn steps together.
func BenchmarkLookupUnderRelocation(b *testing.B) {
	for _, bits := range []int{8, 12} {
		b.Run(fmt.Sprintf("mode=lockfree/bits=%d/n=1M", bits), func(b *testing.B) {
			const n = 1 << 20
			f := benchFilter(b, cuckoo.LockFree, bits, n, n)
			before := f.Stats()
			var seq atomic.Uint64
			var lookups, churns, full atomic.Int64
			runParallel(b, func(o *ops) {
				var k [8]byte
				if seq.Add(1) == 1 {
					// The churner: keys lo..lo+n-1 are in the filter.
					var steps, failed int64
					for lo := uint64(0); o.Next(); lo++ {
						f.Delete(putKey(k[:], lo))
						if f.Insert(putKey(k[:], lo+n)) != nil {
							failed++
						}
						steps++
					}
					churns.Add(steps)
					full.Add(failed)
					return
				}
				var m int64
				for i := seq.Load() * 0x9e3779b97f4a7c15; o.Next(); i += 0x9e3779b97f4a7c15 {
					f.Lookup(putKey(k[:], i%n))
					m++
				}
				lookups.Add(m)
			})
			st := f.Stats()
			if l := lookups.Load(); l > 0 {
				b.ReportMetric(float64(st.LookupRetries-before.LookupRetries)/float64(l), "search-retries/lookup")
			}
			if c := churns.Load(); c > 0 {
				b.ReportMetric(float64(st.Relocations-before.Relocations)/float64(c), "moves/churn")
				b.ReportMetric(float64(full.Load())/float64(c), "errfull/churn")
			}
		})
	}
}
