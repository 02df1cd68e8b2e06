package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// The encoding (FORMAT.md): a 32-byte header, the words, the item count and
// an XXH64 checksum of all before it, little-endian. The count follows the
// table because a snapshot of a live filter learns it by counting as it
// copies; a decoder recounts and rejects a mismatch. Counters, K-CAS tags
// and the mode are runtime state, not stored, so an encoding is canonical:
// a successful decode re-encodes to identical bytes.
const (
	formatMagic = "CUCKOOFL"
	// Version 1: four slots of 8 or 12 bits; 2: the layouts version 1
	// readers lack (so that they name the version), same fields; 3: the
	// packed layout.
	formatVersion, formatVersion2, formatVersion3 = 1, 2, 3
	formatHashXXFmix                              = 1 // XXH64; for a non-zero seed, xored with it and passed through fmix64
	formatHashXXMul                               = 2 // XXH64; for a non-zero seed, xored with it and multiplied by fmix64(seed)|1
	formatHeaderSize, formatTrailerSize           = 32, 16

	// ReadFrom reads through a buffer of encodeChunk bytes into a table of
	// at most decodeInitialWords words, doubled as data keeps coming, so a
	// header claiming a huge table costs nothing until the bytes exist.
	encodeChunk        = 16 << 10
	decodeInitialWords = 8 << 10
	writeChunk         = 1 << 20 // the most WriteTo hands to one w.Write
)

// encodedSize returns the length of the encoding of a table of n words.
func encodedSize(n uint64) uint64 { return formatHeaderSize + 8*n + formatTrailerSize }

// WriteTo writes the encoding of the filter to w and returns the number of
// bytes written. Its snapshot holds every key a copy of whose fingerprint
// stays in the filter for the whole call (every key inserted before the
// call and not deleted until it returns); keys inserted or deleted during
// the call may or may not be in it. Its item count is that of its table,
// which may differ from Len at any instant of the call. WriteTo encodes the
// whole table into memory before it writes to w, which may use the filter.
// Errors of w are returned wrapped, with the prefix "cuckoo: ".
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	data, err := f.MarshalBinary()
	if err != nil {
		return 0, err
	}
	var n int64
	return n, writeChunks(w, data, &n)
}

// writeChunks writes data to w in pieces of at most writeChunk bytes,
// adding what w took to *n (a failing writer reports what it took of a
// piece), and wraps w's error.
func writeChunks(w io.Writer, data []byte, n *int64) error {
	for len(data) > 0 {
		p := data[:min(len(data), writeChunk)]
		k, err := w.Write(p)
		*n += int64(k)
		if err == nil && k < len(p) {
			err = io.ErrShortWrite
		}
		if err != nil {
			return fmt.Errorf("cuckoo: writing filter: %w", err)
		}
		data = data[len(p):]
	}
	return nil
}

// MarshalBinary returns the encoding of FORMAT.md, a snapshot as WriteTo
// takes it. On a zero Filter it returns ErrZeroFilter.
func (f *Filter) MarshalBinary() ([]byte, error) {
	if f.m == 0 {
		return nil, ErrZeroFilter
	}
	p := make([]byte, 0, encodedSize(uint64(len(f.t.words))))
	p = append(p, formatMagic...)
	p = binary.LittleEndian.AppendUint16(p, formatVersionOf(f.lay))
	p = append(p, byte(f.lay.f), byte(f.SlotsPerBucket()), f.hashAlg(), 0, 0, 0)
	p = binary.LittleEndian.AppendUint64(p, f.m)
	p = binary.LittleEndian.AppendUint64(p, f.seed)
	p, count := f.appendTable(p)
	p = binary.LittleEndian.AppendUint64(p, count)
	return binary.LittleEndian.AppendUint64(p, xxhash.Sum64(p)), nil
}

// appendTable appends f's words to p, K-CAS references resolved, counters
// and tags cleared, and returns the number of fingerprints it appended. It
// holds the snapshot gate (snapshot.go), so no relocation runs meanwhile,
// and reads the words in ascending order, as copyTable does.
//
// Claim: the words copied hold a copy of every key inserted before the
// snapshot began and not deleted before it ended, whatever keys colliding
// with it (same fingerprint and pair, in either order) do meanwhile.
// Proof: with relocations kept out, copies enter a bucket only by inserts
// and leave only by deletes. Of a pair the lower bucket is read first (t1),
// the upper one later (t2; a packed pair sharing a word is read once): the
// order every search reads a pair in and every Delete takes from it
// (searchPair). That is the situation of "One order for every search"
// (twophase.go) with no move, whose counting shows that the lower bucket
// held a copy at t1 or the upper one at t2. □ Deletes in their key's bucket
// order would break it (TestSnapshotAgainstCollidingKeys).
func (f *Filter) appendTable(p []byte) ([]byte, uint64) {
	f.gate.beginSnapshot()
	defer f.gate.endSnapshot()
	l := &f.lay
	var count uint64
	n := len(p)
	p = p[:n+8*len(f.t.words)]
	for i := range uint64(len(f.t.words)) {
		w := f.t.words[i].Load()
		if w&tagMask != 0 {
			w = f.t.load(i)
		}
		w &= l.fpMask
		count += uint64(l.occupied(w))
		binary.LittleEndian.PutUint64(p[n+8*int(i):], w)
		if raceEnabled {
			snapshotStalled(f, i) // the tests' stall point (snapshot.go)
		}
	}
	return p, count
}

// UnmarshalBinary replaces the filter's contents with the filter encoded in
// data, which must hold exactly one encoding (MarshalBinary's or WriteTo's).
// A zero Filter becomes a LockFree filter; another keeps its mode. On error
// the filter is unchanged; the error matches ErrTruncated, ErrFormat or
// ErrCorrupt. It never allocates more than the size of data. It must not
// run concurrently with other methods of f.
func (f *Filter) UnmarshalBinary(data []byte) error {
	h, err := parseHeader(data)
	if err != nil {
		return err
	}
	switch want := encodedSize(h.words); {
	case uint64(len(data)) < want:
		return errTruncated(uint64(len(data)), want)
	case uint64(len(data)) > want:
		return errFormat("cuckoo: %d bytes of trailing data after the %d-byte filter", uint64(len(data))-want, want)
	}
	want := uint64(len(data))
	if sum, stored := xxhash.Sum64(data[:want-8]), binary.LittleEndian.Uint64(data[want-8:]); sum != stored {
		return errChecksum(stored, sum)
	}
	words := make([]atomic.Uint64, h.words)
	scan := fillWords(words, data[formatHeaderSize:want-formatTrailerSize], h.lay, 0, tableScan{})
	return f.load(h, words, scan, binary.LittleEndian.Uint64(data[want-16:]))
}

// ReadFrom replaces the filter's contents with the filter encoded at the
// start of r, as UnmarshalBinary does, and returns the number of bytes it
// read. It reads exactly the encoding, not until EOF, so filters can follow
// each other in a stream. It allocates the table as its bytes arrive, so a
// short or hostile stream costs memory in proportion to its length, not to
// the size it claims (from *bytes.Reader, *strings.Reader and
// *bytes.Buffer it allocates the table at once). On error the filter is
// unchanged; decoding errors are UnmarshalBinary's (a truncated stream's
// also matches io.ErrUnexpectedEOF), and r's errors come wrapped. Like
// UnmarshalBinary it must not run concurrently with other methods of f.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	var want uint64 // the encoding's size, once the header is read
	read := func(p []byte) error {
		k, err := io.ReadFull(r, p)
		n += int64(k)
		if err == io.EOF || err == io.ErrUnexpectedEOF || want != 0 && errors.Is(err, io.ErrUnexpectedEOF) {
			return errTruncated(uint64(n), want)
		}
		if err != nil {
			return fmt.Errorf("cuckoo: reading filter: %w", err)
		}
		return nil
	}
	// The header in three steps, each checked, so that a stream that is
	// not a filter, or of a version this package cannot read, is reported
	// as such rather than as truncated.
	var hdr [formatHeaderSize]byte
	var h header
	for _, end := range [...]int64{int64(len(formatMagic)), 10, formatHeaderSize} {
		rerr := read(hdr[n:end])
		var err error
		h, err = parseHeader(hdr[:n])
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return n, err
		}
		if rerr != nil {
			return n, rerr
		}
	}
	want = encodedSize(h.words)
	var d xxhash.Digest
	d.Reset()
	d.Write(hdr[:])
	buf := make([]byte, min(encodeChunk, 8*h.words))
	initial := min(h.words, decodeInitialWords)
	if k := inMemoryLen(r); k >= 0 && uint64(k) >= 8*h.words {
		initial = h.words
	}
	words := make([]atomic.Uint64, initial)
	var scan tableScan
	for filled := uint64(0); filled < h.words; {
		if filled == uint64(len(words)) {
			grown := make([]atomic.Uint64, min(h.words, 2*filled))
			copy(grown, words) // not yet shared: plain copies are fine
			words = grown
		}
		k := min(uint64(len(words))-filled, uint64(len(buf))/8)
		p := buf[:8*k]
		if err := read(p); err != nil {
			return n, err
		}
		d.Write(p)
		scan = fillWords(words[filled:filled+k], p, h.lay, filled, scan)
		filled += k
	}
	var tr [formatTrailerSize]byte
	if err := read(tr[:]); err != nil {
		return n, err
	}
	d.Write(tr[:8])
	if sum, stored := d.Sum64(), binary.LittleEndian.Uint64(tr[8:]); sum != stored {
		return n, errChecksum(stored, sum)
	}
	return n, f.load(h, words, scan, binary.LittleEndian.Uint64(tr[:8]))
}

// inMemoryLen returns the unread length of the standard library's in-memory
// readers, or -1. Another reader's Len is a claim, not data: trusted, a
// hostile one would make ReadFrom allocate a huge table for a header.
func inMemoryLen(r io.Reader) int {
	switch r := r.(type) {
	case *bytes.Reader:
		return r.Len()
	case *strings.Reader:
		return r.Len()
	case *bytes.Buffer:
		return r.Len()
	}
	return -1
}

type header struct {
	lay   layout
	words uint64 // the table's: the bucket count, or half of it in the packed layout
	seed  uint64
	hash  uint8 // hash algorithm id
}

// parseHeader validates the header at the start of data. When data is
// shorter than a header, the error wraps io.ErrUnexpectedEOF unless the
// bytes present are already wrong.
func parseHeader(data []byte) (header, error) {
	var h header
	k := min(len(data), len(formatMagic))
	if string(data[:k]) != formatMagic[:k] {
		if k == len(growFormatMagic) && string(data[:k]) == growFormatMagic {
			return h, errFormat("cuckoo: magic %q: this is a Growing filter's encoding, not a Filter's: load it with Growing.ReadFrom or Growing.UnmarshalBinary (or ReadAny, which reads either)", data[:k])
		}
		return h, errFormat("cuckoo: wrong magic %q: not an encoded filter (want %q)", data[:k], formatMagic)
	}
	if len(data) < 10 {
		return h, errTruncated(uint64(len(data)), 0)
	}
	v := binary.LittleEndian.Uint16(data[8:])
	if v != formatVersion && v != formatVersion2 && v != formatVersion3 {
		return h, errFormat("cuckoo: unknown format version %d (this package reads versions %d to %d)", v, formatVersion, formatVersion3)
	}
	if len(data) < formatHeaderSize {
		return h, errTruncated(uint64(len(data)), 0)
	}
	bits, slots, hash := data[10], data[11], data[12]
	m, seed := binary.LittleEndian.Uint64(data[16:]), binary.LittleEndian.Uint64(data[24:])
	want := formatVersionOf(newLayout(uint(bits), uint(slots)))
	switch {
	case !validFingerprintBits(int(bits)):
		return h, errFormat("cuckoo: impossible parameters: fingerprint bits %d (want 8, 12 or 15)", bits)
	case !validLayout(uint(bits), uint(slots)):
		return h, errFormat("cuckoo: impossible parameters: %d slots per bucket with %d-bit fingerprints (want 4, or 5 with 12-bit)", slots, bits)
	case v == formatVersion3 && (bits != 8 || slots != packedSlots):
		return h, errFormat("cuckoo: impossible parameters: format version 3 (the packed layout) with %d-bit fingerprints and %d slots per bucket (want 8 and 4)", bits, slots)
	case v != formatVersion3 && v != want:
		return h, errFormat("cuckoo: impossible parameters: format version %d with %d-bit fingerprints and %d slots per bucket (written as version %d)", v, bits, slots, want)
	case hash != formatHashXXFmix && hash != formatHashXXMul:
		return h, errFormat("cuckoo: unknown hash algorithm id %d (want %d or %d)", hash, formatHashXXFmix, formatHashXXMul)
	case data[13]|data[14]|data[15] != 0:
		return h, errFormat("cuckoo: impossible parameters: reserved header bytes % x are not zero", data[13:16])
	case v == formatVersion3 && (m == 0 || m%2 != 0 || m > 2*maxBuckets):
		return h, errFormat("cuckoo: impossible parameters: bucket count %d (want an even number from 2 to %d)", m, uint64(2*maxBuckets))
	case v != formatVersion3 && (m == 0 || m > maxBuckets):
		return h, errFormat("cuckoo: impossible parameters: bucket count %d (want 1 to %d)", m, uint64(maxBuckets))
	case hash == formatHashXXMul && seed == 0: // seed 0 is written as algorithm 1: canonical
		return h, errFormat("cuckoo: impossible parameters: hash algorithm %d with seed 0 (written as algorithm %d)", formatHashXXMul, formatHashXXFmix)
	}
	h.hash, h.seed, h.words = hash, seed, m
	h.lay = newLayout(uint(bits), uint(slots))
	if v == formatVersion3 {
		h.lay, h.words = packedLayout(), m/2
	}
	return h, nil
}

// formatVersionOf returns the version written for layout l.
func formatVersionOf(l layout) uint16 {
	if l.packed {
		return formatVersion3
	}
	if l.b == slotsPerBucket && (l.f == 8 || l.f == 12) {
		return formatVersion
	}
	return formatVersion2
}

// tableScan is what fillWords learns of a stored table: the first word with
// bits outside its slots, and the number of fingerprints.
type tableScan struct {
	bad   bool
	index uint64 // first bad word
	word  uint64 // its stored value
	slots uint64 // non-empty slots so far
}

// fillWords decodes the little-endian words of p into words (the table's
// from first on), clearing and recording bits outside the slots and
// counting fingerprints.
func fillWords(words []atomic.Uint64, p []byte, l layout, first uint64, s tableScan) tableScan {
	for i := range words {
		w := binary.LittleEndian.Uint64(p[8*i:])
		if w&^l.fpMask != 0 && !s.bad {
			s.bad, s.index, s.word = true, first+uint64(i), w
		}
		w &= l.fpMask
		s.slots += uint64(l.occupied(w))
		words[i].Store(w)
	}
	return s
}

// load makes words, decoded and checksummed, f's table, unless a word has
// bits outside its slots or the stored item count disagrees with the table.
func (f *Filter) load(h header, words []atomic.Uint64, s tableScan, count uint64) error {
	if s.bad {
		if h.lay.packed {
			return errCorrupt("cuckoo: word %d holds %#016x: bits 62-63 must be zero in the packed layout (the top slot takes fingerprints 1 to 63)", s.index, s.word)
		}
		return errCorrupt("cuckoo: bucket %d holds %#016x: a value out of range for %d %d-bit slots", s.index, s.word, h.lay.b, h.lay.f)
	}
	if count != s.slots {
		return errCorrupt("cuckoo: item count mismatch: the trailer says %d, the table holds %d", count, s.slots)
	}
	f.adopt(words, h.lay, h.seed, h.hash, f.Mode(), int64(count))
	return nil
}

// errTruncated reports data that ended after got bytes; want is the size the
// header promised, or 0 if the header itself was cut short.
func errTruncated(got, want uint64) error {
	if want == 0 {
		return &decodeError{fmt.Sprintf("cuckoo: truncated data: %d bytes end inside the %d-byte header: %v", got, formatHeaderSize, io.ErrUnexpectedEOF), ErrTruncated, io.ErrUnexpectedEOF}
	}
	return &decodeError{fmt.Sprintf("cuckoo: truncated data: %d of %d bytes: %v", got, want, io.ErrUnexpectedEOF), ErrTruncated, io.ErrUnexpectedEOF}
}

func errChecksum(stored, computed uint64) error {
	return errCorrupt("cuckoo: checksum mismatch: stored %#016x, computed %#016x (corrupted data)", stored, computed)
}

func errFormat(format string, args ...any) error {
	return &decodeError{msg: fmt.Sprintf(format, args...), class: ErrFormat}
}

func errCorrupt(format string, args ...any) error {
	return &decodeError{msg: fmt.Sprintf(format, args...), class: ErrCorrupt}
}

// hashAlg returns the id of the hash algorithm f places keys with: 1 for
// seed 0, where both are XXH64 as it is, and which every version reads.
func (f *Filter) hashAlg() uint8 {
	if f.fmix || f.seed == 0 {
		return formatHashXXFmix
	}
	return formatHashXXMul
}
