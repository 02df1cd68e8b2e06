package cuckoo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
)

// The serialized form of a Growing filter: FORMAT.md, "Growing filter
// format". Version 4 lacks split pointers and is read as it is; version 3
// also has 14-bit lanes, read through lanesFrom14.

const (
	growFormatMagic      = "CUCKOOGR"
	growFormatVersion    = 5
	growFormatVersion4   = 4 // no split pointers
	growFormatVersion14  = 3 // no split pointers, 14-bit lanes
	growFormatHeaderSize = 48
	growShardRecordSize  = 16
	growFormatPrefix     = growFormatHeaderSize + growShards*growShardRecordSize
)

// WriteTo writes the filter in the growing format of FORMAT.md. It may run
// while other goroutines use the filter: every key inserted before it
// began and not deleted is found by a filter read back from what it wrote.
// While it copies the tables, relocations, deletes and the copying of an
// expansion wait (inserts into free slots and lookups go on); w does not
// hold them back. Errors from w are returned wrapped, with the prefix
// "cuckoo: ".
func (g *Growing) WriteTo(w io.Writer) (int64, error) {
	if g.st == nil {
		return 0, ErrZeroFilter
	}
	data, xs := g.capture()
	var hdr [growFormatPrefix]byte
	copy(hdr[:], growFormatMagic)
	binary.LittleEndian.PutUint16(hdr[8:], growFormatVersion)
	hdr[10] = DefaultFingerprintBits
	hdr[11] = slotsPerBucket
	hdr[12] = formatHashXXMul
	if g.seed == 0 {
		hdr[12] = formatHashXXFmix
	}
	hdr[13] = laneBits
	hdr[14] = growShards
	binary.LittleEndian.PutUint64(hdr[24:], g.seed)
	for i := range g.st.shards {
		sh := &g.st.shards[i]
		rec := hdr[growFormatHeaderSize+i*growShardRecordSize:]
		binary.LittleEndian.PutUint64(rec, sh.base)
		rec[8] = byte(xs[i].d)
		rec[9] = byte(sh.maxD)
		binary.LittleEndian.PutUint32(rec[10:], uint32(xs[i].p))
	}

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

// capture returns the words of the tables lookups search, encoded shard by
// shard, and the tables.
//
// Claim: the words hold an entry matching every key x inserted before
// capture began and not deleted before it ended. Proof: the snapshot gate
// keeps Deletes, moves and expansion copies apart from it (Dekker's
// protocol, snapshot.go; grow_table.go, "Deletes wait for snapshots"), so
// while it reads, entries are only added to the tables it reads, the ones
// lookups search, which hold every key whose insert finished (grow.go). x
// had a matching entry when capture began (youngest-match rule); it stays
// in its word until capture ends, and capture reads that word once,
// whole. □ Without the gate in deleteIn,
// TestGrowingSnapshotAgainstCollidingDeletes loses the key in both modes.
func (g *Growing) capture() ([]byte, [growShards]*growTable) {
	g.gate.beginSnapshot()
	defer g.gate.endSnapshot()
	var xs [growShards]*growTable
	m := uint64(0)
	for i := range g.st.shards {
		xs[i] = g.st.shards[i].searched()
		m += xs[i].m
	}
	data := make([]byte, 0, 8*m)
	for _, x := range xs {
		for i := range uint64(len(x.t.words)) {
			data = binary.LittleEndian.AppendUint64(data, x.t.load(i)&lanesMask)
			if raceEnabled {
				snapshotStalled(x, i)
			}
		}
	}
	return data, xs
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
	st, seed, _, err := g.decode(r)
	if err != nil {
		return err
	}
	if r.Len() > 0 {
		return errFormat("cuckoo: %d bytes of trailing data after the growing filter", r.Len())
	}
	g.install(st, seed)
	return nil
}

// ReadFrom is UnmarshalBinary for the encoding at the start of r: it reads
// exactly the encoding and returns the number of bytes it read. Memory
// grows with the data that arrives, not with what the header claims.
// Errors of r are returned wrapped.
func (g *Growing) ReadFrom(r io.Reader) (int64, error) {
	st, seed, n, err := g.decode(r)
	if err == nil {
		g.install(st, seed)
	}
	return n, err
}

// install makes the decoded state st, with seed, g's.
func (g *Growing) install(st *growState, seed uint64) {
	if g.mode == Locked {
		for i := range st.shards {
			x := st.shards[i].cur.Load()
			x.locks = newStripedLocks(int(x.m))
		}
	}
	g.setup(seed, g.mode, st)
}

// decode reads a growing filter from r into a new state and returns it,
// its seed and the number of bytes read.
func (g *Growing) decode(r io.Reader) (*growState, uint64, int64, error) {
	var sum xxhash.Digest
	sum.Reset()
	cr := &countingReader{r: io.TeeReader(r, &sum)}

	read := func(p []byte, want uint64) error {
		_, err := io.ReadFull(cr, p)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return errTruncated(uint64(cr.n), want)
		}
		if err != nil {
			return fmt.Errorf("cuckoo: reading filter: %w", err)
		}
		return nil
	}
	var hdr [growFormatPrefix]byte
	rerr := read(hdr[:], growFormatPrefix)
	if err := checkGrowHeader(hdr[:cr.n]); err != nil {
		return nil, 0, cr.n, err
	}
	if rerr != nil {
		return nil, 0, cr.n, rerr
	}
	seed := binary.LittleEndian.Uint64(hdr[24:])
	lb := int(hdr[13]) // laneBits, or lane14Bits in version 3 (checked)
	var bases, ds, ps, maxD [growShards]uint64
	size, largest := uint64(growFormatPrefix+8), uint64(0)
	for i := range bases {
		rec := hdr[growFormatHeaderSize+i*growShardRecordSize:]
		bases[i] = binary.LittleEndian.Uint64(rec)
		ds[i], maxD[i] = uint64(rec[8]), uint64(rec[9])
		ps[i] = uint64(binary.LittleEndian.Uint32(rec[10:])) // 0 before version 5 (checked)
		size += 8 * (bases[i]<<ds[i] + ps[i])
		largest = max(largest, bases[i]<<ds[i]+ps[i])
	}
	st := newGrowState(&bases, &maxD, seed)

	// Tables are read in pieces, so that a header that claims huge tables
	// costs only the memory of the data that arrives.
	const piece = 1 << 16 // words
	buf := make([]byte, 8*min(largest, piece))
	var tables [growShards][]uint64
	var entries [growShards]int64
	for i := range tables {
		m := bases[i]<<ds[i] + ps[i]
		words := make([]uint64, 0, min(m, piece))
		for len(words) < int(m) {
			k := min(int(m)-len(words), piece)
			if err := read(buf[:8*k], size); err != nil {
				return nil, 0, cr.n, err
			}
			for j := range k {
				w := binary.LittleEndian.Uint64(buf[8*j:])
				if err := checkGrowWord(w, lb, i, uint64(len(words))); err != nil {
					return nil, 0, cr.n, err
				}
				if lb == lane14Bits {
					w = lanesFrom14(w)
				}
				entries[i] += int64(laneCount(w))
				words = append(words, w)
			}
		}
		tables[i] = words
	}
	digest := sum.Sum64()
	var tr [8]byte
	if err := read(tr[:], size); err != nil {
		return nil, 0, cr.n, err
	}
	if stored := binary.LittleEndian.Uint64(tr[:]); stored != digest {
		return nil, 0, cr.n, errChecksum(stored, digest)
	}
	for i := range st.shards {
		sh := &st.shards[i]
		x := st.newTable(sh, ds[i], ps[i], LockFree)
		for j, w := range tables[i] {
			x.t.words[j].Store(w)
		}
		sh.count.add(entries[i])
		sh.cur.Store(x)
	}
	return st, seed, cr.n, nil
}

// checkGrowWord rejects a word of four lb-bit lanes (15, or 14 in
// version 3) that no filter writes: bits above the lanes, or an entry (a
// tag above an lb-6-bit tail) without its marker.
func checkGrowWord(w uint64, lb, shard int, i uint64) error {
	if w>>(4*lb) != 0 {
		return errCorrupt("cuckoo: shard %d, bucket %d: word %#016x has bits above its %d-bit lanes", shard, i, w, lb)
	}
	for s := range slotsPerBucket {
		if v := w >> (s * lb) & (1<<lb - 1); v != 0 && v&(1<<(lb-growTagBits)-1) == 0 {
			return errCorrupt("cuckoo: shard %d, bucket %d: lane %d holds %#04x, an entry without its marker", shard, i, s, v)
		}
	}
	return nil
}

// Version 3's lanes: a 6-bit tag above an 8-bit tail.
const (
	lane14Bits = 14
	lane14Mask = 1<<lane14Bits - 1
	tail14Mask = 1<<8 - 1
)

// lanesFrom14 returns the checked version 3 word w with each entry in a
// 15-bit lane: the same tag, the tail shifted up one bit. The entry keeps
// its position bits, the next split's at the top, and reads as one split
// older, which it is to a 15-bit lane (one bit fewer than a fresh entry).
func lanesFrom14(w uint64) uint64 {
	var nw uint64
	for s := range slotsPerBucket {
		v := w >> (s * lane14Bits) & lane14Mask
		if v == 0 {
			continue
		}
		nv := v>>8<<tagShift | (v&tail14Mask)<<1
		nw |= nv << (s * laneBits)
	}
	return nw
}

// checkGrowHeader validates the header at the start of data, as far as
// data goes.
func checkGrowHeader(data []byte) error {
	k := min(len(data), len(growFormatMagic))
	if string(data[:k]) != growFormatMagic[:k] {
		if k == len(formatMagic) && string(data[:k]) == formatMagic {
			return errFormat("cuckoo: magic %q: this is a (fixed) Filter's encoding, not a Growing filter's: load it with Filter.ReadFrom or Filter.UnmarshalBinary (or ReadAny, which reads either)", data[:k])
		}
		return errFormat("cuckoo: wrong magic %q: not an encoded growing filter (want %q)", data[:k], growFormatMagic)
	}
	if len(data) < 10 {
		return nil
	}
	v := binary.LittleEndian.Uint16(data[8:])
	if v < growFormatVersion14 || v > growFormatVersion {
		return errFormat("cuckoo: growing format version %d is not read by this package (it reads versions %d to %d)", v, growFormatVersion14, growFormatVersion)
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
	want := byte(laneBits)
	if v == growFormatVersion14 {
		want = lane14Bits
	}
	if l := data[13]; l != want {
		return errFormat("cuckoo: impossible parameters: %d-bit lanes in version %d (want %d)", l, v, want)
	}
	seed := binary.LittleEndian.Uint64(data[24:])
	switch alg := data[12]; {
	case alg != formatHashXXFmix && alg != formatHashXXMul:
		return errFormat("cuckoo: unknown hash algorithm id %d (want %d or %d)", alg, formatHashXXFmix, formatHashXXMul)
	case alg == formatHashXXMul && seed == 0, alg == formatHashXXFmix && seed != 0:
		return errFormat("cuckoo: impossible parameters: hash algorithm %d with seed %#x (a growing filter writes %d for seed 0, %d otherwise)", alg, seed, formatHashXXFmix, formatHashXXMul)
	}
	if n := data[14]; n != growShards {
		return errFormat("cuckoo: impossible parameters: %d shards (want %d)", n, growShards)
	}
	for _, b := range append(data[15:24:24], data[32:48]...) {
		if b != 0 {
			return errFormat("cuckoo: impossible parameters: reserved header bytes are not zero")
		}
	}
	for i := range growShards {
		at := growFormatHeaderSize + i*growShardRecordSize
		if len(data) < at+growShardRecordSize {
			return nil
		}
		rec := data[at:]
		base := binary.LittleEndian.Uint64(rec)
		if base == 0 || base > maxBuckets {
			return errFormat("cuckoo: impossible parameters: shard %d: %d base buckets (want 1 to %d)", i, base, uint64(maxBuckets))
		}
		d, maxD := uint(rec[8]), uint(rec[9])
		if d > growMaxDoublings || base<<d > maxBuckets {
			return errFormat("cuckoo: impossible parameters: shard %d: %d doublings of %d buckets (want at most %d doublings and %d buckets)", i, d, base, growMaxDoublings, uint64(maxBuckets))
		}
		if maxD < d || maxD > growMaxDoublings {
			return errFormat("cuckoo: impossible parameters: shard %d: doubling bound %d with %d doublings (want %d to %d)", i, maxD, d, d, growMaxDoublings)
		}
		if base<<maxD > maxBuckets {
			return errFormat("cuckoo: impossible parameters: shard %d: doubling bound %d lets %d base buckets grow to %d (want at most %d)", i, maxD, base, base<<maxD, uint64(maxBuckets))
		}
		reserved := rec[10:growShardRecordSize]
		if v == growFormatVersion {
			p := uint64(binary.LittleEndian.Uint32(rec[10:]))
			if p >= base<<d || p != 0 && d == maxD {
				return errFormat("cuckoo: impossible parameters: shard %d: split pointer %d at level %d of %d base buckets, level bound %d (want below %d, and 0 at the bound)", i, p, d, base, maxD, base<<d)
			}
			reserved = rec[14:growShardRecordSize]
		}
		for _, b := range reserved {
			if b != 0 {
				return errFormat("cuckoo: impossible parameters: shard %d: reserved bytes are not zero", i)
			}
		}
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
