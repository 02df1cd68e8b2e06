package cuckoo_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"

	"github.com/cespare/xxhash/v2"
	"github.com/seed25b00da8/cuckoo"
)

// growKeys inserts keys "k0" .. "k(n-1)" into g.
func growKeys(g *cuckoo.Growing, n int) {
	for i := range n {
		if err := g.Insert(fmt.Appendf(nil, "k%d", i)); err != nil {
			log.Fatal(err)
		}
	}
}

// allFound reports whether g finds keys "k0" .. "k(n-1)".
func allFound(g *cuckoo.Growing, n int) bool {
	for i := range n {
		if !g.Lookup(fmt.Appendf(nil, "k%d", i)) {
			return false
		}
	}
	return true
}

// A Growing filter needs no key count up front: it starts at its first
// tables' capacity and its sixteen shards grow their tables as keys
// arrive, a sixteenth of a doubling at a time (61 doublings in all here,
// about four per shard).
func ExampleGrowing() {
	g, err := cuckoo.NewGrowing(1000, cuckoo.WithSeed(1))
	if err != nil {
		log.Fatal(err)
	}
	growKeys(g, 100_000)
	fmt.Println(g.Len(), allFound(g, 100_000), g.Doublings())
	// Output: 100000 true 61
}

// NewGrowing takes New's options but the fingerprint size (12 bits only);
// the first tables hold at least 5,512 keys.
func ExampleNewGrowing() {
	g, err := cuckoo.NewGrowing(1000, cuckoo.WithMode(cuckoo.Locked))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Mode(), g.FingerprintBits(), g.BaseCapacity())
	_, err = cuckoo.NewGrowing(0)
	fmt.Println(err)
	_, err = cuckoo.NewGrowing(1000, cuckoo.WithFingerprintBits(8))
	fmt.Println(err != nil)
	// Output:
	// locked 12 5512
	// cuckoo: capacity must be positive, got 0
	// true
}

// BaseCapacity is the capacity of the first tables: about 1.4 times what
// NewGrowing was asked for (each of the sixteen shards receives a
// sixteenth of the keys, and the smallest must hold its share), and at
// least 5,512 keys.
func ExampleGrowing_BaseCapacity() {
	small, _ := cuckoo.NewGrowing(1000)
	large, _ := cuckoo.NewGrowing(1_000_000)
	fmt.Println(small.BaseCapacity(), large.BaseCapacity())
	// Output: 5512 1411744
}

// WithMaxCapacity bounds the growth: the shards grow only while they
// hold at most 50,000 keys at 95% load together, so the slots stay below
// 50,000/0.95. Past that an insert that finds no room returns ErrFull
// (here after about two thirds of 50,000 keys: 0.64 to 0.74 of it in
// 3,000 runs with random seeds, so the example checks for more than half),
// and nothing stored is lost.
func ExampleWithMaxCapacity() {
	g, err := cuckoo.NewGrowing(1000, cuckoo.WithMaxCapacity(50_000))
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if err := g.Insert(fmt.Appendf(nil, "k%d", n)); errors.Is(err, cuckoo.ErrFull) {
			break
		}
	}
	fmt.Println(g.Cap() <= 50_000*100/95, n > 50_000/2, g.Len() == n, allFound(g, n))
	// Output: true true true true
}

func ExampleGrowing_Insert() {
	g, _ := cuckoo.NewGrowing(1000)
	if err := g.Insert([]byte("user:42")); err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Lookup([]byte("user:42")), g.Len())
	// Output: true 1
}

func ExampleGrowing_InsertString() {
	g, _ := cuckoo.NewGrowing(1000)
	_ = g.InsertString("user:42")
	fmt.Println(g.LookupString("user:42"))
	// Output: true
}

// The Hash forms take a key's XXH64 hash, for callers that have it.
func ExampleGrowing_InsertHash() {
	g, _ := cuckoo.NewGrowing(1000)
	_ = g.InsertHash(xxhash.Sum64String("user:42"))
	fmt.Println(g.Lookup([]byte("user:42")), g.LookupHash(xxhash.Sum64String("user:42")))
	// Output: true true
}

// Lookup never misses a key that was inserted and not deleted, also while
// the filter grows.
func ExampleGrowing_Lookup() {
	g, _ := cuckoo.NewGrowing(1000)
	growKeys(g, 50_000)
	fmt.Println(g.Lookup([]byte("k0")), g.Lookup([]byte("k49999")))
	// Output: true true
}

func ExampleGrowing_LookupString() {
	g, _ := cuckoo.NewGrowing(1000)
	_ = g.InsertString("a")
	fmt.Println(g.LookupString("a"))
	// Output: true
}

func ExampleGrowing_LookupHash() {
	g, _ := cuckoo.NewGrowing(1000)
	_ = g.Insert([]byte("a"))
	fmt.Println(g.LookupHash(xxhash.Sum64([]byte("a"))))
	// Output: true
}

// Deleting and reinserting keys while the filter grows loses nothing.
func ExampleGrowing_Delete() {
	g, _ := cuckoo.NewGrowing(1000)
	growKeys(g, 40_000)
	for i := 0; i < 40_000; i += 2 {
		g.Delete(fmt.Appendf(nil, "k%d", i))
	}
	growKeys(g, 40_000) // the deleted ones come back; the others get a second copy
	fmt.Println(g.Len(), allFound(g, 40_000))
	// Output: 60000 true
}

func ExampleGrowing_DeleteString() {
	g, _ := cuckoo.NewGrowing(1000)
	_ = g.InsertString("a")
	fmt.Println(g.DeleteString("a"), g.Len())
	// Output: true 0
}

func ExampleGrowing_DeleteHash() {
	g, _ := cuckoo.NewGrowing(1000)
	h := xxhash.Sum64String("a")
	_ = g.InsertHash(h)
	fmt.Println(g.DeleteHash(h), g.Len())
	// Output: true 0
}

// Count counts the entries that match a key: its copies.
func ExampleGrowing_Count() {
	g, _ := cuckoo.NewGrowing(1000)
	for range 3 {
		_ = g.Insert([]byte("a"))
	}
	fmt.Println(g.Count([]byte("a")))
	// Output: 3
}

func ExampleGrowing_InsertBatch() {
	g, _ := cuckoo.NewGrowing(1000)
	n, err := g.InsertBatch([][]byte{[]byte("a"), []byte("b"), []byte("c")})
	fmt.Println(n, err, g.Len())
	// Output: 3 <nil> 3
}

func ExampleGrowing_LookupBatch() {
	g, _ := cuckoo.NewGrowing(1000)
	_, _ = g.InsertBatch([][]byte{[]byte("a"), []byte("b")})
	found := make([]bool, 2)
	n := g.LookupBatch([][]byte{[]byte("a"), []byte("b")}, found)
	fmt.Println(n, found)
	// Output: 2 [true true]
}

func ExampleGrowing_Len() {
	g, _ := cuckoo.NewGrowing(1000)
	growKeys(g, 20_000)
	fmt.Println(g.Len())
	// Output: 20000
}

// Cap is the slots of the shards' tables: 4 per bucket, 1,452 buckets
// at first, and each growth step of a shard adds a sixteenth of the
// buckets its table had at its last doubling, or more, rounded up to
// whole 8 KiB pages of words in tables above 32 KiB.
func ExampleGrowing_Cap() {
	g, _ := cuckoo.NewGrowing(1000, cuckoo.WithSeed(1))
	fmt.Println(g.Cap())
	growKeys(g, 7000)
	fmt.Println(g.Cap())
	// Output:
	// 5808
	// 7956
}

func ExampleGrowing_LoadFactor() {
	g, _ := cuckoo.NewGrowing(1000, cuckoo.WithSeed(1))
	growKeys(g, 2904)
	fmt.Println(g.LoadFactor())
	// Output: 0.5
}

// Doublings counts how often a shard's table has doubled (finished
// splitting every bucket of a level, in about sixteen steps), over all
// sixteen shards.
func ExampleGrowing_Doublings() {
	g, _ := cuckoo.NewGrowing(1000, cuckoo.WithSeed(1))
	fmt.Println(g.Doublings())
	growKeys(g, 20_000)
	fmt.Println(g.Doublings())
	// Output:
	// 0
	// 24
}

// FalsePositiveRate is computed from the entries stored: older entries,
// whose buckets were split since they were written, compare fewer bits.
// Grown 100-fold, the rate is six times the fresh filter's.
func ExampleGrowing_FalsePositiveRate() {
	g, _ := cuckoo.NewGrowing(1000, cuckoo.WithSeed(1))
	fmt.Println(g.FalsePositiveRate())
	growKeys(g, 3_000)
	fresh := g.FalsePositiveRate()
	growKeys(g, 100_000)
	fmt.Printf("%.4f %.4f\n", fresh, g.FalsePositiveRate())
	// Output:
	// 0
	// 0.0003 0.0017
}

// Reset empties the filter and shrinks it back to its first tables.
func ExampleGrowing_Reset() {
	g, _ := cuckoo.NewGrowing(1000)
	growKeys(g, 50_000)
	g.Reset()
	fmt.Println(g.Len(), g.Doublings(), g.Cap())
	// Output: 0 0 5808
}

// Shards is the number of shards: each key belongs to one, and each
// shard's table doubles on its own.
func ExampleGrowing_Shards() {
	g, _ := cuckoo.NewGrowing(1000)
	var zero cuckoo.Growing
	fmt.Println(g.Shards(), zero.Shards())
	// Output: 16 0
}

func ExampleGrowing_Mode() {
	g, _ := cuckoo.NewGrowing(1000, cuckoo.WithMode(cuckoo.Locked))
	fmt.Println(g.Mode())
	// Output: locked
}

func ExampleGrowing_FingerprintBits() {
	g, _ := cuckoo.NewGrowing(1000)
	fmt.Println(g.FingerprintBits())
	// Output: 12
}

func ExampleGrowing_Seed() {
	g, _ := cuckoo.NewGrowing(1000, cuckoo.WithSeed(7))
	fmt.Println(g.Seed())
	// Output: 7
}

// WriteTo and ReadFrom save and load a grown filter, as grown.
func ExampleGrowing_WriteTo() {
	g, _ := cuckoo.NewGrowing(1000)
	growKeys(g, 40_000)
	var buf bytes.Buffer
	if _, err := g.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}
	var h cuckoo.Growing
	if _, err := h.ReadFrom(&buf); err != nil {
		log.Fatal(err)
	}
	fmt.Println(h.Len(), h.Doublings() == g.Doublings(), allFound(&h, 40_000))
	// Output: 40000 true true
}

func ExampleGrowing_ReadFrom() {
	g, _ := cuckoo.NewGrowing(1000)
	_ = g.InsertString("a")
	var buf bytes.Buffer
	_, _ = g.WriteTo(&buf)
	var h cuckoo.Growing
	_, err := h.ReadFrom(&buf)
	fmt.Println(err, h.LookupString("a"))
	// A fixed filter's encoding is not a growing one.
	f, _ := cuckoo.New(100)
	data, _ := f.MarshalBinary()
	_, err = h.ReadFrom(bytes.NewReader(data))
	fmt.Println(errors.Is(err, cuckoo.ErrFormat))
	// Output:
	// <nil> true
	// true
}

func ExampleGrowing_MarshalBinary() {
	g, _ := cuckoo.NewGrowing(1000, cuckoo.WithSeed(1))
	data, err := g.MarshalBinary()
	fmt.Println(err, string(data[:8]), len(data))
	// Output: <nil> CUCKOOGR 11928
}

func ExampleGrowing_UnmarshalBinary() {
	g, _ := cuckoo.NewGrowing(1000)
	_ = g.InsertString("a")
	data, _ := g.MarshalBinary()
	var h cuckoo.Growing
	fmt.Println(h.UnmarshalBinary(data), h.LookupString("a"))
	err := h.UnmarshalBinary(data[:100])
	fmt.Println(errors.Is(err, cuckoo.ErrTruncated), h.LookupString("a"))
	// Output:
	// <nil> true
	// true true
}
