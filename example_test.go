package cuckoo_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"strconv"
	"sync"

	"github.com/seed25b00da8/cuckoo"
)

// A filter in front of a database guards against cache penetration:
// requests for IDs that do not exist are answered without a query. A
// negative answer is certain; a positive one may be a false positive (about
// 0.24% of absent IDs at the 97% load New sizes for), so the database has
// the last word.
func ExampleNew() {
	guard, err := cuckoo.New(1_000_000)
	if err != nil {
		log.Fatal(err)
	}
	// Load the IDs that exist.
	for _, id := range []string{"user:1001", "user:1002", "user:1003"} {
		if err := guard.Insert([]byte(id)); err != nil {
			log.Fatal(err)
		}
	}

	for _, request := range []string{"user:1002", "user:9999"} {
		if guard.Lookup([]byte(request)) {
			fmt.Printf("%s: may exist, query the database\n", request)
		} else {
			fmt.Printf("%s: does not exist, skip the database\n", request)
		}
	}
	fmt.Println("keys:", guard.Len())
	// Output:
	// user:1002: may exist, query the database
	// user:9999: does not exist, skip the database
	// keys: 3
}

// Deleting a key removes one copy of it. Delete only keys that were
// inserted: deleting any other key may remove a colliding key's fingerprint.
func ExampleFilter_Delete() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	session := []byte("session:42")
	_ = f.Insert(session)
	_ = f.Insert(session) // a second copy

	fmt.Println(f.Lookup(session), f.Len())
	fmt.Println(f.Delete(session), f.Lookup(session), f.Len())
	fmt.Println(f.Delete(session), f.Lookup(session), f.Len())
	fmt.Println(f.Delete(session))
	// Output:
	// true 2
	// true true 1
	// true false 0
	// false
}

// Both modes give the same answers. Locked takes striped queue locks for
// every change. In LockFree (the default) lookups, deletes and inserts into
// a free slot never wait for another goroutine; inserts that must relocate
// fingerprints wait while Reset or a snapshot (WriteTo, MarshalBinary,
// Clone) runs through the table.
func ExampleWithMode() {
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		f, err := cuckoo.New(1000, cuckoo.WithMode(mode), cuckoo.WithFingerprintBits(8))
		if err != nil {
			fmt.Println(err)
			continue
		}
		_ = f.Insert([]byte("alpha"))
		fmt.Println(f.Mode(), f.FingerprintBits(), f.Lookup([]byte("alpha")))
	}
	_, err := cuckoo.New(1000, cuckoo.WithMode(cuckoo.Mode(7)))
	fmt.Println(err != nil) // an unknown mode is an error
	// Output:
	// lockfree 8 true
	// locked 8 true
	// true
}

// Insert reports ErrFull when it finds no room; the filter keeps everything
// it held.
func ExampleFilter_Insert() {
	// Room for 4 keys: 8 buckets of five slots (4 keys at 97% load, and
	// the 32 spare slots every table gets).
	f, err := cuckoo.New(4)
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		err := f.Insert(fmt.Appendf(nil, "key %d", n))
		if err != nil {
			fmt.Println(err, errors.Is(err, cuckoo.ErrFull))
			break
		}
	}
	fmt.Println(n >= 4, f.Len() == n, f.Cap())
	// Output:
	// cuckoo: filter is full true
	// true true 40
}

// InsertBatch and LookupBatch take many keys per call and overlap their
// cache misses; each key gets the same guarantees as with Insert and Lookup.
func ExampleFilter_InsertBatch() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	var keys [][]byte
	for i := range 100 {
		keys = append(keys, fmt.Appendf(nil, "user:%d", i))
	}
	n, err := f.InsertBatch(keys)
	fmt.Println(n, err, f.Len())

	found := make([]bool, len(keys))
	f.LookupBatch(keys, found)
	all := true
	for _, ok := range found {
		all = all && ok
	}
	fmt.Println(all)
	// Output:
	// 100 <nil> 100
	// true
}

// Every method may be called from many goroutines at once, without a lock:
// here eight goroutines insert their own keys while others look them up.
func ExampleFilter_concurrent() {
	f, err := cuckoo.New(100_000)
	if err != nil {
		log.Fatal(err)
	}
	const writers, perWriter = 8, 10_000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				if err := f.Insert(fmt.Appendf(nil, "writer %d key %d", w, i)); err != nil {
					log.Fatal(err)
				}
			}
		}()
	}
	// Readers running meanwhile see each key from the moment its Insert
	// returns; here they just look.
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				f.Lookup(fmt.Appendf(nil, "writer 0 key %d", i))
			}
		}()
	}
	wg.Wait()

	missing := 0
	for w := range writers {
		for i := range perWriter {
			if !f.Lookup(fmt.Appendf(nil, "writer %d key %d", w, i)) {
				missing++
			}
		}
	}
	fmt.Println("keys:", f.Len(), "missing:", missing)
	// Output:
	// keys: 80000 missing: 0
}

// WriteTo takes a snapshot of a filter, even one in use, and ReadFrom loads
// it back, here through a buffer; a file works the same way (wrap it in a
// bufio.Writer for WriteTo).
func ExampleFilter_WriteTo() {
	f, err := cuckoo.New(10_000, cuckoo.WithSeed(42))
	if err != nil {
		log.Fatal(err)
	}
	for i := range 5000 {
		_ = f.Insert(fmt.Appendf(nil, "url-%d", i))
	}

	var snapshot bytes.Buffer
	n, err := f.WriteTo(&snapshot)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", n, "bytes for", f.Cap(), "slots")

	var g cuckoo.Filter // a zero Filter can be loaded
	if _, err := g.ReadFrom(&snapshot); err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Len(), g.Seed(), g.Lookup([]byte("url-4999")))

	// Damaged or foreign data is rejected, never half loaded.
	err = g.UnmarshalBinary([]byte("not a filter"))
	fmt.Println(errors.Is(err, cuckoo.ErrFormat), g.Len())
	// Output:
	// wrote 16600 bytes for 10345 slots
	// 5000 42 true
	// true 5000
}

// Reset empties a filter and keeps its table, for reuse without a new
// allocation: here a filter of the URLs seen in the current minute.
func ExampleFilter_Reset() {
	seen, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	for _, url := range []string{"/a", "/b", "/a"} {
		if seen.Lookup([]byte(url)) {
			fmt.Println(url, "seen this minute")
			continue
		}
		_ = seen.Insert([]byte(url))
	}
	// A new minute begins.
	seen.Reset()
	fmt.Println(seen.Len(), seen.Cap(), seen.Lookup([]byte("/a")))
	// Output:
	// /a seen this minute
	// 0 1070 false
}

// The layout sets the false-positive rate and the memory: five 12-bit
// fingerprints per 64-bit bucket word (the default, 13.2 bits per key at
// 97% load), four 12- or 15-bit ones (16.8 bits per key at 95% load), or
// four 8-bit ones in buckets packed two to a word (8.7 bits per key at 92%
// load). The rates below are measured over a million keys that were never
// inserted; memory is the table's, its 64-bit words (Stats.BitsPerKey).
func ExampleWithFingerprintBits() {
	const n, probes = 100_000, 1_000_000
	for _, l := range []struct{ bits, slots int }{{8, 4}, {12, 5}, {12, 4}, {15, 4}} {
		f, err := cuckoo.New(n, cuckoo.WithFingerprintBits(l.bits), cuckoo.WithSlotsPerBucket(l.slots),
			cuckoo.WithSeed(1)) // a fixed seed: the same figures every run
		if err != nil {
			log.Fatal(err)
		}
		for i := range n {
			if err := f.Insert(fmt.Appendf(nil, "member %d", i)); err != nil {
				log.Fatal(err)
			}
		}
		positives := 0
		buf := []byte("stranger ")
		for i := range probes {
			if f.Lookup(strconv.AppendInt(buf[:9], int64(i), 10)) {
				positives++
			}
		}
		st := f.Stats()
		tableBytes := int(st.BitsPerKey*float64(st.Len)/8 + 0.5)
		fmt.Printf("%dx%d bits: %d KiB, %.1f bits/key, load %.1f%%, %.3f%% false positives\n",
			f.SlotsPerBucket(), f.FingerprintBits(), tableBytes>>10, 8*float64(tableBytes)/n, 100*f.LoadFactor(), 100*float64(positives)/probes)
	}
	// Output:
	// 4x8 bits: 106 KiB, 8.7 bits/key, load 92.0%, 2.820% false positives
	// 5x12 bits: 161 KiB, 13.2 bits/key, load 97.0%, 0.238% false positives
	// 4x12 bits: 205 KiB, 16.8 bits/key, load 95.0%, 0.181% false positives
	// 4x15 bits: 205 KiB, 16.8 bits/key, load 95.0%, 0.025% false positives
}

// WithSlotsPerBucket(4) keeps 12-bit fingerprints four to a bucket: 0.186%
// false positives at capacity instead of the default's 0.237%, for 27% more
// memory.
func ExampleWithSlotsPerBucket() {
	for _, slots := range []int{5, 4} {
		f, err := cuckoo.New(1_000_000, cuckoo.WithSlotsPerBucket(slots))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d slots: %d slots in all, %.1f bits per key at capacity\n",
			f.SlotsPerBucket(), f.Cap(), float64(f.Cap()/f.SlotsPerBucket()*64)/1e6)
	}
	_, err := cuckoo.New(1000, cuckoo.WithFingerprintBits(8), cuckoo.WithSlotsPerBucket(5))
	fmt.Println(err)
	// Output:
	// 5 slots: 1030965 slots in all, 13.2 bits per key at capacity
	// 4 slots: 1052664 slots in all, 16.8 bits per key at capacity
	// cuckoo: 5 slots per bucket with 8-bit fingerprints: want 4, or 5 with 12-bit
}

// Inserting a key again stores another copy, and a key's two buckets hold
// at most ten (five-slot buckets; eight with four): the eleventh Insert of
// one key returns ErrFull however empty
// the rest of the filter is, and changes nothing. Insert each key once (the
// cuckoo command's build does) unless you need the copies for Delete.
func ExampleFilter_Insert_copies() {
	// A fixed seed: with a random one, about one key in 200,000 has its
	// two buckets fall on one bucket (five copies then).
	f, err := cuckoo.New(1_000_000, cuckoo.WithSeed(1))
	if err != nil {
		log.Fatal(err)
	}
	key := []byte("popular")
	for i := 1; i <= 11; i++ {
		if err := f.Insert(key); err != nil {
			fmt.Printf("insert %d: %v\n", i, err)
		}
	}
	fmt.Println("copies:", f.Len())
	// Output:
	// insert 11: cuckoo: filter is full
	// copies: 10
}

// WithFalsePositiveRate chooses the bucket layout from the rate the filter
// may have when it holds its capacity: four 8-bit fingerprints per bucket,
// two buckets per word (8.7 bits per key), for rates of 2.89% and more,
// five 12-bit ones per bucket (13.2 bits per key) down to 0.237%, four
// 12-bit ones down to 0.186%, four 15-bit ones down to 0.0232%.
func ExampleWithFalsePositiveRate() {
	const capacity = 100_000
	for _, p := range []float64{0.03, 0.0025, 0.002, 0.00025} {
		f, err := cuckoo.New(capacity, cuckoo.WithFalsePositiveRate(p))
		if err != nil {
			log.Fatal(err)
		}
		for i := range capacity {
			if err := f.Insert(fmt.Appendf(nil, "key %d", i)); err != nil {
				log.Fatal(err)
			}
		}
		fmt.Printf("p=%v: %d-bit fingerprints, %d per bucket, %.1f bits per key at capacity\n",
			p, f.FingerprintBits(), f.SlotsPerBucket(), f.Stats().BitsPerKey)
	}
	_, err := cuckoo.New(1000, cuckoo.WithFalsePositiveRate(0.0001))
	fmt.Println(err)
	// Output:
	// p=0.03: 8-bit fingerprints, 4 per bucket, 8.7 bits per key at capacity
	// p=0.0025: 12-bit fingerprints, 5 per bucket, 13.2 bits per key at capacity
	// p=0.002: 12-bit fingerprints, 4 per bucket, 16.8 bits per key at capacity
	// p=0.00025: 15-bit fingerprints, 4 per bucket, 16.8 bits per key at capacity
	// cuckoo: no fingerprint size gives a false-positive rate of 0.01%: the smallest, with 15-bit fingerprints at 95% load, is 0.0232%
}

// SlotsPerBucket reports the fingerprints one bucket holds; a key's two
// buckets hold at most twice as many copies of it (as many, for the few
// keys whose two buckets are one: about one in 200 here, where the table
// has 207 buckets, so the example fixes the seed).
func ExampleFilter_SlotsPerBucket() {
	f, err := cuckoo.New(1000, cuckoo.WithFalsePositiveRate(0.01), cuckoo.WithSeed(1))
	if err != nil {
		log.Fatal(err)
	}
	copies := 0
	for f.Insert([]byte("k")) == nil {
		copies++
	}
	fmt.Println(f.SlotsPerBucket(), copies)
	// Output:
	// 5 10
}

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
