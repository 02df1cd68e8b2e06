package cuckoo

import (
	"bytes"
	"encoding/binary"
	"io"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// The Growing filter's encoding (FORMAT.md, "Growing filter format") in
// encode.go's framing; versions 3 and 4 are read too.
const (
	growFormatMagic        = "CUCKOOGR"
	growFormatVersion      = 5
	growFormatVersion4     = 4 // no split pointers
	growFormatVersion14    = 3 // no split pointers, 14-bit lanes
	growFormatHeaderSize   = 48
	growShardRecordSize    = 16
	growFormatPrefix       = growFormatHeaderSize + growShards*growShardRecordSize
	lane14Bits, tail14Mask = 14, 1<<8 - 1 // version 3's lanes: a 6-bit tag above an 8-bit tail
)

var growKind = encKind{growFormatMagic, "growing filter", formatMagic,
	"this is a (fixed) Filter's encoding, not a Growing filter's: load it with Filter.ReadFrom or Filter.UnmarshalBinary (or ReadAny, which reads either)",
	"growing format", growFormatVersion14, growFormatVersion}

// WriteTo writes the filter in the growing format of FORMAT.md, a snapshot
// as Filter.WriteTo takes, with its errors. Relocations, deletes and
// expansion copies wait while it copies the tables, not while it writes w.
func (g *Growing) WriteTo(w io.Writer) (int64, error) {
	data, err := g.MarshalBinary()
	return writeEncoding(w, data, err)
}

// MarshalBinary returns the encoding WriteTo writes, with its guarantees.
func (g *Growing) MarshalBinary() ([]byte, error) {
	if g.st == nil {
		return nil, ErrZeroFilter
	}
	return appendSum(g.capture()), nil
}

// Clone returns a copy of g, sharing nothing with it, a snapshot as WriteTo
// takes it. It goes through g's encoding, so it needs memory for the
// encoding besides the copy. Cloning a zero Growing gives a zero Growing.
func (g *Growing) Clone() *Growing {
	if g.st == nil {
		return new(Growing)
	}
	c := &Growing{mode: g.mode}
	if err := c.UnmarshalBinary(appendSum(g.capture())); err != nil {
		panic("cuckoo: Growing.Clone: " + err.Error()) // a bug: g's own encoding always decodes
	}
	return c
}

// capture returns the encoding up to its checksum, with the words of the tables
// lookups search. Claim: they hold an entry matching every key x inserted
// before capture began and not deleted before it ended. Proof: the snapshot
// gate keeps Deletes, moves and expansion copies apart from it (snapshot.go;
// deleteIn), so while it reads, entries are only added to the tables it reads,
// which hold every key whose insert finished (grow.go). x had a matching entry
// when capture began (youngest-match rule); it stays in its word until capture
// ends, which reads that word once, whole. □ Without the gate in deleteIn,
// TestGrowingSnapshotAgainstCollidingDeletes loses the key in both modes.
func (g *Growing) capture() []byte {
	g.gate.beginSnapshot()
	defer g.gate.endSnapshot()
	var xs [growShards]*growTable
	words := 0
	for i := range xs {
		xs[i] = g.st.shards[i].searched()
		words += len(xs[i].t.words)
	}
	p := appendHeader(make([]byte, 0, growFormatPrefix+8*words+8), growFormatMagic,
		growFormatVersion, DefaultFingerprintBits, slotsPerBucket, hashAlg(g.seed, false))
	p = append(p, laneBits, growShards, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	p = append(binary.LittleEndian.AppendUint64(p, g.seed), make([]byte, 16)...)
	for i, x := range xs {
		sh := &g.st.shards[i]
		p = append(binary.LittleEndian.AppendUint64(p, sh.base), byte(x.d), byte(sh.maxD))
		p = append(binary.LittleEndian.AppendUint32(p, uint32(x.p)), 0, 0)
	}
	lanes := newLayout(laneBits, slotsPerBucket) // a word's four lanes as slots
	for _, x := range xs {
		n := len(p)
		p = p[:n+8*len(x.t.words)] // room made above
		copyWords(&x.t, &lanes, x, p[n:], nil)
	}
	return p
}

// UnmarshalBinary replaces the filter's contents with the growing filter
// encoded in data, at its size when written, with Filter.UnmarshalBinary's
// checks and errors. It keeps the mode (LockFree for a zero Growing) and
// must not run concurrently with any other method of g.
func (g *Growing) UnmarshalBinary(data []byte) error {
	_, err := g.decode(&decoder{data: data, sum: xxhash.New()})
	return err
}

// ReadFrom is UnmarshalBinary for the encoding at the start of r, as
// Filter.ReadFrom is for a Filter's, with its memory bound and errors.
func (g *Growing) ReadFrom(r io.Reader) (int64, error) {
	return g.decode(&decoder{r: r, buf: make([]byte, encodeChunk), sum: xxhash.New()})
}

// decode reads a growing filter from d into a new state, which it makes
// g's when every check has passed, and returns the bytes read.
func (g *Growing) decode(d *decoder) (int64, error) {
	var h growHeader
	d.want = growFormatPrefix // the size is known once the shard records are read
	if d.header(h.parse, growFormatPrefix); d.err != nil {
		return d.n, d.err
	}
	d.want += 8*h.words + 8
	lb := h.lanes
	var tables [growShards][]atomic.Uint64
	var entries [growShards]int64
	for i := 0; i < growShards && d.err == nil; i++ {
		tables[i] = d.table(h.base[i]<<h.d[i]+h.p[i], func(first uint64, ws []atomic.Uint64, p []byte) error {
			n := 0
			for j := range ws {
				// Reject a word no filter writes; an entry's marker is in its tail.
				w := binary.LittleEndian.Uint64(p[8*j:])
				if w>>(4*lb) != 0 {
					return errCorrupt("cuckoo: shard %d, bucket %d: word %#016x has bits above its %d-bit lanes", i, first+uint64(j), w, lb)
				}
				for s := range slotsPerBucket {
					if v := w >> (s * lb) & (1<<lb - 1); v != 0 && v&(1<<(lb-growTagBits)-1) == 0 {
						return errCorrupt("cuckoo: shard %d, bucket %d: lane %d holds %#04x, an entry without its marker", i, first+uint64(j), s, v)
					}
				}
				if lb == lane14Bits {
					w = lanesFrom14(w)
				}
				n += laneCount(w)
				ws[j].Store(w)
			}
			entries[i] += int64(n)
			return nil
		})
	}
	if d.checksum(); d.err == nil && len(d.data) > 0 {
		return d.n, errFormat("cuckoo: %d bytes of trailing data after the growing filter", len(d.data))
	} else if d.err != nil {
		return d.n, d.err
	}
	st := newGrowState(&h.base, &h.maxD, h.seed)
	for i := range st.shards {
		sh := &st.shards[i]
		x := st.newTable(sh, h.d[i], h.p[i], g.mode)
		copy(x.t.words, tables[i]) // not yet shared: plain copies are fine
		sh.count.add(entries[i])
		sh.cur.Store(x)
	}
	g.setup(h.seed, g.mode, st)
	return d.n, nil
}

// lanesFrom14 returns the checked version 3 word w with each entry in a
// 15-bit lane: the same tag, the tail shifted up one bit. The entry keeps
// its position bits, the next split's at the top, and reads as one split
// older, which it is to a 15-bit lane (one bit fewer than a fresh entry).
func lanesFrom14(w uint64) uint64 {
	var nw uint64
	for s := range slotsPerBucket {
		if v := w >> (s * lane14Bits) & (1<<lane14Bits - 1); v != 0 {
			nw |= (v>>8<<tagShift | (v&tail14Mask)<<1) << (s * laneBits)
		}
	}
	return nw
}

type growHeader struct {
	seed, words      uint64 // words: the tables', all shards together
	lanes            int    // laneBits, or lane14Bits in version 3
	base, d, p, maxD [growShards]uint64
}

// parse reads and checks the header at the start of data, as far as it goes.
func (h *growHeader) parse(data []byte) error {
	v, err := growKind.checkStart(data)
	if err != nil || len(data) < growFormatHeaderSize {
		return err
	}
	*h = growHeader{seed: binary.LittleEndian.Uint64(data[24:]), lanes: laneBits}
	if v == growFormatVersion14 {
		h.lanes = lane14Bits
	}
	var c formatChecks
	alg := data[12]
	c.check(data[10] != DefaultFingerprintBits, "cuckoo: impossible parameters: fingerprint bits %d (want %d)", data[10], DefaultFingerprintBits)
	c.check(data[11] != slotsPerBucket, "cuckoo: impossible parameters: %d slots per bucket (want %d)", data[11], slotsPerBucket)
	c.check(int(data[13]) != h.lanes, "cuckoo: impossible parameters: %d-bit lanes in version %d (want %d)", data[13], v, h.lanes)
	c.check(alg != formatHashXXFmix && alg != formatHashXXMul, "cuckoo: unknown hash algorithm id %d (want %d or %d)", alg, formatHashXXFmix, formatHashXXMul)
	c.check(alg != hashAlg(h.seed, false), "cuckoo: impossible parameters: hash algorithm %d with seed %#x (a growing filter writes %d for seed 0, %d otherwise)", alg, h.seed, formatHashXXFmix, formatHashXXMul)
	c.check(data[14] != growShards, "cuckoo: impossible parameters: %d shards (want %d)", data[14], growShards)
	c.check(!zeros(data[15:24]) || !zeros(data[32:48]), "cuckoo: impossible parameters: reserved header bytes are not zero")
	for i := range min(growShards, (len(data)-growFormatHeaderSize)/growShardRecordSize) { // those that arrived
		rec := data[growFormatHeaderSize+i*growShardRecordSize:][:growShardRecordSize]
		base, d, maxD := binary.LittleEndian.Uint64(rec), uint64(rec[8]), uint64(rec[9])
		p, reserved := uint64(binary.LittleEndian.Uint32(rec[10:])), rec[10:] // the split pointer is version 5's
		if v == growFormatVersion {
			reserved = rec[14:]
		}
		c.check(base == 0 || base > maxBuckets, "cuckoo: impossible parameters: shard %d: %d base buckets (want 1 to %d)", i, base, uint64(maxBuckets))
		c.check(d > growMaxDoublings || base<<d > maxBuckets, "cuckoo: impossible parameters: shard %d: %d doublings of %d buckets (want at most %d doublings and %d buckets)", i, d, base, growMaxDoublings, uint64(maxBuckets))
		c.check(maxD < d || maxD > growMaxDoublings, "cuckoo: impossible parameters: shard %d: doubling bound %d with %d doublings (want %d to %d)", i, maxD, d, d, growMaxDoublings)
		c.check(base<<maxD > maxBuckets, "cuckoo: impossible parameters: shard %d: doubling bound %d lets %d base buckets grow to %d (want at most %d)", i, maxD, base, base<<maxD, uint64(maxBuckets))
		c.check(v == growFormatVersion && (p >= base<<d || p != 0 && d == maxD), "cuckoo: impossible parameters: shard %d: split pointer %d at level %d of %d base buckets, level bound %d (want below %d, and 0 at the bound)", i, p, d, base, maxD, base<<d)
		c.check(!zeros(reserved), "cuckoo: impossible parameters: shard %d: reserved bytes are not zero", i)
		h.base[i], h.d[i], h.p[i], h.maxD[i] = base, d, p, maxD
		h.words += base<<d + p
	}
	return c.err
}

func zeros(b []byte) bool { return len(bytes.TrimLeft(b, "\x00")) == 0 }
