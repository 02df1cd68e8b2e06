package cuckoo_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

// TestWithFalsePositiveRateChoice checks the size New chooses for a rate:
// the smallest whose expected rate at 95% load is at most p, and errors
// for rates no size gives, rates outside (0, 1), and for the option given
// with WithFingerprintBits.
func TestWithFalsePositiveRateChoice(t *testing.T) {
	for _, tc := range []struct {
		p           float64
		bits, slots int
	}{
		{0.5, 12, 5}, {0.05, 12, 5}, {0.01, 12, 5}, {0.0025, 12, 5}, {0.00237, 12, 5},
		{0.00236, 12, 4}, {0.002, 12, 4}, {0.00186, 12, 4}, {0.00185, 15, 4},
		{0.001, 15, 4}, {0.00025, 15, 4}, {0.000232, 15, 4},
	} {
		f, err := cuckoo.New(1000, cuckoo.WithFalsePositiveRate(tc.p), cuckoo.WithSeed(1))
		if err != nil {
			t.Errorf("p=%v: %v", tc.p, err)
			continue
		}
		if got, slots := f.FingerprintBits(), f.SlotsPerBucket(); got != tc.bits || slots != tc.slots {
			t.Errorf("p=%v: %d-bit fingerprints, %d slots; want %d, %d", tc.p, got, slots, tc.bits, tc.slots)
		}
		if st := f.Stats(); st.FingerprintBits != tc.bits || st.SlotsPerBucket != tc.slots {
			t.Errorf("p=%v: Stats() says %d-bit fingerprints, %d slots; want %d, %d", tc.p, st.FingerprintBits, st.SlotsPerBucket, tc.bits, tc.slots)
		}
	}
	for _, tc := range []struct {
		name string
		opts []cuckoo.Option
		want string
	}{
		{"too small", []cuckoo.Option{cuckoo.WithFalsePositiveRate(0.0002)}, "no fingerprint size"},
		{"zero", []cuckoo.Option{cuckoo.WithFalsePositiveRate(0)}, "between 0 and 1"},
		{"negative", []cuckoo.Option{cuckoo.WithFalsePositiveRate(-0.1)}, "between 0 and 1"},
		{"one", []cuckoo.Option{cuckoo.WithFalsePositiveRate(1)}, "between 0 and 1"},
		{"NaN", []cuckoo.Option{cuckoo.WithFalsePositiveRate(math.NaN())}, "between 0 and 1"},
		{"both options", []cuckoo.Option{cuckoo.WithFalsePositiveRate(0.01), cuckoo.WithFingerprintBits(12)}, "both given"},
	} {
		if _, err := cuckoo.New(1000, tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := cuckoo.NewGrowing(1000, cuckoo.WithFalsePositiveRate(0.01)); err == nil {
		t.Error("NewGrowing accepted WithFalsePositiveRate")
	}
}

// TestFalsePositiveRateClasses fills a filter made with
// WithFalsePositiveRate(p) to the capacity it was given, in both modes,
// and checks that the rate measured with keys never inserted is at most p
// (with the sampling error of the probe count) and that every key is
// found.
func TestFalsePositiveRateClasses(t *testing.T) {
	n, probes := 200_000, 2_000_000
	if testing.Short() || cuckoo.RaceEnabled {
		n, probes = 50_000, 500_000
	}
	for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		for _, p := range []float64{0.0025, 0.002, 0.00025} {
			t.Run(fmt.Sprintf("mode=%v/p=%v", mode, p), func(t *testing.T) {
				f, err := cuckoo.New(n, cuckoo.WithFalsePositiveRate(p), cuckoo.WithMode(mode), cuckoo.WithSeed(11))
				if err != nil {
					t.Fatal(err)
				}
				var k [8]byte
				for i := range n {
					binary.LittleEndian.PutUint64(k[:], uint64(i))
					if err := f.Insert(k[:]); err != nil {
						t.Fatalf("insert %d of %d: %v", i, n, err)
					}
				}
				for i := range n {
					binary.LittleEndian.PutUint64(k[:], uint64(i))
					if !f.Lookup(k[:]) {
						t.Fatalf("key %d absent", i)
					}
				}
				fp := 0
				for i := range probes {
					binary.LittleEndian.PutUint64(k[:], uint64(i)|1<<63)
					if f.Lookup(k[:]) {
						fp++
					}
				}
				rate := float64(fp) / float64(probes)
				// Three standard deviations of a binomial count.
				slack := 3 * math.Sqrt(p*float64(probes)) / float64(probes)
				t.Logf("%d-bit fingerprints, %d slots, load %.4f, %.2f bits per key: measured %.5f%% (bound %.4f%%)", f.FingerprintBits(), f.SlotsPerBucket(), f.LoadFactor(), f.Stats().BitsPerKey, 100*rate, 100*p)
				if rate > p+slack {
					t.Errorf("measured false-positive rate %.5f%% above %.4f%%", 100*rate, 100*p)
				}
			})
		}
	}
}
