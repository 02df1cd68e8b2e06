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
// the packed layout (8-bit fingerprints at 92% load); down to 0.237%, five
// 12-bit fingerprints per bucket at 97% (New's default); down to 0.186%,
// four 12-bit ones at 95%; down to 0.0232%, four 15-bit ones. Bits per key
// of each: README.md, "Choosing a layout". New returns an error for a
// smaller p, for p outside (0, 1), and when WithFingerprintBits or
// WithSlotsPerBucket is given too. FingerprintBits, SlotsPerBucket and
// Stats report the layout chosen.
//
// The choice compares p with the expected rate; a measured rate scatters
// around it (N probes of a true rate r count about r·N false positives,
// standard deviation sqrt(r·N)), so for p just above a layout's expected
// rate about half of such measurements come out above p: give p with the
// margin the check needs.
//
// A key's two buckets hold at most 10 copies of it with five slots, 8 with
// four, 6 to 8 in the packed layout (its top slots take only some
// fingerprints).
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
