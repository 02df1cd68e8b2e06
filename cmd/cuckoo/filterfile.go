package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"

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

// The magics that start the two formats (FORMAT.md).
const (
	fixedMagic   = "CUCKOOFL"
	growingMagic = "CUCKOOGR"
)

// loadFilter reads the filter file at path, or standard input for "-", in
// either format, chosen by its first 8 bytes: a file that starts with
// neither magic is rejected here, naming both; a file shorter than a magic
// goes to the decoder whose magic it starts (the fixed one when it could be
// either), which reports the truncation; every other kind of damage is the
// decoders' to report. Errors start with the file's name ("standard input"
// for "-").
//
// Beside the filter it returns the file's size in bytes and its format
// version (bytes 8-9 of either format's header).
func loadFilter(path string, stdin io.Reader) (filter, fileInfo, error) {
	if path == "-" {
		in, _ := stdin.(*os.File)
		return readFilter("standard input", stdin, in)
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, fileInfo{}, err
	}
	defer file.Close()
	return readFilter(path, file, file)
}

// readFilter reads one filter from in, which must hold nothing after it.
// name is in's name for errors; file is in when it is a file (its size
// then counts trailing data), else nil.
func readFilter(name string, in io.Reader, file *os.File) (filter, fileInfo, error) {
	left := inputSize(file) // bytes from here to the end, or -1
	r := bufio.NewReaderSize(in, 64<<10)
	var f interface {
		filter
		ReadFrom(io.Reader) (int64, error)
	}
	head, _ := r.Peek(len(growingMagic) + 2)
	magic := head[:min(len(head), len(growingMagic))]
	switch m := string(magic); {
	case strings.HasPrefix(fixedMagic, m): // also a file too short to tell
		f = new(cuckoo.Filter)
	case strings.HasPrefix(growingMagic, m):
		f = new(cuckoo.Growing)
	default:
		return nil, fileInfo{}, fmt.Errorf("%s: wrong magic %q: not a filter file (want %q, a fixed filter, or %q, a growing one)", name, m, fixedMagic, growingMagic)
	}
	// The decoder has checked the header once ReadFrom succeeds, so the
	// version peeked here is one it reads.
	version := 0
	if len(head) == len(growingMagic)+2 {
		version = int(binary.LittleEndian.Uint16(head[len(growingMagic):]))
	}
	n, err := f.ReadFrom(r)
	if err != nil {
		return nil, fileInfo{size: n}, fmt.Errorf("%s: %s", name, trimPrefix(err))
	}
	// A filter file holds exactly one filter, as UnmarshalBinary requires
	// of its input: ReadFrom stops at the filter's end, so look past it.
	if _, err := r.ReadByte(); err != io.EOF {
		if err != nil {
			return nil, fileInfo{size: n}, fmt.Errorf("%s: %v", name, err)
		}
		extra := "trailing data" // a stream: not read to its end
		if left > n {
			extra = count(left-n, "byte", "bytes") + " of trailing data"
		}
		return nil, fileInfo{size: n}, fmt.Errorf("%s: %s after the %d-byte filter (a filter file must hold exactly one filter)", name, extra, n)
	}
	return f, fileInfo{size: n, version: version}, nil
}

// fileInfo is what loadFilter learns of a filter file beside the filter.
type fileInfo struct {
	size    int64 // bytes of the filter
	version int   // format version from the header
}
