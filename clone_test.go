package cuckoo_test

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

// Clone makes an independent copy; changes to either do not reach the
// other.
func ExampleFilter_Clone() {
	f, err := cuckoo.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	_ = f.Insert([]byte("alice"))
	c := f.Clone()
	_ = c.Insert([]byte("bob"))
	f.Delete([]byte("alice"))
	fmt.Println(c.Lookup([]byte("alice")), c.Len(), f.Len())
	// Output: true 2 0
}

// A growing filter's copy keeps growing on its own.
func ExampleGrowing_Clone() {
	g, err := cuckoo.NewGrowing(1000)
	if err != nil {
		log.Fatal(err)
	}
	_ = g.Insert([]byte("alice"))
	c := g.Clone()
	_ = c.Insert([]byte("bob"))
	fmt.Println(c.Lookup([]byte("alice")), c.Lookup([]byte("bob")), g.Lookup([]byte("bob")))
	// Output: true true false
}

// TestCloneCopiesAndIsIndependent checks that a clone keeps mode,
// fingerprint size, seed and capacity, holds every key, counts exactly
// and shares no table with the original, in both modes and for the zero
// Filter.
func TestCloneCopiesAndIsIndependent(t *testing.T) {
	var zero cuckoo.Filter
	if z := zero.Clone(); z.Cap() != 0 || z.Insert([]byte("x")) != cuckoo.ErrZeroFilter {
		t.Errorf("Clone of a zero Filter: Cap %d; want a zero Filter", z.Cap())
	}
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		for _, bits := range []int{8, 12, 15, cuckoo.Bits12x5} {
			t.Run(fmt.Sprintf("mode=%v/bits=%d", mode, bits), func(t *testing.T) {
				f := cuckoo.NewTestFilter(t, 5000, mode, bits, 3)
				for i := 0; i < 4500; i++ {
					if err := f.InsertString(fmt.Sprint("k", i)); err != nil {
						t.Fatal(err)
					}
				}
				c := f.Clone()
				if c.Mode() != f.Mode() || c.FingerprintBits() != f.FingerprintBits() || c.Seed() != f.Seed() || c.Cap() != f.Cap() || c.Len() != f.Len() {
					t.Fatalf("clone: mode %v bits %d seed %d cap %d len %d; want %v %d %d %d %d",
						c.Mode(), c.FingerprintBits(), c.Seed(), c.Cap(), c.Len(), f.Mode(), f.FingerprintBits(), f.Seed(), f.Cap(), f.Len())
				}
				for i := 0; i < 4500; i++ {
					if !c.LookupString(fmt.Sprint("k", i)) {
						t.Fatalf("clone misses k%d", i)
					}
				}
				for i := 0; i < 4500; i++ {
					if !c.DeleteString(fmt.Sprint("k", i)) {
						t.Fatalf("clone: Delete(k%d) = false", i)
					}
				}
				if c.Len() != 0 || f.Len() != 4500 {
					t.Errorf("after deleting every key from the clone: clone Len %d, original Len %d; want 0, 4500", c.Len(), f.Len())
				}
				for i := 0; i < 4500; i++ {
					if !f.LookupString(fmt.Sprint("k", i)) {
						t.Fatalf("deleting from the clone removed k%d from the original", i)
					}
				}
			})
		}
	}
}

// TestCloneUnderLoad takes clones while other goroutines insert and
// delete their own keys at high load (relocations running): every clone
// holds every stable key (a relocation copied half-way would lose some),
// and what is left after deleting them fits the churn keys' share.
func TestCloneUnderLoad(t *testing.T) {
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			f := cuckoo.NewTestFilter(t, 20000, mode, 12, 5)
			stable := int(float64(f.Cap()) * 0.88)
			for i := 0; i < stable; i++ {
				if err := f.InsertString(fmt.Sprint("s", i)); err != nil {
					t.Fatal(err)
				}
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; ; r++ {
						var in []string
						for i := 0; i < f.Cap()/100; i++ {
							k := fmt.Sprint("c", g, "-", r, "-", i)
							if err := f.InsertString(k); err == nil {
								in = append(in, k)
							} else if !errors.Is(err, cuckoo.ErrFull) {
								t.Error(err)
								return
							}
						}
						for _, k := range in {
							f.DeleteString(k)
						}
						select {
						case <-stop:
							return
						default:
						}
					}
				}()
			}
			for n := 0; n < 10; n++ {
				c := f.Clone()
				for i := 0; i < stable; i++ {
					if !c.DeleteString(fmt.Sprint("s", i)) {
						t.Fatalf("clone %d misses stable key s%d", n, i)
					}
				}
				if c.Len() < 0 || c.Len() > c.Cap()-stable {
					t.Fatalf("clone %d: Len %d after deleting the stable keys", n, c.Len())
				}
			}
			close(stop)
			cuckoo.WaitOrFail(t, cuckoo.Done(&wg), cuckoo.StressWatchdog, "churners")
		})
	}
}

// TestGrowingClone checks a growing filter's clone: same mode, seed and
// size, every key, independent growth.
func TestGrowingClone(t *testing.T) {
	var zero cuckoo.Growing
	if z := zero.Clone(); z.Cap() != 0 {
		t.Errorf("Clone of a zero Growing: Cap %d; want 0", z.Cap())
	}
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		g, err := cuckoo.NewGrowing(1000, cuckoo.WithMode(mode))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20000; i++ {
			if err := g.InsertString(fmt.Sprint("k", i)); err != nil {
				t.Fatal(err)
			}
		}
		c := g.Clone()
		if c.Mode() != g.Mode() || c.Seed() != g.Seed() || c.Cap() != g.Cap() || c.Len() != g.Len() {
			t.Fatalf("%v: clone mode %v seed %d cap %d len %d; want %v %d %d %d", mode, c.Mode(), c.Seed(), c.Cap(), c.Len(), g.Mode(), g.Seed(), g.Cap(), g.Len())
		}
		for i := 0; i < 20000; i++ {
			if !c.LookupString(fmt.Sprint("k", i)) {
				t.Fatalf("%v: clone misses k%d", mode, i)
			}
		}
		for i := 20000; i < 60000; i++ {
			if err := c.InsertString(fmt.Sprint("k", i)); err != nil {
				t.Fatal(err)
			}
		}
		if c.Cap() <= g.Cap() || g.Len() >= c.Len() {
			t.Errorf("%v: the clone grew to Cap %d (original %d), Len %d (original %d)", mode, c.Cap(), g.Cap(), c.Len(), g.Len())
		}
	}
}
