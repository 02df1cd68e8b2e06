package compare

import (
	"unsafe"

	"github.com/FastFilter/xorfilter"
	"github.com/cespare/xxhash/v2"
)

// FastFilter/xorfilter: static filters built once from uint64 keys. The
// adapters build from xxhash.Sum64 of the 16-byte keys and hash inside every
// lookup, so lookups pay for hashing like every other impl.

func xorImpls() []Impl {
	return []Impl{
		{
			Name: "xor8", Desc: "FastFilter/xorfilter Xor8 (static, 8-bit fingerprints), keys = xxhash.Sum64",
			Static: true,
			New: func(n int, keys *Keys) (Filter, error) {
				f, err := xorfilter.Populate(hashKeys(keys))
				if err != nil {
					return nil, err
				}
				return &xor8Filter{f}, nil
			},
		},
		{
			Name: "binfuse8", Desc: "FastFilter/xorfilter BinaryFuse8 (static, 8-bit fingerprints), keys = xxhash.Sum64",
			Static: true,
			New: func(n int, keys *Keys) (Filter, error) {
				f, err := xorfilter.NewBinaryFuse[uint8](hashKeys(keys))
				if err != nil {
					return nil, err
				}
				return &fuseFilter[uint8]{f}, nil
			},
		},
		{
			Name: "binfuse16", Desc: "FastFilter/xorfilter BinaryFuse[uint16] (static, 16-bit fingerprints), keys = xxhash.Sum64",
			Static: true,
			New: func(n int, keys *Keys) (Filter, error) {
				f, err := xorfilter.NewBinaryFuse[uint16](hashKeys(keys))
				if err != nil {
					return nil, err
				}
				return &fuseFilter[uint16]{f}, nil
			},
		},
	}
}

func hashKeys(keys *Keys) []uint64 {
	h := make([]uint64, keys.Len())
	for i := range h {
		h[i] = xxhash.Sum64(keys.At(i))
	}
	return h
}

type xor8Filter struct{ f *xorfilter.Xor8 }

func (x *xor8Filter) Insert(key []byte) error { return ErrUnsupported }
func (x *xor8Filter) Lookup(key []byte) bool  { return x.f.Contains(xxhash.Sum64(key)) }
func (x *xor8Filter) Delete(key []byte) bool  { return false }
func (x *xor8Filter) TableBytes() int64       { return int64(len(x.f.Fingerprints)) }

type fuseFilter[T xorfilter.Unsigned] struct{ f *xorfilter.BinaryFuse[T] }

func (x *fuseFilter[T]) Insert(key []byte) error { return ErrUnsupported }
func (x *fuseFilter[T]) Lookup(key []byte) bool  { return x.f.Contains(xxhash.Sum64(key)) }
func (x *fuseFilter[T]) Delete(key []byte) bool  { return false }
func (x *fuseFilter[T]) TableBytes() int64 {
	var t T
	return int64(len(x.f.Fingerprints)) * int64(unsafe.Sizeof(t))
}
