package cuckoo_test

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// Benchmarks of the growing filter against a fixed filter sized for the
// same keys:
//
//	go test -run '^$' -bench 'BenchmarkGrowing' -benchtime 2000000x
//
// Every cell builds a Growing filter that starts at 1,000 keys (its first
// tables, sixteen shards of 64 to 126 buckets, hold 5,512) and grows to n
// keys, or a fixed Filter of capacity n filled with the same n keys, both
// LockFree with 12-bit fingerprints and seed 0x5eed. 1M is 1,000 times
// the capacity asked for; 1.32M is where TestGrowingMemoryPerKey saw the
// most memory per key; 4M and 16M are 4,000 and 16,000 times.

var growBenchSizes = []struct {
	name string
	n    int
}{
	{"1M", 1_000_000},
	{"1.32M", 1_320_000},
	{"4M", 4_000_000},
	{"16M", 16_000_000},
}

// lookupFilter is what the lookup cells need of either kind.
type lookupFilter interface {
	Lookup(key []byte) bool
	LookupBatch(keys [][]byte, found []bool) int
}

// growBenchFilter returns a Growing (grown from 1,000 keys) or a fixed
// Filter holding keys 0..n-1, and the heap bytes it took.
func growBenchFilter(b *testing.B, kind string, n int) (lookupFilter, uint64) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var f interface {
		lookupFilter
		Insert([]byte) error
	}
	var err error
	if kind == "growing" {
		f, err = cuckoo.NewGrowing(1000, cuckoo.WithSeed(0x5eed))
	} else {
		f, err = cuckoo.New(n, cuckoo.WithSeed(0x5eed))
	}
	if err != nil {
		b.Fatal(err)
	}
	var k [8]byte
	for i := range n {
		if err := f.Insert(putKey(k[:], uint64(i))); err != nil {
			b.Fatalf("key %d: %v", i, err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	return f, after.HeapAlloc - before.HeapAlloc
}

func BenchmarkGrowing(b *testing.B) {
	for _, size := range growBenchSizes {
		for _, kind := range []string{"fixed", "growing"} {
			prefix := "n=" + size.name + "/kind=" + kind
			b.Run(prefix+"/workload=lookup-pos", func(b *testing.B) { benchGrowLookup(b, kind, size.n, 0) })
			b.Run(prefix+"/workload=lookup-neg", func(b *testing.B) { benchGrowLookup(b, kind, size.n, negativeBit) })
			b.Run(prefix+"/workload=lookup-batch", func(b *testing.B) { benchGrowLookupBatch(b, kind, size.n) })
		}
	}
}

// BenchmarkGrowingFill fills NewGrowing(1000) to n keys through Insert or
// through InsertBatch (16 keys a call), starting over with Reset (which
// shrinks every shard back to its first table) whenever it gets there, so
// that every round grows the filter 1,000 times over:
//
//	go test -run '^$' -bench 'BenchmarkGrowingFill' -benchtime 8000000x
func BenchmarkGrowingFill(b *testing.B) {
	for _, size := range growBenchSizes[:3] {
		b.Run("n="+size.name+"/workload=insert", func(b *testing.B) { benchGrowFill(b, size.n, 1) })
		b.Run("n="+size.name+"/workload=insert-batch", func(b *testing.B) { benchGrowFill(b, size.n, 16) })
	}
}

// benchGrowFill is BenchmarkGrowingFill's cell: goroutines claim blocks of
// 64 keys and insert them batch keys a call, through Insert when batch is
// 1.
func benchGrowFill(b *testing.B, n, batch int) {
	g, err := cuckoo.NewGrowing(1000, cuckoo.WithSeed(0x5eed))
	if err != nil {
		b.Fatal(err)
	}
	target := uint64(n)
	var next atomic.Uint64
	runParallel(b, func(o *ops) {
		const block = 64
		var buf [block * 8]byte
		keys := make([][]byte, block)
		for {
			i, m := claim(o, &next, block)
			if m == 0 {
				return
			}
			if (i+m)/target != i/target {
				g.Reset()
			}
			for j := range m {
				keys[j] = putKey(buf[j*8:j*8+8], i+j)
			}
			for lo := uint64(0); lo < m; lo += uint64(batch) {
				part := keys[lo:min(lo+uint64(batch), m)]
				var err error
				if batch == 1 {
					err = g.Insert(part[0])
				} else {
					_, err = g.InsertBatch(part)
				}
				if err != nil {
					b.Errorf("key %d: %v", i+lo, err)
					return
				}
			}
		}
	})
}

// benchGrowLookup looks up inserted (salt 0) or never-inserted keys; for
// never-inserted keys it also reports the false-positive rate it saw, and
// for both the heap bits per key of the filter.
func benchGrowLookup(b *testing.B, kind string, n int, salt uint64) {
	f, heap := growBenchFilter(b, kind, n)
	hits := runLookup(b, f, n, salt)
	if salt != 0 {
		b.ReportMetric(float64(hits)/float64(b.N), "fp-rate")
	}
	b.ReportMetric(float64(8*heap)/float64(n), "heap-bits/key")
}

func benchGrowLookupBatch(b *testing.B, kind string, n int) {
	f, _ := growBenchFilter(b, kind, n)
	runLookupBatch(b, f, n)
}

// paddedCount is a count that one goroutine writes; in a slice of them
// the counts lie linePad bytes apart, so no two share a cache line or a
// pair of lines.
type paddedCount struct {
	n atomic.Int64
	_ [linePad - 8]byte
}

// BenchmarkGrowingLookupLatency times single lookups of present keys one
// by one and reports their median, 99th and 99.9th percentile and maximum
// (ns, including about one clock read). phase=growing: writers (one per P)
// grow the filter from 64K keys to 4M, and the lookups pick keys among
// those inserted so far. phase=churn: the same writers delete and reinsert
// keys of the upper half of a filter already grown to 4M, so that it does
// not grow, and the lookups pick keys of the lower half. b.N counts the
// timed lookups; a cell ends early if the writers finish first.
func BenchmarkGrowingLookupLatency(b *testing.B) {
	const n = 4 << 20
	const seeded = 64 << 10
	for _, phase := range []string{"growing", "churn"} {
		b.Run("phase="+phase, func(b *testing.B) {
			g, err := cuckoo.NewGrowing(1000, cuckoo.WithSeed(0x5eed))
			if err != nil {
				b.Fatal(err)
			}
			var k [8]byte
			fill := seeded
			if phase == "churn" {
				fill = n
			}
			for i := range fill {
				_ = g.Insert(putKey(k[:], uint64(i)))
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			d0 := g.Doublings()
			procs := uint64(runtime.GOMAXPROCS(0))
			pub := make([]paddedCount, procs) // each writer's on lines of its own
			for w := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var k [8]byte
					j := w * 0x9e3779b97f4a7c15
					for !stop.Load() {
						if phase == "growing" {
							// Writer w inserts seeded+w, seeded+w+procs,
							// ... and publishes how many it has inserted.
							t := uint64(pub[w].n.Load())
							i := seeded + w + t*procs
							if i >= n {
								return
							}
							_ = g.Insert(putKey(k[:], i))
							pub[w].n.Store(int64(t + 1))
							continue
						}
						// Each writer churns keys of its own: deleting a
						// key that another writer has just deleted would
						// be a Delete of an absent key, which may take a
						// colliding key's fingerprint.
						j += 0x9e3779b97f4a7c15
						putKey(k[:], n/2+j%(n/2)/procs*procs+uint64(w))
						if g.Delete(k[:]) {
							_ = g.Insert(k[:])
						}
					}
				}()
			}
			lat := make([]time.Duration, 0, b.N)
			i := uint64(0x5eed)
			b.ResetTimer()
			for range b.N {
				i += 0x9e3779b97f4a7c15
				key := i % (n / 2)
				if phase == "growing" {
					// A key inserted already: one of the seeded ones, or
					// one a writer has published.
					w := i >> 32 % procs
					t := uint64(pub[w].n.Load())
					if seeded+w+t*procs >= n {
						break
					}
					key = i % (seeded + t*procs)
					if key >= seeded {
						key = seeded + (key-seeded)/procs*procs + w
					}
				}
				putKey(k[:], key)
				t0 := time.Now()
				ok := g.Lookup(k[:])
				lat = append(lat, time.Since(t0))
				if !ok {
					b.Fatal("a present key was reported absent")
				}
			}
			b.StopTimer()
			stop.Store(true)
			wg.Wait()
			d1 := g.Doublings()
			slices.Sort(lat)
			q := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) }
			b.ReportMetric(float64(len(lat)), "lookups")
			b.ReportMetric(q(0.5), "p50-ns")
			b.ReportMetric(q(0.99), "p99-ns")
			b.ReportMetric(q(0.999), "p99.9-ns")
			b.ReportMetric(float64(lat[len(lat)-1]), "max-ns")
			b.ReportMetric(float64(d1-d0), "doublings")
		})
	}
}
