package cuckoo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// craftCollisions searches keys "k<i>" for n that share their first bucket
// and fingerprint (so both buckets) in f, as an attacker who knows f's seed
// would.
func craftCollisions(f *Filter, n int) [][]byte {
	var keys [][]byte
	var want [2]uint64
	for i := 0; len(keys) < n; i++ {
		key := fmt.Appendf(nil, "k%d", i)
		b1, fp, _ := f.hash(key)
		if len(keys) == 0 {
			if f.alt(b1, fp) == b1 {
				continue
			}
			want = [2]uint64{b1, fp}
		}
		if [2]uint64{b1, fp} == want {
			keys = append(keys, key)
		}
	}
	return keys
}

// TestCraftedCollisionsDoNotTransfer crafts keys that all land in one pair
// of buckets with one fingerprint under a known seed (0, the default before
// seeds were random, and 42): under that seed the ninth gets ErrFull in an
// almost empty filter (the seventh or eighth in the packed layout when an
// odd bucket's top slot cannot take the fingerprint). Under a filter's
// random default seed and under another fixed seed the same keys spread
// out and all fit.
func TestCraftedCollisionsDoNotTransfer(t *testing.T) {
	const n = 12
	for _, known := range []uint64{0, 42} {
		t.Run(fmt.Sprintf("seed=%d", known), func(t *testing.T) {
			target, err := New(1000, WithFingerprintBits(8), WithSeed(known))
			if err != nil {
				t.Fatal(err)
			}
			keys := craftCollisions(target, n)
			slots := target.MaxCopies(keys[0]) // the same for every crafted key
			if slots < 2*slotsPerBucket-2 || slots > 2*slotsPerBucket {
				t.Fatalf("the crafted keys' two distinct buckets hold %d copies; want %d to %d", slots, 2*slotsPerBucket-2, 2*slotsPerBucket)
			}
			var fulls int
			for _, k := range keys {
				if err := target.Insert(k); errors.Is(err, ErrFull) {
					fulls++
				}
			}
			if fulls != n-slots {
				t.Fatalf("crafted keys under the seed they were crafted for: got %d ErrFull; want %d (only %d slots)", fulls, n-slots, slots)
			}
			others := map[string]*Filter{}
			if others["random"], err = New(1000, WithFingerprintBits(8)); err != nil {
				t.Fatal(err)
			}
			if others["seed=known+1"], err = New(1000, WithFingerprintBits(8), WithSeed(known+1)); err != nil {
				t.Fatal(err)
			}
			for name, f := range others {
				same := map[[2]uint64]int{}
				most := 0
				for _, k := range keys {
					b1, fp, _ := f.hash(k)
					same[[2]uint64{b1, fp}]++
					most = max(most, same[[2]uint64{b1, fp}])
					if err := f.Insert(k); err != nil {
						t.Errorf("%s: Insert(crafted key %q): %v; want nil", name, k, err)
					}
				}
				// 12 keys over 272·255 (bucket, fingerprint) pairs: two
				// share one with probability about 0.1%.
				if most > 2 {
					t.Errorf("%s: crafted keys sharing one bucket and fingerprint: got %d of %d; want at most 2", name, most, n)
				}
			}
		})
	}
}

// TestSum64Short checks sum64Short against xxhash.Sum64 at every length it
// takes, and hash16 at 16, over varied bytes; the bytes past b[:n] differ
// too, so a read past the end would show.
func TestSum64Short(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 32)
	for i := range 200 {
		for j := range b {
			b[j] = byte(r.Uint64()) | byte(i&1)*0x80 // half the rounds: every high bit set
		}
		for n := range 32 {
			if got, want := sum64Short(b[:n]), xxhash.Sum64(b[:n]); got != want {
				t.Fatalf("sum64Short of %d bytes %x = %#x; want %#x", n, b[:n], got, want)
			}
			if n == 16 {
				if got, want := hash16(b[:n]), xxhash.Sum64(b[:n]); got != want {
					t.Fatalf("hash16 of %x = %#x; want %#x", b[:n], got, want)
				}
			}
		}
	}
}
