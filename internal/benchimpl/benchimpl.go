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

// Layouts. A layout value is a fingerprint size in its low byte and, above
// it, the slots per bucket, or 0 for New's choice for that size (five
// 12-bit slots, four of 8 or 15 bits). F12x4 is the four-slot 12-bit
// layout, named "4x12".
const F12x4 = 12 | 4<<8

// LayoutBits returns the fingerprint size of a layout value.
func LayoutBits(layout int) int { return layout & 0xff }

// LayoutName returns "12" for a default layout and "4x12" (slots x bits)
// for one with its slots given.
func LayoutName(layout int) string {
	if layout>>8 == 0 {
		return fmt.Sprint(layout)
	}
	return fmt.Sprintf("%dx%d", layout>>8, LayoutBits(layout))
}

// ParseLayout parses "8", "12", "15" or "4x12"; "5x12" is 12 (New's
// default layout for 12 bits).
func ParseLayout(s string) (int, bool) {
	if s == "5x12" {
		return 12, true
	}
	for _, l := range []int{8, 12, 15, F12x4} {
		if LayoutName(l) == s {
			return l, true
		}
	}
	return 0, false
}

// options returns New's options for a layout value.
func options(layout int) []cuckoo.Option {
	opts := []cuckoo.Option{cuckoo.WithFingerprintBits(LayoutBits(layout))}
	if layout>>8 != 0 {
		opts = append(opts, cuckoo.WithSlotsPerBucket(layout>>8))
	}
	return opts
}

// CuckooName returns the row name of a filter mode and layout:
// "lockfree-f12" (New's default layout for 12 bits), "locked-4x12" (four
// 12-bit slots). No layout's name is a part of another layout's, so that
// selecting rows by a part of their name (bench/compare.Select) picks the
// layout asked for (and its "-batch" row).
func CuckooName(mode cuckoo.Mode, layout int) string {
	if layout>>8 == 0 {
		return fmt.Sprintf("%v-f%d", mode, layout)
	}
	return fmt.Sprintf("%v-%s", mode, LayoutName(layout))
}

// Cuckoo returns this filter in mode with the given layout (see F12x4),
// named prefix+CuckooName(mode, layout), with "-batch" appended when batch
// is set: its fills then go through InsertBatch and its lookups through
// LookupBatch.
func Cuckoo(prefix string, mode cuckoo.Mode, layout int, batch bool) benchkit.Impl {
	name := prefix + CuckooName(mode, layout)
	// The layout New makes of these options, from a one-key filter (New
	// decides the slots a fingerprint size gets).
	var desc string
	if f, err := cuckoo.New(1, options(layout)...); err != nil {
		desc = fmt.Sprintf("this filter, %v mode, layout %s: %v", mode, LayoutName(layout), err)
	} else {
		// New sizes four-slot tables for 95% load, five-slot ones for
		// 97%, packed ones (8-bit fingerprints) for 92%.
		switch {
		case f.FingerprintBits() == 8:
			desc = fmt.Sprintf("this filter, %v mode, 8-bit fingerprints, two %d-slot buckets in one uint64, sized for 92%% load", mode, f.SlotsPerBucket())
		case f.SlotsPerBucket() == 5:
			desc = fmt.Sprintf("this filter, %v mode, %d-bit fingerprints, %d-slot buckets in one uint64, sized for 97%% load", mode, f.FingerprintBits(), f.SlotsPerBucket())
		default:
			desc = fmt.Sprintf("this filter, %v mode, %d-bit fingerprints, %d-slot buckets in one uint64, sized for 95%% load", mode, f.FingerprintBits(), f.SlotsPerBucket())
		}
	}
	if batch {
		name += "-batch"
		desc += fmt.Sprintf("; fills through InsertBatch, lookups through LookupBatch, %d keys a call", benchkit.BatchLen)
	}
	return benchkit.Impl{
		Name:  name,
		Desc:  desc,
		Batch: batch,
		New: func(n int, _ *benchkit.Keys) (benchkit.Filter, error) {
			f, err := cuckoo.New(n, append(options(layout), cuckoo.WithMode(mode), cuckoo.WithSeed(Seed))...)
			if err != nil {
				return nil, err
			}
			return Filter{f}, nil
		},
	}
}

// Filter is the filter as the runner sees it.
type Filter struct{ *cuckoo.Filter }

// TableBytes returns one uint64 word per bucket (the counter takes the
// bits the fingerprints leave), or per two buckets in the packed layout
// that New gives 8-bit fingerprints.
func (f Filter) TableBytes() int64 {
	perWord := f.SlotsPerBucket()
	if f.FingerprintBits() == 8 {
		perWord *= 2
	}
	return int64(f.Cap()/perWord) * 8
}

// Buckets returns the number of buckets cuckoo.New(n) allocates: n/0.97
// slots rounded up to whole five-slot buckets, plus 7 spare buckets
// (checked against Cap in the cuckoo command's tests).
func Buckets(n int) int {
	slots := (n*100 + 96) / 97
	return (slots+4)/5 + 7
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
