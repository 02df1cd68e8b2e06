package cuckoo_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/seed25b00da8/cuckoo"
)

// A filter in front of a database guards against cache penetration:
// requests for IDs that do not exist are answered without a query. A
// negative answer is certain; a positive one may be a false positive (about
// 0.2% of absent IDs at 95% load), so the database has the last word.
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

// Both modes behave the same: Locked takes striped queue locks, LockFree (the
// default) never waits for another goroutine.
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
	f, err := cuckoo.New(3) // one bucket of four slots
	if err != nil {
		log.Fatal(err)
	}
	for i := range 5 {
		err := f.Insert(fmt.Appendf(nil, "key %d", i))
		fmt.Println(i, err, errors.Is(err, cuckoo.ErrFull))
	}
	fmt.Println(f.Len(), f.Cap())
	// Output:
	// 0 <nil> false
	// 1 <nil> false
	// 2 <nil> false
	// 3 <nil> false
	// 4 cuckoo: filter is full true
	// 4 4
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
