package cuckoo

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Test helpers used by both the internal tests (package cuckoo) and the
// external ones (package cuckoo_test), written once here. The exported names
// exist only while testing.

// NewTestFilter returns New(capacity) with the given mode, fingerprint size
// and seed, failing the test if New fails. For bits8OneWord (internal tests
// only) it returns the one-bucket-per-word 8-bit layout New no longer
// builds (layouts_test.go).
func NewTestFilter(tb testing.TB, capacity int, mode Mode, bits int, seed uint64) *Filter {
	tb.Helper()
	if bits == bits8OneWord {
		return newOneWord8Filter(capacity, mode, seed)
	}
	f, err := New(capacity, append(LayoutOptions(bits), WithMode(mode), WithSeed(seed))...)
	if err != nil {
		tb.Fatalf("New(%d, mode=%v, bits=%d, seed=%d): got error %q; want nil", capacity, mode, bits, seed, err)
	}
	return f
}

// setEpochs gives a new one-word filter n wrap epochs (a power of two),
// before any operation, so that a small table's buckets fall in several
// stripes.
func setEpochs(f *Filter, n int) {
	if f.lay.packed || n&(n-1) != 0 {
		panic("setEpochs: a one-word filter and a power of two")
	}
	f.t.setVers(make([]atomic.Uint64, n))
}

// Bits12x5 stands, in the tests' lists of fingerprint sizes, for the
// layout of five 12-bit slots per bucket (New's default, the standard
// class): 12 in the low byte, 5 slots above
// it. LayoutBits and LayoutSlots take such a value apart.
const Bits12x5 = 12 | 5<<8

// LayoutBits returns the fingerprint size of a test layout value.
func LayoutBits(bits int) int { return bits & 0xff }

// LayoutSlots returns the slots per bucket of a test layout value.
func LayoutSlots(bits int) int {
	if bits>>8&0xff == 0 {
		return slotsPerBucket
	}
	return bits >> 8 & 0xff
}

// LayoutLoad returns the load factor New sizes a table of the test layout
// bits for: 0.92 for 8-bit fingerprints (the packed layout, packed.go),
// 0.97 for five slots per bucket, 0.95 for the others.
func LayoutLoad(bits int) float64 {
	switch {
	case bits == 8:
		return 0.92
	case LayoutSlots(bits) == 5:
		return 0.97
	}
	return 0.95
}

// MaxCopies returns the most copies of key its two buckets hold: twice
// SlotsPerBucket, or SlotsPerBucket for a key whose two buckets are one,
// less one for each odd bucket of the packed layout when the key's
// fingerprint cannot take that bucket's restricted top slot (maxCopies).
func (f *Filter) MaxCopies(key []byte) int {
	b1, fp, b2 := f.hash(key)
	return maxCopies(f, b1, b2, fp)
}

// LayoutOptions returns the options that make New use the test layout
// bits: a fingerprint size in four-slot buckets (12 is then the four-slot
// layout, not New's default), or Bits12x5.
func LayoutOptions(bits int) []Option {
	return []Option{WithFingerprintBits(LayoutBits(bits)), WithSlotsPerBucket(LayoutSlots(bits))}
}

// StressWatchdog is how long a stress test waits for its goroutines before
// it reports them as deadlocked.
const StressWatchdog = 2 * time.Minute

// RaceEnabled reports whether the race detector is on. Race builds lease
// a K-CAS descriptor the long way, allocating, for every relocation path
// (kcas.go, leaseDesc), so writes that relocate are not allocation-free
// there.
const RaceEnabled = raceEnabled

// RaceScaled returns n, or n/div (at least 1) in race builds, where the
// detector slows the stress tests about tenfold. The count it is given
// comes mostly from Sized or scaled (long_test.go, mcs_test.go), so that
// the long suite without -race does the full count.
func RaceScaled(n, div int) int {
	if raceEnabled {
		return max(n/div, 1)
	}
	return n
}

// WaitOrFail waits for done to be closed, failing the test if that takes
// longer than d (a deadlock, livelock or lost wake-up).
func WaitOrFail(tb testing.TB, done <-chan struct{}, d time.Duration, what string) {
	tb.Helper()
	select {
	case <-done:
	case <-time.After(d):
		tb.Fatalf("%s: still running after %v; want done (deadlock or lost wake-up?)", what, d)
	}
}

// Done returns a channel that is closed once wg's counter reaches zero, for
// WaitOrFail.
func Done(wg *sync.WaitGroup) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// testMove runs one relocation step as migrate does, with a descriptor
// lease of its own if the step needs one.
func (f *Filter) testMove(src uint64, s int, fp, dst uint64) bool {
	var my *descLease
	ok := f.move(src, s, fp, dst, &my)
	if my != nil {
		my.release()
	}
	return ok
}

// PrefetchEveryBatch makes LookupBatch and InsertBatch take their
// prefetching paths on every table (past one group) until tb ends. Not for
// parallel tests.
func PrefetchEveryBatch(tb testing.TB) {
	old := batchPrefetchWords
	batchPrefetchWords = 0
	tb.Cleanup(func() { batchPrefetchWords = old })
}
