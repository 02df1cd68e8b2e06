package compare

import (
	"fmt"

	"github.com/seed25b00da8/cuckoo"
)

// This file adapts the filter of this repository. It imports nothing but the
// filter, so it can be copied next to runner.go and probe.go into a command
// of the main module.

// CuckooImpls returns this filter in both modes at 12 and 8 fingerprint
// bits, followed by the memory probe sized to its table.
func CuckooImpls() []Impl {
	return []Impl{
		cuckooImpl("cuckoo-lockfree-f12", cuckoo.LockFree, 12),
		cuckooImpl("cuckoo-lockfree-f8", cuckoo.LockFree, 8),
		cuckooImpl("cuckoo-locked-f12", cuckoo.Locked, 12),
		cuckooImpl("cuckoo-locked-f8", cuckoo.Locked, 8),
	}
}

// ProbeImpl returns the memory probe sized to the cuckoo filter's bucket
// count for n keys.
func ProbeImpl() Impl { return NewProbe("probe", CuckooBuckets) }

// CuckooBuckets returns the number of buckets New(n) allocates: n/0.95
// slots rounded up to whole four-slot buckets (checked against Cap in the
// tests).
func CuckooBuckets(n int) int {
	slots := (n*20 + 18) / 19
	return (slots + 3) / 4
}

func cuckooImpl(name string, mode cuckoo.Mode, bits int) Impl {
	return Impl{
		Name: name,
		Desc: fmt.Sprintf("this filter, mode %v, %d-bit fingerprints, 4-slot buckets in one uint64, sized for 95%% load", mode, bits),
		New: func(n int, _ *Keys) (Filter, error) {
			f, err := cuckoo.New(n, cuckoo.WithMode(mode), cuckoo.WithFingerprintBits(bits))
			if err != nil {
				return nil, err
			}
			a := &cuckooFilter{f: f}
			// LookupBatch may not exist in every version of the filter;
			// newer versions return the number of keys looked up.
			switch b := any(f).(type) {
			case BatchFilter:
				return &cuckooBatchFilter{cuckooFilter: a, b: b}, nil
			case interface{ LookupBatch([][]byte, []bool) int }:
				return &cuckooBatchFilter{cuckooFilter: a, b: countingBatch{b}}, nil
			}
			return a, nil
		},
	}
}

type cuckooFilter struct {
	f *cuckoo.Filter
}

func (c *cuckooFilter) Insert(key []byte) error { return c.f.Insert(key) }
func (c *cuckooFilter) Lookup(key []byte) bool  { return c.f.Lookup(key) }
func (c *cuckooFilter) Delete(key []byte) bool  { return c.f.Delete(key) }

// TableBytes assumes one uint64 word per four-slot bucket, for both
// fingerprint sizes (the counter takes the rest of the word).
func (c *cuckooFilter) TableBytes() int64 { return int64(c.f.Cap()/4) * 8 }

type cuckooBatchFilter struct {
	*cuckooFilter
	b BatchFilter
}

func (c *cuckooBatchFilter) LookupBatch(keys [][]byte, found []bool) { c.b.LookupBatch(keys, found) }

// countingBatch adapts a LookupBatch that returns its count to BatchFilter.
type countingBatch struct {
	b interface{ LookupBatch([][]byte, []bool) int }
}

func (c countingBatch) LookupBatch(keys [][]byte, found []bool) { c.b.LookupBatch(keys, found) }

// InsertBatch forwards to the filter's InsertBatch, or inserts one key at a
// time for a version of the filter without it.
func (c *cuckooBatchFilter) InsertBatch(keys [][]byte) (int, error) {
	if bi, ok := any(c.f).(BatchInserter); ok {
		return bi.InsertBatch(keys)
	}
	for i, k := range keys {
		if err := c.f.Insert(k); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}

// Header returns the report header lines about this filter's build.
func Header() []string {
	return []string{fmt.Sprintf("cuckoo.RTMActive: %v", cuckoo.RTMActive())}
}
