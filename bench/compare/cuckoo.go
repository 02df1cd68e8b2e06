package compare

import (
	"github.com/seed25b00da8/cuckoo"
	"github.com/seed25b00da8/cuckoo/internal/benchimpl"
)

// This filter, the locked map and the memory probe are the main module's
// internal/benchimpl adapters, the ones `cuckoo bench` measures, named with
// a "cuckoo-" prefix here.

// CuckooImpls returns this filter in both modes with New's default layout
// (five 12-bit fingerprints per bucket), four 12-bit ones (4x12) and four
// 8-bit ones, each followed by its batch row (fills through InsertBatch,
// lookups through LookupBatch).
func CuckooImpls() []Impl {
	var out []Impl
	for _, m := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		for _, b := range []int{12, benchimpl.F12x4, 8} {
			out = append(out, benchimpl.Cuckoo("cuckoo-", m, b, false), benchimpl.Cuckoo("cuckoo-", m, b, true))
		}
	}
	return out
}

// ProbeImpl returns the memory probe sized to the cuckoo filter's bucket
// count for n keys.
func ProbeImpl() Impl { return benchimpl.Probe() }

// CuckooBuckets returns the number of buckets cuckoo.New(n) allocates.
func CuckooBuckets(n int) int { return benchimpl.Buckets(n) }

func mapImpl() Impl { return benchimpl.LockedMap() }

// Header returns the report header lines about this filter's build.
func Header() []string { return benchimpl.Header() }
