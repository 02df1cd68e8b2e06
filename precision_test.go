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
// the smallest whose expected rate at the load New sizes it for (92% for
// the packed layout of 8-bit fingerprints: 2·4·0.92/255 = 2.886%; 97% for
// five 12-bit slots, 95% for four) is at most p, and errors
// for rates no size gives, rates outside (0, 1), and for the option given
// with WithFingerprintBits.
func TestWithFalsePositiveRateChoice(t *testing.T) {
	for _, tc := range []struct {
		p           float64
		bits, slots int
	}{
		{0.5, 8, 4}, {0.05, 8, 4}, {0.0289, 8, 4}, {0.0288, 12, 5},
		{0.01, 12, 5}, {0.0025, 12, 5}, {0.00237, 12, 5},
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
		{"with bits", []cuckoo.Option{cuckoo.WithFalsePositiveRate(0.01), cuckoo.WithFingerprintBits(12)}, "without WithFingerprintBits"},
		{"with slots", []cuckoo.Option{cuckoo.WithSlotsPerBucket(4), cuckoo.WithFalsePositiveRate(0.01)}, "without WithFingerprintBits and WithSlotsPerBucket"},
		{"slots 3", []cuckoo.Option{cuckoo.WithSlotsPerBucket(3)}, "must be 4 or 5"},
		{"slots 6", []cuckoo.Option{cuckoo.WithSlotsPerBucket(6)}, "must be 4 or 5"},
		{"5x15", []cuckoo.Option{cuckoo.WithFingerprintBits(15), cuckoo.WithSlotsPerBucket(5)}, "5 slots per bucket with 15-bit"},
	} {
		if _, err := cuckoo.New(1000, tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := cuckoo.NewGrowing(1000, cuckoo.WithFalsePositiveRate(0.01)); err == nil {
		t.Error("NewGrowing accepted WithFalsePositiveRate")
	}
	// NewGrowing refuses New's layout options whatever their values, and
	// says so before judging the values.
	for _, opt := range []cuckoo.Option{cuckoo.WithSlotsPerBucket(4), cuckoo.WithSlotsPerBucket(9), cuckoo.WithFalsePositiveRate(2)} {
		if _, err := cuckoo.NewGrowing(1000, opt); err == nil || !strings.Contains(err.Error(), "is for New") {
			t.Errorf("NewGrowing with a layout option: error %v; want one saying it is for New", err)
		}
	}
}

// TestFalsePositiveRateClasses fills a filter made with
// WithFalsePositiveRate(p) to the capacity it was given, in both modes,
// and checks that the rate measured with keys never inserted is at most p
// (with the sampling error of the probe count) and that every key is
// found. Both modes place keys identically: under the race detector only
// LockFree runs, except in the long suite.
func TestFalsePositiveRateClasses(t *testing.T) {
	n, probes := 200_000, 2_000_000
	if testing.Short() || cuckoo.RaceEnabled {
		n, probes = 50_000, 500_000
	}
	ms := modes
	if cuckoo.RaceEnabled && !cuckoo.LongTests() {
		ms = modes[:1]
	}
	for _, mode := range ms {
		for _, p := range []float64{0.03, 0.0025, 0.002, 0.00025} {
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

// TestDefaultLayout checks that New without a layout option gives the
// standard class, five 12-bit slots, as WithFingerprintBits(12) alone
// does, and that the other sizes and WithSlotsPerBucket(4) give four.
func TestDefaultLayout(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        []cuckoo.Option
		bits, slots int
	}{
		{"default", nil, 12, 5},
		{"bits 12", []cuckoo.Option{cuckoo.WithFingerprintBits(12)}, 12, 5},
		{"slots 5", []cuckoo.Option{cuckoo.WithSlotsPerBucket(5)}, 12, 5},
		{"slots 4", []cuckoo.Option{cuckoo.WithSlotsPerBucket(4)}, 12, 4},
		{"bits 12 slots 4", []cuckoo.Option{cuckoo.WithSlotsPerBucket(4), cuckoo.WithFingerprintBits(12)}, 12, 4},
		{"bits 8", []cuckoo.Option{cuckoo.WithFingerprintBits(8)}, 8, 4},
		{"bits 15", []cuckoo.Option{cuckoo.WithFingerprintBits(15)}, 15, 4},
	} {
		for _, mode := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
			f, err := cuckoo.New(1_000_000, append(tc.opts, cuckoo.WithMode(mode))...)
			if err != nil {
				t.Fatalf("%s, %v: %v", tc.name, mode, err)
			}
			if f.FingerprintBits() != tc.bits || f.SlotsPerBucket() != tc.slots {
				t.Errorf("%s, %v: %d-bit fingerprints, %d slots; want %d, %d", tc.name, mode, f.FingerprintBits(), f.SlotsPerBucket(), tc.bits, tc.slots)
			}
			// The table is sized for 97% load with five slots, 95% with four,
			// plus at least 32 spare slots in whole buckets.
			load := 0.95
			if tc.slots == 5 {
				load = 0.97
			}
			want := int(math.Ceil(1_000_000/load/float64(tc.slots))) + (32+tc.slots-1)/tc.slots
			if tc.bits == 8 {
				// The packed layout: sized for 92% load, in whole words
				// of two buckets (1,086,957 slots in 135,870 words), plus
				// six spare words.
				want = 2 * (((1_000_000*100+91)/92+7)/8 + 6)
			}
			if f.Cap()/tc.slots != want {
				t.Errorf("%s, %v: %d buckets; want %d", tc.name, mode, f.Cap()/tc.slots, want)
			}
		}
	}
}
