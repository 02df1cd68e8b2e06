package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

// lenReader is a reader whose Len reports len, whatever it holds.
type lenReader struct {
	r   *bytes.Reader
	len int
}

func (l *lenReader) Read(p []byte) (int, error) { return l.r.Read(p) }
func (l *lenReader) Len() int                   { return l.len }

// TestReadFromLyingLen checks that ReadFrom does not trust a reader's Len:
// a header-only stream whose reader claims a terabyte, or -1, costs no more
// than the bytes that arrived justify; a full stream whose reader claims too
// little, or too much, decodes all the same.
func TestReadFromLyingLen(t *testing.T) {
	valid := encValid(t, 12)
	const m = 1 << 27 // a 1 GiB table
	hdr := bytes.Clone(valid[:formatHeaderSize])
	binary.LittleEndian.PutUint64(hdr[16:], m)
	for _, claim := range []int{min(1<<40, math.MaxInt), -1, math.MaxInt, 8 * m, 8*m + formatTrailerSize} {
		t.Run(fmt.Sprintf("header-only/len=%d", claim), func(t *testing.T) {
			var g Filter
			var err error
			got := encAlloc(func() { _, err = g.ReadFrom(&lenReader{bytes.NewReader(hdr), claim}) })
			if !errors.Is(err, ErrTruncated) {
				t.Fatalf("ReadFrom error %v; want truncated data", err)
			}
			if limit := uint64(256 << 10); got > limit {
				t.Fatalf("ReadFrom allocated %d bytes for a %d-byte stream; want at most %d", got, len(hdr), limit)
			}
		})
	}
	for _, claim := range []int{0, 1, -1, 7, len(valid) - 1, len(valid), len(valid) + 1, min(1<<40, math.MaxInt)} {
		t.Run(fmt.Sprintf("full/len=%d", claim), func(t *testing.T) {
			var g Filter
			n, err := g.ReadFrom(&lenReader{bytes.NewReader(valid), claim})
			if err != nil || n != int64(len(valid)) {
				t.Fatalf("ReadFrom = %d, %v; want %d, nil", n, err, len(valid))
			}
			back, err := g.MarshalBinary()
			if err != nil || !bytes.Equal(back, valid) {
				t.Fatalf("decoded filter re-encodes differently (err %v)", err)
			}
		})
	}
}

// TestReadFromInMemoryOneAllocation checks that the in-memory readers of the
// standard library, whose Len is trusted, get the table in one allocation:
// no more than the encoding's size plus the 16 KiB buffer.
func TestReadFromInMemoryOneAllocation(t *testing.T) {
	f := NewTestFilter(t, 200_000, LockFree, 12, 0)
	encFill(t, f, "k", 150_000)
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		r    func() io.Reader
	}{
		{"bytes.Reader", func() io.Reader { return bytes.NewReader(data) }},
		{"strings.Reader", func() io.Reader { return strings.NewReader(string(data)) }},
		{"bytes.Buffer", func() io.Reader { return bytes.NewBuffer(data) }},
	} {
		t.Run("reader="+tc.name, func(t *testing.T) {
			r := tc.r()
			var g Filter
			got := encAlloc(func() { _, err = g.ReadFrom(r) })
			if err != nil {
				t.Fatal(err)
			}
			if limit := uint64(len(data) + 32<<10); got > limit {
				t.Fatalf("ReadFrom allocated %d bytes for a %d-byte encoding; want at most %d", got, len(data), limit)
			}
		})
	}
}
