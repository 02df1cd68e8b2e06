package cuckoo_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

// The public-API tests. Every behavioral test runs in both modes and both
// fingerprint sizes from the shared tables below; subtests are named
// mode=…/bits=….

var (
	modes  = []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked}
	fpBits = []int{8, 12, 15, cuckoo.Bits12x5}
)

// Key namespaces: tests draw keys from disjoint ranges so that "never
// inserted" keys are known to be negatives. A key is the 8-byte little-endian
// encoding of ns<<56 | i; namespace 0 gives the plain counters 0, 1, 2, ….
const (
	nsFill     uint64 = iota // keys inserted to load a filter
	nsNegative               // keys never inserted
	nsExtra                  // keys inserted after the fill
	nsStable                 // stress: inserted once, never deleted
	nsChurn                  // stress: inserted and deleted by churners
)

// keyOf returns key i of namespace ns.
func keyOf(ns uint64, i int) []byte {
	return binary.LittleEndian.AppendUint64(make([]byte, 0, 8), ns<<56|uint64(i))
}

// keysOf returns keys lo..lo+n-1 of namespace ns.
func keysOf(ns uint64, lo, n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = keyOf(ns, lo+i)
	}
	return keys
}

// forModesBits runs fn as subtest mode=…/bits=… for every mode and
// fingerprint size.
func forModesBits(t *testing.T, fn func(t *testing.T, mode cuckoo.Mode, bits int)) {
	t.Helper()
	for _, mode := range modes {
		for _, bits := range fpBits {
			t.Run(fmt.Sprintf("mode=%v/bits=%d", mode, bits), func(t *testing.T) {
				fn(t, mode, bits)
			})
		}
	}
}

// insertAll inserts keys and fails the test on the first error.
func insertAll(t testing.TB, f *cuckoo.Filter, keys [][]byte) {
	t.Helper()
	for i, k := range keys {
		if err := f.Insert(k); err != nil {
			t.Fatalf("Insert(key %d of %d) at load %.4f: got %v; want nil", i, len(keys), f.LoadFactor(), err)
		}
	}
}

// checkFound reports every key of keys that Lookup misses (at most a few).
func checkFound(t testing.TB, f *cuckoo.Filter, keys [][]byte, what string) {
	t.Helper()
	misses := 0
	for i, k := range keys {
		if !f.Lookup(k) {
			misses++
			if misses <= 5 {
				t.Errorf("Lookup(%s key %d = %x): got false; want true", what, i, k)
			}
		}
	}
	if misses > 5 {
		t.Errorf("Lookup missed %d of %d %s keys; want 0", misses, len(keys), what)
	}
}

// checkLen compares Len with want.
func checkLen(t testing.TB, f *cuckoo.Filter, want int) {
	t.Helper()
	if got := f.Len(); got != want {
		t.Errorf("Len(): got %d; want %d", got, want)
	}
}

// wantCap is Cap() of New(capacity): capacity/0.95 slots rounded up to whole
// four-slot buckets, plus eight spare buckets (32 slots),
// 4*ceil(ceil(capacity*20/19)/4) + 32, in exact integers.
func wantCap(capacity int) int {
	slots := (capacity*20 + 18) / 19
	return 4*((slots+3)/4) + 32
}

func TestModeString(t *testing.T) {
	for _, tc := range []struct {
		mode cuckoo.Mode
		want string
	}{
		{cuckoo.LockFree, "lockfree"},
		{cuckoo.Locked, "locked"},
		{cuckoo.Mode(2), "Mode(2)"},
		{cuckoo.Mode(7), "Mode(7)"},
		{cuckoo.Mode(-1), "Mode(-1)"},
	} {
		t.Run(fmt.Sprintf("mode=%d", int(tc.mode)), func(t *testing.T) {
			if got := tc.mode.String(); got != tc.want {
				t.Errorf("Mode(%d).String(): got %q; want %q", int(tc.mode), got, tc.want)
			}
			if got := fmt.Sprint(tc.mode); got != tc.want {
				t.Errorf("fmt.Sprint(Mode(%d)): got %q; want %q", int(tc.mode), got, tc.want)
			}
		})
	}
	if cuckoo.LockFree == cuckoo.Locked {
		t.Errorf("LockFree == Locked: got equal; want distinct modes")
	}
	var zero cuckoo.Mode
	if zero != cuckoo.LockFree {
		t.Errorf("zero Mode: got %v; want %v (the default)", zero, cuckoo.LockFree)
	}
}

// TestAccessors checks Mode, FingerprintBits and Seed, and the defaults New
// uses without options.
func TestAccessors(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		f, err := cuckoo.New(100)
		if err != nil {
			t.Fatalf("New(100): got error %q; want nil", err)
		}
		if got := f.Mode(); got != cuckoo.LockFree {
			t.Errorf("Mode(): got %v; want %v", got, cuckoo.LockFree)
		}
		if got := f.FingerprintBits(); got != cuckoo.DefaultFingerprintBits {
			t.Errorf("FingerprintBits(): got %d; want %d", got, cuckoo.DefaultFingerprintBits)
		}
		if cuckoo.DefaultFingerprintBits != 12 {
			t.Errorf("DefaultFingerprintBits: got %d; want 12", cuckoo.DefaultFingerprintBits)
		}
		// The default seed is random per filter: two filters share it
		// with probability 2^-64.
		g, err := cuckoo.New(100)
		if err != nil {
			t.Fatalf("New(100): got error %q; want nil", err)
		}
		if f.Seed() == g.Seed() {
			t.Errorf("Seed() of two filters without WithSeed: got %d twice; want different random seeds", f.Seed())
		}
	})
	for _, seed := range []uint64{0, 1, 0xdeadbeef, math.MaxUint64} {
		for _, mode := range modes {
			for _, bits := range fpBits {
				t.Run(fmt.Sprintf("mode=%v/bits=%d/seed=%d", mode, bits, seed), func(t *testing.T) {
					f := cuckoo.NewTestFilter(t, 1000, mode, bits, seed)
					if got := f.Mode(); got != mode {
						t.Errorf("Mode(): got %v; want %v", got, mode)
					}
					if got := f.FingerprintBits(); got != cuckoo.LayoutBits(bits) {
						t.Errorf("FingerprintBits(): got %d; want %d", got, cuckoo.LayoutBits(bits))
					}
					if got := f.SlotsPerBucket(); got != cuckoo.LayoutSlots(bits) {
						t.Errorf("SlotsPerBucket(): got %d; want %d", got, cuckoo.LayoutSlots(bits))
					}
					if got := f.Seed(); got != seed {
						t.Errorf("Seed(): got %d; want %d", got, seed)
					}
				})
			}
		}
	}
}

// TestNewBadArguments checks that New rejects every out-of-range argument
// with an error that carries the package prefix and names the problem, and
// never panics.
func TestNewBadArguments(t *testing.T) {
	type badCase struct {
		name     string
		capacity int
		opts     []cuckoo.Option
		mention  string // the error must contain this
	}
	cases := []badCase{
		{"capacity=0", 0, nil, "capacity"},
		{"capacity=-1", -1, nil, "capacity"},
		{"capacity=MinInt", math.MinInt, nil, "capacity"},
		{"capacity=MaxInt", math.MaxInt, nil, "capacity"},
		{"bits=0", 100, []cuckoo.Option{cuckoo.WithFingerprintBits(0)}, "bits"},
		{"bits=7", 100, []cuckoo.Option{cuckoo.WithFingerprintBits(7)}, "bits"},
		{"bits=9", 100, []cuckoo.Option{cuckoo.WithFingerprintBits(9)}, "bits"},
		{"bits=16", 100, []cuckoo.Option{cuckoo.WithFingerprintBits(16)}, "bits"},
		{"bits=64", 100, []cuckoo.Option{cuckoo.WithFingerprintBits(64)}, "bits"},
		{"bits=-1", 100, []cuckoo.Option{cuckoo.WithFingerprintBits(-1)}, "bits"},
		{"mode=Mode(2)", 100, []cuckoo.Option{cuckoo.WithMode(cuckoo.Mode(2))}, "mode"},
		{"mode=Mode(7)", 100, []cuckoo.Option{cuckoo.WithMode(cuckoo.Mode(7))}, "mode"},
		{"mode=Mode(-1)", 100, []cuckoo.Option{cuckoo.WithMode(cuckoo.Mode(-1))}, "mode"},
		// The last option wins: a bad value set after a good one is bad.
		{"bits=12,7", 100, []cuckoo.Option{cuckoo.WithFingerprintBits(12), cuckoo.WithFingerprintBits(7)}, "bits"},
	}
	// MaxCapacity+1 does not fit in int on 32-bit platforms.
	if over := uint64(cuckoo.MaxCapacity) + 1; over <= math.MaxInt {
		cases = append(cases, badCase{"capacity=MaxCapacity+1", int(over), nil, "capacity"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("New(%d, …): got panic %v; want an error", tc.capacity, r)
				}
			}()
			f, err := cuckoo.New(tc.capacity, tc.opts...)
			if err == nil {
				t.Fatalf("New(%d, …): got error nil (Cap %d); want an error", tc.capacity, f.Cap())
			}
			if f != nil {
				t.Errorf("New(%d, …): got filter %p with error; want nil", tc.capacity, f)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "cuckoo: ") {
				t.Errorf("New(%d, …) error: got %q; want prefix %q", tc.capacity, msg, "cuckoo: ")
			}
			if !strings.Contains(msg, tc.mention) {
				t.Errorf("New(%d, …) error: got %q; want it to mention %q", tc.capacity, msg, tc.mention)
			}
		})
	}
}

// TestNewNilOption checks that nil options are ignored and the others still
// apply.
func TestNewNilOption(t *testing.T) {
	for _, mode := range modes {
		t.Run(fmt.Sprintf("mode=%v", mode), func(t *testing.T) {
			f, err := cuckoo.New(100, nil, cuckoo.WithMode(mode), nil, cuckoo.WithSeed(7), cuckoo.WithFingerprintBits(8), nil)
			if err != nil {
				t.Fatalf("New(100, nil, …): got error %q; want nil", err)
			}
			if got := f.Mode(); got != mode {
				t.Errorf("Mode(): got %v; want %v", got, mode)
			}
			if got := f.Seed(); got != 7 {
				t.Errorf("Seed(): got %d; want 7", got)
			}
			if got := f.FingerprintBits(); got != 8 {
				t.Errorf("FingerprintBits(): got %d; want 8", got)
			}
			if err := f.Insert([]byte("k")); err != nil {
				t.Errorf("Insert: got %v; want nil", err)
			}
			if !f.Lookup([]byte("k")) {
				t.Errorf("Lookup(inserted key): got false; want true")
			}
		})
	}
	if _, err := cuckoo.New(100, nil); err != nil {
		t.Errorf("New(100, nil): got error %q; want nil", err)
	}
}

// TestZeroFilter checks the documented behavior of a zero Filter.
func TestZeroFilter(t *testing.T) {
	var f cuckoo.Filter
	for _, k := range [][]byte{nil, {}, []byte("key")} {
		if err := f.Insert(k); !errors.Is(err, cuckoo.ErrZeroFilter) {
			t.Errorf("zero Filter Insert(%q): got %v; want ErrZeroFilter", k, err)
		}
		if f.Lookup(k) {
			t.Errorf("zero Filter Lookup(%q): got true; want false", k)
		}
		if f.Delete(k) {
			t.Errorf("zero Filter Delete(%q): got true; want false", k)
		}
	}
	if got := f.Len(); got != 0 {
		t.Errorf("zero Filter Len(): got %d; want 0", got)
	}
	if got := f.Cap(); got != 0 {
		t.Errorf("zero Filter Cap(): got %d; want 0", got)
	}
	if got := f.LoadFactor(); got != 0 {
		t.Errorf("zero Filter LoadFactor(): got %v; want 0", got)
	}
	if got := f.FingerprintBits(); got != 0 {
		t.Errorf("zero Filter FingerprintBits(): got %d; want 0", got)
	}
	if got := f.Mode(); got != cuckoo.LockFree {
		t.Errorf("zero Filter Mode(): got %v; want %v", got, cuckoo.LockFree)
	}
	if got := f.Seed(); got != 0 {
		t.Errorf("zero Filter Seed(): got %d; want 0", got)
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("zero Filter Reset(): got panic %v; want none", r)
			}
		}()
		f.Reset()
	}()
	if err := f.Insert([]byte("key")); !errors.Is(err, cuckoo.ErrZeroFilter) {
		t.Errorf("zero Filter Insert after Reset: got %v; want ErrZeroFilter", err)
	}
	if got := f.Len(); got != 0 {
		t.Errorf("zero Filter Len() after Reset: got %d; want 0", got)
	}
}

// TestErrFull checks the exported error value.
func TestErrFull(t *testing.T) {
	if cuckoo.ErrFull == nil {
		t.Fatal("ErrFull: got nil; want an error")
	}
	if msg := cuckoo.ErrFull.Error(); !strings.HasPrefix(msg, "cuckoo: ") {
		t.Errorf("ErrFull.Error(): got %q; want prefix %q", msg, "cuckoo: ")
	}
}

// TestCap checks Cap() == 4*ceil(ceil(capacity*20/19)/4) + 32 and that a new
// filter is empty.
func TestCap(t *testing.T) {
	capacities := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 19, 20, 38, 39, 76, 77, 100, 999, 1000, 1001, 12345, 100000, 1 << 20}
	for _, mode := range modes {
		for _, capacity := range capacities {
			t.Run(fmt.Sprintf("mode=%v/capacity=%d", mode, capacity), func(t *testing.T) {
				f := cuckoo.NewTestFilter(t, capacity, mode, 12, 0) // four 12-bit slots (LayoutOptions)
				got := f.Cap()
				if want := wantCap(capacity); got != want {
					t.Errorf("Cap(): got %d; want %d", got, want)
				}
				if float64(got) < float64(capacity)/0.95 {
					t.Errorf("Cap(): got %d; want at least capacity/0.95 = %.1f", got, float64(capacity)/0.95)
				}
				if got%4 != 0 {
					t.Errorf("Cap() %% 4: got %d; want 0 (whole four-slot buckets)", got%4)
				}
				checkLen(t, f, 0)
				if lf := f.LoadFactor(); lf != 0 {
					t.Errorf("LoadFactor(): got %v; want 0", lf)
				}
			})
		}
	}
	// The rounding in exact integers, against a few hand-computed values.
	for _, tc := range []struct{ capacity, want int }{
		{1, 36}, {3, 36}, {4, 40}, {7, 40}, {8, 44}, {19, 52}, {20, 56}, {1000, 1088}, {12345, 13028}, {100000, 105296},
	} {
		if got := wantCap(tc.capacity); got != tc.want {
			t.Errorf("wantCap(%d): got %d; want %d", tc.capacity, got, tc.want)
		}
	}
}

// fillUntilFull inserts keys 0, 1, 2, … of namespace ns until the first
// ErrFull and returns the keys that were inserted. It fails the test if more
// than Cap() inserts succeed or Insert returns another error.
func fillUntilFull(t testing.TB, f *cuckoo.Filter, ns uint64) [][]byte {
	t.Helper()
	var keys [][]byte
	for i := 0; ; i++ {
		k := keyOf(ns, i)
		err := f.Insert(k)
		if errors.Is(err, cuckoo.ErrFull) {
			return keys
		}
		if err != nil {
			t.Fatalf("Insert(key %d): got %v; want nil or ErrFull", i, err)
		}
		keys = append(keys, k)
		if len(keys) > f.Cap() {
			t.Fatalf("Insert succeeded %d times; want at most Cap() = %d", len(keys), f.Cap())
		}
	}
}

// TestLoadFactorAtFirstErrFull checks that a filter made by New(capacity)
// takes at least capacity keys before its first ErrFull, over several seeds
// (two in race builds: nothing here is concurrent), and that tables for
// 1,000 keys or more reach the load factor they are sized for (0.95, 0.97
// with five-slot buckets, 0.92 in the packed layout of 8-bit fingerprints)
// first. Tables for 1 to 3 keys are New's spare slots (32 or more) and
// little else: they hold their capacity many times over, but what share of
// their few buckets they fill before a key finds no room varies widely
// (below the target for 11-19% of seeds), so only the capacity is asserted
// for them. Both held for every capacity here over seeds 0-49.
// TestSmallCapacityHolds covers small capacities over many seeds.
func TestLoadFactorAtFirstErrFull(t *testing.T) {
	t.Parallel()
	capacities := []int{1, 2, 3, 1000, 1001, 4096, 12345, 100000}
	seeds := []uint64{1, 2, 3, 4, 5}
	if cuckoo.RaceEnabled || testing.Short() {
		seeds = seeds[:cuckoo.Sized(1, 1, 2)]
	}
	for _, mode := range modes {
		for _, bits := range fpBits {
			for _, capacity := range capacities {
				t.Run(fmt.Sprintf("mode=%v/bits=%d/capacity=%d", mode, bits, capacity), func(t *testing.T) {
					for _, seed := range seeds {
						f := cuckoo.NewTestFilter(t, capacity, mode, bits, seed)
						n := len(fillUntilFull(t, f, nsFill))
						lf := f.LoadFactor()
						if n < capacity {
							t.Errorf("seed=%d: keys inserted before the first ErrFull: got %d; want at least capacity %d", seed, n, capacity)
						}
						if target := cuckoo.LayoutLoad(bits); capacity >= 1000 && lf < target {
							t.Errorf("seed=%d: LoadFactor() at the first ErrFull: got %.4f (%d of %d); want >= %.2f", seed, lf, n, f.Cap(), target)
						}
						if want := float64(n) / float64(f.Cap()); lf != want {
							t.Errorf("seed=%d: LoadFactor(): got %v; want Len/Cap = %v", seed, lf, want)
						}
					}
				})
			}
		}
	}
}

// TestSmallCapacityHolds checks that New(capacity) takes capacity keys
// before its first ErrFull for small capacities, where the first ErrFull
// varies most: every layout, capacities 1 to 1,500, many seeds. Without
// New's spare slots about 1-2% of tables for 100 to 300 keys, and up to 5%
// for 5 to 10, failed early, so this many seeds would find some.
// (Both modes place keys identically; LockFree runs it.)
func TestSmallCapacityHolds(t *testing.T) {
	t.Parallel()
	seeds := 3000
	if cuckoo.RaceEnabled || testing.Short() {
		seeds = 300
	}
	capacities := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500}
	for _, bits := range fpBits {
		t.Run(fmt.Sprintf("bits=%d", bits), func(t *testing.T) {
			t.Parallel()
			short := 0
			for _, capacity := range capacities {
				for seed := uint64(1); seed <= uint64(seeds); seed++ {
					f := cuckoo.NewTestFilter(t, capacity, cuckoo.LockFree, bits, seed)
					for i := range capacity {
						if err := f.Insert(keyOf(nsFill, i)); err != nil {
							if short++; short <= 5 {
								t.Errorf("capacity %d, seed %d: Insert of key %d: %v (Cap %d)", capacity, seed, i, err, f.Cap())
							}
							break
						}
					}
				}
			}
			if short > 0 {
				t.Errorf("%d of %d tables took fewer keys than their capacity", short, seeds*len(capacities))
			}
		})
	}
}

// TestFailedInsertChangesNothing fills a filter until the first ErrFull and
// checks that every key inserted before is still found and Len is exact,
// then keeps inserting past the first ErrFull.
func TestFailedInsertChangesNothing(t *testing.T) {
	t.Parallel()
	forModesBits(t, func(t *testing.T, mode cuckoo.Mode, bits int) {
		seeds := []uint64{1, 2, 3}
		if cuckoo.RaceEnabled || testing.Short() {
			seeds = seeds[:cuckoo.Sized(1, 1, 3)]
		}
		for _, capacity := range []int{1000, 12345} {
			for _, seed := range seeds {
				t.Run(fmt.Sprintf("capacity=%d/seed=%d", capacity, seed), func(t *testing.T) {
					f := cuckoo.NewTestFilter(t, capacity, mode, bits, seed)
					keys := fillUntilFull(t, f, nsFill)
					checkLen(t, f, len(keys))
					checkFound(t, f, keys, "inserted")

					// The key that failed, again, then fresh keys: each
					// either fails and changes nothing or succeeds.
					extra := append([][]byte{keyOf(nsFill, len(keys))}, keysOf(nsExtra, 0, 200)...)
					fails := 0
					for i, k := range extra {
						before := f.Len()
						switch err := f.Insert(k); {
						case err == nil:
							keys = append(keys, k)
							checkLen(t, f, before+1)
						case errors.Is(err, cuckoo.ErrFull):
							fails++
							checkLen(t, f, before)
						default:
							t.Fatalf("Insert(extra key %d): got %v; want nil or ErrFull", i, err)
						}
					}
					if fails == 0 {
						t.Errorf("ErrFull among %d inserts into a full filter: got 0; want some", len(extra))
					}
					checkLen(t, f, len(keys))
					checkFound(t, f, keys, "inserted")
					if lf, want := f.LoadFactor(), float64(len(keys))/float64(f.Cap()); lf != want {
						t.Errorf("LoadFactor(): got %v; want %v", lf, want)
					}
				})
			}
		}
	})
}

// TestFalsePositiveRate measures the false-positive rate at the load New
// sizes the table for (95%, 97% for five-slot buckets, 92% in the packed
// layout of 8-bit fingerprints) over 1,000,000 keys never inserted and
// compares it with 2·b·α/2^f. Both modes place keys identically and so
// measure the same rate: under the race detector, which has little to
// check here, only LockFree runs, except in the long suite.
func TestFalsePositiveRate(t *testing.T) {
	const capacity, probes = 100000, 1000000
	forModesBits(t, func(t *testing.T, mode cuckoo.Mode, bits int) {
		if mode == cuckoo.Locked && cuckoo.RaceEnabled && !cuckoo.LongTests() {
			t.Skip("both modes place keys identically: LockFree measured this rate")
		}
		f := cuckoo.NewTestFilter(t, capacity, mode, bits, 42)
		insertAll(t, f, keysOf(nsFill, 0, capacity))
		alpha := f.LoadFactor()
		target := cuckoo.LayoutLoad(bits)
		if math.Abs(alpha-target) > 0.01 {
			t.Fatalf("LoadFactor() after %d inserts: got %.4f; want about %.2f", capacity, alpha, target)
		}
		// Probe in parallel: the lookups are independent.
		workers := runtime.GOMAXPROCS(0)
		counts := make([]int, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var k [8]byte
				for i := w; i < probes; i += workers {
					binary.LittleEndian.PutUint64(k[:], nsNegative<<56|uint64(i))
					if f.Lookup(k[:]) {
						counts[w]++
					}
				}
			}()
		}
		wg.Wait()
		positives := 0
		for _, c := range counts {
			positives += c
		}
		got := float64(positives) / probes
		want := 2 * float64(cuckoo.LayoutSlots(bits)) * alpha / math.Exp2(float64(cuckoo.LayoutBits(bits)))
		t.Logf("alpha=%.4f: false-positive rate %.5f (%d of %d), theory %.5f", alpha, got, positives, probes, want)
		if math.Abs(got-want) > 0.1*want {
			t.Errorf("false-positive rate at alpha=%.4f: got %.5f (%d of %d); want %.5f ± 10%%", alpha, got, positives, probes, want)
		}
	})
}

// TestDuplicates inserts one key k times into an otherwise empty filter: it
// takes exactly k deletes to remove it. Its two buckets hold 8 copies (10
// with five-slot buckets; in the packed layout 7 for this key, whose
// fingerprint is too large for its odd bucket's top slot); one more Insert
// returns ErrFull and changes nothing.
func TestDuplicates(t *testing.T) {
	forModesBits(t, func(t *testing.T, mode cuckoo.Mode, bits int) {
		most := cuckoo.NewTestFilter(t, 10000, mode, bits, 0).MaxCopies([]byte("duplicate"))
		if want := 2 * cuckoo.LayoutSlots(bits); most != want && (bits != 8 || most < want-2) {
			t.Fatalf("the key's two buckets hold %d copies; want %d (%d to %d in the packed layout)", most, want, want-2, want)
		}
		for k := 1; k <= most+1; k++ {
			t.Run(fmt.Sprintf("copies=%d", k), func(t *testing.T) {
				f := cuckoo.NewTestFilter(t, 10000, mode, bits, 0)
				key := []byte("duplicate")
				stored := 0
				for i := 1; i <= k; i++ {
					err := f.Insert(key)
					switch {
					case i <= most && err != nil:
						t.Fatalf("Insert copy %d: got %v; want nil", i, err)
					case i > most && !errors.Is(err, cuckoo.ErrFull):
						t.Fatalf("Insert copy %d: got %v; want ErrFull (the key's two buckets hold %d)", i, err, most)
					case err == nil:
						stored++
					}
				}
				checkLen(t, f, stored)
				for i := 1; i <= stored; i++ {
					if !f.Lookup(key) {
						t.Fatalf("Lookup before delete %d of %d: got false; want true", i, stored)
					}
					if !f.Delete(key) {
						t.Fatalf("Delete %d of %d: got false; want true", i, stored)
					}
					checkLen(t, f, stored-i)
				}
				if f.Lookup(key) {
					t.Errorf("Lookup after %d deletes: got true; want false", stored)
				}
				if f.Delete(key) {
					t.Errorf("Delete %d of %d: got true; want false", stored+1, stored)
				}
				checkLen(t, f, 0)
			})
		}
	})
}

// TestDeleteAllEmptiesFilter inserts many keys, some several times, and
// deletes each copy: the filter must be empty, so no key at all is found.
func TestDeleteAllEmptiesFilter(t *testing.T) {
	forModesBits(t, func(t *testing.T, mode cuckoo.Mode, bits int) {
		const capacity = 20000
		f := cuckoo.NewTestFilter(t, capacity, mode, bits, 3)
		keys := keysOf(nsFill, 0, capacity*9/10)
		insertAll(t, f, keys)
		dups := keys[:capacity/20] // a second copy of the first 5%
		insertAll(t, f, dups)
		checkLen(t, f, len(keys)+len(dups))
		for _, set := range [][][]byte{dups, keys} {
			for i, k := range set {
				if !f.Delete(k) {
					t.Fatalf("Delete(inserted key %d): got false; want true", i)
				}
			}
		}
		checkLen(t, f, 0)
		if lf := f.LoadFactor(); lf != 0 {
			t.Errorf("LoadFactor(): got %v; want 0", lf)
		}
		// An empty filter has no false positives either.
		for _, set := range [][][]byte{keys, keysOf(nsNegative, 0, 20000)} {
			for i, k := range set {
				if f.Lookup(k) {
					t.Fatalf("Lookup(key %x, #%d) in an empty filter: got true; want false", k, i)
				}
				if f.Delete(k) {
					t.Fatalf("Delete(key %x, #%d) in an empty filter: got true; want false", k, i)
				}
			}
		}
		// Still usable.
		insertAll(t, f, keys)
		checkFound(t, f, keys, "reinserted")
		checkLen(t, f, len(keys))
	})
}

// TestEmptyAndNilKeys checks that the empty key is a key like any other, and
// that nil and []byte{} are the same key.
func TestEmptyAndNilKeys(t *testing.T) {
	forModesBits(t, func(t *testing.T, mode cuckoo.Mode, bits int) {
		f := cuckoo.NewTestFilter(t, 100, mode, bits, 0)
		if err := f.Insert(nil); err != nil {
			t.Fatalf("Insert(nil): got %v; want nil", err)
		}
		if !f.Lookup([]byte{}) {
			t.Errorf("Lookup([]byte{}) after Insert(nil): got false; want true")
		}
		if !f.Delete([]byte{}) {
			t.Errorf("Delete([]byte{}) after Insert(nil): got false; want true")
		}
		if f.Lookup(nil) {
			t.Errorf("Lookup(nil) after delete: got true; want false")
		}
		checkLen(t, f, 0)
	})
}

// TestReset checks that Reset removes everything and leaves the filter
// usable, several times over.
func TestReset(t *testing.T) {
	forModesBits(t, func(t *testing.T, mode cuckoo.Mode, bits int) {
		const capacity = 10000
		f := cuckoo.NewTestFilter(t, capacity, mode, bits, 5)
		f.Reset() // of an empty filter
		checkLen(t, f, 0)
		for round := range 3 {
			keys := keysOf(nsFill, round*capacity, capacity)
			insertAll(t, f, keys)
			checkLen(t, f, capacity)
			f.Reset()
			checkLen(t, f, 0)
			if lf := f.LoadFactor(); lf != 0 {
				t.Errorf("round %d: LoadFactor() after Reset: got %v; want 0", round, lf)
			}
			for i, k := range keys {
				if f.Lookup(k) {
					t.Fatalf("round %d: Lookup(key %d) after Reset: got true; want false", round, i)
				}
				if f.Delete(k) {
					t.Fatalf("round %d: Delete(key %d) after Reset: got true; want false", round, i)
				}
			}
		}
		// Full again after a Reset: the whole capacity fits.
		keys := keysOf(nsExtra, 0, capacity)
		insertAll(t, f, keys)
		checkFound(t, f, keys, "inserted after Reset")
		checkLen(t, f, capacity)
	})
}

// lookupSignature returns the answers of Lookup for keys.
func lookupSignature(f *cuckoo.Filter, keys [][]byte) []bool {
	out := make([]bool, len(keys))
	for i, k := range keys {
		out[i] = f.Lookup(k)
	}
	return out
}

// TestSeedDeterminism checks that filters with the same seed, size and
// fingerprint bits behave identically for the same inserts, including their
// false positives, and that different seeds give different false positives.
func TestSeedDeterminism(t *testing.T) {
	t.Parallel()
	const capacity = 20000
	negatives := keysOf(nsNegative, 0, 100000)
	inserts := keysOf(nsFill, 0, capacity*101/100) // a little past the capacity
	forModesBits(t, func(t *testing.T, mode cuckoo.Mode, bits int) {
		build := func(seed uint64) (*cuckoo.Filter, []bool) {
			f := cuckoo.NewTestFilter(t, capacity, mode, bits, seed)
			errs := make([]bool, len(inserts))
			for i, k := range inserts {
				errs[i] = f.Insert(k) != nil
			}
			return f, errs
		}
		a, errsA := build(11)
		b, errsB := build(11)
		for i := range inserts {
			if errsA[i] != errsB[i] {
				t.Fatalf("Insert(key %d) failed: got %v with one filter and %v with the other; want the same", i, errsA[i], errsB[i])
			}
		}
		if a.Len() != b.Len() {
			t.Errorf("Len(): got %d and %d; want equal", a.Len(), b.Len())
		}
		sigA, sigB := lookupSignature(a, negatives), lookupSignature(b, negatives)
		positivesA := 0
		for i := range negatives {
			if sigA[i] != sigB[i] {
				t.Fatalf("Lookup(negative key %d): got %v and %v; want the same answer from equal seeds", i, sigA[i], sigB[i])
			}
			if sigA[i] {
				positivesA++
			}
		}
		if positivesA == 0 {
			t.Fatalf("false positives among %d negative keys: got 0; want some (the comparison is vacuous)", len(negatives))
		}

		c, _ := build(12)
		sigC := lookupSignature(c, negatives)
		positivesC, common := 0, 0
		for i := range negatives {
			if sigC[i] {
				positivesC++
				if sigA[i] {
					common++
				}
			}
		}
		t.Logf("false positives: seed 11: %d, seed 12: %d, common: %d", positivesA, positivesC, common)
		if common*2 > min(positivesA, positivesC) {
			t.Errorf("false positives shared by seeds 11 and 12: got %d of %d and %d; want less than half", common, positivesA, positivesC)
		}
	})
}

// TestDifferential drives a filter and a multiset (a map of counts) with the
// same random sequence of Insert, Delete and Lookup, and checks the filter
// against the multiset after each operation: a key with a positive count is
// found, deleting it succeeds, and Len equals the sum of the counts. Only keys
// with a positive count are deleted (deleting others may remove a colliding
// fingerprint). The load is driven to about 95%, so inserts relocate and
// some fail with ErrFull, which must leave the counts unchanged; a few hot
// keys collect copies up to the 8 their two buckets hold.
func TestDifferential(t *testing.T) {
	t.Parallel()
	const keySpace = 20000
	// The sequence must be long enough to fill the filter: ops scale
	// with the capacity. So do the hot keys: a twentieth of the inserts
	// go to them, so each holds about capacity/20/hotKeys copies in the
	// churn near 95% load, and with fewer than about 6 a hot key rarely
	// reaches its 8th copy (with 16 hot keys at capacity 500, no 9th copy
	// and no ErrFull at all in 10000 ops).
	capacity, ops, hotKeys := 2000, 40000, 16
	if testing.Short() || cuckoo.RaceEnabled && !cuckoo.LongTests() {
		capacity, ops, hotKeys = 500, 10000, 4
	}
	forModesBits(t, func(t *testing.T, mode cuckoo.Mode, bits int) {
		for _, seed := range []uint64{1, 2} {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				f := cuckoo.NewTestFilter(t, capacity, mode, bits, seed)
				rng := rand.New(rand.NewPCG(seed, uint64(bits)))
				keys := keysOf(nsFill, 0, keySpace)
				counts := make(map[string]int) // the reference
				var copies []int               // one entry per stored copy, to sample from
				total, fulls, ninth := 0, 0, 0
				for op := range ops {
					insertShare := 50
					if total > f.Cap()*95/100 {
						insertShare = 30
					}
					switch r := rng.IntN(100); {
					case r < insertShare:
						i := hotKeys + rng.IntN(keySpace-hotKeys)
						if rng.IntN(20) == 0 {
							i = rng.IntN(hotKeys)
						}
						k := keys[i]
						c := counts[string(k)]
						switch err := f.Insert(k); {
						case err == nil:
							counts[string(k)]++
							copies = append(copies, i)
							total++
						case errors.Is(err, cuckoo.ErrFull):
							fulls++
						default:
							t.Fatalf("op %d: Insert(key %d): got %v; want nil or ErrFull", op, i, err)
						}
						if most := 2 * f.SlotsPerBucket(); c == most {
							ninth++
							if counts[string(k)] != most {
								t.Fatalf("op %d: Insert(key %d) with %d copies: got one more; want ErrFull (two buckets of %d slots)", op, i, most, most/2)
							}
						}
					case r < 85:
						if len(copies) == 0 {
							continue
						}
						j := rng.IntN(len(copies))
						i := copies[j]
						k := keys[i]
						if !f.Delete(k) {
							t.Fatalf("op %d: Delete(key %d) with %d copies: got false; want true", op, i, counts[string(k)])
						}
						counts[string(k)]--
						copies[j] = copies[len(copies)-1]
						copies = copies[:len(copies)-1]
						total--
					default:
						i := rng.IntN(keySpace)
						if rng.IntN(2) == 0 && len(copies) > 0 {
							i = copies[rng.IntN(len(copies))]
						}
						k := keys[i]
						if counts[string(k)] > 0 && !f.Lookup(k) {
							t.Fatalf("op %d: Lookup(key %d) with %d copies: got false; want true", op, i, counts[string(k)])
						}
					}
					if got := f.Len(); got != total {
						t.Fatalf("op %d: Len(): got %d; want %d (the multiset's size)", op, got, total)
					}
					if op%5000 == 0 || op == ops-1 {
						for _, i := range copies {
							if !f.Lookup(keys[i]) {
								t.Fatalf("op %d: Lookup(key %d) with %d copies: got false; want true", op, i, counts[string(keys[i])])
							}
						}
					}
				}
				t.Logf("%d ops: final Len %d (load %.3f), %d ErrFull (%d for a 9th copy)", ops, total, f.LoadFactor(), fulls, ninth)
				if fulls == 0 {
					t.Errorf("ErrFull during the sequence: got 0; want some (the sequence should fill the filter)")
				}
				// Drain: delete every copy; the filter must be empty.
				for j, k := range keys {
					for c := counts[string(k)]; c > 0; c-- {
						if !f.Delete(k) {
							t.Fatalf("drain: Delete(key %d) with %d copies left: got false; want true", j, c)
						}
					}
				}
				checkLen(t, f, 0)
				for j, k := range keys {
					if f.Lookup(k) {
						t.Fatalf("drain: Lookup(key %d) in an empty filter: got true; want false", j)
					}
				}
			})
		}
	})
}

// TestAllocs pins zero allocations for Insert, Lookup and Delete, including
// inserts into a nearly full filter where most inserts must relocate.
func TestAllocs(t *testing.T) {
	const capacity, runs = 20000, 500
	forModesBits(t, func(t *testing.T, mode cuckoo.Mode, bits int) {
		f := cuckoo.NewTestFilter(t, capacity, mode, bits, 9)
		fill := keysOf(nsFill, 0, f.Cap()*94/100)
		insertAll(t, f, fill)
		extra := keysOf(nsExtra, 0, 4*runs+4) // AllocsPerRun calls once more to warm up
		negative := keysOf(nsNegative, 0, runs+1)
		var i int
		check := func(name string, fn func()) {
			t.Helper()
			i = 0
			if got := testing.AllocsPerRun(runs, fn); got != 0 {
				t.Errorf("%s: got %v allocations per call; want 0", name, got)
			}
		}
		// Writes at 94% load relocate; in race builds each relocation
		// path leases its descriptor by allocating (cuckoo.RaceEnabled),
		// so there they run the same calls without counting.
		checkWrites := check
		if cuckoo.RaceEnabled && mode == cuckoo.LockFree {
			checkWrites = func(name string, fn func()) {
				i = 0
				for range runs + 1 {
					fn()
				}
			}
		}
		check("Lookup(present key)", func() { f.Lookup(fill[i]); i++ })
		check("Lookup(absent key)", func() { f.Lookup(negative[i]); i++ })
		// Inserts from 94% to about 96% load, then the deletes back.
		inserted := make([]bool, runs+1)
		checkWrites("Insert at 94% load", func() {
			inserted[i] = f.Insert(extra[i]) == nil
			i++
		})
		if lf := f.LoadFactor(); lf < 0.95 {
			t.Errorf("LoadFactor() after the inserts: got %.4f; want >= 0.95", lf)
		}
		check("Delete", func() {
			if inserted[i] && !f.Delete(extra[i]) {
				t.Errorf("Delete(inserted key %d): got false; want true", i)
			}
			i++
		})
		// Insert/Delete pairs at steady ~94% load.
		base := 2 * runs
		checkWrites("Insert+Delete at 94% load", func() {
			k := extra[base+i]
			if f.Insert(k) == nil {
				f.Delete(k)
			}
			i++
		})
		// Batches of 40 keys (groups of 16, 16 and 8).
		found := make([]bool, 40)
		check("LookupBatch", func() {
			lo := i * 40 % (len(fill) - 40)
			f.LookupBatch(fill[lo:lo+40], found)
			i++
		})
		batchKeys := keysOf(nsExtra, 1<<20, 40*(runs+1))
		checkWrites("InsertBatch+Delete at 94% load", func() {
			keys := batchKeys[i*40 : i*40+40]
			n, _ := f.InsertBatch(keys)
			for _, k := range keys[:n] {
				f.Delete(k)
			}
			i++
		})
		checkLen(t, f, len(fill))
		checkFound(t, f, fill, "fill")
	})
}
