package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/seed25b00da8/cuckoo"
)

// filter is what the commands need of a filter of either file format: a
// fixed *cuckoo.Filter (build -capacity N) or a *cuckoo.Growing (build
// without -capacity).
type filter interface {
	Insert(key []byte) error
	Lookup(key []byte) bool
	Delete(key []byte) bool
	Len() int
	Cap() int
	LoadFactor() float64
	FingerprintBits() int
	Seed() uint64
	WriteTo(w io.Writer) (int64, error)
}

// growingMagic starts the growing filter format (FORMAT.md); the fixed
// format starts with "CUCKOOFL".
const growingMagic = "CUCKOOGR"

// loadFilter reads the filter file at path, in either format.
func loadFilter(path string) (filter, int64, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 64<<10)
	var f interface {
		filter
		ReadFrom(io.Reader) (int64, error)
	}
	if magic, _ := r.Peek(len(growingMagic)); string(magic) == growingMagic {
		f = new(cuckoo.Growing)
	} else {
		f = new(cuckoo.Filter)
	}
	n, err := f.ReadFrom(r)
	if err != nil {
		return nil, n, fmt.Errorf("%s: %s", path, trimPrefix(err))
	}
	// A filter file holds exactly one filter, as UnmarshalBinary requires
	// of its input: ReadFrom stops at the filter's end, so look past it.
	if _, err := r.ReadByte(); err != io.EOF {
		if err != nil {
			return nil, n, fmt.Errorf("%s: %v", path, err)
		}
		extra := "more"
		if st, err := file.Stat(); err == nil && st.Mode().IsRegular() {
			extra = fmt.Sprint(st.Size() - n)
		}
		return nil, n, fmt.Errorf("%s: %s bytes of trailing data after the %d-byte filter (a filter file must hold exactly one filter)", path, extra, n)
	}
	return f, n, nil
}
