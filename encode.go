package cuckoo

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// The encodings of FORMAT.md: the Filter's, and what the Growing filter's
// (grow_encode.go) shares: a header that begins with magic, version, bits,
// slots and hash id, the words, and an XXH64 checksum of all before it.
// Decoders accept only what encoders write: re-encoding gives the input.
const (
	formatMagic = "CUCKOOFL"
	// 1: four slots of 8 or 12 bits; 2: the other one-word layouts (so that
	// version 1 readers name the version); 3: the packed layout.
	formatVersion, formatVersion2, formatVersion3 = 1, 2, 3
	formatHashXXFmix                              = 1 // XXH64; for a non-zero seed, xored with it and passed through fmix64
	formatHashXXMul                               = 2 // XXH64; for a non-zero seed, xored with it and multiplied by fmix64(seed)|1
	formatHeaderSize, formatTrailerSize           = 32, 16
	encodeChunk                                   = 16 << 10 // a decoder's buffer
	decodeInitialWords                            = 8 << 10  // a streamed table's first size (decoder.table)
	writeChunk                                    = 1 << 20  // the most WriteTo hands to one w.Write
)

func encodedSize(n uint64) uint64 { return formatHeaderSize + 8*n + formatTrailerSize }

// WriteTo writes the filter's encoding to w and returns the bytes written.
// Its snapshot holds every key inserted before the call and not deleted
// until it returns (keys inserted or deleted meanwhile may or may not be in
// it) and its table's item count. It is taken before w is written to, so w
// may use the filter. w's errors come wrapped, with the prefix "cuckoo: ".
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	data, err := f.MarshalBinary()
	return writeEncoding(w, data, err)
}

// MarshalBinary returns the encoding of FORMAT.md, a snapshot as WriteTo
// takes it. On a zero Filter it returns ErrZeroFilter.
func (f *Filter) MarshalBinary() ([]byte, error) {
	if f.m == 0 {
		return nil, ErrZeroFilter
	}
	p := appendHeader(make([]byte, 0, encodedSize(uint64(len(f.t.words)))), formatMagic,
		formatVersionOf(f.lay), byte(f.lay.f), byte(f.SlotsPerBucket()), hashAlg(f.seed, f.fmix))
	p = binary.LittleEndian.AppendUint64(append(p, 0, 0, 0), f.m)
	p = binary.LittleEndian.AppendUint64(p, f.seed)[:formatHeaderSize+8*len(f.t.words)] // room made above
	count := f.snapshot(p[formatHeaderSize:], nil)
	// The count follows the table: a snapshot learns it only as it copies.
	return appendSum(binary.LittleEndian.AppendUint64(p, count)), nil
}

// Clone returns a filter sharing nothing with f, with its mode, layout,
// seed and capacity and a snapshot, as WriteTo takes it, of its
// fingerprints. Cloning a zero Filter gives a zero Filter.
func (f *Filter) Clone() *Filter {
	c := new(Filter)
	if f.m == 0 {
		return c
	}
	words := make([]atomic.Uint64, len(f.t.words))
	n := f.snapshot(nil, words)
	c.adopt(words, f.lay, f.seed, hashAlg(f.seed, f.fmix), f.mode, int64(n))
	return c
}

// snapshot runs copyWords on f's table. Claim: the words hold a copy of
// every key inserted before the snapshot began and not deleted before it
// ended, whatever colliding keys (same fingerprint and pair, in either
// order) do meanwhile. Proof: the snapshot gate (snapshot.go) keeps moves
// out, so copies come and go only by inserts and deletes. A pair's lower
// bucket is read first (t1), the upper one later (t2; a packed pair's word
// once), the order of every search and Delete (searchPair): "One order for
// every search" (twophase.go) with no move, whose counting shows a copy in
// the lower bucket at t1 or the upper one at t2. □ Deletes in their key's
// bucket order would break it (TestSnapshotAgainstCollidingKeys).
func (f *Filter) snapshot(p []byte, words []atomic.Uint64) uint64 {
	f.gate.beginSnapshot()
	defer f.gate.endSnapshot()
	return copyWords(&f.t, &f.lay, f, p, words)
}

// copyWords copies t's words into words, or into p as FORMAT.md has them, each
// read once, in ascending order, K-CAS references resolved and bits outside l's
// slots cleared, and counts the fingerprints; owner names t to snapshotStalls.
func copyWords(t *kcasTable, l *layout, owner any, p []byte, words []atomic.Uint64) uint64 {
	var count uint64
	src := t.words
	for i := range src {
		w := src[i].Load()
		if w&tagMask != 0 {
			w = t.load(uint64(i))
		}
		w &= l.fpMask
		count += uint64(l.occupied(w))
		if words != nil {
			words[i].Store(w)
		} else {
			binary.LittleEndian.PutUint64(p[8*i:], w)
		}
		if raceEnabled {
			snapshotStalled(owner, uint64(i))
		}
	}
	return count
}

// appendHeader appends the fields both headers begin with.
func appendHeader(p []byte, magic string, version uint16, bits, slots, alg byte) []byte {
	return append(binary.LittleEndian.AppendUint16(append(p, magic...), version), bits, slots, alg)
}

// hashAlg returns a filter's hash algorithm id: 1 for seed 0 (where both are
// XXH64 as it is), which every version reads.
func hashAlg(seed uint64, fmix bool) uint8 {
	if fmix || seed == 0 {
		return formatHashXXFmix
	}
	return formatHashXXMul
}

func appendSum(p []byte) []byte { return binary.LittleEndian.AppendUint64(p, xxhash.Sum64(p)) }

// writeEncoding writes data, an encoding (unless err), to w in pieces of at
// most writeChunk bytes and returns what w took (a failing writer reports
// what it took of a piece), with w's error wrapped.
func writeEncoding(w io.Writer, data []byte, err error) (int64, error) {
	var n int64
	for err == nil && len(data) > 0 {
		p := data[:min(len(data), writeChunk)]
		k, werr := w.Write(p)
		if n, data = n+int64(k), data[len(p):]; werr != nil || k < len(p) {
			err = fmt.Errorf("cuckoo: writing filter: %w", cmp.Or(werr, io.ErrShortWrite))
		}
	}
	return n, err
}

// UnmarshalBinary replaces the filter's contents with the filter encoded in
// data, which must hold exactly one encoding (MarshalBinary's or WriteTo's).
// A zero Filter becomes a LockFree filter; another keeps its mode. On error
// (see ErrTruncated) the filter is unchanged. It never allocates more than
// the size of data, and must not run concurrently with other methods of f.
func (f *Filter) UnmarshalBinary(data []byte) error {
	_, err := f.decode(&decoder{data: data, sum: xxhash.New()})
	return err
}

// ReadFrom is UnmarshalBinary for the encoding at the start of r: it reads
// exactly the encoding (filters can follow each other in a stream) and
// returns the bytes read. It allocates the table as its bytes arrive (from
// *bytes.Reader, *strings.Reader and *bytes.Buffer at once), so a hostile
// stream costs memory in proportion to its length, not to its claims. A
// truncated stream's error also matches io.ErrUnexpectedEOF; r's errors
// come wrapped. It must not run concurrently with other methods.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	return f.decode(&decoder{r: r, buf: make([]byte, encodeChunk), sum: xxhash.New()})
}

// decode reads one encoding from d into a fresh table, installed when every
// check has passed, and returns the bytes read. The header comes in checked
// steps: a stream that is not a filter is reported so, not as truncated.
func (f *Filter) decode(d *decoder) (int64, error) {
	var h header
	if d.header(h.parse, len(formatMagic), 10, formatHeaderSize); d.err != nil {
		return d.n, d.err
	}
	d.want = encodedSize(h.words)
	if size := uint64(d.n) + uint64(len(d.data)); d.r == nil && size < d.want {
		return d.n, errTruncated(size, d.want) // before the table is allocated
	} else if d.r == nil && size > d.want {
		return d.n, errFormat("cuckoo: %d bytes of trailing data after the %d-byte filter", size-d.want, d.want)
	}
	var bad error // the first word with bits outside its slots
	slots, l := uint64(0), &h.lay
	words, count := d.table(h.words, func(first uint64, ws []atomic.Uint64, p []byte) error {
		n := 0
		for j := range ws {
			w := binary.LittleEndian.Uint64(p[8*j:])
			if w&^l.fpMask != 0 && bad == nil && l.packed {
				bad = errCorrupt("cuckoo: word %d holds %#016x: bits 62-63 must be zero in the packed layout (the top slot takes fingerprints 1 to 63)", first+uint64(j), w)
			} else if w&^l.fpMask != 0 && bad == nil {
				bad = errCorrupt("cuckoo: bucket %d holds %#016x: a value out of range for %d %d-bit slots", first+uint64(j), w, l.b, l.f)
			}
			n += l.occupied(w)
			ws[j].Store(w & l.fpMask)
		}
		slots += uint64(n)
		return nil
	}), d.uint64()
	if d.checksum(); d.err != nil || bad != nil {
		return d.n, cmp.Or(d.err, bad)
	} else if count != slots {
		return d.n, errCorrupt("cuckoo: item count mismatch: the trailer says %d, the table holds %d", count, slots)
	}
	f.adopt(words, h.lay, h.seed, h.hash, f.Mode(), int64(count))
	return d.n, nil
}

// decoder reads one encoding from r through buf, or from data when r is
// nil, counting and summing the bytes; after its first error reads nothing.
type decoder struct {
	r         io.Reader
	data, buf []byte
	n         int64
	want      uint64 // the encoding's size, once known; 0 inside a Filter's header
	sum       *xxhash.Digest
	err       error
}

// next consumes and returns the next k bytes (k <= encodeChunk; valid until
// the next call), or those there are.
func (d *decoder) next(k int) []byte {
	if d.err != nil {
		return nil
	}
	var p []byte
	var err error
	if d.r != nil {
		k, err = io.ReadFull(d.r, d.buf[:k])
		p = d.buf[:k]
	} else if p, d.data = d.data[:min(k, len(d.data))], d.data[min(k, len(d.data)):]; len(p) < k {
		err = io.ErrUnexpectedEOF
	}
	d.n += int64(len(p))
	d.sum.Write(p)
	if err == io.EOF || err == io.ErrUnexpectedEOF || d.want != 0 && errors.Is(err, io.ErrUnexpectedEOF) {
		d.err = errTruncated(uint64(d.n), d.want)
	} else if err != nil {
		d.err = fmt.Errorf("cuckoo: reading filter: %w", err)
	}
	return p
}

func (d *decoder) uint64() uint64 {
	if p := d.next(8); d.err == nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// header reads the header in steps ending at ends, passing check all that
// has arrived after each; check's error comes before a truncation.
func (d *decoder) header(check func([]byte) error, ends ...int) {
	hdr := make([]byte, 0, ends[len(ends)-1])
	for _, end := range ends {
		if d.err == nil {
			hdr = append(hdr, d.next(end-len(hdr))...)
			d.err = cmp.Or(check(hdr), d.err)
		}
	}
}

// table reads n words (d.err is nil): fill stores each piece p of their
// bytes, the words from first on, into ws (one word per 8 bytes) and
// returns an error that stops the reading. It allocates the table as the
// bytes arrive (decodeInitialWords, doubled), at once when they are known
// to be there: a header claiming a huge table costs nothing until they are.
func (d *decoder) table(n uint64, fill func(first uint64, ws []atomic.Uint64, p []byte) error) []atomic.Uint64 {
	known := uint64(len(d.data)) // the bytes known to be left: another reader's Len is a claim
	switch r := d.r.(type) {
	case *bytes.Reader, *strings.Reader, *bytes.Buffer:
		known = uint64(r.(interface{ Len() int }).Len())
	}
	size := min(n, decodeInitialWords)
	if known >= 8*n {
		size = n
	}
	words := make([]atomic.Uint64, size)
	for i := uint64(0); i < n && d.err == nil; {
		if i == uint64(len(words)) {
			grown := make([]atomic.Uint64, min(n, 2*i))
			copy(grown, words) // not yet shared: plain copies are fine
			words = grown
		}
		p := d.next(int(8 * min(uint64(len(words))-i, encodeChunk/8)))
		k := uint64(len(p) / 8)
		if err := fill(i, words[i:i+k], p); err != nil {
			d.err = err
		}
		i += k
	}
	return words
}

// checksum reads the checksum and compares it with every byte's before it.
func (d *decoder) checksum() {
	sum := d.sum.Sum64()
	if stored := d.uint64(); d.err == nil && stored != sum {
		d.err = errCorrupt("cuckoo: checksum mismatch: stored %#016x, computed %#016x (corrupted data)", stored, sum)
	}
}

// encKind is what the two framings differ in (otherErr names the loader).
type encKind struct {
	magic, name, other, otherErr, format string
	lo, hi                               uint16
}

var fixedKind = encKind{formatMagic, "filter", growFormatMagic,
	"this is a Growing filter's encoding, not a Filter's: load it with Growing.ReadFrom or Growing.UnmarshalBinary (or ReadAny, which reads either)",
	"format", formatVersion, formatVersion3}

// checkStart checks magic and version as far as data goes (version 0 then).
func (k *encKind) checkStart(data []byte) (uint16, error) {
	head, v := string(data[:min(len(data), len(k.magic))]), uint16(0)
	if len(data) >= 10 {
		v = binary.LittleEndian.Uint16(data[8:])
	}
	var c formatChecks
	c.check(head == k.other, "cuckoo: magic %q: %s", head, k.otherErr)
	c.check(head != k.magic[:len(head)], "cuckoo: wrong magic %q: not an encoded %s (want %q)", head, k.name, k.magic)
	c.check(len(data) >= 10 && (v < k.lo || v > k.hi), "cuckoo: unknown %s version %d (this package reads versions %d to %d)", k.format, v, k.lo, k.hi)
	return v, c.err
}

type header struct {
	lay         layout
	words, seed uint64 // words: the bucket count, or half of it in the packed layout
	hash        uint8  // hash algorithm id
}

// parse reads and checks the header at the start of data, as far as it goes.
func (h *header) parse(data []byte) error {
	v, err := fixedKind.checkStart(data)
	if err != nil || len(data) < formatHeaderSize {
		return err
	}
	bits, slots, hash := data[10], data[11], data[12]
	m, seed := binary.LittleEndian.Uint64(data[16:]), binary.LittleEndian.Uint64(data[24:])
	want, packed := formatVersionOf(newLayout(uint(bits), uint(slots))), v == formatVersion3
	var c formatChecks
	c.check(!validFingerprintBits(int(bits)), "cuckoo: impossible parameters: fingerprint bits %d (want 8, 12 or 15)", bits)
	c.check(!validLayout(uint(bits), uint(slots)), "cuckoo: impossible parameters: %d slots per bucket with %d-bit fingerprints (want 4, or 5 with 12-bit)", slots, bits)
	c.check(packed && (bits != 8 || slots != packedSlots), "cuckoo: impossible parameters: format version 3 (the packed layout) with %d-bit fingerprints and %d slots per bucket (want 8 and 4)", bits, slots)
	c.check(!packed && v != want, "cuckoo: impossible parameters: format version %d with %d-bit fingerprints and %d slots per bucket (written as version %d)", v, bits, slots, want)
	c.check(hash != formatHashXXFmix && hash != formatHashXXMul, "cuckoo: unknown hash algorithm id %d (want %d or %d)", hash, formatHashXXFmix, formatHashXXMul)
	c.check(data[13]|data[14]|data[15] != 0, "cuckoo: impossible parameters: reserved header bytes % x are not zero", data[13:16])
	c.check(packed && (m == 0 || m%2 != 0 || m > 2*maxBuckets), "cuckoo: impossible parameters: bucket count %d (want an even number from 2 to %d)", m, uint64(2*maxBuckets))
	c.check(!packed && (m == 0 || m > maxBuckets), "cuckoo: impossible parameters: bucket count %d (want 1 to %d)", m, uint64(maxBuckets))
	c.check(hash == formatHashXXMul && seed == 0, "cuckoo: impossible parameters: hash algorithm %d with seed 0 (written as algorithm %d)", formatHashXXMul, formatHashXXFmix)
	*h = header{newLayout(uint(bits), uint(slots)), m, seed, hash}
	if packed {
		h.lay, h.words = packedLayout(), m/2
	}
	return c.err
}

// formatChecks keeps the ErrFormat error of the first check that fails.
type formatChecks struct{ err error }

func (c *formatChecks) check(bad bool, format string, args ...any) {
	if bad && c.err == nil {
		c.err = errFormat(format, args...)
	}
}

func formatVersionOf(l layout) uint16 {
	switch {
	case l.packed:
		return formatVersion3
	case l.b == slotsPerBucket && (l.f == 8 || l.f == 12):
		return formatVersion
	}
	return formatVersion2
}

// errTruncated reports data that ended after got bytes; want is the size the
// header promised, or 0 if the header itself was cut short.
func errTruncated(got, want uint64) error {
	if want == 0 {
		return &decodeError{fmt.Sprintf("cuckoo: truncated data: %d bytes end inside the %d-byte header: %v", got, formatHeaderSize, io.ErrUnexpectedEOF), []error{ErrTruncated, io.ErrUnexpectedEOF}}
	}
	return &decodeError{fmt.Sprintf("cuckoo: truncated data: %d of %d bytes: %v", got, want, io.ErrUnexpectedEOF), []error{ErrTruncated, io.ErrUnexpectedEOF}}
}

func errFormat(format string, args ...any) error {
	return &decodeError{fmt.Sprintf(format, args...), []error{ErrFormat}}
}
func errCorrupt(format string, args ...any) error {
	return &decodeError{fmt.Sprintf(format, args...), []error{ErrCorrupt}}
}
