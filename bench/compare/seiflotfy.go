package compare

import (
	"sync"

	seiflotfy "github.com/seiflotfy/cuckoofilter"
)

// seiflotfy/cuckoofilter: 8-bit fingerprints (hash%255+1), four-slot
// buckets, metro hash, up to 500 random kicks. NewFilter rounds the slot
// count up to a power of two, so it is asked for n/0.95 slots like this
// filter's four-slot layouts and ends up with 2^ceil(log2(n/0.95)) slots: for n = 2^k that is
// twice the slots, 16 bits per key at about 48% load.

func seiflotfyImpls() []Impl {
	const desc = "seiflotfy/cuckoofilter: 8-bit fingerprints, 4-slot buckets, power-of-two table"
	return []Impl{
		{Name: "seiflotfy", Desc: desc + ", unguarded", Serial: true, New: func(n int, _ *Keys) (Filter, error) {
			return &seiflotfyFilter{f: newSeiflotfy(n), slots: seiflotfySlots(n)}, nil
		}},
		{Name: "seiflotfy-mutex", Desc: desc + ", sync.Mutex", New: func(n int, _ *Keys) (Filter, error) {
			return &seiflotfyMutex{seiflotfyFilter{f: newSeiflotfy(n), slots: seiflotfySlots(n)}, sync.Mutex{}}, nil
		}},
		{Name: "seiflotfy-rwmutex", Desc: desc + ", sync.RWMutex (RLock for lookups)", New: func(n int, _ *Keys) (Filter, error) {
			return &seiflotfyRWMutex{seiflotfyFilter{f: newSeiflotfy(n), slots: seiflotfySlots(n)}, sync.RWMutex{}}, nil
		}},
	}
}

func seiflotfyCapacity(n int) uint { return uint((n*20 + 18) / 19) }

func newSeiflotfy(n int) *seiflotfy.Filter { return seiflotfy.NewFilter(seiflotfyCapacity(n)) }

// seiflotfySlots mirrors NewFilter: the next power of two of the capacity,
// at least one bucket.
func seiflotfySlots(n int) int64 {
	c, s := int64(seiflotfyCapacity(n)), int64(1)
	for s < c {
		s <<= 1
	}
	return max(s, 4)
}

type seiflotfyFilter struct {
	f     *seiflotfy.Filter
	slots int64
}

func (s *seiflotfyFilter) Insert(key []byte) error {
	if !s.f.Insert(key) {
		return errFull
	}
	return nil
}
func (s *seiflotfyFilter) Lookup(key []byte) bool { return s.f.Lookup(key) }
func (s *seiflotfyFilter) Delete(key []byte) bool { return s.f.Delete(key) }
func (s *seiflotfyFilter) TableBytes() int64      { return s.slots } // one byte per slot

// Len and Cap give the load the report prints. They read the filter
// without its lock: the runner calls them only between cells.
func (s *seiflotfyFilter) Len() int { return int(s.f.Count()) }
func (s *seiflotfyFilter) Cap() int { return int(s.slots) }

type seiflotfyMutex struct {
	seiflotfyFilter
	mu sync.Mutex // guards seiflotfyFilter.f
}

func (s *seiflotfyMutex) Insert(key []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seiflotfyFilter.Insert(key)
}

func (s *seiflotfyMutex) Lookup(key []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Lookup(key)
}

func (s *seiflotfyMutex) Delete(key []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Delete(key)
}

type seiflotfyRWMutex struct {
	seiflotfyFilter
	mu sync.RWMutex // guards seiflotfyFilter.f
}

func (s *seiflotfyRWMutex) Insert(key []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seiflotfyFilter.Insert(key)
}

func (s *seiflotfyRWMutex) Lookup(key []byte) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.f.Lookup(key)
}

func (s *seiflotfyRWMutex) Delete(key []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Delete(key)
}
