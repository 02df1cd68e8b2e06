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

// The serialized form of a filter is described in FORMAT.md: a 32-byte
// header (magic, version, fingerprint bits, slots per bucket, hash
// algorithm, bucket count, seed), the words, the item count and an XXH64
// checksum, all little-endian. The item count follows the table because a
// snapshot of a live filter learns it only by counting the slots as it
// writes them; a decoder recounts and rejects a mismatch. Migration
// counters, K-CAS tags and the mode are runtime state and are not stored,
// so an encoding is canonical: a successful decode re-encodes to identical
// bytes.

const (
	formatMagic   = "CUCKOOFL"
	formatVersion = 1
	// formatVersion2 is written for the layouts version 1 readers do not
	// have (15-bit fingerprints, five slots per bucket), so that such a
	// reader names the version instead of calling the parameters
	// impossible. Both versions have the same fields.
	formatVersion2 = 2
	// formatVersion3 is written for the packed layout (packed.go): its
	// words hold two buckets each, which no earlier reader knows.
	formatVersion3    = 3
	formatHashXXFmix  = 1 // xxhash64 of the key; for a non-zero seed, xored with the seed and passed through fmix64 (FORMAT.md)
	formatHashXXMul   = 2 // xxhash64 of the key; for a non-zero seed, xored with the seed and multiplied by fmix64(seed)|1 (FORMAT.md)
	formatHeaderSize  = 32
	formatTrailerSize = 16

	// encodeChunk is the size of the buffer ReadFrom reads the table
	// through: the only memory it needs beyond the table itself, which
	// grows as data arrives.
	encodeChunk = 16 << 10
	// decodeInitialWords is how many buckets ReadFrom allocates before any
	// of them has arrived; it doubles the table as data keeps coming, so a
	// header claiming a huge table costs nothing until the bytes exist.
	decodeInitialWords = 8 << 10
)

// encodedSize returns the length of the encoding of a table of n words.
func encodedSize(n uint64) uint64 { return formatHeaderSize + 8*n + formatTrailerSize }

// MarshalBinary returns the encoding of the filter described in FORMAT.md. It
// may run while other goroutines use the filter, with the guarantees of
// WriteTo.
func (f *Filter) MarshalBinary() ([]byte, error) {
	if f.m == 0 {
		return nil, ErrZeroFilter
	}
	return f.encode(), nil
}

// WriteTo writes the encoding of the filter to w and returns the number of
// bytes written.
//
// WriteTo and MarshalBinary may run while other goroutines insert, delete,
// look up and relocate. The snapshot they take guarantees that every key a
// copy of whose fingerprint stays in the filter for the whole call (in
// particular every key inserted before the call and not deleted until it
// returns) is found after the snapshot is loaded. Keys inserted or deleted
// during the call may or may not be in it. The snapshot is self-consistent:
// its item count is the number of fingerprints in its table, which may
// differ from Len at any instant of the call.
//
// WriteTo first encodes the whole filter into memory, as MarshalBinary
// does, and only then hands the bytes to w, so it needs memory for one copy
// of the table while it runs. While the table is being copied, inserts
// that need to relocate fingerprints wait (a relocation could otherwise
// move a fingerprint from a bucket not yet copied into one already
// copied), for as long as copying takes at memory speed, never for w;
// back-to-back snapshots cannot shut relocations out (snapshot.go). Inserts
// into free slots, deletes and lookups never wait. w may use the filter,
// Insert included.
//
// Errors from w are returned wrapped, with the prefix "cuckoo: ".
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	data, err := f.MarshalBinary()
	if err != nil {
		return 0, err
	}
	var n int64
	return n, writeChunks(w, data, &n)
}

// writeChunks writes data to w in pieces of at most writeChunk bytes,
// adding what w took to *n, and wraps w's error ("cuckoo: writing filter:
// "). Bounded pieces: a writer that fails part-way reports how much it
// took of a piece, not of the whole.
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

// writeChunk is the most WriteTo hands to one call of w.Write.
const writeChunk = 1 << 20

// encode returns the encoding of f, whose table must not be empty. The
// header is written before the snapshot begins: the parameters it holds
// never change while the filter is in use.
func (f *Filter) encode() []byte {
	p := make([]byte, 0, encodedSize(uint64(len(f.t.words))))
	p = append(p, formatMagic...)
	p = binary.LittleEndian.AppendUint16(p, formatVersionOf(f.lay))
	p = append(p, byte(f.lay.f), byte(f.SlotsPerBucket()), f.hashAlg(), 0, 0, 0)
	p = binary.LittleEndian.AppendUint64(p, f.m)
	p = binary.LittleEndian.AppendUint64(p, f.seed)
	p, count := f.appendTable(p)
	p = binary.LittleEndian.AppendUint64(p, count)
	// The checksum covers every byte before it.
	return binary.LittleEndian.AppendUint64(p, xxhash.Sum64(p))
}

// appendTable appends every bucket word of f to p and returns the number of
// fingerprints it appended. It holds the snapshot gate while it reads the
// table, so no relocation runs meanwhile (see WriteTo): a tight loop at
// memory speed, with nothing else inside the gate.
//
// Claim: the words appended hold a copy of every key inserted before the
// snapshot began and not deleted before it ended, whatever keys that
// collide with it (same fingerprint and bucket pair, in either order) do
// meanwhile. Proof: with relocations kept out by the gate, copies enter a
// bucket only by inserts and leave only by deletes. The words are read in
// ascending order, so of a pair the lower bucket is read first (at t1)
// and the upper one afterwards (at t2; a packed pair sharing a word is
// read once), the order every search reads a pair in and every Delete
// takes from it (searchPair, twophase.go). That is the situation of the
// claim of "One order for every search" (twophase.go) with no move at
// all, and its counting, with no moves, shows that the lower bucket held
// a copy at t1 or the upper one held one at t2. □ Deletes in their key's
// bucket order would break it (TestSnapshotAgainstCollidingKeys).
func (f *Filter) appendTable(p []byte) ([]byte, uint64) {
	f.gate.beginSnapshot()
	defer f.gate.endSnapshot()
	l := &f.lay
	var count uint64
	n := len(p)
	p = p[:n+8*len(f.t.words)]
	for i := range uint64(len(f.t.words)) {
		// A plain word is read directly; load resolves a K-CAS reference
		// to the word's logical value. Counters and tags are runtime
		// state: they are cleared.
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
// data (by MarshalBinary or WriteTo), which must hold exactly one encoding.
// It works on a zero Filter, which then becomes a LockFree filter; an
// existing filter keeps its mode. It must not run concurrently with any other
// method of f.
//
// On error the filter is unchanged. Errors begin with "cuckoo: " and say what
// is wrong: truncated data, wrong magic, unknown version or hash algorithm,
// impossible parameters, checksum mismatch, a bucket holding bits outside its
// slots, or an item count that disagrees with the table; each matches one of
// ErrTruncated, ErrFormat and ErrCorrupt with errors.Is (see ErrFormat). It
// never allocates more than the size of data.
func (f *Filter) UnmarshalBinary(data []byte) error {
	h, err := parseHeader(data)
	if err != nil {
		return err
	}
	want := encodedSize(h.words)
	if uint64(len(data)) < want {
		return errTruncated(uint64(len(data)), want)
	}
	if uint64(len(data)) > want {
		return errFormat("cuckoo: %d bytes of trailing data after the %d-byte filter", uint64(len(data))-want, want)
	}
	body := data[:want-8]
	stored := binary.LittleEndian.Uint64(data[want-8:])
	if sum := xxhash.Sum64(body); sum != stored {
		return errChecksum(stored, sum)
	}
	words := make([]atomic.Uint64, h.words)
	table := data[formatHeaderSize : formatHeaderSize+8*h.words]
	scan := fillWords(words, table, h.lay, 0, tableScan{})
	n := binary.LittleEndian.Uint64(data[want-16:])
	if err := checkTable(h, scan, n); err != nil {
		return err
	}
	f.adopt(words, h.lay, h.seed, h.hash, f.Mode(), int64(n))
	return nil
}

// ReadFrom replaces the filter's contents with the filter encoded at the
// start of r, as UnmarshalBinary does with a byte slice, and returns the
// number of bytes it read. It reads exactly the encoding and nothing after
// it, so several filters can follow each other in one stream; unlike most
// io.ReaderFrom implementations it does not read until EOF.
//
// It allocates the table as its bytes arrive (doubling, up to the size the
// header states), so a short or hostile stream costs memory in proportion
// to its length, not to the table size it claims; from *bytes.Reader,
// *strings.Reader and *bytes.Buffer, whose data is already in memory, the
// table is allocated at once. On error the filter is unchanged and the
// error begins with "cuckoo: "; decoding errors match ErrTruncated,
// ErrFormat or ErrCorrupt as UnmarshalBinary's do (a truncated stream's
// also matches io.ErrUnexpectedEOF), and other errors of r are wrapped. It
// must not run concurrently with any other method of f.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	read := func(p []byte) error {
		k, err := io.ReadFull(r, p)
		n += int64(k)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return errTruncated(uint64(n), 0)
		}
		if err != nil {
			return fmt.Errorf("cuckoo: reading filter: %w", err)
		}
		return nil
	}
	// Read the header in three steps, checking each, so that a stream that
	// is not a filter, or has a version this package cannot read, is
	// reported as such rather than as truncated.
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
	want := encodedSize(h.words)
	truncated := func(err error) error {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return errTruncated(uint64(n), want)
		}
		return err
	}

	var d xxhash.Digest
	d.Reset()
	d.Write(hdr[:])
	buf := make([]byte, min(encodeChunk, 8*h.words))
	// The table grows with the data: never more than decodeInitialWords
	// or the words already read ahead of them, unless r is known to hold
	// the whole table in memory (inMemoryLen).
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
			return n, truncated(err)
		}
		d.Write(p)
		scan = fillWords(words[filled:filled+k], p, h.lay, filled, scan)
		filled += k
	}
	var tr [formatTrailerSize]byte
	if err := read(tr[:]); err != nil {
		return n, truncated(err)
	}
	d.Write(tr[:8])
	if sum, stored := d.Sum64(), binary.LittleEndian.Uint64(tr[8:]); sum != stored {
		return n, errChecksum(stored, sum)
	}
	count := binary.LittleEndian.Uint64(tr[:8])
	if err := checkTable(h, scan, count); err != nil {
		return n, err
	}
	f.adopt(words, h.lay, h.seed, h.hash, f.Mode(), int64(count))
	return n, nil
}

// inMemoryLen returns the number of unread bytes r holds when r is one of
// the standard library's in-memory readers (*bytes.Reader, *strings.Reader,
// *bytes.Buffer), or -1. Their Len is the length of data already in memory,
// so ReadFrom may allocate the table at once for them and skip the copies of
// growing it. The Len method of any other reader is not consulted: it is a
// claim, not data, and a hostile claim would make ReadFrom allocate a huge
// table for a header-only stream.
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
	m     uint64 // buckets
	words uint64 // words of the table: m, or m/2 in the packed layout
	seed  uint64
	hash  uint8 // hash algorithm id
}

// parseHeader validates the header at the start of data, which may be
// shorter than a header: then the error wraps io.ErrUnexpectedEOF unless the
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
	if !validFingerprintBits(int(bits)) {
		return h, errFormat("cuckoo: impossible parameters: fingerprint bits %d (want 8, 12 or 15)", bits)
	}
	if !validLayout(uint(bits), uint(slots)) {
		return h, errFormat("cuckoo: impossible parameters: %d slots per bucket with %d-bit fingerprints (want 4, or 5 with 12-bit)", slots, bits)
	}
	if v == formatVersion3 && (bits != 8 || slots != packedSlots) {
		return h, errFormat("cuckoo: impossible parameters: format version 3 (the packed layout) with %d-bit fingerprints and %d slots per bucket (want 8 and 4)", bits, slots)
	}
	if want := formatVersionOf(newLayout(uint(bits), uint(slots))); v != formatVersion3 && v != want {
		return h, errFormat("cuckoo: impossible parameters: format version %d with %d-bit fingerprints and %d slots per bucket (written as version %d)", v, bits, slots, want)
	}
	if hash != formatHashXXFmix && hash != formatHashXXMul {
		return h, errFormat("cuckoo: unknown hash algorithm id %d (want %d or %d)", hash, formatHashXXFmix, formatHashXXMul)
	}
	h.hash = hash
	if data[13]|data[14]|data[15] != 0 {
		return h, errFormat("cuckoo: impossible parameters: reserved header bytes % x are not zero", data[13:16])
	}
	h.m = binary.LittleEndian.Uint64(data[16:])
	h.words = h.m
	if v == formatVersion3 {
		if h.m == 0 || h.m%2 != 0 || h.m > 2*maxBuckets {
			return h, errFormat("cuckoo: impossible parameters: bucket count %d (want an even number from 2 to %d)", h.m, uint64(2*maxBuckets))
		}
		h.words = h.m / 2
	} else if h.m == 0 || h.m > maxBuckets {
		return h, errFormat("cuckoo: impossible parameters: bucket count %d (want 1 to %d)", h.m, uint64(maxBuckets))
	}
	h.seed = binary.LittleEndian.Uint64(data[24:])
	if h.hash == formatHashXXMul && h.seed == 0 {
		// Both algorithms are XXH64 as it is for seed 0, which is always
		// written as algorithm 1: the encoding stays canonical.
		return h, errFormat("cuckoo: impossible parameters: hash algorithm %d with seed 0 (written as algorithm %d)", formatHashXXMul, formatHashXXFmix)
	}
	h.lay = newLayout(uint(bits), uint(slots))
	if v == formatVersion3 {
		h.lay = packedLayout()
	}
	return h, nil
}

// formatVersionOf returns the version written for layout l: 1 for four
// slots of 8 or 12 bits, 2 for the others.
func formatVersionOf(l layout) uint16 {
	if l.packed {
		return formatVersion3
	}
	if l.b == slotsPerBucket && (l.f == 8 || l.f == 12) {
		return formatVersion
	}
	return formatVersion2
}

// tableScan is what fillWords learns about a stored table: the first bucket
// whose word has bits outside its slots, and the number of fingerprints.
type tableScan struct {
	bad   bool
	index uint64 // first bad bucket
	word  uint64 // its stored word
	slots uint64 // non-empty slots so far
}

// fillWords decodes the little-endian words of p into words (the buckets
// from first on), clearing and recording bits outside the slots and counting
// fingerprints.
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

// checkTable reports a stored word with bits outside its slots, or a stored
// item count that disagrees with the table.
func checkTable(h header, s tableScan, count uint64) error {
	if s.bad {
		if h.lay.packed {
			return errCorrupt("cuckoo: word %d holds %#016x: bits 62-63 must be zero in the packed layout (the top slot takes fingerprints 1 to 63)", s.index, s.word)
		}
		return errCorrupt("cuckoo: bucket %d holds %#016x: a value out of range for %d %d-bit slots", s.index, s.word, h.lay.b, h.lay.f)
	}
	if count != s.slots {
		return errCorrupt("cuckoo: item count mismatch: the trailer says %d, the table holds %d", count, s.slots)
	}
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

// errFormat returns a decoding error matching ErrFormat.
func errFormat(format string, args ...any) error {
	return &decodeError{msg: fmt.Sprintf(format, args...), class: ErrFormat}
}

// errCorrupt returns a decoding error matching ErrCorrupt.
func errCorrupt(format string, args ...any) error {
	return &decodeError{msg: fmt.Sprintf(format, args...), class: ErrCorrupt}
}

// hashAlg returns the id of the hash algorithm the filter places keys with.
// For seed 0 both algorithms use XXH64 as it is; a filter with seed 0 says 1,
// which every version of this package reads.
func (f *Filter) hashAlg() uint8 {
	if f.fmix || f.seed == 0 {
		return formatHashXXFmix
	}
	return formatHashXXMul
}
