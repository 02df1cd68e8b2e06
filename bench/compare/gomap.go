package compare

import (
	"sync"

	"github.com/cespare/xxhash/v2"
)

// A Go map of xxhash.Sum64(key) under a sync.RWMutex: exact (no false
// positives beyond 64-bit hash collisions), the usual alternative to a
// filter. Pre-sized for n keys.

func mapImpl() Impl {
	return Impl{
		Name: "map-rwmutex",
		Desc: "map[uint64]struct{} keyed by xxhash.Sum64, pre-sized for n, sync.RWMutex",
		New: func(n int, _ *Keys) (Filter, error) {
			return &mapFilter{m: make(map[uint64]struct{}, n)}, nil
		},
	}
}

type mapFilter struct {
	mu sync.RWMutex // guards m
	m  map[uint64]struct{}
}

func (m *mapFilter) Insert(key []byte) error {
	h := xxhash.Sum64(key)
	m.mu.Lock()
	m.m[h] = struct{}{}
	m.mu.Unlock()
	return nil
}

func (m *mapFilter) Lookup(key []byte) bool {
	h := xxhash.Sum64(key)
	m.mu.RLock()
	_, ok := m.m[h]
	m.mu.RUnlock()
	return ok
}

func (m *mapFilter) Delete(key []byte) bool {
	h := xxhash.Sum64(key)
	m.mu.Lock()
	_, ok := m.m[h]
	delete(m.m, h)
	m.mu.Unlock()
	return ok
}

// TableBytes is unknown for a Go map; the runner reports the heap growth.
func (m *mapFilter) TableBytes() int64 { return -1 }
