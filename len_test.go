package cuckoo

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestLenClamped checks that Len and LoadFactor stay in their possible
// ranges when the sharded count, read while operations are in flight, says
// more than Cap or less than zero. The counts are set by hand: on a busy
// filter the sum of shards read one after another can land there.
func TestLenClamped(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run("mode="+mode.String(), func(t *testing.T) {
			f, err := New(10, WithMode(mode))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []int64{1, 5, int64(f.Cap()), int64(f.Cap()) + 1, 1 << 40} {
				f.count.reset()
				f.count.add(d)
				want := min(int(d), f.Cap())
				if got := f.Len(); got != want {
					t.Fatalf("count %d, Cap %d: Len() = %d; want %d", d, f.Cap(), got, want)
				}
				if got, wantLF := f.LoadFactor(), float64(want)/float64(f.Cap()); got != wantLF || got > 1 {
					t.Fatalf("count %d: LoadFactor() = %v; want %v", d, got, wantLF)
				}
			}
			f.count.reset()
			f.count.add(-3)
			if got, lf := f.Len(), f.LoadFactor(); got != 0 || lf != 0 {
				t.Fatalf("count -3: Len() = %d, LoadFactor() = %v; want 0, 0", got, lf)
			}
		})
	}
}

// TestLenInRangeUnderChurn reads Len and LoadFactor while more goroutines
// than CPUs insert and delete on a one-bucket filter kept full, and checks
// every reading is in range. (The clamp is what keeps them there; this
// churn rarely drives the raw sum out of range on two cores, so
// TestLenClamped is the test that fails without it.)
func TestLenInRangeUnderChurn(t *testing.T) {
	workers := 4 * runtime.GOMAXPROCS(0)
	rounds := 2000
	if testing.Short() {
		rounds = 500
	}
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run("mode="+mode.String(), func(t *testing.T) {
			f, err := New(3, WithMode(mode)) // one bucket, 4 slots
			if err != nil {
				t.Fatal(err)
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key := []byte(fmt.Sprint("w", w))
					for i := 0; i < rounds && !stop.Load(); i++ {
						if f.Insert(key) == nil {
							f.Delete(key)
						}
					}
				}()
			}
			var bad atomic.Value
			done := make(chan struct{})
			go func() {
				defer close(done)
				for !stop.Load() {
					if n, lf := f.Len(), f.LoadFactor(); n < 0 || n > f.Cap() || lf < 0 || lf > 1 {
						bad.Store(fmt.Sprintf("Len() = %d, LoadFactor() = %v with Cap() = %d", n, lf, f.Cap()))
						return
					}
					runtime.Gosched()
				}
			}()
			wg.Wait()
			stop.Store(true)
			<-done
			if s := bad.Load(); s != nil {
				t.Fatal(s)
			}
			if n := f.Len(); n != 0 {
				t.Fatalf("after the churn Len() = %d; want 0", n)
			}
		})
	}
}
