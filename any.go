package cuckoo

import (
	"bytes"
	"io"
	"strings"
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

var (
	_ AnyFilter = (*Filter)(nil)
	_ AnyFilter = (*Growing)(nil)
)

// ReadAny reads one encoded filter of either kind from r, exactly as
// ReadFrom does, and returns it, in LockFree mode, with the bytes read. Its
// errors are ReadFrom's; a stream of neither kind is reported as such.
func ReadAny(r io.Reader) (AnyFilter, int64, error) {
	var magic [len(formatMagic)]byte
	k, err := io.ReadFull(r, magic[:])
	head := magic[:k]
	whole := io.MultiReader(bytes.NewReader(head), r)
	var a AnyFilter
	switch {
	case string(head) == formatMagic || err != nil && string(head) == formatMagic[:k]:
		a = new(Filter)
	case string(head) == growFormatMagic || err != nil && string(head) == growFormatMagic[:k]:
		a = new(Growing)
	default:
		return nil, int64(k), errFormat("cuckoo: wrong magic %q: not an encoded filter (want %q for a Filter or %q for a Growing filter)", head, formatMagic, growFormatMagic)
	}
	n, err := a.ReadFrom(whole)
	if err != nil {
		return nil, n, err
	}
	return a, n, nil
}

// UnmarshalAny is ReadAny for data holding exactly one encoding, decoded as
// UnmarshalBinary does.
func UnmarshalAny(data []byte) (AnyFilter, error) {
	// A Growing magic, or a prefix of it that no Filter's magic begins with
	// (Growing's decoder then reports the truncation, as in ReadAny).
	var a AnyFilter = new(Filter)
	if strings.HasPrefix(string(data), growFormatMagic) ||
		strings.HasPrefix(growFormatMagic, string(data)) && !strings.HasPrefix(formatMagic, string(data)) {
		a = new(Growing)
	}
	if err := a.UnmarshalBinary(data); err != nil {
		if k := min(len(data), len(formatMagic)); string(data[:k]) != formatMagic[:k] && string(data[:k]) != growFormatMagic[:k] {
			return nil, errFormat("cuckoo: wrong magic %q: not an encoded filter (want %q for a Filter or %q for a Growing filter)", data[:k], formatMagic, growFormatMagic)
		}
		return nil, err
	}
	return a, nil
}
