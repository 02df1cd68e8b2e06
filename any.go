package cuckoo

import (
	"bytes"
	"io"
)

// AnyFilter is the method set *Filter and *Growing share, for a filter
// loaded without knowing its kind (ReadAny, UnmarshalAny); each method is
// documented on the types. Type-assert for the rest (Stats, Clone, ...).
type AnyFilter interface {
	Insert(key []byte) error
	InsertString(key string) error
	InsertHash(h uint64) error
	InsertUnique(key []byte) (inserted bool, err error)
	InsertUniqueString(key string) (inserted bool, err error)
	InsertUniqueHash(h uint64) (inserted bool, err error)
	InsertBatch(keys [][]byte) (n int, err error)
	InsertBatchString(keys []string) (n int, err error)
	InsertBatchHash(hs []uint64) (n int, err error)
	Lookup(key []byte) bool
	LookupString(key string) bool
	LookupHash(h uint64) bool
	LookupBatch(keys [][]byte, found []bool) (n int)
	LookupBatchString(keys []string, found []bool) (n int)
	LookupBatchHash(hs []uint64, found []bool) (n int)
	Delete(key []byte) bool
	DeleteString(key string) bool
	DeleteHash(h uint64) bool
	Count(key []byte) int
	CountString(key string) int
	CountHash(h uint64) int
	Len() int
	Cap() int
	LoadFactor() float64
	Mode() Mode
	FingerprintBits() int
	Seed() uint64
	Reset()
	MarshalBinary() ([]byte, error)
	UnmarshalBinary(data []byte) error
	WriteTo(w io.Writer) (int64, error)
	ReadFrom(r io.Reader) (int64, error)
}

// ReadAny reads one encoded filter of either kind from r, exactly as
// ReadFrom does, and returns it, in LockFree mode, with the bytes read. Its
// errors are ReadFrom's; a stream of neither kind is reported as such.
func ReadAny(r io.Reader) (AnyFilter, int64, error) {
	var magic [len(formatMagic)]byte
	k, _ := io.ReadFull(r, magic[:])
	n := int64(k)
	a, err := loadAny(magic[:k], func(a AnyFilter) (err error) {
		n, err = a.ReadFrom(io.MultiReader(bytes.NewReader(magic[:k]), r))
		return err
	})
	return a, n, err
}

// UnmarshalAny is ReadAny for data holding exactly one encoding.
func UnmarshalAny(data []byte) (AnyFilter, error) {
	return loadAny(data[:min(len(data), len(formatMagic))], func(a AnyFilter) error { return a.UnmarshalBinary(data) })
}

// loadAny loads a zero filter of the kind whose magic begins with head (a
// Filter for a prefix both share) and returns it, or nil and an error.
func loadAny(head []byte, load func(AnyFilter) error) (AnyFilter, error) {
	var a AnyFilter
	switch string(head) {
	case formatMagic[:len(head)]:
		a = new(Filter)
	case growFormatMagic[:len(head)]:
		a = new(Growing)
	default:
		return nil, errFormat("cuckoo: wrong magic %q: not an encoded filter (want %q for a Filter or %q for a Growing filter)", head, formatMagic, growFormatMagic)
	}
	if err := load(a); err != nil {
		return nil, err
	}
	return a, nil
}
