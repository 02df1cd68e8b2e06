package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// The serialized form of a Growing filter (FORMAT.md, "Growing filter
// format", has the full description).
//
//	offset  size  field
//	0       8     magic "CUCKOOGR"
//	8       2     format version (1)
//	10      1     fingerprint bits f (8 or 12)
//	11      1     slots per bucket (4)
//	12      1     hash algorithm id (1 or 2, as in the fixed format)
//	13      3     reserved, zero
//	16      8     buckets per node m0 (1 to 2^31)
//	24      8     seed
//	32      8     depth bound: no node deeper (0 to 40; 40 without WithMaxCapacity)
//	40      8     node count N (at least 1)
//	48            N node records, in preorder (a node, then the subtree of
//	              its child 0, then that of its child 1), each:
//	              1 byte: bit 0 set if child 0 follows, bit 1 if child 1
//	                      follows, other bits zero
//	              the node's table in the fixed format (48 + 8·m0 bytes)
//	end-8   8     xxhash64 (seed 0) of every byte before it
//
// Every node record's table must have f, the hash algorithm, the seed and
// m0 of the header.

const (
	growFormatMagic      = "CUCKOOGR"
	growFormatVersion    = 1
	growFormatHeaderSize = 48
)

// growSnapshot is the tree as WriteTo captured it: nodes in preorder with
// the children each had when it was visited.
type growSnapshot struct {
	nodes []*growNode
	flags []byte
}

// capture walks the tree in preorder. A child created after its parent was
// visited is left out, with everything below it: it holds only inserts
// that overlap the snapshot.
func (t *growTree) capture() growSnapshot {
	var s growSnapshot
	stack := []*growNode{t.root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		k0, k1 := n.kids[0].Load(), n.kids[1].Load()
		var fl byte
		if k1 != nil {
			fl |= 2
			stack = append(stack, k1)
		}
		if k0 != nil {
			fl |= 1
			stack = append(stack, k0)
		}
		s.nodes = append(s.nodes, n)
		s.flags = append(s.flags, fl)
	}
	return s
}

// WriteTo writes the filter in the growing format of FORMAT.md. It may run
// while other goroutines use the filter: every key inserted before it
// began and not deleted is found by a filter read back from what it wrote.
// It copies one node at a time (Filter.MarshalBinary's consistent copy)
// and writes that copy out before it takes the next, so it holds back
// relocations in one node for at most one node's copy at memory speed, and
// never while w runs; w may use the filter. Errors from w are returned
// wrapped, with the prefix "cuckoo: ".
func (g *Growing) WriteTo(w io.Writer) (int64, error) {
	if g.m0 == 0 {
		return 0, ErrZeroFilter
	}
	s := g.tree.Load().capture()
	var hdr [growFormatHeaderSize]byte
	copy(hdr[:], growFormatMagic)
	binary.LittleEndian.PutUint16(hdr[8:], growFormatVersion)
	hdr[10] = byte(g.bits)
	hdr[11] = slotsPerBucket
	hdr[12] = g.proto().hashAlg() // 1 for seed 0, as the nodes write it
	binary.LittleEndian.PutUint64(hdr[16:], g.m0)
	binary.LittleEndian.PutUint64(hdr[24:], g.seed)
	binary.LittleEndian.PutUint64(hdr[32:], uint64(g.maxDepth))
	binary.LittleEndian.PutUint64(hdr[40:], uint64(len(s.nodes)))

	var d xxhash.Digest
	d.Reset()
	var n int64
	write := func(p []byte) error {
		d.Write(p)
		return writeChunks(w, p, &n)
	}
	if err := write(hdr[:]); err != nil {
		return n, err
	}
	for i, node := range s.nodes {
		data, err := node.f.MarshalBinary()
		if err != nil {
			return n, err
		}
		if err := write([]byte{s.flags[i]}); err != nil {
			return n, err
		}
		if err := write(data); err != nil {
			return n, err
		}
	}
	var tr [8]byte
	binary.LittleEndian.PutUint64(tr[:], d.Sum64())
	return n, write(tr[:])
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
// encoded in data, grown as it was when it was written. It rejects what
// Filter.UnmarshalBinary rejects (in each node), bytes after the encoding,
// and a tree whose shape or node parameters disagree with its header; the
// errors match ErrTruncated, ErrFormat or ErrCorrupt. On error the filter
// is unchanged. It must not run concurrently with any other method of g.
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
// exactly the encoding. Memory grows with the data that arrives (each
// node as Filter.ReadFrom reads it), not with what the header claims.
// Errors are those of UnmarshalBinary, or r's, wrapped. On error the filter
// is unchanged. It keeps the filter's mode (LockFree for a zero Growing).
// It must not run concurrently with any other method of g.
func (g *Growing) ReadFrom(r io.Reader) (int64, error) {
	ng, n, err := g.decode(r)
	if err == nil {
		g.install(ng)
	}
	return n, err
}

// install makes the decoded filter ng's parameters and tree g's.
func (g *Growing) install(ng *Growing) {
	g.m0, g.bits, g.seed, g.alg, g.maxDepth, g.locks = ng.m0, ng.bits, ng.seed, ng.alg, ng.maxDepth, ng.locks
	g.tree.Store(ng.tree.Load())
}

// decode reads a growing filter from r into a new Growing with g's mode,
// and returns it with the number of bytes read.
func (g *Growing) decode(r io.Reader) (*Growing, int64, error) {
	var d xxhash.Digest
	d.Reset()
	cr := &countingReader{r: io.TeeReader(r, &d)}

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
	m0 := binary.LittleEndian.Uint64(hdr[16:])
	seed := binary.LittleEndian.Uint64(hdr[24:])
	maxDepth := binary.LittleEndian.Uint64(hdr[32:])
	count := binary.LittleEndian.Uint64(hdr[40:])
	bits, alg := uint(hdr[10]), hdr[12]

	ng := &Growing{m0: m0, bits: bits, seed: seed, alg: alg, mode: g.mode, maxDepth: uint(maxDepth)}
	if ng.mode == Locked {
		ng.locks = newStripedLocks(int(m0))
	}
	dec := growDecoder{g: ng, r: cr, want: count, size: growEncodedSize(m0, count)}
	root, err := dec.node(0)
	if err != nil {
		return nil, cr.n, err
	}
	if dec.read != count {
		return nil, cr.n, errCorrupt("cuckoo: the header says %d nodes, the tree has %d", count, dec.read)
	}
	sum := d.Sum64()
	var tr [8]byte
	if _, err := io.ReadFull(cr, tr[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, cr.n, errTruncated(uint64(cr.n), dec.size)
		}
		return nil, cr.n, fmt.Errorf("cuckoo: reading filter: %w", err)
	}
	if stored := binary.LittleEndian.Uint64(tr[:]); stored != sum {
		return nil, cr.n, errChecksum(stored, sum)
	}
	ng.tree.Store(&growTree{root: root})
	return ng, cr.n, nil
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
		return errFormat("cuckoo: unknown growing format version %d (this package reads version %d)", v, growFormatVersion)
	}
	if len(data) < growFormatHeaderSize {
		return nil
	}
	if f := data[10]; f != 8 && f != 12 {
		return errFormat("cuckoo: impossible parameters: fingerprint bits %d (want 8 or 12)", f)
	}
	if s := data[11]; s != slotsPerBucket {
		return errFormat("cuckoo: impossible parameters: %d slots per bucket (want %d)", s, slotsPerBucket)
	}
	seed := binary.LittleEndian.Uint64(data[24:])
	switch alg := data[12]; {
	case alg != formatHashXXFmix && alg != formatHashXXMul:
		return errFormat("cuckoo: unknown hash algorithm id %d (want %d or %d)", alg, formatHashXXFmix, formatHashXXMul)
	case alg == formatHashXXMul && seed == 0:
		return errFormat("cuckoo: impossible parameters: hash algorithm %d with seed 0 (written as algorithm %d)", formatHashXXMul, formatHashXXFmix)
	}
	if data[13]|data[14]|data[15] != 0 {
		return errFormat("cuckoo: impossible parameters: reserved header bytes % x are not zero", data[13:16])
	}
	if m := binary.LittleEndian.Uint64(data[16:]); m == 0 || m > maxBuckets {
		return errFormat("cuckoo: impossible parameters: %d buckets per node (want 1 to %d)", m, uint64(maxBuckets))
	}
	count := binary.LittleEndian.Uint64(data[40:])
	if count == 0 || count > 1<<(growMaxDepth+1) {
		return errFormat("cuckoo: impossible parameters: %d nodes (want 1 to %d)", count, uint64(1)<<(growMaxDepth+1))
	}
	if d := binary.LittleEndian.Uint64(data[32:]); d > growMaxDepth || count > 1<<(d+1)-1 {
		return errFormat("cuckoo: impossible parameters: depth bound %d with %d nodes (want at most 40, and at most 2^(bound+1)-1 nodes)", d, count)
	}
	return nil
}

// growEncodedSize returns the length of the encoding of count nodes of m0
// buckets (saturating at the largest uint64).
func growEncodedSize(m0, count uint64) uint64 {
	hi, lo := bits.Mul64(count, 1+encodedSize(m0))
	sum, carry := bits.Add64(lo, growFormatHeaderSize+8, 0)
	if hi != 0 || carry != 0 {
		return math.MaxUint64
	}
	return sum
}

// growDecoder reads node records in preorder.
type growDecoder struct {
	g    *Growing        // the parameters the nodes must have
	r    *countingReader // the stream, counting the bytes read
	want uint64          // nodes the header announced
	read uint64          // nodes read so far
	size uint64          // the length of the whole encoding, from the header
}

// node reads the subtree of a node at depth d.
func (dec *growDecoder) node(d uint) (*growNode, error) {
	if dec.read == dec.want {
		return nil, errCorrupt("cuckoo: the tree has more than the %d nodes the header says", dec.want)
	}
	i := dec.read
	dec.read++
	var fl [1]byte
	if _, err := io.ReadFull(dec.r, fl[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, errTruncated(uint64(dec.r.n), dec.size)
		}
		return nil, fmt.Errorf("cuckoo: reading filter: %w", err)
	}
	if fl[0]&^3 != 0 {
		return nil, errCorrupt("cuckoo: node %d: child flags %#x", i, fl[0])
	}
	if fl[0] != 0 && d == dec.g.maxDepth {
		return nil, errCorrupt("cuckoo: node %d at depth %d has children (the depth bound is %d)", i, d, dec.g.maxDepth)
	}
	var tmp Filter
	if _, err := tmp.ReadFrom(dec.r); err != nil {
		if errors.Is(err, ErrTruncated) {
			// Say how much of the whole encoding arrived, not of the node.
			err = errTruncated(uint64(dec.r.n), dec.size)
		}
		return nil, fmt.Errorf("%w (node %d)", err, i)
	}
	g := dec.g
	if tmp.m != g.m0 || tmp.lay.f != g.bits || tmp.seed != g.seed || tmp.hashAlg() != g.alg {
		return nil, errCorrupt("cuckoo: node %d: %d buckets, %d-bit fingerprints, seed %#x, hash %d; the header says %d, %d, %#x, %d",
			i, tmp.m, tmp.lay.f, tmp.seed, tmp.hashAlg(), g.m0, g.bits, g.seed, g.alg)
	}
	n := &growNode{depth: d}
	n.f.adoptWith(tmp.t.words, g.bits, g.seed, g.alg, g.mode, tmp.count.sum(), g.locks,
		min(shardBitsFor(g.m0), growNodeShardBits))
	for c := range 2 {
		if fl[0]&(1<<c) == 0 {
			continue
		}
		kid, err := dec.node(d + 1)
		if err != nil {
			return nil, err
		}
		n.kids[c].Store(kid)
	}
	return n, nil
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
