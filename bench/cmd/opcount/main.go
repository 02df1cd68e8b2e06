// Command opcount runs one operation many times on a filter, for counting
// the instructions, data references and simulated cache misses per
// operation with valgrind's cachegrind, which do not depend on the
// machine's neighbours the way timings do.
//
// Count a run with the operations and one without, and divide the
// difference by the number of operations:
//
//	go build -o /tmp/opcount ./cmd/opcount
//	valgrind --tool=cachegrind --cache-sim=yes /tmp/opcount -w neg -n 0
//	valgrind --tool=cachegrind --cache-sim=yes /tmp/opcount -w neg -n 2000000
//
// Run -impl growing with GOGC=off: its fill leaves replaced tables behind,
// and a collection whose background work overlaps the counted operations
// makes valgrind count the runtime's lock spinning (4,138 instructions per
// lookup in one such run, 244 with GOGC=off).
//
// -locked runs the filter in Locked mode.
//
// Every run first fills the filter with the 8-byte keys 0..2^20-1 (seed
// 1: keyed, as a filter whose seed New draws), so the run with -n 0 counts the fill alone: divide its counts by 2^20
// for a fill's cost per insert. The fill calls Insert once per key, or
// InsertBatch with 16 keys a call with -fill batch. Workloads: pos and neg look up inserted
// and never-inserted keys, batch looks up groups of 64 keys, half of each,
// with LookupBatch. Filters (-impl): cuckoo (New(2^20) with fingerprint
// size -bits: five 12-bit slots per bucket, four of 8 or 15 bits; -bits 124
// for four 12-bit slots), growing
// (NewGrowing(1000), grown to 2^20 keys) and seiflotfy
// (seiflotfy/cuckoofilter.NewFilter(2^20/0.95), fill only: its table is a
// power of two, so it fills to about 50%).
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/seed25b00da8/cuckoo"
	seiflotfy "github.com/seiflotfy/cuckoofilter"
)

// size is the number of keys every run inserts first.
const size = 1 << 20

func main() {
	impl := flag.String("impl", "cuckoo", "filter: cuckoo, growing or seiflotfy")
	workload := flag.String("w", "neg", "operation after the fill: pos, neg or batch")
	n := flag.Int("n", 0, "operations after the fill (0: the fill alone)")
	fill := flag.String("fill", "insert", "how the fill inserts: insert (one key a call) or batch (InsertBatch, 16 keys a call)")
	bits := flag.Int("bits", cuckoo.DefaultFingerprintBits, "fingerprint bits of -impl cuckoo: 8, 12 (five per bucket) or 15; 124 for four 12-bit slots per bucket")
	locked := flag.Bool("locked", false, "-impl cuckoo and growing in Locked mode (LockFree otherwise)")
	flag.Parse()
	mode := cuckoo.LockFree
	if *locked {
		mode = cuckoo.Locked
	}
	if err := run(*impl, *fill, *workload, *n, *bits, mode, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// filter is what the workloads need of a cuckoo.Filter or cuckoo.Growing.
type filter interface {
	Insert(key []byte) error
	InsertBatch(keys [][]byte) (int, error)
	Lookup(key []byte) bool
	LookupBatch(keys [][]byte, found []bool) int
}

// run fills the filter impl with keys 0..size-1 (fill: insert or batch),
// then runs n operations of workload and prints how many keys were found.
func run(impl, fill, workload string, n, bits int, mode cuckoo.Mode, w io.Writer) error {
	var k [8]byte
	if fill != "insert" && fill != "batch" {
		return fmt.Errorf("unknown fill %q (want insert or batch)", fill)
	}
	if impl == "seiflotfy" {
		if fill != "insert" {
			return fmt.Errorf("seiflotfy: only the fill through Insert is counted")
		}
		if n != 0 {
			return fmt.Errorf("seiflotfy: only the fill (-n 0) is counted")
		}
		f := seiflotfy.NewFilter(size * 20 / 19)
		for i := range size {
			binary.LittleEndian.PutUint64(k[:], uint64(i))
			f.Insert(k[:])
		}
		_, err := fmt.Fprintln(w, f.Count())
		return err
	}
	var f filter
	var err error
	switch impl {
	case "cuckoo":
		layout := cuckoo.WithFingerprintBits(bits)
		if bits == 124 {
			layout = cuckoo.WithSlotsPerBucket(4) // four 12-bit slots
		}
		f, err = cuckoo.New(size, layout, cuckoo.WithSeed(1), cuckoo.WithMode(mode))
	case "growing":
		f, err = cuckoo.NewGrowing(1000, cuckoo.WithSeed(1), cuckoo.WithMode(mode))
	default:
		return fmt.Errorf("unknown filter %q (want cuckoo, growing or seiflotfy)", impl)
	}
	if err != nil {
		return err
	}
	if err := fillKeys(f, fill == "batch"); err != nil {
		return err
	}
	hits := 0
	i := uint64(0x5eed)
	switch workload {
	case "pos", "neg":
		salt := uint64(0)
		if workload == "neg" {
			salt = 1 << 62
		}
		for range n {
			i += 0x9e3779b97f4a7c15
			binary.LittleEndian.PutUint64(k[:], i%size|salt)
			if f.Lookup(k[:]) {
				hits++
			}
		}
	case "batch":
		buf := make([]byte, 8*64)
		keys := make([][]byte, 64)
		for j := range keys {
			keys[j] = buf[8*j : 8*j+8]
		}
		found := make([]bool, 64)
		for j := 0; j < n; j += 64 {
			for x := range keys {
				i += 0x9e3779b97f4a7c15
				binary.LittleEndian.PutUint64(keys[x], i%size|uint64(x&1)<<62)
			}
			f.LookupBatch(keys, found)
			for _, ok := range found {
				if ok {
					hits++
				}
			}
		}
	default:
		return fmt.Errorf("unknown workload %q (want pos, neg or batch)", workload)
	}
	_, err = fmt.Fprintln(w, hits)
	return err
}

// fillKeys inserts the 8-byte keys 0..size-1 into f in order, one key a
// call or, with batch, 16 keys a call through InsertBatch.
func fillKeys(f filter, batch bool) error {
	if !batch {
		var k [8]byte
		for i := range size {
			binary.LittleEndian.PutUint64(k[:], uint64(i))
			if err := f.Insert(k[:]); err != nil {
				return fmt.Errorf("filling key %d: %w", i, err)
			}
		}
		return nil
	}
	const group = 16
	buf := make([]byte, 8*group)
	keys := make([][]byte, group)
	for j := range keys {
		keys[j] = buf[8*j : 8*j+8]
	}
	for i := 0; i < size; i += group {
		for j := range keys {
			binary.LittleEndian.PutUint64(keys[j], uint64(i+j))
		}
		if n, err := f.InsertBatch(keys); err != nil {
			return fmt.Errorf("filling key %d: %w", i+n, err)
		}
	}
	return nil
}
