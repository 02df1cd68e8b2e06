package cuckoo

import (
	"fmt"
	"math"
)

// Precision classes: the fingerprint sizes New offers and what each gives
// at the load New sizes the table for (95%). Every size uses one 64-bit
// word per bucket of four slots, 16.8 bits per key at 95% load; the size
// decides how many of the word's bits are fingerprint and how many are
// migration counter (WithFingerprintBits).
var precisionBits = [...]int{8, 12, 15}

// expectedFalsePositiveRate returns the false-positive rate of a filter
// with bits-bit fingerprints at load factor load: the expected number of
// the eight slots of an absent key's two buckets that hold its
// fingerprint, 8·load/(2^bits-1). Measured rates agree with it within a
// few percent (TestFalsePositiveRate, ExampleWithFingerprintBits).
func expectedFalsePositiveRate(bits int, load float64) float64 {
	return 2 * slotsPerBucket * load / float64(uint64(1)<<bits-1)
}

// WithFalsePositiveRate makes New choose the fingerprint size from the
// false-positive rate p the filter may have when it holds the capacity
// given to New (95% load): the smallest size whose expected rate at that
// load, 8·0.95/(2^f-1), is at most p. That gives 8-bit fingerprints for p
// of at least 2.98%, 12 bits down to 0.186%, and 15 bits down to 0.0232%;
// New returns an error for a smaller p, for p outside (0, 1), and when
// WithFingerprintBits is given too. FingerprintBits and Stats report the
// size chosen. Every size takes the same memory (one 64-bit word per four
// slots), so a smaller p costs no memory; a larger size leaves fewer bits
// to the migration counter (see WithFingerprintBits for what that costs).
//
// A Growing filter has one fingerprint size; NewGrowing rejects this
// option.
func WithFalsePositiveRate(p float64) Option {
	return func(c *config) { c.fpr, c.fprSet = p, true }
}

// fingerprintBitsFor returns the smallest fingerprint size whose expected
// false-positive rate at the target load is at most p, or an error that
// says which rates can be had.
func fingerprintBitsFor(p float64) (int, error) {
	if math.IsNaN(p) || p <= 0 || p >= 1 {
		return 0, fmt.Errorf("cuckoo: false-positive rate must be between 0 and 1 (exclusive), got %v", p)
	}
	load := float64(targetLoadNum) / targetLoadDen
	for _, bits := range precisionBits {
		if expectedFalsePositiveRate(bits, load) <= p {
			return bits, nil
		}
	}
	best := precisionBits[len(precisionBits)-1]
	return 0, fmt.Errorf("cuckoo: no fingerprint size gives a false-positive rate of %.4g%%: the smallest, with %d-bit fingerprints at 95%% load, is %.3g%%",
		100*p, best, 100*expectedFalsePositiveRate(best, load))
}
