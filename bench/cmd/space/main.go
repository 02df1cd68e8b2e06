// Command space prints the space table: for each filter, the heap bits per
// key it takes after holding n keys, and its false-positive rate measured
// with keys never inserted, against the lower bound log2(1/FPR).
//
//	go run ./cmd/space -n 1M -probes 4M
//
// Heap is what runtime.MemStats.HeapAlloc gains from before the filter is
// made to after its keys are in, with a garbage collection before each
// reading: the table, every per-filter structure, and nothing of the
// keys (they are 8-byte integers made on the fly). Rows: this filter with
// each bucket layout New offers (New(n), n keys: 95% load, 97% for five
// slots) in both modes and a growing filter grown from NewGrowing(1000);
// Bloom filters (bits-and-blooms, NewWithEstimates) sized for each
// layout's measured rate; the static xor8, binary fuse 8 and 16 filters (FastFilter),
// built from the keys' xxhash; and seiflotfy/cuckoofilter filled to 95%
// of its power-of-two table.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/FastFilter/xorfilter"
	"github.com/bits-and-blooms/bloom/v3"
	"github.com/cespare/xxhash/v2"
	"github.com/seed25b00da8/cuckoo"
	seiflotfy "github.com/seiflotfy/cuckoofilter"
)

func main() {
	n := flag.String("n", "1M", "keys per filter (k/M = 2^10/2^20, or a plain number)")
	probes := flag.String("probes", "4M", "absent keys probed for the false-positive rate")
	flag.Parse()
	nk, err := parseCount(*n)
	if err != nil {
		log.Fatal(err)
	}
	np, err := parseCount(*probes)
	if err != nil {
		log.Fatal(err)
	}
	if err := run(os.Stdout, nk, np); err != nil {
		log.Fatal(err)
	}
}

func parseCount(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return v * mult, nil
}

// row is one filter's measurement.
type row struct {
	name      string
	keys      int
	heapBytes uint64
	fpr       float64
}

// key returns key i: 8 bytes. Present keys are 0..n-1; absent ones have
// bit 63 set.
func key(buf []byte, i uint64) []byte {
	binary.LittleEndian.PutUint64(buf, i)
	return buf
}

// heap returns HeapAlloc after a garbage collection.
func heap() uint64 {
	// Twice: objects with cleanups or finalizers are freed only by the
	// collection after the one that found them unreachable.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// warmUp fills a small filter of each mode past its first ErrFull and
// drops it, so that what the package allocates once per process (K-CAS
// descriptors, lock-queue nodes) is not counted in the first row.
func warmUp() {
	var k [8]byte
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		f, err := cuckoo.New(4096, cuckoo.WithMode(mode))
		if err != nil {
			continue
		}
		for i := range 5000 {
			_ = f.Insert(key(k[:], uint64(i)))
		}
	}
}

// fprOf probes np absent keys.
func fprOf(lookup func([]byte) bool, np int) float64 {
	var k [8]byte
	hits := 0
	for i := range np {
		if lookup(key(k[:], uint64(i)|1<<63)) {
			hits++
		}
	}
	return float64(hits) / float64(np)
}

// measure builds a filter with build (which inserts the keys), and returns
// its heap bytes and false-positive rate.
func measure[F any](name string, n, np int, build func() (F, int, error), lookup func(F, []byte) bool) (row, error) {
	h0 := heap()
	f, keys, err := build()
	if err != nil {
		return row{}, fmt.Errorf("%s: %w", name, err)
	}
	h1 := heap()
	r := row{name: name, keys: keys, heapBytes: h1 - h0}
	var k [8]byte
	for i := range min(keys, 1000) { // a spot check: no false negatives
		if !lookup(f, key(k[:], uint64(i))) {
			return row{}, fmt.Errorf("%s: key %d absent", name, i)
		}
	}
	r.fpr = fprOf(func(b []byte) bool { return lookup(f, b) }, np)
	runtime.KeepAlive(f)
	return r, nil
}

func run(w io.Writer, n, np int) error {
	warmUp()
	var rows []row
	add := func(r row, err error) error {
		if err != nil {
			return err
		}
		rows = append(rows, r)
		return nil
	}
	fill := func(insert func([]byte) error, keys int) error {
		var k [8]byte
		for i := range keys {
			if err := insert(key(k[:], uint64(i))); err != nil {
				return fmt.Errorf("key %d: %w", i, err)
			}
		}
		return nil
	}
	lookupCuckoo := func(f *cuckoo.Filter, b []byte) bool { return f.Lookup(b) }
	// The layouts: the packed 8-bit layout (two four-slot buckets per
	// word, the low class), four slots of 12 and 15 bits and five 12-bit
	// slots (New's default).
	layouts := []struct {
		name string
		opt  cuckoo.Option
	}{
		{"8-bit packed", cuckoo.WithFingerprintBits(8)},
		{"12-bit x 4", cuckoo.WithSlotsPerBucket(4)},
		{"12-bit x 5", cuckoo.WithSlotsPerBucket(5)},
		{"15-bit x 4", cuckoo.WithFingerprintBits(15)},
	}
	var classFPR []float64
	for _, lay := range layouts {
		for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
			r, err := measure(fmt.Sprintf("cuckoo %s, %s", mode, lay.name), n, np, func() (*cuckoo.Filter, int, error) {
				f, err := cuckoo.New(n, lay.opt, cuckoo.WithMode(mode), cuckoo.WithSeed(1))
				if err != nil {
					return nil, 0, err
				}
				return f, n, fill(f.Insert, n)
			}, lookupCuckoo)
			if err := add(r, err); err != nil {
				return err
			}
			if mode == cuckoo.LockFree {
				classFPR = append(classFPR, r.fpr)
			}
		}
	}
	if err := add(measure("cuckoo growing, NewGrowing(1000)", n, np, func() (*cuckoo.Growing, int, error) {
		g, err := cuckoo.NewGrowing(1000, cuckoo.WithSeed(1))
		if err != nil {
			return nil, 0, err
		}
		return g, n, fill(g.Insert, n)
	}, func(g *cuckoo.Growing, b []byte) bool { return g.Lookup(b) })); err != nil {
		return err
	}
	for i, lay := range layouts {
		p := classFPR[i]
		if p == 0 {
			p = 1 / float64(np)
		}
		if err := add(measure(fmt.Sprintf("bloom at the %s rate (p=%.4g%%)", lay.name, 100*p), n, np, func() (*bloom.BloomFilter, int, error) {
			f := bloom.NewWithEstimates(uint(n), p)
			return f, n, fill(func(b []byte) error { f.Add(b); return nil }, n)
		}, func(f *bloom.BloomFilter, b []byte) bool { return f.Test(b) })); err != nil {
			return err
		}
	}
	hashes := make([]uint64, n)
	var k [8]byte
	for i := range hashes {
		hashes[i] = xxhash.Sum64(key(k[:], uint64(i)))
	}
	if err := add(measure("xor8 (static)", n, np, func() (*xorfilter.Xor8, int, error) {
		f, err := xorfilter.Populate(hashes)
		return f, n, err
	}, func(f *xorfilter.Xor8, b []byte) bool { return f.Contains(xxhash.Sum64(b)) })); err != nil {
		return err
	}
	if err := add(measure("binary fuse8 (static)", n, np, func() (*xorfilter.BinaryFuse[uint8], int, error) {
		f, err := xorfilter.NewBinaryFuse[uint8](hashes)
		return f, n, err
	}, func(f *xorfilter.BinaryFuse[uint8], b []byte) bool { return f.Contains(xxhash.Sum64(b)) })); err != nil {
		return err
	}
	if err := add(measure("binary fuse16 (static)", n, np, func() (*xorfilter.BinaryFuse[uint16], int, error) {
		f, err := xorfilter.NewBinaryFuse[uint16](hashes)
		return f, n, err
	}, func(f *xorfilter.BinaryFuse[uint16], b []byte) bool { return f.Contains(xxhash.Sum64(b)) })); err != nil {
		return err
	}
	runtime.KeepAlive(hashes)
	hashes = nil
	// seiflotfy: NewFilter(n) rounds its table up to a power of two of
	// four-slot buckets; it is filled to 95% of that table's slots.
	slots := 4
	for slots < n {
		slots <<= 1
	}
	seifKeys := slots * 95 / 100
	if err := add(measure("seiflotfy/cuckoofilter, 95% of its table", n, np, func() (*seiflotfy.Filter, int, error) {
		f := seiflotfy.NewFilter(uint(n))
		var k [8]byte
		for i := range seifKeys {
			if !f.Insert(key(k[:], uint64(i))) {
				return nil, 0, fmt.Errorf("full after %d keys", i)
			}
		}
		return f, seifKeys, nil
	}, func(f *seiflotfy.Filter, b []byte) bool { return f.Lookup(b) })); err != nil {
		return err
	}

	fmt.Fprintf(w, "Space: heap bits per key and false-positive rate (%d keys each, %d absent keys probed; %s, %s/%s)\n\n", n, np, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintln(w, "| filter | keys | heap bits/key | FPR | log2(1/FPR) | bits/key over log2(1/FPR) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range rows {
		bpk := 8 * float64(r.heapBytes) / float64(r.keys)
		bound, ratio := "-", "-"
		if r.fpr > 0 {
			lb := math.Log2(1 / r.fpr)
			bound, ratio = fmt.Sprintf("%.2f", lb), fmt.Sprintf("%.2fx", bpk/lb)
		}
		fmt.Fprintf(w, "| %s | %d | %.2f | %.4f%% | %s | %s |\n", r.name, r.keys, bpk, 100*r.fpr, bound, ratio)
	}
	return nil
}
