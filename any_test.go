package cuckoo_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

// ReadAny loads a file of either kind without knowing which it holds.
func ExampleReadAny() {
	g, _ := cuckoo.NewGrowing(1000)
	_ = g.InsertString("alice")
	var file bytes.Buffer
	if _, err := g.WriteTo(&file); err != nil {
		log.Fatal(err)
	}
	f, _, err := cuckoo.ReadAny(&file)
	if err != nil {
		log.Fatal(err)
	}
	_, growing := f.(*cuckoo.Growing)
	fmt.Println(f.LookupString("alice"), growing)
	// Output: true true
}

func ExampleUnmarshalAny() {
	f, _ := cuckoo.New(1000)
	_ = f.InsertString("alice")
	data, _ := f.MarshalBinary()
	loaded, err := cuckoo.UnmarshalAny(data)
	if err != nil {
		log.Fatal(err)
	}
	_, fixed := loaded.(*cuckoo.Filter)
	fmt.Println(loaded.LookupString("alice"), fixed)
	// Output: true true
}

// TestReadAny loads both kinds, from streams holding several encodings
// and from byte slices, and rejects what is neither with errors that
// match ErrFormat or ErrTruncated; the wrong type's loader names the
// right type.
func TestReadAny(t *testing.T) {
	f, _ := cuckoo.New(1000, cuckoo.WithSeed(1))
	g, _ := cuckoo.NewGrowing(1000, cuckoo.WithSeed(2))
	for i := 0; i < 3000; i++ {
		_ = g.InsertString(fmt.Sprint("g", i))
		if i < 900 {
			_ = f.InsertString(fmt.Sprint("f", i))
		}
	}
	var stream bytes.Buffer
	fn, _ := f.WriteTo(&stream)
	gn, _ := g.WriteTo(&stream)
	r := io.Reader(&stream)
	a, n, err := cuckoo.ReadAny(r)
	if err != nil || n != fn {
		t.Fatalf("first: %v, %d bytes; want nil, %d", err, n, fn)
	}
	b, n, err := cuckoo.ReadAny(r)
	if err != nil || n != gn {
		t.Fatalf("second: %v, %d bytes; want nil, %d", err, n, gn)
	}
	if _, ok := a.(*cuckoo.Filter); !ok || a.Len() != f.Len() || !a.LookupString("f5") {
		t.Errorf("first: %T Len %d; want the Filter", a, a.Len())
	}
	if _, ok := b.(*cuckoo.Growing); !ok || b.Len() != g.Len() || !b.LookupString("g2999") {
		t.Errorf("second: %T Len %d; want the Growing filter", b, b.Len())
	}
	fd, _ := f.MarshalBinary()
	gd, _ := g.MarshalBinary()
	if x, err := cuckoo.UnmarshalAny(gd); err != nil || x.Len() != g.Len() {
		t.Errorf("UnmarshalAny(growing): %v", err)
	}
	if x, err := cuckoo.UnmarshalAny(fd); err != nil || x.Len() != f.Len() {
		t.Errorf("UnmarshalAny(fixed): %v", err)
	}
	for _, bad := range []struct {
		name string
		data []byte
		is   error
	}{
		{"text", []byte("alice\nbob\n"), cuckoo.ErrFormat},
		{"empty", nil, cuckoo.ErrTruncated},
		{"fixed, truncated", fd[:len(fd)/2], cuckoo.ErrTruncated},
		{"growing, truncated", gd[:len(gd)/2], cuckoo.ErrTruncated},
		{"magic prefix", fd[:5], cuckoo.ErrTruncated},
		{"fixed magic but its last byte", fd[:7], cuckoo.ErrTruncated},
		{"growing magic but its last byte", gd[:7], cuckoo.ErrTruncated},
		{"growing magic", gd[:8], cuckoo.ErrTruncated},
	} {
		_, _, err1 := cuckoo.ReadAny(bytes.NewReader(bad.data))
		_, err2 := cuckoo.UnmarshalAny(bad.data)
		for _, err := range []error{err1, err2} {
			if !errors.Is(err, bad.is) {
				t.Errorf("%s: %v; want an error matching %v", bad.name, err, bad.is)
			}
		}
		if bad.name == "text" && !strings.Contains(err1.Error(), "CUCKOOGR") {
			t.Errorf("text: %v; want both magics named", err1)
		}
	}
	// Every input cut short inside a magic: both loaders give the same
	// error (a prefix both magics share is read as a Filter's, one only
	// the Growing magic has as a Growing filter's).
	for _, data := range [][]byte{fd, gd} {
		for k := range 8 {
			_, _, err1 := cuckoo.ReadAny(bytes.NewReader(data[:k]))
			_, err2 := cuckoo.UnmarshalAny(data[:k])
			if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
				t.Errorf("%q: ReadAny %v, UnmarshalAny %v; want the same error", data[:k], err1, err2)
			}
		}
	}
	if err := new(cuckoo.Filter).UnmarshalBinary(gd); !errors.Is(err, cuckoo.ErrFormat) || !strings.Contains(err.Error(), "Growing filter's encoding") {
		t.Errorf("Filter.UnmarshalBinary of a growing encoding: %v; want it to name Growing", err)
	}
	if err := new(cuckoo.Growing).UnmarshalBinary(fd); !errors.Is(err, cuckoo.ErrFormat) || !strings.Contains(err.Error(), "Filter's encoding") {
		t.Errorf("Growing.UnmarshalBinary of a fixed encoding: %v; want it to name Filter", err)
	}
}

// Code that takes an AnyFilter works with either kind.
func ExampleAnyFilter() {
	f, _ := cuckoo.New(1000)
	g, _ := cuckoo.NewGrowing(1000)
	for _, x := range []cuckoo.AnyFilter{f, g} {
		_ = x.InsertString("alice")
		fmt.Println(x.LookupString("alice"), x.Len())
	}
	// Output:
	// true 1
	// true 1
}
