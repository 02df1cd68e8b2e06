package cuckoo

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestDecodeErrorClasses checks that every malformed input of encBadInputs
// gives an error matching exactly its class with errors.Is, through both
// decoders, and keeps its own message.
func TestDecodeErrorClasses(t *testing.T) {
	class := map[string]error{
		"empty": ErrTruncated, "magic only": ErrTruncated, "header cut": ErrTruncated,
		"header only": ErrTruncated, "table cut": ErrTruncated, "trailer cut": ErrTruncated,
		"buckets 2^31 in 100 bytes": ErrTruncated, "buckets +1": ErrTruncated,
		"version 1 with the packed layout": ErrTruncated, "packed buckets +2": ErrTruncated,

		"wrong magic": ErrFormat, "text": ErrFormat, "short wrong magic": ErrFormat,
		"version 0": ErrFormat, "version 2 with a version 1 layout": ErrFormat, "version 4": ErrFormat, "version 257": ErrFormat,
		"version 3 with a version 1 layout": ErrFormat, "packed odd buckets": ErrFormat,
		"packed buckets 0": ErrFormat, "packed buckets 2^32+2": ErrFormat,
		"5 slots of 8 bits": ErrFormat, "5 slots in version 1": ErrFormat,
		"bits 16": ErrFormat, "bits 0": ErrFormat, "slots 8": ErrFormat,
		"hash 0": ErrFormat, "hash 3": ErrFormat, "hash 2 seed 0": ErrFormat, "reserved": ErrFormat,
		"buckets 0": ErrFormat, "buckets 2^31+1": ErrFormat, "buckets 2^40": ErrFormat,
		"buckets 2^64-1": ErrFormat, "trailing byte": ErrFormat,

		"checksum": ErrCorrupt, "table bit flip": ErrCorrupt, "seed changed": ErrCorrupt,
		"slot out of range": ErrCorrupt, "tag bits": ErrCorrupt, "count high": ErrCorrupt,
		"count low": ErrCorrupt, "count huge": ErrCorrupt,
		"packed tag bit 62": ErrCorrupt, "packed tag bit 63": ErrCorrupt, "packed count high": ErrCorrupt,
		// One bucket fewer than stored: ReadFrom finds the checksum
		// inside the stored trailer (damaged); UnmarshalBinary sees 8
		// bytes after the filter first (see below).
		"buckets -1": ErrCorrupt,
	}
	classes := []error{ErrTruncated, ErrFormat, ErrCorrupt}
	for _, tc := range encBadInputs(t) {
		want, ok := class[tc.name]
		if !ok {
			t.Errorf("input %q has no expected class in this test", tc.name)
			continue
		}
		for _, via := range []string{"unmarshal", "readfrom"} {
			if via == "readfrom" && tc.name == "trailing byte" {
				continue // ReadFrom stops at the end of the filter
			}
			want := want
			if via == "unmarshal" && tc.name == "buckets -1" {
				want = ErrFormat
			}
			var g Filter
			var err error
			if via == "unmarshal" {
				err = g.UnmarshalBinary(tc.data)
			} else {
				_, err = g.ReadFrom(bytes.NewReader(tc.data))
			}
			if err == nil {
				t.Errorf("input=%s/via=%s: no error", tc.name, via)
				continue
			}
			for _, c := range classes {
				if got := errors.Is(err, c); got != (c == want) {
					t.Errorf("input=%s/via=%s: errors.Is(%q, %v) = %v; want %v", tc.name, via, err, c, got, c == want)
				}
			}
			if !strings.HasPrefix(err.Error(), "cuckoo: ") || strings.Contains(err.Error(), want.Error()) && want != ErrTruncated {
				t.Errorf("input=%s/via=%s: message %q; want its own, with the prefix", tc.name, via, err)
			}
			if (want == ErrTruncated) != errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("input=%s/via=%s: errors.Is(%q, io.ErrUnexpectedEOF) = %v; want %v", tc.name, via, err, !(want == ErrTruncated), want == ErrTruncated)
			}
		}
	}
}

// TestDecodeReaderErrorNotClassified checks that an error of the reader is
// wrapped as it is, not reported as a decoding error class.
func TestDecodeReaderErrorNotClassified(t *testing.T) {
	boom := errors.New("disk on fire")
	var g Filter
	_, err := g.ReadFrom(io.MultiReader(bytes.NewReader(encValid(t, 12)[:40]), &encErrReader{boom}))
	if !errors.Is(err, boom) {
		t.Fatalf("ReadFrom error %v; want it to wrap the reader's error", err)
	}
	for _, c := range []error{ErrTruncated, ErrFormat, ErrCorrupt} {
		if errors.Is(err, c) {
			t.Fatalf("ReadFrom error %v matches %v; want no decoding class", err, c)
		}
	}
}

type encErrReader struct{ err error }

func (r *encErrReader) Read([]byte) (int, error) { return 0, r.err }

// TestZeroFilterErrors checks that the methods that need a table say that a
// zero Filter was not made with New, rather than that it is full.
func TestZeroFilterErrors(t *testing.T) {
	var f Filter
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrZeroFilter) || errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "not made with New") {
			t.Errorf("%s on a zero Filter: got %v; want ErrZeroFilter", what, err)
		}
	}
	check("Insert", f.Insert([]byte("k")))
	n, err := f.InsertBatch([][]byte{[]byte("k")})
	if n != 0 {
		t.Errorf("InsertBatch on a zero Filter inserted %d", n)
	}
	check("InsertBatch", err)
	_, err = f.MarshalBinary()
	check("MarshalBinary", err)
	_, err = f.WriteTo(io.Discard)
	check("WriteTo", err)
}
