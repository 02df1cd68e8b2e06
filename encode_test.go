package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// updateGolden regenerates testdata/golden-f12-seed42.cuckoo and the fuzz
// seed corpus: go test -run 'TestEncodeGolden|TestEncodeFuzzCorpus' -update
var updateGolden = flag.Bool("update", false, "rewrite the golden encoding and fuzz seed corpus under testdata/")

var encModes = []Mode{LockFree, Locked}

func encKey(buf []byte, prefix string, i int) []byte {
	return strconv.AppendInt(append(buf[:0], prefix...), int64(i), 10)
}

// encFill inserts prefix0, prefix1, ... until n keys are in or the filter is
// full, and returns how many went in.
func encFill(tb testing.TB, f *Filter, prefix string, n int) int {
	tb.Helper()
	var buf []byte
	for i := 0; i < n; i++ {
		buf = encKey(buf, prefix, i)
		if err := f.Insert(buf); err != nil {
			if errors.Is(err, ErrFull) {
				return i
			}
			tb.Fatalf("Insert(%q): %v", buf, err)
		}
	}
	return n
}

// encCheckKeys fails unless g finds prefix0 .. prefix(n-1).
func encCheckKeys(tb testing.TB, g *Filter, prefix string, n int) {
	tb.Helper()
	var buf []byte
	missing := 0
	for i := 0; i < n; i++ {
		buf = encKey(buf, prefix, i)
		if !g.Lookup(buf) {
			if missing < 5 {
				tb.Errorf("Lookup(%q) = false; want true", buf)
			}
			missing++
		}
	}
	if missing > 0 {
		tb.Fatalf("%d of %d keys missing", missing, n)
	}
}

// encWords returns the table's slot bits (counters and tags cleared).
func encWords(f *Filter) []uint64 {
	out := make([]uint64, len(f.t.words))
	for i := range out {
		out[i] = f.t.load(uint64(i)) & f.lay.fpMask
	}
	return out
}

func encRoundTrip(t *testing.T, via string, f, g *Filter) {
	t.Helper()
	switch via {
	case "marshal":
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary: %v", err)
		}
		if got, want := uint64(len(data)), encodedSize(uint64(len(f.t.words))); got != want {
			t.Fatalf("len(MarshalBinary()) = %d; want %d", got, want)
		}
		if err := g.UnmarshalBinary(data); err != nil {
			t.Fatalf("UnmarshalBinary: %v", err)
		}
	case "stream":
		var buf bytes.Buffer
		n, err := f.WriteTo(&buf)
		if err != nil {
			t.Fatalf("WriteTo: %v", err)
		}
		if want := encodedSize(uint64(len(f.t.words))); n != int64(buf.Len()) || uint64(n) != want {
			t.Fatalf("WriteTo = %d with %d bytes written; want %d", n, buf.Len(), want)
		}
		buf.WriteString("trailing bytes are not read")
		total := buf.Len()
		m, err := g.ReadFrom(&buf)
		if err != nil {
			t.Fatalf("ReadFrom: %v", err)
		}
		if m != n || total-buf.Len() != int(n) {
			t.Fatalf("ReadFrom = %d having consumed %d bytes; want %d", m, total-buf.Len(), n)
		}
	default:
		t.Fatalf("unknown via %q", via)
	}
}

// TestEncodeRoundTrip encodes empty and full filters of every layout, the
// one-word 8-bit layout that version-1 files hold included, and decodes
// them into a zero Filter and into an existing one: same layout, table,
// keys and answers.
func TestEncodeRoundTrip(t *testing.T) {
	capacity := Sized(5000, 20000, 20000)
	if raceEnabled {
		capacity = Sized(2000, 2000, 20000)
	}
	for _, mode := range encModes {
		for _, fbits := range []int{8, bits8OneWord, 12, 15, Bits12x5} {
			for _, fill := range []string{"empty", "full"} {
				for _, via := range []string{"marshal", "stream"} {
					name := fmt.Sprintf("mode=%v/bits=%s/fill=%s/via=%s", mode, layoutName(fbits), fill, via)
					t.Run(name, func(t *testing.T) {
						f := NewTestFilter(t, capacity, mode, fbits, 0x5eed+uint64(fbits))
						n := 0
						if fill == "full" {
							n = encFill(t, f, "key-", 2*capacity) // until ErrFull
							if n < capacity {
								t.Fatalf("filled %d keys; want at least %d", n, capacity)
							}
						}
						// A zero Filter becomes LockFree; an existing one keeps its mode.
						var zero Filter
						encRoundTrip(t, via, f, &zero)
						if zero.Mode() != LockFree {
							t.Fatalf("zero Filter loaded: Mode() = %v; want %v", zero.Mode(), LockFree)
						}
						existing := NewTestFilter(t, 10, mode, 8, 1)
						encFill(t, existing, "old-", 10)
						encRoundTrip(t, via, f, existing)
						if existing.Mode() != mode {
							t.Fatalf("existing filter loaded: Mode() = %v; want %v", existing.Mode(), mode)
						}
						for _, g := range []*Filter{&zero, existing} {
							if g.FingerprintBits() != LayoutBits(fbits) || g.SlotsPerBucket() != LayoutSlots(fbits) || g.Seed() != f.Seed() || g.Cap() != f.Cap() {
								t.Fatalf("bits, slots, seed, cap = %d, %d, %d, %d; want %d, %d, %d, %d",
									g.FingerprintBits(), g.SlotsPerBucket(), g.Seed(), g.Cap(), LayoutBits(fbits), LayoutSlots(fbits), f.Seed(), f.Cap())
							}
							if g.lay != f.lay || g.m != f.m || len(g.t.words) != len(f.t.words) {
								t.Fatalf("decoded layout %+v, %d buckets in %d words; want %+v, %d in %d",
									g.lay, g.m, len(g.t.words), f.lay, f.m, len(f.t.words))
							}
							if g.Len() != n || f.Len() != n {
								t.Fatalf("Len() = %d (original %d); want %d", g.Len(), f.Len(), n)
							}
							if !equalUint64s(encWords(g), encWords(f)) {
								t.Fatal("decoded table differs from the original")
							}
							encCheckKeys(t, g, "key-", n)
							// Negative probes answer exactly as the original
							// (false positives included).
							probes := 100000
							if n == 0 {
								probes = 1000
							}
							var buf []byte
							for i := 0; i < probes; i++ {
								buf = encKey(buf, "absent-", i)
								if got, want := g.Lookup(buf), f.Lookup(buf); got != want {
									t.Fatalf("Lookup(%q) = %v; original says %v", buf, got, want)
								}
							}
							// The loaded filter works: delete and insert.
							if n > 0 {
								k := encKey(nil, "key-", 0)
								if !g.Delete(k) || g.Len() != n-1 {
									t.Fatalf("Delete after load: Len() = %d; want %d", g.Len(), n-1)
								}
							} else if err := g.Insert([]byte("x")); err != nil || g.Len() != 1 {
								t.Fatalf("Insert after load: %v, Len() = %d; want nil, 1", err, g.Len())
							}
						}
					})
				}
			}
		}
	}
}

func equalUint64s(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestEncodeClearsCounters checks that migration counters (runtime state) are
// not stored: a filter that relocated fingerprints encodes with slot bits
// only, and decodes with counters at zero.
func TestEncodeClearsCounters(t *testing.T) {
	f := NewTestFilter(t, 5000, LockFree, 12, 7)
	n := encFill(t, f, "key-", 10000)
	moved := false
	for i := uint64(0); i < f.m; i++ {
		if f.lay.counter(f.t.load(i)) != 0 {
			moved = true
		}
	}
	if !moved {
		t.Fatal("no migration counter is set after filling: the test proves nothing")
	}
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < f.m; i++ {
		w := binary.LittleEndian.Uint64(data[formatHeaderSize+8*i:])
		if w&^f.lay.fpMask != 0 {
			t.Fatalf("bucket %d stored as %#x: bits outside the slots", i, w)
		}
	}
	var g Filter
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < g.m; i++ {
		if c := g.lay.counter(g.t.load(i)); c != 0 {
			t.Fatalf("decoded bucket %d has counter %d; want 0", i, c)
		}
	}
	encCheckKeys(t, &g, "key-", n)
}

func TestEncodeZeroFilter(t *testing.T) {
	var f Filter
	if _, err := f.MarshalBinary(); err == nil || !strings.HasPrefix(err.Error(), "cuckoo: ") {
		t.Fatalf("MarshalBinary of a zero Filter: err = %v; want a cuckoo: error", err)
	}
	var buf bytes.Buffer
	if n, err := f.WriteTo(&buf); err == nil || n != 0 || buf.Len() != 0 {
		t.Fatalf("WriteTo of a zero Filter = %d, %v; want 0 and an error", n, err)
	}
}

// encFailWriter accepts limit bytes, then fails (or, short, stops short
// without an error).
type encFailWriter struct {
	limit int
	n     int
	short bool
}

var errEncWriter = errors.New("disk on fire")

func (w *encFailWriter) Write(p []byte) (int, error) {
	if w.n+len(p) <= w.limit {
		w.n += len(p)
		return len(p), nil
	}
	k := w.limit - w.n
	w.n = w.limit
	if w.short {
		return k, nil
	}
	return k, errEncWriter
}

func TestEncodeWriteErrors(t *testing.T) {
	f := NewTestFilter(t, 20000, LockFree, 12, 0)
	encFill(t, f, "key-", 20000)
	size := int(encodedSize(uint64(len(f.t.words))))
	for _, short := range []bool{false, true} {
		for _, limit := range []int{0, 10, encodeChunk, encodeChunk + 3, size - 1} {
			t.Run(fmt.Sprintf("short=%v/limit=%d", short, limit), func(t *testing.T) {
				w := &encFailWriter{limit: limit, short: short}
				n, err := f.WriteTo(w)
				if err == nil || !strings.HasPrefix(err.Error(), "cuckoo: writing filter: ") {
					t.Fatalf("WriteTo error = %v; want a cuckoo: writing filter: error", err)
				}
				want := errEncWriter
				if short {
					want = io.ErrShortWrite
				}
				if !errors.Is(err, want) {
					t.Fatalf("WriteTo error = %v; want it to wrap %v", err, want)
				}
				if n != int64(limit) {
					t.Fatalf("WriteTo = %d; want the %d bytes the writer took", n, limit)
				}
			})
		}
	}
	// The gate is released after a failed write: relocations still work.
	if f.gate.snapshots.Load() != 0 {
		t.Fatal("snapshot gate still closed after a failed WriteTo")
	}
}

// TestEncodeReadFromConcatenated reads two filters from one stream.
func TestEncodeReadFromConcatenated(t *testing.T) {
	a := NewTestFilter(t, 1000, LockFree, 8, 1)
	b := NewTestFilter(t, 3000, LockFree, 12, 2)
	encFill(t, a, "a-", 500)
	encFill(t, b, "b-", 2500)
	var buf bytes.Buffer
	na, _ := a.WriteTo(&buf)
	nb, _ := b.WriteTo(&buf)
	var ga, gb Filter
	if n, err := ga.ReadFrom(&buf); err != nil || n != na {
		t.Fatalf("first ReadFrom = %d, %v; want %d, nil", n, err, na)
	}
	if n, err := gb.ReadFrom(&buf); err != nil || n != nb {
		t.Fatalf("second ReadFrom = %d, %v; want %d, nil", n, err, nb)
	}
	encCheckKeys(t, &ga, "a-", 500)
	encCheckKeys(t, &gb, "b-", 2500)
	if ga.Len() != 500 || gb.Len() != 2500 {
		t.Fatalf("Len() = %d, %d; want 500, 2500", ga.Len(), gb.Len())
	}
}

// encReader hands out its data in pieces of at most step bytes, then
// returns err (io.EOF if nil).
type encReader struct {
	data []byte
	step int
	err  error
}

func (r *encReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.step)], r.data)
	r.data = r.data[k:]
	return k, nil
}

// TestEncodeReadFromSmallReads feeds ReadFrom one byte (or a few) per Read,
// across the growth of its table.
func TestEncodeReadFromSmallReads(t *testing.T) {
	f := NewTestFilter(t, 100000, LockFree, 12, 3) // more buckets than decodeInitialWords
	n := encFill(t, f, "key-", 100000)
	data, _ := f.MarshalBinary()
	for _, step := range []int{1, 7, 4096, 1 << 20} {
		var g Filter
		got, err := g.ReadFrom(&encReader{data: data, step: step})
		if err != nil || got != int64(len(data)) {
			t.Fatalf("step=%d: ReadFrom = %d, %v; want %d, nil", step, got, err, len(data))
		}
		if g.Len() != n || !equalUint64s(encWords(&g), encWords(f)) {
			t.Fatalf("step=%d: decoded filter differs", step)
		}
	}
	// A reader error other than EOF is wrapped.
	errBoom := errors.New("boom")
	var g Filter
	_, err := g.ReadFrom(&encReader{data: data[:100], step: 50, err: errBoom})
	if !errors.Is(err, errBoom) || !strings.HasPrefix(err.Error(), "cuckoo: reading filter: ") {
		t.Fatalf("ReadFrom error = %v; want a cuckoo: error wrapping %v", err, errBoom)
	}
}

// encReseal recomputes the checksum of an encoding after a test edited it,
// so that the decoder gets past the checksum to the check under test.
func encReseal(data []byte) []byte {
	if len(data) < 8 {
		return data
	}
	body := data[:len(data)-8]
	binary.LittleEndian.PutUint64(data[len(data)-8:], xxhash.Sum64(body))
	return data
}

// encValid returns the encoding of a small filter with a few keys.
func encValid(tb testing.TB, fbits int) []byte {
	tb.Helper()
	f := NewTestFilter(tb, 100, LockFree, fbits, 9)
	encFill(tb, f, "v-", 50)
	data, err := f.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// encBadInputs lists malformed encodings, each with the text its error must
// contain.
func encBadInputs(tb testing.TB) []struct {
	name, want string
	data       []byte
} {
	valid := encValid(tb, 12)
	edit := func(fn func(d []byte) []byte) []byte {
		return fn(bytes.Clone(valid))
	}
	packed := encValid(tb, 8) // version 3: m buckets in m/2 words
	editPacked := func(fn func(d []byte) []byte) []byte {
		return fn(bytes.Clone(packed))
	}
	packedM := binary.LittleEndian.Uint64(packed[16:])
	put64 := func(off int, v uint64) func(d []byte) []byte {
		return func(d []byte) []byte {
			binary.LittleEndian.PutUint64(d[off:], v)
			return encReseal(d)
		}
	}
	set := func(off int, v byte) func(d []byte) []byte {
		return func(d []byte) []byte {
			d[off] = v
			return encReseal(d)
		}
	}
	hugeHeader := func(m uint64, total int) []byte {
		d := bytes.Clone(valid[:formatHeaderSize])
		binary.LittleEndian.PutUint64(d[16:], m)
		return append(d, make([]byte, total-len(d))...)
	}
	table := formatHeaderSize
	countOff := len(valid) - 16
	return []struct {
		name, want string
		data       []byte
	}{
		{"empty", "cuckoo: truncated data", nil},
		{"magic only", "cuckoo: truncated data", valid[:8]},
		{"header cut", "cuckoo: truncated data", valid[:20]},
		{"header only", "cuckoo: truncated data", valid[:formatHeaderSize]},
		{"table cut", "cuckoo: truncated data", valid[:formatHeaderSize+100]},
		{"trailer cut", "cuckoo: truncated data", valid[:len(valid)-1]},
		{"wrong magic", "cuckoo: wrong magic", edit(set(0, 'X'))},
		{"text", "cuckoo: wrong magic", []byte("key-1\nkey-2\n")},
		{"short wrong magic", "cuckoo: wrong magic", []byte("CUCK0")},
		{"version 0", "cuckoo: unknown format version 0", edit(set(8, 0))},
		{"version 2 with a version 1 layout", "cuckoo: impossible parameters: format version 2 with 12-bit fingerprints and 4 slots per bucket (written as version 1)", edit(set(8, 2))},
		{"version 4", "cuckoo: unknown format version 4 (this package reads versions 1 to 3)", edit(set(8, 4))},
		{"version 3 with a version 1 layout", "cuckoo: impossible parameters: format version 3 (the packed layout) with 12-bit fingerprints and 4 slots per bucket (want 8 and 4)", edit(set(8, 3))},
		{"version 1 with the packed layout", "cuckoo: truncated data", editPacked(set(8, 1))}, // m one-bucket words: twice the table there is
		{"packed odd buckets", fmt.Sprintf("cuckoo: impossible parameters: bucket count %d (want an even number from 2 to", packedM-1), editPacked(put64(16, packedM-1))},
		{"packed buckets 0", "cuckoo: impossible parameters: bucket count 0 (want an even number", editPacked(put64(16, 0))},
		{"packed buckets 2^32+2", "cuckoo: impossible parameters: bucket count 4294967298 (want an even number from 2 to 4294967296)", editPacked(put64(16, 1<<32+2))},
		{"packed buckets +2", "cuckoo: truncated data", editPacked(put64(16, packedM+2))},
		{"packed tag bit 62", "cuckoo: word 1 holds 0x4000000000000000: bits 62-63 must be zero in the packed layout", editPacked(put64(table+8, 1<<62))},
		{"packed tag bit 63", "cuckoo: word 0 holds 0x8000000000000000: bits 62-63 must be zero in the packed layout", editPacked(put64(table, 1<<63))},
		{"packed count high", "cuckoo: item count mismatch: the trailer says 51, the table holds 50", editPacked(put64(len(packed)-16, 51))},
		{"5 slots of 8 bits", "cuckoo: impossible parameters: 5 slots per bucket with 8-bit fingerprints", edit(func(d []byte) []byte { d[10] = 8; return set(11, 5)(d) })},
		{"5 slots in version 1", "cuckoo: impossible parameters: format version 1 with 12-bit fingerprints and 5 slots per bucket (written as version 2)", edit(set(11, 5))},
		{"version 257", "cuckoo: unknown format version 257", edit(set(9, 1))},
		{"bits 16", "cuckoo: impossible parameters: fingerprint bits 16", edit(set(10, 16))},
		{"bits 0", "cuckoo: impossible parameters: fingerprint bits 0", edit(set(10, 0))},
		{"slots 8", "cuckoo: impossible parameters: 8 slots per bucket", edit(set(11, 8))},
		{"hash 0", "cuckoo: unknown hash algorithm id 0", edit(set(12, 0))},
		{"hash 3", "cuckoo: unknown hash algorithm id 3", edit(set(12, 3))},
		{"hash 2 seed 0", "cuckoo: impossible parameters: hash algorithm 2 with seed 0", edit(func(d []byte) []byte {
			d[12] = 2
			return put64(24, 0)(d)
		})},
		{"reserved", "cuckoo: impossible parameters: reserved header bytes", edit(set(14, 1))},
		{"buckets 0", "cuckoo: impossible parameters: bucket count 0", edit(put64(16, 0))},
		{"buckets 2^31+1", "cuckoo: impossible parameters: bucket count 2147483649", edit(put64(16, 1<<31+1))},
		{"buckets 2^40", "cuckoo: impossible parameters: bucket count 1099511627776", hugeHeader(1<<40, 100)},
		{"buckets 2^64-1", "cuckoo: impossible parameters: bucket count 18446744073709551615", hugeHeader(1<<64-1, 100)},
		{"buckets 2^31 in 100 bytes", "cuckoo: truncated data: 100 of 17179869232 bytes", hugeHeader(1<<31, 100)},
		{"buckets +1", "cuckoo: truncated data", edit(put64(16, uint64(len(valid)-48)/8+1))},
		{"buckets -1", "cuckoo: ", edit(put64(16, uint64(len(valid)-48)/8-1))},
		{"trailing byte", "cuckoo: 1 bytes of trailing data", append(bytes.Clone(valid), 0)},
		{"checksum", "cuckoo: checksum mismatch", edit(func(d []byte) []byte { d[len(d)-1] ^= 1; return d })},
		{"table bit flip", "cuckoo: checksum mismatch", edit(func(d []byte) []byte { d[table+3] ^= 0x10; return d })},
		{"seed changed", "cuckoo: checksum mismatch", edit(func(d []byte) []byte { d[24]++; return d })},
		{"slot out of range", "cuckoo: bucket 2 holds 0x0001000000000000: a value out of range", edit(put64(table+16, 1<<48))},
		{"tag bits", "cuckoo: bucket 0 holds 0x8000000000000000: a value out of range", edit(put64(table, 1<<63))},
		{"count high", "cuckoo: item count mismatch: the trailer says 51, the table holds 50", edit(put64(countOff, 51))},
		{"count low", "cuckoo: item count mismatch: the trailer says 0, the table holds 50", edit(put64(countOff, 0))},
		{"count huge", "cuckoo: item count mismatch", edit(put64(countOff, 1<<63))},
	}
}

// TestEncodeBadInput decodes each malformed input into a loaded filter with
// UnmarshalBinary and with ReadFrom, and checks the error and that the
// filter is unchanged.
func TestEncodeBadInput(t *testing.T) {
	for _, tc := range encBadInputs(t) {
		for _, via := range []string{"unmarshal", "readfrom"} {
			if via == "readfrom" && tc.name == "trailing byte" {
				continue // ReadFrom stops at the end of the filter: TestEncodeTrailingByteReadFrom
			}
			t.Run(fmt.Sprintf("input=%s/via=%s", tc.name, via), func(t *testing.T) {
				f := NewTestFilter(t, 1000, LockFree, 8, 77)
				encFill(t, f, "known-", 600)
				before := encWords(f)
				var err error
				switch via {
				case "unmarshal":
					err = f.UnmarshalBinary(tc.data)
				case "readfrom":
					var n int64
					n, err = f.ReadFrom(bytes.NewReader(tc.data))
					if n > int64(len(tc.data)) {
						t.Fatalf("ReadFrom = %d; more than the %d bytes given", n, len(tc.data))
					}
				}
				if err == nil {
					t.Fatal("decoding succeeded; want an error")
				}
				if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "cuckoo: ") {
					t.Fatalf("error = %q; want it to contain %q", err, tc.want)
				}
				if strings.Contains(tc.want, "truncated") && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("error = %v; want it to wrap io.ErrUnexpectedEOF", err)
				}
				if f.Len() != 600 || f.FingerprintBits() != 8 || f.Seed() != 77 || !equalUint64s(encWords(f), before) {
					t.Fatalf("filter changed by a failed decode: Len() = %d, bits %d, seed %d", f.Len(), f.FingerprintBits(), f.Seed())
				}
				if !f.Lookup([]byte("known-17")) {
					t.Fatal("Lookup(known-17) = false after a failed decode")
				}
			})
		}
	}
}

func TestEncodeTrailingByteReadFrom(t *testing.T) {
	valid := encValid(t, 8)
	var g Filter
	n, err := g.ReadFrom(bytes.NewReader(append(bytes.Clone(valid), 0)))
	if err != nil || n != int64(len(valid)) {
		t.Fatalf("ReadFrom = %d, %v; want %d, nil", n, err, len(valid))
	}
}

// encAlloc returns the bytes allocated while fn runs.
func encAlloc(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestEncodeDecodeAllocBound checks that headers claiming huge tables cost no
// more memory than the bytes actually present justify.
func TestEncodeDecodeAllocBound(t *testing.T) {
	valid := encValid(t, 12)
	for _, m := range []uint64{1 << 31, 1 << 40} {
		for _, size := range []int{100, 1 << 20} {
			d := bytes.Clone(valid[:formatHeaderSize])
			binary.LittleEndian.PutUint64(d[16:], m)
			d = append(d, make([]byte, size-len(d))...)
			var g Filter
			var err error
			got := encAlloc(func() { err = g.UnmarshalBinary(d) })
			if err == nil || got > 64<<10 {
				t.Fatalf("m=%d size=%d: UnmarshalBinary allocated %d bytes, err %v; want < 64 KiB and an error", m, size, got, err)
			}
			got = encAlloc(func() { _, err = g.ReadFrom(bytes.NewReader(d)) })
			// ReadFrom holds at most twice what arrived plus its buffers.
			if limit := uint64(2*size + 256<<10); err == nil || got > limit {
				t.Fatalf("m=%d size=%d: ReadFrom allocated %d bytes, err %v; want < %d and an error", m, size, got, err, limit)
			}
		}
	}
}

// TestEncodeWriteToMemory checks what WriteTo's doc promises of its memory:
// one copy of the encoding (it encodes into memory before it writes, so
// that relocations never wait for the writer), and no more.
func TestEncodeWriteToMemory(t *testing.T) {
	capacity := 16 << 20 // 4.4M buckets: a 34 MiB table
	if testing.Short() {
		capacity = 4 << 20
	}
	f := NewTestFilter(t, capacity, LockFree, 12, 0)
	encFill(t, f, "k", 1<<18)
	var n int64
	var err error
	got := encAlloc(func() { n, err = f.WriteTo(io.Discard) })
	words := uint64(len(f.t.words))
	if err != nil || uint64(n) != encodedSize(words) {
		t.Fatalf("WriteTo = %d, %v; want %d, nil", n, err, encodedSize(words))
	}
	if limit := encodedSize(words) + 64<<10; got > limit {
		t.Fatalf("WriteTo of a %d MiB table allocated %d bytes; want at most one copy, %d", 8*words>>20, got, limit)
	}
	t.Logf("table %d MiB: WriteTo allocated %d bytes", 8*words>>20, got)
}

const (
	encGoldenFile = "golden-f12-seed42.cuckoo"
	encGoldenKeys = 500
)

// encGolden builds the filter the golden file holds: four 12-bit slots in
// the 264 buckets that New(1000) gave then (New adds spare buckets now).
func encGolden(tb testing.TB) *Filter {
	f := &Filter{}
	f.init(bucketsFor(1000), newLayout(12, 4), 42, LockFree)
	f.setSeed(42, formatHashXXFmix) // the golden file predates algorithm 2
	if n := encFill(tb, f, "key-", encGoldenKeys); n != encGoldenKeys {
		tb.Fatalf("golden filter took %d keys; want %d", n, encGoldenKeys)
	}
	return f
}

// TestEncodeGolden decodes the encoding written by the first version of the
// format and checks its parameters, its keys and that it re-encodes to the
// same bytes. Rewrite it (only for a deliberate format change, with a new
// version number) with -update.
func TestEncodeGolden(t *testing.T) {
	path := filepath.Join("testdata", encGoldenFile)
	if *updateGolden {
		data, err := encGolden(t).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatalf("UnmarshalBinary(%s): %v", path, err)
	}
	if g.FingerprintBits() != 12 || g.Seed() != 42 || g.Cap() != 1056 || g.Len() != encGoldenKeys || g.Mode() != LockFree {
		t.Fatalf("golden: bits %d, seed %d, cap %d, len %d, mode %v; want 12, 42, 1056, %d, lockfree",
			g.FingerprintBits(), g.Seed(), g.Cap(), g.Len(), g.Mode(), encGoldenKeys)
	}
	encCheckKeys(t, &g, "key-", encGoldenKeys)
	again, err := g.MarshalBinary()
	if err != nil || !bytes.Equal(again, data) {
		t.Fatalf("re-encoding the golden filter gives different bytes (err %v)", err)
	}
	// The header this version writes for the same parameters is the same.
	fresh, err := encGolden(t).MarshalBinary()
	if err != nil || !bytes.Equal(fresh[:formatHeaderSize], data[:formatHeaderSize]) {
		t.Fatalf("header written now:\n% x\ngolden:\n% x", fresh[:formatHeaderSize], data[:formatHeaderSize])
	}
	want := []byte("CUCKOOFL\x01\x00\x0c\x04\x01\x00\x00\x00\x08\x01\x00\x00\x00\x00\x00\x00\x2a\x00\x00\x00\x00\x00\x00\x00")
	if !bytes.Equal(data[:formatHeaderSize], want) {
		t.Fatalf("golden header:\n% x\nwant (FORMAT.md):\n% x", data[:formatHeaderSize], want)
	}
	// Placement follows FORMAT.md's hash algorithm 1, reimplemented here
	// from the document: every key's fingerprint is in one of its buckets.
	m := binary.LittleEndian.Uint64(data[16:])
	for i := 0; i < encGoldenKeys; i++ {
		key := []byte("key-" + strconv.Itoa(i))
		b1, b2, fp := encSpecHash(key, 42, m, 12)
		w1 := binary.LittleEndian.Uint64(data[formatHeaderSize+8*b1:])
		w2 := binary.LittleEndian.Uint64(data[formatHeaderSize+8*b2:])
		if !encSpecHas(w1, fp, 12) && !encSpecHas(w2, fp, 12) {
			t.Fatalf("%s: fingerprint %#x is in neither bucket %d nor %d", key, fp, b1, b2)
		}
	}
}

// TestEncodeHashAlgorithm2 checks that a filter made by New with a nonzero
// seed writes hash algorithm 2 and places keys as FORMAT.md states it, and
// that the encoding loads back with the same placement.
func TestEncodeHashAlgorithm2(t *testing.T) {
	const seed, n = 42, 500
	f := NewTestFilter(t, 1000, LockFree, 12, seed)
	encFill(t, f, "key-", n)
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if data[12] != formatHashXXMul {
		t.Fatalf("hash algorithm id %d; want %d", data[12], formatHashXXMul)
	}
	m := binary.LittleEndian.Uint64(data[16:])
	for i := 0; i < n; i++ {
		key := []byte("key-" + strconv.Itoa(i))
		b1, b2, fp := encSpecHash2(key, seed, m, 12)
		w1 := binary.LittleEndian.Uint64(data[formatHeaderSize+8*b1:])
		w2 := binary.LittleEndian.Uint64(data[formatHeaderSize+8*b2:])
		if !encSpecHas(w1, fp, 12) && !encSpecHas(w2, fp, 12) {
			t.Fatalf("%s: fingerprint %#x is in neither bucket %d nor %d", key, fp, b1, b2)
		}
	}
	var g Filter
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if !g.Lookup([]byte("key-" + strconv.Itoa(i))) {
			t.Fatalf("key-%d missing after a round trip", i)
		}
	}
	if again, _ := g.MarshalBinary(); !bytes.Equal(again, data) {
		t.Fatal("re-encoding a decoded algorithm-2 filter changed its bytes")
	}
}

// encSpecMix is fmix64, the finalizer of MurmurHash3, as FORMAT.md states it.
func encSpecMix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// encSpecHash2 is hash algorithm 2 as FORMAT.md states it.
func encSpecHash2(key []byte, seed, m uint64, f uint) (b1, b2, fp uint64) {
	return encSpecPlace((xxhash.Sum64(key)^seed)*(encSpecMix(seed)|1), m, f)
}

// encSpecHash is hash algorithm 1 as FORMAT.md states it.
func encSpecHash(key []byte, seed, m uint64, f uint) (b1, b2, fp uint64) {
	return encSpecPlace(encSpecMix(xxhash.Sum64(key)^seed), m, f)
}

func encSpecPlace(h, m uint64, f uint) (b1, b2, fp uint64) {
	fp = (h&0xffffffff)*(1<<f-1)>>32 + 1
	b1 = (h >> 32) * m >> 32
	hi, _ := bits.Mul64(fp*0x9e3779b97f4a7c15, m)
	b2 = (hi + m - b1) % m
	return b1, b2, fp
}

func encSpecHas(w, fp uint64, f uint) bool {
	for s := uint(0); s < 4; s++ {
		if w>>(s*f)&(1<<f-1) == fp {
			return true
		}
	}
	return false
}

// BenchmarkEncode measures WriteTo, MarshalBinary, UnmarshalBinary and
// ReadFrom on a filter of 1M capacity at 95% load (a 2.1 MB encoding).
func BenchmarkEncode(b *testing.B) {
	f := NewTestFilter(b, 1<<20, LockFree, 12, 0)
	encFill(b, f, "k", 1<<20)
	data, err := f.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("op=WriteTo", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			f.WriteTo(io.Discard)
		}
	})
	b.Run("op=MarshalBinary", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			f.MarshalBinary()
		}
	})
	b.Run("op=UnmarshalBinary", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var g Filter
		for b.Loop() {
			if err := g.UnmarshalBinary(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=ReadFrom", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var g Filter
		for b.Loop() {
			if _, err := g.ReadFrom(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestEncodeSlotOutOfRangeNamesLayout checks that a five-slot encoding with
// a bit above its five 12-bit slots is refused with a message naming that
// layout.
func TestEncodeSlotOutOfRangeNamesLayout(t *testing.T) {
	data := encReseal(func(d []byte) []byte {
		binary.LittleEndian.PutUint64(d[formatHeaderSize:], 1<<60)
		return d
	}(encValid(t, Bits12x5)))
	var g Filter
	err := g.UnmarshalBinary(data)
	want := "cuckoo: bucket 0 holds 0x1000000000000000: a value out of range for 5 12-bit slots"
	if err == nil || err.Error() != want || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("UnmarshalBinary: %v; want %q (ErrCorrupt)", err, want)
	}
}
