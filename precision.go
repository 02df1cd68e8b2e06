package cuckoo

import (
	"fmt"
	"math"
)

// precisionLayouts are the bucket layouts WithFalsePositiveRate chooses
// from, smallest memory per slot first, then the least precise first among
// equal memory (it leaves the widest migration counter): the packed layout
// of 8-bit slots (8 bits per slot, packed.go), five 12-bit slots per
// 64-bit word (12.8 bits per slot), then four slots of 12 or 15 bits (16
// bits per slot).
var precisionLayouts = [...]struct{ bits, slots int }{{8, 4}, {12, 5}, {12, 4}, {15, 4}}

// expectedFalsePositiveRate returns the false-positive rate of a filter
// with bits-bit fingerprints in buckets of slots slots at load factor load:
// the expected number of the 2·slots slots of an absent key's two buckets
// that hold its fingerprint, 2·slots·load/(2^bits-1). Measured rates agree
// with it within a few percent (TestFalsePositiveRate,
// TestFalsePositiveRateClasses, ExampleWithFingerprintBits).
func expectedFalsePositiveRate(bits, slots int, load float64) float64 {
	return 2 * float64(slots) * load / float64(uint64(1)<<bits-1)
}

// WithFalsePositiveRate makes New choose the bucket layout from the
// false-positive rate p the filter may have when it holds the capacity
// given to New: the layout with the least memory whose expected rate at
// the load New sizes it for is at most p. For p of at least 2.89% that is
// the packed layout: two buckets of four 8-bit fingerprints per 64-bit
// word, sized for 92% load (8.8 bits per key, 2·4·0.92/255 = 2.89%; see
// WithFingerprintBits). Down to 0.237% it is five 12-bit fingerprints per
// 64-bit bucket word, sized for 97% load
// (13.2 bits per key, 2·5·0.97/4095 = 0.237%; such tables took 97.3% or
// more before their first ErrFull in 3,000 random seeds at 2,000 keys; the layout of New without options);
// down to 0.186%, four 12-bit fingerprints sized for 95% load (16.8 bits
// per key); down to 0.0232%, four 15-bit ones (16.8 bits per key). New
// returns an error for a smaller p, for p outside (0, 1), and when
// WithFingerprintBits or WithSlotsPerBucket is given too.
// FingerprintBits, SlotsPerBucket and Stats report the layout chosen.
//
// The choice compares p with the expected rate; a measured rate scatters
// around it. Probing a full filter with N keys never inserted counts about
// r·N false positives for a true rate r, with a standard deviation of
// sqrt(r·N): 2% of r for r = 0.25% and a million probes, 6.6% for
// r = 0.0232%. So for p just above a layout's expected rate (2.89%, 0.237%,
// 0.186%, 0.0232%) about half of such measurements come out above p; give p
// with the margin the check needs (three standard deviations, say), or a
// rate at least that far above those points.
//
// Five-slot buckets hold at most 10 copies of one key (its two buckets),
// four-slot buckets 8, the packed layout 6 to 8 (its top slots take only
// some fingerprints); one bucket's worth or less for a key whose two
// buckets are one. Five 12-bit slots and four 15-bit ones have 2-bit
// migration counters, four 12-bit ones 14-bit counters (see
// WithFingerprintBits for what that costs).
//
// A Growing filter has one layout; NewGrowing rejects this option.
func WithFalsePositiveRate(p float64) Option {
	return func(c *config) { c.fpr, c.fprSet = p, true }
}

// layoutFor returns the layout with the least memory whose expected
// false-positive rate at the target load is at most p, or an error that
// says which rates can be had.
func layoutFor(p float64) (bits, slots int, err error) {
	if math.IsNaN(p) || p <= 0 || p >= 1 {
		return 0, 0, fmt.Errorf("cuckoo: false-positive rate must be between 0 and 1 (exclusive), got %v", p)
	}
	for _, l := range precisionLayouts {
		if layoutFalsePositiveRate(l.bits, l.slots) <= p {
			return l.bits, l.slots, nil
		}
	}
	best := precisionLayouts[len(precisionLayouts)-1]
	return 0, 0, fmt.Errorf("cuckoo: no fingerprint size gives a false-positive rate of %.4g%%: the smallest, with %d-bit fingerprints at 95%% load, is %.3g%%",
		100*p, best.bits, 100*layoutFalsePositiveRate(best.bits, best.slots))
}

// layoutFalsePositiveRate is the expected false-positive rate of a layout
// at the load New sizes it for.
func layoutFalsePositiveRate(bits, slots int) float64 {
	num, den := targetLoad(slots)
	if bits == 8 {
		num, den = packedLoadNum, packedLoadDen
	}
	return expectedFalsePositiveRate(bits, slots, float64(num)/float64(den))
}
