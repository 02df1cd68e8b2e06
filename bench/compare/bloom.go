package compare

import (
	"sync"

	"github.com/bits-and-blooms/bloom/v3"
)

// BloomFPR is the false-positive rate the Bloom filter is sized for: that of
// the cuckoo filter New(n) makes when it holds n keys (five 12-bit
// fingerprints per bucket at 97% load), 10·0.97/4095.
const BloomFPR = 10 * 0.97 / 4095

func bloomImpl() Impl {
	return Impl{
		Name:     "bloom-rwmutex",
		Desc:     "bits-and-blooms/bloom/v3 sized for n keys at ε = 10·0.97/4095 ≈ 0.237%, sync.RWMutex; no delete",
		NoDelete: true,
		New: func(n int, _ *Keys) (Filter, error) {
			return &bloomFilter{f: bloom.NewWithEstimates(uint(n), BloomFPR)}, nil
		},
	}
}

type bloomFilter struct {
	mu sync.RWMutex // guards f
	f  *bloom.BloomFilter
}

func (b *bloomFilter) Insert(key []byte) error {
	b.mu.Lock()
	b.f.Add(key)
	b.mu.Unlock()
	return nil
}

func (b *bloomFilter) Lookup(key []byte) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.f.Test(key)
}

// Delete is unsupported; the runner never calls it (Impl.NoDelete).
func (b *bloomFilter) Delete(key []byte) bool { return false }

func (b *bloomFilter) TableBytes() int64 { return int64((b.f.Cap()+63)/64) * 8 }
