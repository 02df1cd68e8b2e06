package cuckoo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
)

// The serialized form of a Growing filter (FORMAT.md, "Growing filter
// format", has the full description).
//
//	offset  size  field
//	0       8     magic "CUCKOOGR"
//	8       2     format version (3)
//	10      1     fingerprint bits (12)
//	11      1     slots per bucket (4)
//	12      1     hash algorithm id (2, as in the fixed format; 1 for seed 0)
//	13      1     lane bits (14)
//	14      2     reserved, zero
//	16      8     base buckets c (1 to 2^31; NewGrowing makes at least 1024)
//	24      8     seed
//	32      1     doublings d of the table (0 to 19, c·2^d <= 2^31)
//	33      1     doubling bound (d to 19)
//	34      14    reserved, zero
//	48      8·m   the m = c·2^d bucket words, little-endian, with their
//	              counter and frozen bits zero
//	end-8   8     xxhash64 (seed 0) of every byte before it
//
// Versions 1 (a tree of fixed tables) and 2 (no masks: an entry in its
// second bucket stored its key's index bits) are no longer read.

const (
	growFormatMagic      = "CUCKOOGR"
	growFormatVersion    = 3
	growFormatHeaderSize = 48
)

// WriteTo writes the filter in the growing format of FORMAT.md. It may run
// while other goroutines use the filter: every key inserted before it
// began and not deleted is found by a filter read back from what it wrote.
// While it copies the table, relocations and the copying of an expansion
// wait (inserts into free slots, deletes and lookups go on); it copies the
// table first and writes it out after, so w does not hold them back.
// Errors from w are returned wrapped, with the prefix "cuckoo: ".
func (g *Growing) WriteTo(w io.Writer) (int64, error) {
	if g.base == 0 {
		return 0, ErrZeroFilter
	}
	data, d := g.capture()
	var hdr [growFormatHeaderSize]byte
	copy(hdr[:], growFormatMagic)
	binary.LittleEndian.PutUint16(hdr[8:], growFormatVersion)
	hdr[10] = DefaultFingerprintBits
	hdr[11] = slotsPerBucket
	hdr[12] = formatHashXXMul
	if g.seed == 0 {
		hdr[12] = formatHashXXFmix
	}
	hdr[13] = laneBits
	binary.LittleEndian.PutUint64(hdr[16:], g.base)
	binary.LittleEndian.PutUint64(hdr[24:], g.seed)
	hdr[32] = byte(d)
	hdr[33] = byte(g.maxD)

	var sum xxhash.Digest
	sum.Reset()
	var n int64
	write := func(p []byte) error {
		sum.Write(p)
		return writeChunks(w, p, &n)
	}
	if err := write(hdr[:]); err != nil {
		return n, err
	}
	if err := write(data); err != nil {
		return n, err
	}
	var tr [8]byte
	binary.LittleEndian.PutUint64(tr[:], sum.Sum64())
	return n, write(tr[:])
}

// capture returns the words of the table lookups search, encoded, and its
// doublings. Under the snapshot gate no relocation and no copying of an
// expansion runs, so no entry moves while it reads: the table is the
// lookups' table throughout, holding every key whose insert finished before
// (grow.go's claim), and each word is read whole.
func (g *Growing) capture() ([]byte, uint) {
	g.gate.beginSnapshot()
	defer g.gate.endSnapshot()
	x := g.searched()
	data := make([]byte, 8*x.m)
	for i := range x.t.words {
		w := x.t.load(uint64(i)) & lanesMask
		binary.LittleEndian.PutUint64(data[8*i:], w)
	}
	return data, uint(x.d)
}

// MarshalBinary returns the encoding WriteTo writes, with its guarantees.
func (g *Growing) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	if _, err := g.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// UnmarshalBinary replaces the filter's contents with the growing filter
// encoded in data, at the size it had when it was written. It rejects a
// wrong magic or version, impossible parameters, a damaged table (a lane
// without its marker, a word with bits outside its lanes), a checksum
// mismatch and bytes after the encoding; the errors match ErrTruncated,
// ErrFormat or ErrCorrupt. On error the filter is unchanged. It keeps the
// filter's mode (LockFree for a zero Growing). It must not run
// concurrently with any other method of g.
func (g *Growing) UnmarshalBinary(data []byte) error {
	r := bytes.NewReader(data)
	ng, _, err := g.decode(r)
	if err != nil {
		return err
	}
	if r.Len() > 0 {
		return errFormat("cuckoo: %d bytes of trailing data after the growing filter", r.Len())
	}
	g.install(ng)
	return nil
}

// ReadFrom replaces the filter's contents with the growing filter encoded
// at the start of r and returns the number of bytes it read; it reads
// exactly the encoding. Memory grows with the data that arrives, not with
// what the header claims. Errors are those of UnmarshalBinary, or r's,
// wrapped. On error the filter is unchanged. It keeps the filter's mode
// (LockFree for a zero Growing). It must not run concurrently with any
// other method of g.
func (g *Growing) ReadFrom(r io.Reader) (int64, error) {
	ng, n, err := g.decode(r)
	if err == nil {
		g.install(ng)
	}
	return n, err
}

// install makes the decoded filter ng's parameters and table g's.
func (g *Growing) install(ng *Growing) {
	g.setup(ng.base, ng.seed, g.mode, ng.maxD)
	x := ng.cur.Load()
	if g.mode == Locked {
		x.locks = newStripedLocks(int(x.m))
	}
	g.count.add(ng.count.sum())
	g.cur.Store(x)
}

// decode reads a growing filter from r into a new Growing, and returns it
// with the number of bytes read.
func (g *Growing) decode(r io.Reader) (*Growing, int64, error) {
	var sum xxhash.Digest
	sum.Reset()
	cr := &countingReader{r: io.TeeReader(r, &sum)}

	var hdr [growFormatHeaderSize]byte
	k, err := io.ReadFull(cr, hdr[:])
	if err := checkGrowHeader(hdr[:k]); err != nil {
		return nil, cr.n, err
	}
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, cr.n, errTruncated(uint64(k), growFormatHeaderSize)
		}
		return nil, cr.n, fmt.Errorf("cuckoo: reading filter: %w", err)
	}
	base := binary.LittleEndian.Uint64(hdr[16:])
	seed := binary.LittleEndian.Uint64(hdr[24:])
	d, maxD := uint(hdr[32]), uint(hdr[33])
	m := base << d
	size := growFormatHeaderSize + 8*m + 8

	ng := &Growing{}
	ng.setup(base, seed, LockFree, maxD)
	// Read the table in pieces, so that a header that claims a huge table
	// costs only the memory of the data that really arrives.
	const piece = 1 << 16 // words
	words := make([]uint64, 0, min(m, piece))
	buf := make([]byte, 8*min(m, piece))
	var entries int64
	for len(words) < int(m) {
		k := min(int(m)-len(words), piece)
		if _, err := io.ReadFull(cr, buf[:8*k]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, cr.n, errTruncated(uint64(cr.n), size)
			}
			return nil, cr.n, fmt.Errorf("cuckoo: reading filter: %w", err)
		}
		for i := range k {
			w := binary.LittleEndian.Uint64(buf[8*i:])
			if err := checkGrowWord(w, uint64(len(words))); err != nil {
				return nil, cr.n, err
			}
			entries += int64(laneCount(w))
			words = append(words, w)
		}
	}
	digest := sum.Sum64()
	var tr [8]byte
	if _, err := io.ReadFull(cr, tr[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, cr.n, errTruncated(uint64(cr.n), size)
		}
		return nil, cr.n, fmt.Errorf("cuckoo: reading filter: %w", err)
	}
	if stored := binary.LittleEndian.Uint64(tr[:]); stored != digest {
		return nil, cr.n, errChecksum(stored, digest)
	}
	x := ng.newTable(d)
	for i, w := range words {
		x.t.words[i].Store(w)
	}
	ng.count.add(entries)
	ng.cur.Store(x)
	return ng, cr.n, nil
}

// checkGrowWord rejects a bucket word that no filter writes: bits outside
// the lanes, or a lane with a tag but no marker.
func checkGrowWord(w, i uint64) error {
	if w&^lanesMask != 0 {
		return errCorrupt("cuckoo: bucket %d: word %#016x has bits above its lanes", i, w)
	}
	for s := range slotsPerBucket {
		if v := lane(w, s); v != 0 && v&0xff == 0 {
			return errCorrupt("cuckoo: bucket %d: lane %d holds %#04x, an entry without its marker", i, s, v)
		}
	}
	return nil
}

// checkGrowHeader validates the header at the start of data, which may be
// shorter than a header (then only the bytes present are checked).
func checkGrowHeader(data []byte) error {
	k := min(len(data), len(growFormatMagic))
	if string(data[:k]) != growFormatMagic[:k] {
		return errFormat("cuckoo: wrong magic %q: not an encoded growing filter (want %q)", data[:k], growFormatMagic)
	}
	if len(data) < 10 {
		return nil
	}
	if v := binary.LittleEndian.Uint16(data[8:]); v != growFormatVersion {
		switch v {
		case 1:
			return errFormat("cuckoo: growing format version 1 (a tree of tables) is no longer read; this package reads version %d", growFormatVersion)
		case 2:
			return errFormat("cuckoo: growing format version 2 (second buckets without masks) is no longer read; this package reads version %d", growFormatVersion)
		}
		return errFormat("cuckoo: unknown growing format version %d (this package reads version %d)", v, growFormatVersion)
	}
	if len(data) < growFormatHeaderSize {
		return nil
	}
	if f := data[10]; f != DefaultFingerprintBits {
		return errFormat("cuckoo: impossible parameters: fingerprint bits %d (want %d)", f, DefaultFingerprintBits)
	}
	if s := data[11]; s != slotsPerBucket {
		return errFormat("cuckoo: impossible parameters: %d slots per bucket (want %d)", s, slotsPerBucket)
	}
	if l := data[13]; l != laneBits {
		return errFormat("cuckoo: impossible parameters: %d-bit lanes (want %d)", l, laneBits)
	}
	seed := binary.LittleEndian.Uint64(data[24:])
	switch alg := data[12]; {
	case alg != formatHashXXFmix && alg != formatHashXXMul:
		return errFormat("cuckoo: unknown hash algorithm id %d (want %d or %d)", alg, formatHashXXFmix, formatHashXXMul)
	case alg == formatHashXXMul && seed == 0, alg == formatHashXXFmix && seed != 0:
		return errFormat("cuckoo: impossible parameters: hash algorithm %d with seed %#x (a growing filter writes %d for seed 0, %d otherwise)", alg, seed, formatHashXXFmix, formatHashXXMul)
	}
	for _, b := range append(data[14:16:16], data[34:48]...) {
		if b != 0 {
			return errFormat("cuckoo: impossible parameters: reserved header bytes are not zero")
		}
	}
	base := binary.LittleEndian.Uint64(data[16:])
	if base == 0 || base > maxBuckets {
		return errFormat("cuckoo: impossible parameters: %d base buckets (want 1 to %d)", base, uint64(maxBuckets))
	}
	d, maxD := uint(data[32]), uint(data[33])
	if d > growMaxDoublings || base<<d > maxBuckets {
		return errFormat("cuckoo: impossible parameters: %d doublings of %d buckets (want at most %d doublings and %d buckets)", d, base, growMaxDoublings, uint64(maxBuckets))
	}
	if maxD < d || maxD > growMaxDoublings {
		return errFormat("cuckoo: impossible parameters: doubling bound %d with %d doublings (want %d to %d)", maxD, d, d, growMaxDoublings)
	}
	return nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}
