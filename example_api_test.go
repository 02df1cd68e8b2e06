package cuckoo_test

import (
	"errors"
	"expvar"
	"fmt"
	"log"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/seed25b00da8/cuckoo"
)

// InsertUnique adds a key only if it is absent, atomically: goroutines
// racing on one key leave exactly one copy.
func ExampleFilter_InsertUnique() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	added := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, err := f.InsertUnique([]byte("job:7")); ok && err == nil {
				mu.Lock()
				added++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Println(added, f.Count([]byte("job:7")), f.Len())
	// Output: 1 1 1
}

// Count reports the copies of a key's fingerprint: every Insert adds one,
// every Delete removes one.
func ExampleFilter_Count() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	k := []byte("token")
	_ = f.Insert(k)
	_ = f.Insert(k)
	fmt.Println(f.Count(k))
	f.Delete(k)
	fmt.Println(f.Count(k), f.Count([]byte("other")))
	// Output:
	// 2
	// 1 0
}

// The String forms take string keys without copying them to []byte.
func ExampleFilter_InsertString() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	if err := f.InsertString("user:42"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.LookupString("user:42"), f.Lookup([]byte("user:42")))
	// Output: true true
}

func ExampleFilter_LookupString() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	_ = f.InsertString("a")
	fmt.Println(f.LookupString("a"), f.LookupString("b"))
	// Output: true false
}

func ExampleFilter_DeleteString() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	_ = f.InsertString("a")
	fmt.Println(f.DeleteString("a"), f.LookupString("a"), f.DeleteString("a"))
	// Output: true false false
}

func ExampleFilter_InsertUniqueString() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.InsertUniqueString("a"))
	fmt.Println(f.InsertUniqueString("a"))
	// Output:
	// true <nil>
	// false <nil>
}

func ExampleFilter_CountString() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	_ = f.InsertString("a")
	_ = f.InsertString("a")
	fmt.Println(f.CountString("a"))
	// Output: 2
}

func ExampleFilter_LookupBatchString() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	n, err := f.InsertBatchString([]string{"a", "b"})
	fmt.Println(n, err)
	found := make([]bool, 3)
	f.LookupBatchString([]string{"a", "b", "c"}, found)
	fmt.Println(found)
	// Output:
	// 2 <nil>
	// [true true false]
}

// A batch stops at the first key that does not fit: keys[:n] are in,
// keys[n:] are not.
func ExampleFilter_InsertBatchString() {
	f, err := cuckoo.New(4) // 8 buckets of five slots: 4 keys at 97%, and 32 spare slots
	if err != nil {
		log.Fatal(err)
	}
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprint("key ", i)
	}
	n, err := f.InsertBatchString(keys)
	fmt.Println(n >= 4, n < len(keys), errors.Is(err, cuckoo.ErrFull), f.Len() == n)
	// Output: true true true true
}

// The Hash forms take a key's 64-bit hash. With xxhash.Sum64, the hash the
// []byte forms compute, both forms address the same keys.
func ExampleFilter_InsertHash() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	if err := f.InsertHash(xxhash.Sum64String("user:42")); err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.LookupString("user:42"), f.LookupHash(xxhash.Sum64String("user:42")))
	// Output: true true
}

func ExampleFilter_LookupHash() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	_ = f.Insert([]byte("a"))
	fmt.Println(f.LookupHash(xxhash.Sum64([]byte("a"))), f.LookupHash(xxhash.Sum64([]byte("b"))))
	// Output: true false
}

func ExampleFilter_DeleteHash() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	h := xxhash.Sum64String("a")
	_ = f.InsertHash(h)
	fmt.Println(f.DeleteHash(h), f.LookupHash(h))
	// Output: true false
}

func ExampleFilter_InsertUniqueHash() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	h := xxhash.Sum64String("a")
	first, _ := f.InsertUniqueHash(h)
	second, _ := f.InsertUniqueHash(h)
	fmt.Println(first, second)
	// Output: true false
}

func ExampleFilter_CountHash() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	h := xxhash.Sum64String("a")
	_ = f.InsertHash(h)
	_ = f.InsertString("a") // the same key: xxhash.Sum64 is the []byte forms' hash
	fmt.Println(f.CountHash(h))
	// Output: 2
}

func ExampleFilter_LookupBatchHash() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	hs := []uint64{xxhash.Sum64String("a"), xxhash.Sum64String("b"), xxhash.Sum64String("c")}
	n, err := f.InsertBatchHash(hs[:2])
	fmt.Println(n, err)
	found := make([]bool, len(hs))
	f.LookupBatchHash(hs, found)
	fmt.Println(found)
	// Output:
	// 2 <nil>
	// [true true false]
}

func ExampleFilter_InsertBatchHash() {
	f, err := cuckoo.New(4) // 8 buckets of five slots
	if err != nil {
		log.Fatal(err)
	}
	hs := make([]uint64, 100)
	for i := range hs {
		hs[i] = xxhash.Sum64String(fmt.Sprint("key ", i))
	}
	n, err := f.InsertBatchHash(hs)
	fmt.Println(n >= 4, n < len(hs), errors.Is(err, cuckoo.ErrFull), f.Len() == n)
	// Output: true true true true
}

// Stats is cheap enough to scrape every second; expvar.Func publishes it
// at /debug/vars as JSON.
func ExampleFilter_Stats() {
	f, err := cuckoo.New(1000, cuckoo.WithFingerprintBits(8))
	if err != nil {
		log.Fatal(err)
	}
	for i := range 500 {
		_ = f.Insert(fmt.Appendf(nil, "key %d", i))
	}
	expvar.Publish("cuckoo_guard", expvar.Func(func() any { return f.Stats() }))

	st := f.Stats()
	fmt.Println(st.Mode, st.Len, st.Cap)
	fmt.Printf("load %.3f, %.1f bits per key, expected FPR %.4f\n", st.LoadFactor, st.BitsPerKey, st.FalsePositiveRate)
	fmt.Println(expvar.Get("cuckoo_guard").String() != "")
	// Output:
	// lockfree 500 1136
	// load 0.440, 18.2 bits per key, expected FPR 0.0138
	// true
}

// The fields of Stats: the size, the figures derived from it, and event
// counters that only grow.
func ExampleStats() {
	f, err := cuckoo.New(1000, cuckoo.WithMode(cuckoo.Locked), cuckoo.WithSeed(1))
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; ; i++ {
		if err := f.Insert(fmt.Appendf(nil, "key %d", i)); err != nil {
			break // the first ErrFull
		}
	}
	st := f.Stats()
	fmt.Println(st.Full, st.Relocations > 0, st.LoadFactor > 0.95, st.KCASHelps)
	// Output: 1 true true 0
}

// Without WithSeed each filter draws a random seed, so nobody can craft
// keys that crowd one pair of buckets. WithSeed gives reproducible
// placement, for example to compare encodings byte for byte.
func ExampleWithSeed() {
	a, _ := cuckoo.New(1000)
	b, _ := cuckoo.New(1000)
	fmt.Println(a.Seed() != b.Seed())

	c, _ := cuckoo.New(1000, cuckoo.WithSeed(7))
	d, _ := cuckoo.New(1000, cuckoo.WithSeed(7))
	_ = c.InsertString("x")
	_ = d.InsertString("x")
	ec, _ := c.MarshalBinary()
	ed, _ := d.MarshalBinary()
	fmt.Println(c.Seed(), string(ec) == string(ed))
	// Output:
	// true
	// 7 true
}

// Every method of a Filter may run from any number of goroutines at once,
// except UnmarshalBinary and ReadFrom, which must run alone: here eight
// goroutines insert and look up at once, and every key they inserted is
// found.
func ExampleFilter() {
	f, err := cuckoo.New(80_000)
	if err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10_000 {
				key := fmt.Appendf(nil, "w%d-%d", w, i)
				if err := f.Insert(key); err != nil {
					log.Fatal(err)
				}
				if !f.Lookup(key) {
					log.Fatalf("%s not found", key)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println(f.Len())
	// Output: 80000
}

func ExampleMode_String() {
	fmt.Println(cuckoo.LockFree, cuckoo.Locked, cuckoo.Mode(7))
	// Output: lockfree locked Mode(7)
}
