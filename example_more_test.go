package cuckoo_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/seed25b00da8/cuckoo"
)

// Lookup never reports false for a key that was inserted and not deleted.
func ExampleFilter_Lookup() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	_ = f.Insert([]byte("alice"))
	fmt.Println(f.Lookup([]byte("alice")))
	// Output: true
}

// LookupBatch answers many keys at once and returns how many it looked up:
// min(len(keys), len(found)).
func ExampleFilter_LookupBatch() {
	f, err := cuckoo.New(1000, cuckoo.WithSeed(1))
	if err != nil {
		log.Fatal(err)
	}
	_ = f.Insert([]byte("a"))
	_ = f.Insert([]byte("c"))
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	found := make([]bool, len(keys))
	n := f.LookupBatch(keys, found)
	fmt.Println(n, found)
	// Output: 3 [true false true]
}

// Len, Cap and LoadFactor describe how full the filter is; Cap is the
// number of slots, capacity/0.97 rounded up to whole five-slot buckets,
// plus seven spare buckets (35 slots).
func ExampleFilter_Len() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	for i := range 500 {
		_ = f.Insert(fmt.Appendf(nil, "key-%d", i))
	}
	fmt.Printf("Len %d, Cap %d, load %.2f\n", f.Len(), f.Cap(), f.LoadFactor())
	// Output: Len 500, Cap 1070, load 0.47
}

// Cap is fixed at New: the table never grows.
func ExampleFilter_Cap() {
	f, err := cuckoo.New(1_000_000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Cap(), "slots,", f.Cap()/f.SlotsPerBucket()*8, "bytes of table")
	// Output: 1030965 slots, 1649544 bytes of table
}

// LoadFactor is Len()/Cap(), always within [0, 1].
func ExampleFilter_LoadFactor() {
	f, err := cuckoo.New(100)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.LoadFactor())
	// Output: 0
}

// The configuration accessors report what New was given (or drew).
func ExampleFilter_Mode() {
	f, err := cuckoo.New(1000, cuckoo.WithMode(cuckoo.Locked), cuckoo.WithFingerprintBits(8), cuckoo.WithSeed(42))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Mode(), f.FingerprintBits(), f.Seed())
	// Output: locked 8 42
}

// FingerprintBits is 12 unless WithFingerprintBits said otherwise.
func ExampleFilter_FingerprintBits() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.FingerprintBits())
	// Output: 12
}

// Seed is random unless WithSeed set it; a filter loaded from an encoding
// keeps the seed it was written with, and so its placement.
func ExampleFilter_Seed() {
	a, _ := cuckoo.New(1000)
	b, _ := cuckoo.New(1000)
	fmt.Println(a.Seed() != b.Seed())
	// Output: true
}

// MarshalBinary and UnmarshalBinary copy a filter through a byte slice; a
// zero Filter can be the receiver.
func ExampleFilter_MarshalBinary() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	_ = f.Insert([]byte("alice"))
	data, err := f.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	var g cuckoo.Filter
	if err := g.UnmarshalBinary(data); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(data), g.Lookup([]byte("alice")), g.Seed() == f.Seed())
	// Output: 1760 true true
}

// UnmarshalBinary rejects anything but exactly one encoded filter, and
// leaves the receiver unchanged.
func ExampleFilter_UnmarshalBinary() {
	var g cuckoo.Filter
	err := g.UnmarshalBinary([]byte("not a filter"))
	fmt.Println(err != nil, g.Cap())
	// Output: true 0
}

// ReadFrom loads a filter from a stream, reading exactly one encoding.
func ExampleFilter_ReadFrom() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	_ = f.Insert([]byte("alice"))
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}
	var g cuckoo.Filter
	n, err := g.ReadFrom(&buf)
	fmt.Println(n, err, g.Lookup([]byte("alice")))
	// Output: 1760 <nil> true
}

// LockStats reports how a Locked filter's critical sections ran; without
// Intel RTM (as on the machines this package is tested on) Elided is false
// and the transaction counters stay zero.
func ExampleFilter_LockStats() {
	f, err := cuckoo.New(1000, cuckoo.WithMode(cuckoo.Locked))
	if err != nil {
		log.Fatal(err)
	}
	_ = f.Insert([]byte("alice")) // uncontended: no goroutine waited
	s := f.LockStats()
	fmt.Println(s.Waits)
	// Output: 0
}

// LockStats is the value Filter.LockStats returns.
func ExampleLockStats() {
	var s cuckoo.LockStats // the zero value: what a LockFree filter reports
	fmt.Println(s.Elided, s.TxCommits, s.TxAborts, s.Fallbacks, s.Waits)
	// Output: false 0 0 0 0
}

// RTMActive reports whether Locked filters elide their locks with Intel
// RTM on this machine.
func ExampleRTMActive() {
	f, err := cuckoo.New(100, cuckoo.WithMode(cuckoo.Locked))
	if err != nil {
		log.Fatal(err)
	}
	// Locked filters elide exactly when RTMActive is true.
	fmt.Println(f.LockStats().Elided == cuckoo.RTMActive())
	// Output: true
}

// Mode selects the synchronization: LockFree (the default) or Locked.
func ExampleMode() {
	for _, m := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		f, err := cuckoo.New(100, cuckoo.WithMode(m))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(m, f.Mode() == m)
	}
	// Output:
	// lockfree true
	// locked true
}

// Options configure New; a nil Option is ignored, an out-of-range value is
// an error.
func ExampleOption() {
	opts := []cuckoo.Option{cuckoo.WithFingerprintBits(8), cuckoo.WithSeed(7)}
	f, err := cuckoo.New(1000, opts...)
	fmt.Println(f.FingerprintBits(), f.Seed(), err)
	_, err = cuckoo.New(1000, cuckoo.WithFingerprintBits(16))
	fmt.Println(err)
	// Output:
	// 8 7 <nil>
	// cuckoo: fingerprint bits must be 8, 12 or 15, got 16
}
