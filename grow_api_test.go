package cuckoo_test

import (
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/seed25b00da8/cuckoo"
)

// InsertUnique adds a key only once, whoever calls it.
func ExampleGrowing_InsertUnique() {
	g, err := cuckoo.NewGrowing(1000)
	if err != nil {
		log.Fatal(err)
	}
	first, _ := g.InsertUnique([]byte("alice"))
	second, _ := g.InsertUnique([]byte("alice"))
	fmt.Println(first, second, g.Count([]byte("alice")))
	// Output: true false 1
}

func ExampleGrowing_InsertUniqueString() {
	g, _ := cuckoo.NewGrowing(1000)
	a, _ := g.InsertUniqueString("alice")
	b, _ := g.InsertUniqueString("alice")
	fmt.Println(a, b)
	// Output: true false
}

func ExampleGrowing_InsertUniqueHash() {
	g, _ := cuckoo.NewGrowing(1000)
	h := xxhash.Sum64String("alice")
	a, _ := g.InsertUniqueHash(h)
	b, _ := g.InsertUniqueHash(h)
	fmt.Println(a, b, g.LookupHash(h))
	// Output: true false true
}

func ExampleGrowing_CountString() {
	g, _ := cuckoo.NewGrowing(1000)
	_ = g.InsertString("alice")
	_ = g.InsertString("alice")
	fmt.Println(g.CountString("alice"))
	// Output: 2
}

func ExampleGrowing_CountHash() {
	g, _ := cuckoo.NewGrowing(1000)
	h := xxhash.Sum64String("alice")
	_ = g.InsertHash(h)
	fmt.Println(g.CountHash(h))
	// Output: 1
}

func ExampleGrowing_InsertBatchString() {
	g, _ := cuckoo.NewGrowing(1000)
	n, err := g.InsertBatchString([]string{"alice", "bob"})
	fmt.Println(n, err, g.LookupString("bob"))
	// Output: 2 <nil> true
}

func ExampleGrowing_InsertBatchHash() {
	g, _ := cuckoo.NewGrowing(1000)
	hs := []uint64{xxhash.Sum64String("alice"), xxhash.Sum64String("bob")}
	n, err := g.InsertBatchHash(hs)
	fmt.Println(n, err, g.LookupHash(hs[1]))
	// Output: 2 <nil> true
}

func ExampleGrowing_LookupBatchString() {
	g, _ := cuckoo.NewGrowing(1000)
	_ = g.InsertString("alice")
	found := make([]bool, 2)
	g.LookupBatchString([]string{"alice", "alice"}, found)
	fmt.Println(found)
	// Output: [true true]
}

func ExampleGrowing_LookupBatchHash() {
	g, _ := cuckoo.NewGrowing(1000)
	h := xxhash.Sum64String("alice")
	_ = g.InsertHash(h)
	found := make([]bool, 1)
	g.LookupBatchHash([]uint64{h}, found)
	fmt.Println(found)
	// Output: [true]
}

// TestGrowingForms checks that the String and Hash forms answer as the
// byte-slice methods, on a filter that grew, and on a zero Growing.
func TestGrowingForms(t *testing.T) {
	var z cuckoo.Growing
	if _, err := z.InsertUniqueString("a"); err != cuckoo.ErrZeroFilter {
		t.Errorf("zero Growing InsertUniqueString: %v; want ErrZeroFilter", err)
	}
	if n, err := z.InsertBatchHash([]uint64{1}); n != 0 || err != cuckoo.ErrZeroFilter {
		t.Errorf("zero Growing InsertBatchHash: %d, %v; want 0, ErrZeroFilter", n, err)
	}
	if z.CountHash(1) != 0 || z.LookupBatchString([]string{"a"}, []bool{true}) != 1 {
		t.Error("zero Growing: Count or LookupBatch forms misbehave")
	}
	g, err := cuckoo.NewGrowing(1000, cuckoo.WithSeed(9))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var hs []uint64
	for i := 0; i < 30000; i++ {
		keys = append(keys, fmt.Sprint("key", i))
		hs = append(hs, xxhash.Sum64String(fmt.Sprint("hash", i)))
	}
	if n, err := g.InsertBatchString(keys); n != len(keys) || err != nil {
		t.Fatalf("InsertBatchString: %d, %v", n, err)
	}
	if n, err := g.InsertBatchHash(hs); n != len(hs) || err != nil {
		t.Fatalf("InsertBatchHash: %d, %v", n, err)
	}
	if g.Doublings() == 0 {
		t.Fatal("the filter did not grow; the test needs doublings")
	}
	found := make([]bool, len(keys))
	if n := g.LookupBatchString(keys, found); n != len(keys) {
		t.Fatalf("LookupBatchString returned %d", n)
	}
	for i, ok := range found {
		if !ok || g.CountString(keys[i]) != g.Count([]byte(keys[i])) || g.CountString(keys[i]) < 1 {
			t.Fatalf("key %q: found %v, CountString %d, Count %d", keys[i], ok, g.CountString(keys[i]), g.Count([]byte(keys[i])))
		}
	}
	clear(found)
	if n := g.LookupBatchHash(hs, found); n != len(hs) {
		t.Fatalf("LookupBatchHash returned %d", n)
	}
	for i, ok := range found {
		if !ok || g.CountHash(hs[i]) < 1 {
			t.Fatalf("hash %d: found %v, CountHash %d", i, ok, g.CountHash(hs[i]))
		}
	}
}

// TestGrowingInsertUniqueRace: more goroutines than processors call
// InsertUnique on one shared key set, in the same order, while the
// filter grows from 1,000 keys to about 40 times that (12 by default in
// race builds and under -short) and other goroutines
// insert and delete keys of their own. Each key must be added by at most
// one caller; a key nobody added was refused because an entry matched it,
// so it must be found, and such refusals are as rare as collisions.
func TestGrowingInsertUniqueRace(t *testing.T) {
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			g, err := cuckoo.NewGrowing(1000, cuckoo.WithMode(mode), cuckoo.WithSeed(4))
			if err != nil {
				t.Fatal(err)
			}
			const callers, churners = 8, 4
			nkeys := cuckoo.Sized(12_000, 40_000, 40_000)
			if cuckoo.RaceEnabled {
				nkeys = cuckoo.Sized(12_000, 12_000, 40_000)
			}
			added := make([]atomic.Int32, nkeys)
			var wg sync.WaitGroup
			stop := make(chan struct{})
			var churnWG sync.WaitGroup
			for c := 0; c < churners; c++ {
				churnWG.Add(1)
				go func() {
					defer churnWG.Done()
					for r := 0; ; r++ {
						k := fmt.Sprint("churn", c, "-", r)
						if err := g.InsertString(k); err != nil {
							t.Error(err)
							return
						}
						if !g.DeleteString(k) {
							t.Errorf("churn: Delete(%q) = false", k)
							return
						}
						select {
						case <-stop:
							return
						default:
						}
					}
				}()
			}
			for c := 0; c < callers; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := 0; j < nkeys; j++ {
						i := j // every caller in the same order: they race on each key
						ok, err := g.InsertUniqueString(fmt.Sprint("u", i))
						if err != nil {
							t.Error(err)
							return
						}
						if ok {
							added[i].Add(1)
						}
					}
				}()
			}
			cuckoo.WaitOrFail(t, cuckoo.Done(&wg), cuckoo.StressWatchdog, "callers")
			close(stop)
			cuckoo.WaitOrFail(t, cuckoo.Done(&churnWG), cuckoo.StressWatchdog, "churners")
			if g.Doublings() == 0 {
				t.Fatal("the filter did not grow")
			}
			refused := 0
			for i := range added {
				k := fmt.Sprint("u", i)
				switch n := added[i].Load(); {
				case n > 1:
					t.Fatalf("key %q added by %d callers; want at most 1", k, n)
				case n == 0:
					refused++
					if !g.LookupString(k) {
						t.Fatalf("key %q refused by every caller but not found", k)
					}
				}
			}
			t.Logf("%d keys, %d refused by every caller (matched another key's entry), %d doublings", nkeys, refused, g.Doublings())
			if refused > nkeys/100 {
				t.Errorf("%d of %d keys refused; collisions explain a few in a thousand", refused, nkeys)
			}
		})
	}
}

// TestGrowingInsertBatchMatchesInsert inserts the same keys into two
// bounded Growing filters, one key a call into one and in batches of
// uneven lengths into the other (all three forms), until the bound stops
// them: the batches must stop at the same key, report how many they
// inserted, and leave the same filter (through its doublings).
func TestGrowingInsertBatchMatchesInsert(t *testing.T) {
	keys := make([]string, 40000)
	for i := range keys {
		keys[i] = fmt.Sprint("batch-key-", i)
	}
	for _, form := range []string{"bytes", "string", "hash"} {
		t.Run("form="+form, func(t *testing.T) {
			opts := []cuckoo.Option{cuckoo.WithSeed(5), cuckoo.WithMaxCapacity(20000)}
			single, err := cuckoo.NewGrowing(1000, opts...)
			if err != nil {
				t.Fatal(err)
			}
			batched, err := cuckoo.NewGrowing(1000, opts...)
			if err != nil {
				t.Fatal(err)
			}
			want := len(keys)
			for i, k := range keys {
				if err := single.InsertString(k); err != nil {
					if err != cuckoo.ErrFull {
						t.Fatalf("Insert: %v", err)
					}
					want = i
					break
				}
			}
			if want == len(keys) || single.Doublings() == 0 {
				t.Fatalf("Insert took %d of %d keys with %d doublings; the test needs doublings and an ErrFull", want, len(keys), single.Doublings())
			}
			insert := func(g *cuckoo.Growing, part []string) (int, error) {
				switch form {
				case "bytes":
					bs := make([][]byte, len(part))
					for j, k := range part {
						bs[j] = []byte(k)
					}
					return g.InsertBatch(bs)
				case "string":
					return g.InsertBatchString(part)
				default:
					hs := make([]uint64, len(part))
					for j, k := range part {
						hs[j] = xxhash.Sum64String(k)
					}
					return g.InsertBatchHash(hs)
				}
			}
			// All keys in one call: the ErrFull falls in a later group.
			whole, err := cuckoo.NewGrowing(1000, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := insert(whole, keys); n != want || err != cuckoo.ErrFull {
				t.Fatalf("one batch of all %d keys: n=%d, err %v; want %d, ErrFull", len(keys), n, err, want)
			}
			got := 0
			for lo := 0; lo < len(keys); {
				hi := min(lo+1+lo%41, len(keys))
				part := keys[lo:hi]
				n, err := insert(batched, part)
				got += n
				if err != nil {
					if err != cuckoo.ErrFull || n >= len(part) {
						t.Fatalf("batch [%d, %d): n=%d, err %v; want n < %d and ErrFull", lo, hi, n, err, len(part))
					}
					break
				}
				if n != len(part) {
					t.Fatalf("batch [%d, %d): n=%d with nil error", lo, hi, n)
				}
				lo = hi
			}
			if got != want {
				t.Fatalf("the batches stopped after %d keys; Insert after %d", got, want)
			}
			if !sameEncoding(t, batched, single) {
				t.Fatal("batched and single inserts of the same keys left different filters")
			}
		})
	}
}
