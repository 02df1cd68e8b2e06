package cuckoo

import (
	"fmt"
	"math"
)

// precisionLayouts, least memory per slot first, then least precise (the
// widest counter), are WithFalsePositiveRate's choices.
var precisionLayouts = [...]struct{ bits, slots int }{{8, 4}, {12, 5}, {12, 4}, {15, 4}}

// WithFalsePositiveRate makes New choose the layout with the least memory whose
// expected false-positive rate, at the load New sizes it for, is at most p (the
// thresholds: README.md, "Choosing a layout"). A measured rate scatters around
// the expected one (N probes of a rate r count r·N ± sqrt(r·N)): give p with
// the margin a check needs. New returns an error for a smaller p, for p outside
// (0, 1), and with WithFingerprintBits or WithSlotsPerBucket; NewGrowing
// rejects the option. FingerprintBits and SlotsPerBucket report the choice.
func WithFalsePositiveRate(p float64) Option {
	return func(c *config) { c.fpr, c.fprSet = p, true }
}

// layoutFor returns the choice for p, or an error naming the rates there are.
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

// layoutFalsePositiveRate returns 2·slots·α/(2^bits-1), the expected rate
// at the load α New sizes the layout for.
func layoutFalsePositiveRate(bits, slots int) float64 {
	num, den := targetLoad(slots)
	if bits == 8 {
		num, den = packedLoadNum, packedLoadDen
	}
	return 2 * float64(slots) * (float64(num) / float64(den)) / float64(uint64(1)<<bits-1)
}
