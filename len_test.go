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
// than CPUs insert and delete on a tiny filter kept full, and checks every
// reading is in range. (The clamp is what keeps them there; this churn
// rarely drives the raw sum out of range on two cores, so TestLenClamped
// is the test that fails without it.) Inserts count before they read the
// table and take the count back when they fail: at the end Len and the
// table's own count (Clone's) must both be 0, through every insert path.
func TestLenInRangeUnderChurn(t *testing.T) {
	workers := 4 * runtime.GOMAXPROCS(0)
	rounds := RaceScaled(2000, 8) // each failed insert searches the whole table
	if testing.Short() {
		rounds = min(rounds, 500)
	}
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{12, 8} {
			t.Run(fmt.Sprintf("mode=%v/bits=%d", mode, bits), func(t *testing.T) {
				testLenUnderChurn(t, mode, bits, workers, rounds)
			})
		}
	}
}

func testLenUnderChurn(t *testing.T, mode Mode, bits, workers, rounds int) {
	f, err := New(3, WithMode(mode), WithFingerprintBits(bits)) // 40 or 56 slots
	if err != nil {
		t.Fatal(err)
	}
	const perWorker = 64 // more than the slots: one worker alone fills the table
	var stop atomic.Bool
	var fulls atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var in [perWorker]bool
			key := func(j int) []byte { return []byte(fmt.Sprint("w", w, "k", j)) }
			for i := 0; i < rounds && !stop.Load(); i++ {
				j := i % perWorker
				if in[j] {
					in[j] = !f.Delete(key(j))
					continue
				}
				var err error
				switch (w + i) % 3 {
				case 0:
					err = f.Insert(key(j))
				case 1:
					err = f.InsertHash(hashKey(key(j)))
				default:
					_, err = f.InsertBatch([][]byte{key(j)})
				}
				in[j] = err == nil
				if err == ErrFull {
					fulls.Add(1)
				}
			}
			for j := range in {
				if in[j] && !f.Delete(key(j)) {
					t.Errorf("Delete(%q) found nothing", key(j))
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
	if n, c := f.Len(), f.Clone().Len(); n != 0 || c != 0 {
		t.Fatalf("after the churn Len() = %d, the table holds %d; want 0", n, c)
	}
	if fulls.Load() == 0 {
		t.Fatal("no insert failed: the churn did not keep the filter full")
	}
}
