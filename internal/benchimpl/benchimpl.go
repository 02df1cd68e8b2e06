// Package benchimpl adapts this repository's filter, the locked map people
// use instead and the memory probe to the shared benchmark runner
// (internal/benchkit), for both the cuckoo command and the comparison
// module, so that the two measure the very same structures.
package benchimpl

import (
	"fmt"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/seed25b00da8/cuckoo"
	"github.com/seed25b00da8/cuckoo/internal/benchkit"
)

// CuckooName returns the row name of a filter mode: "lockfree-f12".
func CuckooName(mode cuckoo.Mode, bits int) string { return fmt.Sprintf("%v-f%d", mode, bits) }

// Cuckoo returns this filter in mode with bits-bit fingerprints, named
// prefix+CuckooName(mode, bits), with "-batch" appended when batch is set:
// its fills then go through InsertBatch and its lookups through
// LookupBatch.
func Cuckoo(prefix string, mode cuckoo.Mode, bits int, batch bool) benchkit.Impl {
	name := prefix + CuckooName(mode, bits)
	desc := fmt.Sprintf("this filter, %v mode, %d-bit fingerprints, 4-slot buckets in one uint64, sized for 95%% load", mode, bits)
	if batch {
		name += "-batch"
		desc += fmt.Sprintf("; fills through InsertBatch, lookups through LookupBatch, %d keys a call", benchkit.BatchLen)
	}
	return benchkit.Impl{
		Name:  name,
		Desc:  desc,
		Batch: batch,
		New: func(n int, _ *benchkit.Keys) (benchkit.Filter, error) {
			f, err := cuckoo.New(n, cuckoo.WithMode(mode), cuckoo.WithFingerprintBits(bits), cuckoo.WithSeed(Seed))
			if err != nil {
				return nil, err
			}
			return Filter{f}, nil
		},
	}
}

// Filter is the filter as the runner sees it.
type Filter struct{ *cuckoo.Filter }

// TableBytes returns one uint64 word per four-slot bucket, for both
// fingerprint sizes (the counter takes the rest of the word).
func (f Filter) TableBytes() int64 { return int64(f.Cap()/4) * 8 }

// Buckets returns the number of buckets cuckoo.New(n) allocates: n/0.95
// slots rounded up to whole four-slot buckets (checked against Cap in the
// tests).
func Buckets(n int) int {
	slots := (n*20 + 18) / 19
	return (slots + 3) / 4
}

// Probe returns the memory probe sized to the filter's bucket count.
func Probe() benchkit.Impl { return benchkit.NewProbe("probe", Buckets) }

// LockedMap returns the exact set people use instead of a filter.
func LockedMap() benchkit.Impl {
	return benchkit.Impl{
		Name: "map-rwmutex",
		Desc: "exact set for comparison: map[uint64]struct{} keyed by xxhash.Sum64(key), pre-sized for n, under a sync.RWMutex",
		New: func(n int, _ *benchkit.Keys) (benchkit.Filter, error) {
			return &lockedMap{m: make(map[uint64]struct{}, n)}, nil
		},
	}
}

type lockedMap struct {
	mu sync.RWMutex // guards m
	m  map[uint64]struct{}
}

func (m *lockedMap) Insert(key []byte) error {
	h := xxhash.Sum64(key)
	m.mu.Lock()
	m.m[h] = struct{}{}
	m.mu.Unlock()
	return nil
}

func (m *lockedMap) Lookup(key []byte) bool {
	h := xxhash.Sum64(key)
	m.mu.RLock()
	_, ok := m.m[h]
	m.mu.RUnlock()
	return ok
}

func (m *lockedMap) Delete(key []byte) bool {
	h := xxhash.Sum64(key)
	m.mu.Lock()
	_, ok := m.m[h]
	delete(m.m, h)
	m.mu.Unlock()
	return ok
}

// Header returns the report header lines about this filter's build.
func Header() []string {
	return []string{fmt.Sprintf("rtm elision: %v (cuckoo.RTMActive)", cuckoo.RTMActive())}
}

// Seed is the hash seed of every benchmarked filter. A fixed seed makes the
// cells reproducible (the same false positives in every run and in both
// tools); a nonzero one pays the seed mixing that every filter made with
// the default, random seed pays.
const Seed = 0x5eed
