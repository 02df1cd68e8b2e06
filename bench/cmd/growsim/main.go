// Command growsim simulates two ways of growing the Growing filter's
// tables and measures what each costs in memory and false positives:
//
//   - doubling, as the filter does today: each shard's table doubles in one
//     step (every bucket splits in two) when an insert at 97% load finds
//     both its buckets full, or when an insert finds no relocation path;
//   - linear hashing: each shard's table splits its buckets one chunk at a
//     time, in order, with a split pointer p, whenever the next insert
//     would take its load above a target (or an insert finds no path), so
//     that the load stays near the target instead of falling to half at
//     each doubling.
//
// Placement. A key's 64-bit hash h gives its shard (top bits of
// h·0x9e3779b97f4a7c15), r1 = (h>>32)·c >> 32 in [0, c) (c: the shard's
// first table), lo = uint32(h) ^ uint32(h>>32), tag = lo>>26 (6 bits) and
// P1 = lo & (2^26-1), its position bits (bit k of P1 is the bit the k-th
// split level adds to the index). Its other role has r2 = (off[tag] - r1)
// mod c and P2 = P1 XOR M[tag], with off[tag] per shard and M[tag] per
// filter, drawn from the seed. A table at level d with split pointer p
// (N = c·2^d, m = N+p buckets) puts (r, P) in bucket j = r + c·(P mod 2^d),
// plus N if j < p and bit d of P is set; buckets below p and from N on
// have level d+1 (they know bits 0..d of P from their index), the others
// level d. Splitting bucket p moves each entry to p or p+N by bit d.
//
// Entries. A bucket is one uint64 word of four lanes of 7+T bits (-tails:
// T = 7 gives today's 14-bit lane, T = 8 a 15-bit lane): a 6-bit tag and a
// unary-terminated tail 1<<n | v holding the next n <= T position bits of
// the bucket the entry is in (bits L..L+n-1 of P for a bucket of level L,
// v's bit 0 is bit L); 0 is an empty lane. A split takes v's bit 0; an
// entry with n = 0 (void) no longer knows that bit, and a split copies it
// into both halves. A relocation flips v by M; into a bucket of higher
// level it takes v's bit 0 (a void entry cannot make that move: the
// search skips it and counts it), into a bucket of lower level it gains
// bit d from its old index, dropping its top bit if it already holds T. A
// lookup compares the tag and the entry's n bits with the probe's
// position bits of the entry's bucket in the role that bucket has for the
// probe (both roles when the two buckets are one).
//
// Inserts put the entry into the emptier of the key's buckets, else
// search breadth first (at most -bfs nodes, paths of at most -maxpath
// moves, no bucket twice on a path) and move the entries along the path
// found. Each shard is its own table, as in the filter; shard i's first
// table has ceil(B·2^(i/16)) buckets, B = 64 for NewGrowing(1000).
//
// Memory. Doubling keeps one []uint64 per shard, made anew at each
// doubling (the old one dropped), as the filter does. Linear hashing keeps
// each shard's words in segments of -seg buckets (8 KiB at 1024), adding
// one when the split pointer's new bucket needs it. Both are reported as
// heap bits per key (runtime.MemStats.HeapAlloc after runtime.GC, before
// the shards are made and at each checkpoint; the simulator's statistics
// are allocated before the first reading) and as slot bits per key
// (64 bits per bucket in use, no rounding).
//
// What it counts besides: inserts that found no path (and the shard's
// load and p/N then), void copies made by splits, moves a void entry could
// not make, top bits dropped by moves into buckets of lower level, and the
// words per key that a design copying its whole table at every growth
// step would copy (the filter's expansion protocol, grow.go, copies every
// word of the old table into the new one; a doubling copies N words, a
// linear step N+p).
// False negatives are counted by looking up every inserted key at each
// checkpoint; false positives with -probes keys never inserted.
//
// What it does not simulate: concurrency (no K-CAS, no locks, no frozen
// bits, no migration counters, no epoch), deletes, and the cost in time of
// either protocol; the split pointer here is a plain field that a
// concurrent design would have to read with every placement.
//
//	go build -o /tmp/growsim ./cmd/growsim && /tmp/growsim
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/bits"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

const (
	slots     = 4 // lanes per bucket word
	tagBits   = 6 // bits of a tag
	tags      = 1 << tagBits
	posBits   = 26 // position bits of a key (lo below the tag)
	eagerLoad = 0.97
	failBins  = 2000 // resolution of the loads at failed inserts
	xBins     = 4    // quartiles of the split fraction p/N
	probeBase = 1 << 40
)

// shardScale[i] is 2^(i/16) in 16.16 fixed point (grow.go's
// growShardScale).
var shardScale = [16]uint64{
	65536, 68438, 71468, 74632, 77936, 81386, 84990, 88752,
	92682, 96785, 101070, 105545, 110218, 115098, 120194, 125515,
}

// config is one design to simulate.
type config struct {
	linear   bool
	chunk    uint64  // buckets split per step (linear)
	frac     uint64  // linear: if not 0, split ceil(N/frac) buckets per step instead of chunk
	target   float64 // load a split keeps a shard under (linear)
	tail     uint    // position bits an entry holds at most (T)
	shards   int
	seg      uint64 // buckets per storage segment (linear), a power of two
	bfsNodes int
	maxPath  int
}

func (c config) name() string {
	lane := 7 + c.tail
	if !c.linear {
		return fmt.Sprintf("doubling, %d-bit lanes", lane)
	}
	if c.frac != 0 {
		return fmt.Sprintf("linear chunk=N/%d, %d-bit lanes, target %.2f", c.frac, lane, c.target)
	}
	return fmt.Sprintf("linear chunk=%d, %d-bit lanes, target %.2f", c.chunk, lane, c.target)
}

// stats are a run's counters, allocated before the first heap reading.
type stats struct {
	fails       uint64                      // inserts that found no path
	failLoad    [failBins + 1]uint64        // their shard's load, in bins
	failXLoad   [xBins][failBins + 1]uint64 // the same by quartile of p/N
	voidDups    uint64                      // void entries copied into both halves
	voidBlocked uint64                      // moves a void entry could not make
	dropped     uint64                      // bits lost moving into a bucket of lower level
	steps       uint64                      // growth steps: chunks or doublings
	rewritten   uint64                      // words a design that copies its whole table at each step would copy
	queue       []node                      // the search's queue, reused
}

// node is one bucket reached by the search: from the node parent, by
// moving the entry in lane slot of the parent's bucket.
type node struct {
	b      uint64
	parent int32
	slot   int8
	depth  int8
}

// shard is one table.
type shard struct {
	c       uint64
	off     [tags]uint64
	d       uint   // level
	p       uint64 // split pointer, in [0, c<<d)
	flat    []uint64
	segs    [][]uint64
	entries uint64 // lanes in use (void copies included)
	keys    uint64
}

// sim is one filter.
type sim struct {
	cfg      config
	st       *stats
	laneW    uint
	laneMask uint64
	segShift uint
	mask     [tags]uint32
	sh       []shard
}

func splitmix(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func newSim(cfg config, seed uint64, start int, st *stats) *sim {
	s := &sim{cfg: cfg, st: st, laneW: 7 + cfg.tail}
	s.laneMask = 1<<s.laneW - 1
	s.segShift = uint(bits.TrailingZeros64(cfg.seg))
	rng := seed ^ 0x5eed
	for t := range s.mask {
		s.mask[t] = uint32(splitmix(&rng)) & (1<<posBits - 1)
	}
	// Shard 0 holds a share of start keys at 95% in four-slot buckets,
	// and at least 64 buckets (NewGrowing).
	share := (start + cfg.shards - 1) / cfg.shards
	b0 := max(uint64(math.Ceil(float64(share)/0.95/slots)), 64)
	s.sh = make([]shard, cfg.shards)
	for i := range s.sh {
		sh := &s.sh[i]
		sh.c = (b0*shardScale[i*16/cfg.shards] + 1<<16 - 1) >> 16
		for t := range sh.off {
			sh.off[t], _ = bits.Mul64(splitmix(&rng), sh.c)
		}
		if cfg.linear {
			for uint64(len(sh.segs))<<s.segShift < sh.c {
				sh.segs = append(sh.segs, make([]uint64, cfg.seg))
			}
		} else {
			sh.flat = make([]uint64, sh.c)
		}
	}
	return s
}

// word returns bucket j's word.
func (s *sim) word(sh *shard, j uint64) *uint64 {
	if sh.flat != nil {
		return &sh.flat[j]
	}
	return &sh.segs[j>>s.segShift][j&(s.cfg.seg-1)]
}

func (s *sim) lane(w uint64, i int) uint64 { return w >> (uint(i) * s.laneW) & s.laneMask }

func (s *sim) setLane(w uint64, i int, e uint64) uint64 {
	sh := uint(i) * s.laneW
	return w&^(s.laneMask<<sh) | e<<sh
}

func (s *sim) count(w uint64) int {
	n := 0
	for i := range slots {
		if s.lane(w, i) != 0 {
			n++
		}
	}
	return n
}

// put returns w with e in its first empty lane, and whether it had one.
func (s *sim) put(w, e uint64) (uint64, bool) {
	for i := range slots {
		if s.lane(w, i) == 0 {
			return s.setLane(w, i, e), true
		}
	}
	return w, false
}

func (s *sim) tagOf(e uint64) uint64  { return e >> (s.cfg.tail + 1) }
func (s *sim) tailOf(e uint64) uint64 { return e & (1<<(s.cfg.tail+1) - 1) }

// stored returns an entry's position bits: n of them, in v.
func (s *sim) stored(e uint64) (v uint64, n uint) {
	t := s.tailOf(e)
	n = uint(bits.Len64(t)) - 1
	return t &^ (1 << n), n
}

func (s *sim) entry(tag, v uint64, n uint) uint64 {
	return tag<<(s.cfg.tail+1) | 1<<n | v&(1<<n-1)
}

// fresh returns the entry of a key with position bits P in a bucket of
// level L.
func (s *sim) fresh(tag uint64, P uint32, L uint) uint64 {
	n := min(s.cfg.tail, posBits-L)
	return s.entry(tag, uint64(P>>L), n)
}

// matches reports whether entry e of a bucket of level L matches a key
// with tag tag whose position bits for that bucket are P.
func (s *sim) matches(e, tag uint64, P uint32, L uint) bool {
	if e == 0 || s.tagOf(e) != tag {
		return false
	}
	v, n := s.stored(e)
	return (v^uint64(P>>L))&(1<<n-1) == 0
}

func (sh *shard) n() uint64 { return sh.c << sh.d }
func (sh *shard) m() uint64 { return sh.n() + sh.p }

// level returns the level of bucket j.
func (sh *shard) level(j uint64) uint {
	if j < sh.p || j >= sh.n() {
		return sh.d + 1
	}
	return sh.d
}

// bucket returns the bucket of (r, P) and its level.
func (sh *shard) bucket(r uint64, P uint32) (uint64, uint) {
	j := r + sh.c*uint64(P&(1<<sh.d-1))
	if j < sh.p {
		return j + sh.n()*uint64(P>>sh.d&1), sh.d + 1
	}
	return j, sh.d
}

// key is a key placed in its shard.
type key struct {
	sh     *shard
	tag    uint64
	r1, r2 uint64
	P1, P2 uint32
}

func (s *sim) place(h uint64) key {
	si := ((h * 0x9e3779b97f4a7c15) >> 32 * uint64(len(s.sh))) >> 32
	sh := &s.sh[si]
	lo := uint32(h) ^ uint32(h>>32)
	tag := uint64(lo >> posBits)
	r1 := (h >> 32 * sh.c) >> 32
	P1 := lo & (1<<posBits - 1)
	return key{sh: sh, tag: tag, r1: r1, r2: altBase(r1, sh.off[tag], sh.c), P1: P1, P2: P1 ^ s.mask[tag]}
}

// altBase returns (o - r) mod c for r, o in [0, c).
func altBase(r, o, c uint64) uint64 {
	if o >= r {
		return o - r
	}
	return o + c - r
}

// alt returns entry e of bucket j as it is in its other bucket, and that
// bucket; ok is false for a void entry whose other bucket has a higher
// level (it does not know the bit that chooses the half).
func (s *sim) alt(sh *shard, j, e uint64) (nj, ne uint64, ok bool) {
	tag := s.tagOf(e)
	M := uint64(s.mask[tag])
	L := sh.level(j)
	r, low := j%sh.c, j/sh.c // low: bits 0..L-1 of the position
	r2 := altBase(r, sh.off[tag], sh.c)
	low2 := low ^ M&(1<<L-1)
	v, n := s.stored(e)
	v ^= M >> L
	d := sh.d
	base := r2 + sh.c*(low2&(1<<d-1))
	switch {
	case L == d+1 && base < sh.p: // split to split
		return r2 + sh.c*low2, s.entry(tag, v, n), true
	case L == d+1: // split to unsplit: bit d moves from the index to v
		n2 := min(n+1, s.cfg.tail)
		return base, s.entry(tag, v<<1|low2>>d&1, n2), true
	case base >= sh.p: // unsplit to unsplit
		return base, s.entry(tag, v, n), true
	case n == 0: // unsplit to split, void
		return 0, 0, false
	default: // unsplit to split: bit d moves from v to the index
		return base + sh.n()*(v&1), s.entry(tag, v>>1, n-1), true
	}
}

// splitWord returns the two halves of a word of a bucket being split, and
// the void entries copied into both.
func (s *sim) splitWord(w uint64) (lo, hi uint64, dups uint64) {
	for i := range slots {
		e := s.lane(w, i)
		if e == 0 {
			continue
		}
		v, n := s.stored(e)
		if n == 0 {
			lo, _ = s.put(lo, e)
			hi, _ = s.put(hi, e)
			dups++
			continue
		}
		ne := s.entry(s.tagOf(e), v>>1, n-1)
		if v&1 == 0 {
			lo, _ = s.put(lo, ne)
		} else {
			hi, _ = s.put(hi, ne)
		}
	}
	return lo, hi, dups
}

// splitChunk splits the next chunk of buckets of sh (up to the end of its
// level).
func (s *sim) splitChunk(sh *shard) {
	N := sh.n()
	s.st.rewritten += sh.m()
	chunk := s.cfg.chunk
	if s.cfg.frac != 0 {
		chunk = (N + s.cfg.frac - 1) / s.cfg.frac
	}
	for k := uint64(0); k < chunk && sh.p < N; k++ {
		j := N + sh.p
		if j>>s.segShift >= uint64(len(sh.segs)) {
			sh.segs = append(sh.segs, make([]uint64, s.cfg.seg))
		}
		lo, hi, dups := s.splitWord(*s.word(sh, sh.p))
		*s.word(sh, sh.p), *s.word(sh, j) = lo, hi
		sh.entries += dups
		s.st.voidDups += dups
		sh.p++
	}
	if sh.p == N {
		sh.d++
		sh.p = 0
	}
}

// double doubles sh in one step, into a new table.
func (s *sim) double(sh *shard) {
	N := sh.n()
	s.st.rewritten += N
	nt := make([]uint64, 2*N)
	for j := range N {
		lo, hi, dups := s.splitWord(sh.flat[j])
		nt[j], nt[j+N] = lo, hi
		sh.entries += dups
		s.st.voidDups += dups
	}
	sh.flat = nt
	sh.d++
}

func (s *sim) grow(sh *shard) {
	s.st.steps++
	if s.cfg.linear {
		s.splitChunk(sh)
	} else {
		s.double(sh)
	}
}

func (sh *shard) load() float64 { return float64(sh.entries) / float64(slots*sh.m()) }

// insert adds the key with hash h.
func (s *sim) insert(h uint64) {
	k := s.place(h)
	sh := k.sh
	if s.cfg.linear {
		for float64(sh.entries+1) > s.cfg.target*float64(slots*sh.m()) {
			s.grow(sh)
		}
	}
	for {
		b1, L1 := sh.bucket(k.r1, k.P1)
		b2, L2 := sh.bucket(k.r2, k.P2)
		w1, w2 := s.word(sh, b1), s.word(sh, b2)
		w, e := w1, s.fresh(k.tag, k.P1, L1)
		if s.count(*w2) < s.count(*w1) {
			w, e = w2, s.fresh(k.tag, k.P2, L2)
		}
		if nw, ok := s.put(*w, e); ok {
			*w = nw
			break
		}
		if !s.cfg.linear && sh.load() >= eagerLoad {
			s.grow(sh)
			continue
		}
		if root, ok := s.makeRoom(sh, b1, b2); ok {
			e = s.fresh(k.tag, k.P1, L1)
			if root == b2 && root != b1 {
				e = s.fresh(k.tag, k.P2, L2)
			}
			w := s.word(sh, root)
			nw, ok := s.put(*w, e)
			if !ok {
				panic("no room after relocation")
			}
			*w = nw
			break
		}
		s.st.fails++
		lb := int(sh.load()*failBins + 0.5)
		s.st.failLoad[lb]++
		s.st.failXLoad[sh.p*xBins/sh.n()][lb]++
		s.grow(sh)
	}
	sh.entries++
	sh.keys++
}

// makeRoom frees a lane in b1 or b2 by moving entries along a path found
// breadth first, and returns the bucket freed.
func (s *sim) makeRoom(sh *shard, b1, b2 uint64) (uint64, bool) {
	q := append(s.st.queue[:0], node{b: b1, parent: -1})
	if b2 != b1 {
		q = append(q, node{b: b2, parent: -1})
	}
	end := -1
search:
	for head := 0; head < len(q); head++ {
		nd := q[head]
		w := *s.word(sh, nd.b)
		for i := range slots {
			nb, _, ok := s.alt(sh, nd.b, s.lane(w, i))
			if !ok {
				s.st.voidBlocked++
				continue
			}
			if nb == nd.b || onPath(q, head, nb) {
				continue
			}
			c := node{b: nb, parent: int32(head), slot: int8(i), depth: nd.depth + 1}
			if s.count(*s.word(sh, nb)) < slots {
				q = append(q, c)
				end = len(q) - 1
				break search
			}
			if int(c.depth) < s.cfg.maxPath && len(q) < s.cfg.bfsNodes {
				q = append(q, c)
			}
		}
	}
	s.st.queue = q
	if end < 0 {
		return 0, false
	}
	// Move backwards from the bucket with room; a path holds no bucket
	// twice, so each step's lane is still the one found.
	for q[end].parent >= 0 {
		from := q[q[end].parent].b
		fw := s.word(sh, from)
		nb, ne, ok := s.alt(sh, from, s.lane(*fw, int(q[end].slot)))
		if !ok || nb != q[end].b {
			panic("stale path")
		}
		if _, n := s.stored(ne); n == s.cfg.tail && sh.level(nb) < sh.level(from) {
			s.st.dropped++ // it held T bits and gained one: its top bit went
		}
		tw := s.word(sh, nb)
		nw, ok := s.put(*tw, ne)
		if !ok {
			panic("path ends full")
		}
		*tw = nw
		*fw = s.setLane(*fw, int(q[end].slot), 0)
		end = int(q[end].parent)
	}
	return q[end].b, true
}

// onPath reports whether bucket b is node i or one of its ancestors.
func onPath(q []node, i int, b uint64) bool {
	for ; i >= 0; i = int(q[i].parent) {
		if q[i].b == b {
			return true
		}
	}
	return false
}

// lookup reports whether an entry matches the key with hash h.
func (s *sim) lookup(h uint64) bool {
	k := s.place(h)
	sh := k.sh
	b1, L1 := sh.bucket(k.r1, k.P1)
	b2, L2 := sh.bucket(k.r2, k.P2)
	w1, w2 := *s.word(sh, b1), *s.word(sh, b2)
	for i := range slots {
		if s.matches(s.lane(w1, i), k.tag, k.P1, L1) || s.matches(s.lane(w2, i), k.tag, k.P2, L2) {
			return true
		}
	}
	return false
}

// hasher makes the keys' hashes: xxhash of the seed and the counter, 8
// bytes little-endian each.
type hasher struct{ buf [16]byte }

func newHasher(seed uint64) *hasher {
	h := &hasher{}
	binary.LittleEndian.PutUint64(h.buf[:8], seed)
	return h
}

func (h *hasher) hash(i uint64) uint64 {
	binary.LittleEndian.PutUint64(h.buf[8:], i)
	return xxhash.Sum64(h.buf[:])
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// result is one checkpoint of one design.
type result struct {
	cfg                  config
	keys                 uint64
	heapBits, slotBits   float64
	allocBits            float64 // 64 bits per allocated bucket per key
	load                 float64
	loadSplit, loadUnspl float64 // linear: load of split and unsplit buckets
	fpr                  float64
	fn                   uint64
	voids                uint64 // void entries held
	meanBits             float64
	fails                uint64
	failMin, failMed     float64
	failX                [xBins]uint64  // failed inserts by quartile of p/N
	failXMed             [xBins]float64 // their median load
	voidDups, blocked    uint64
	dropped              uint64
	steps                uint64
	rewritten            float64 // words copied per key by a whole-table copy at each step
}

// measure fills one design to each size in sizes and measures it there.
func measure(cfg config, seed uint64, start int, sizes []uint64, probes uint64) []result {
	st := &stats{queue: make([]node, 0, cfg.bfsNodes+slots)}
	h0 := heapAlloc()
	s := newSim(cfg, seed, start, st)
	hs := newHasher(seed)
	var out []result
	var i uint64
	for _, n := range sizes {
		for ; i < n; i++ {
			s.insert(hs.hash(i))
		}
		h1 := heapAlloc()
		r := result{cfg: cfg, keys: n, fails: st.fails, voidDups: st.voidDups, blocked: st.voidBlocked, steps: st.steps, dropped: st.dropped, rewritten: float64(st.rewritten) / float64(n)}
		r.heapBits = float64(h1-h0) * 8 / float64(n)
		var buckets, alloc, entries, splitE, splitB, unE, unB uint64
		var sumBits float64
		for k := range s.sh {
			sh := &s.sh[k]
			buckets += sh.m()
			if sh.flat != nil {
				alloc += uint64(len(sh.flat))
			} else {
				alloc += uint64(len(sh.segs)) * cfg.seg
			}
			entries += sh.entries
			for j := range sh.m() {
				w := *s.word(sh, j)
				c := uint64(s.count(w))
				if sh.level(j) > sh.d {
					splitE, splitB = splitE+c, splitB+1
				} else {
					unE, unB = unE+c, unB+1
				}
				for l := range slots {
					if e := s.lane(w, l); e != 0 {
						_, nb := s.stored(e)
						sumBits += float64(tagBits + nb)
						if nb == 0 {
							r.voids++
						}
					}
				}
			}
		}
		r.slotBits = 64 * float64(buckets) / float64(n)
		r.allocBits = 64 * float64(alloc) / float64(n)
		r.load = float64(entries) / float64(slots*buckets)
		if splitB > 0 {
			r.loadSplit = float64(splitE) / float64(slots*splitB)
		}
		if unB > 0 {
			r.loadUnspl = float64(unE) / float64(slots*unB)
		}
		r.meanBits = sumBits / float64(entries)
		for j := range n {
			if !s.lookup(hs.hash(j)) {
				r.fn++
			}
		}
		var fp uint64
		for j := range probes {
			if s.lookup(hs.hash(probeBase + j)) {
				fp++
			}
		}
		r.fpr = float64(fp) / float64(probes)
		r.failMin, r.failMed, _ = failQuantiles(&st.failLoad)
		for x := range xBins {
			_, r.failXMed[x], r.failX[x] = failQuantiles(&st.failXLoad[x])
		}
		out = append(out, r)
	}
	runtime.KeepAlive(s)
	return out
}

// failQuantiles returns the least and the median load of the failed
// inserts in h (NaN if none), and their number.
func failQuantiles(h *[failBins + 1]uint64) (lo, med float64, total uint64) {
	for _, c := range h {
		total += c
	}
	if total == 0 {
		return math.NaN(), math.NaN(), 0
	}
	lo = -1
	var seen uint64
	for b, c := range h {
		if c == 0 {
			continue
		}
		if lo < 0 {
			lo = float64(b) / failBins
		}
		seen += c
		if 2*seen >= total {
			return lo, float64(b) / failBins, total
		}
	}
	return lo, lo, total
}

// printResults prints one design's checkpoints. Counts of failed
// inserts, void copies and blocked moves are totals since the filter was
// made.
func printResults(w io.Writer, rs []result) {
	fmt.Fprintln(w, "| design | keys | heap bits/key | slot bits/key | alloc bits/key | load | split/unsplit load | FPR % | false neg | mean bits compared | void entries | void copies | void moves blocked | top bits dropped | growth steps | words copied per key | failed inserts: n (min, median load), then n@median load by quartile of p/N |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, r := range rs {
		su := "-"
		if r.cfg.linear {
			su = fmt.Sprintf("%.3f/%.3f", r.loadSplit, r.loadUnspl)
		}
		fails := "0"
		if r.fails > 0 {
			fails = fmt.Sprintf("%d (%.3f, %.3f)", r.fails, r.failMin, r.failMed)
			for x := range xBins {
				if r.failX[x] == 0 {
					fails += " 0"
					continue
				}
				fails += fmt.Sprintf(" %d@%.3f", r.failX[x], r.failXMed[x])
			}
		}
		fmt.Fprintf(w, "| %s | %d | %.2f | %.2f | %.2f | %.3f | %s | %.3f | %d | %.2f | %d | %d | %d | %d | %d | %.2f | %s |\n",
			r.cfg.name(), r.keys, r.heapBits, r.slotBits, r.allocBits, r.load, su, 100*r.fpr, r.fn,
			r.meanBits, r.voids, r.voidDups, r.blocked, r.dropped, r.steps, r.rewritten, fails)
	}
}

// printSummary prints, per design, its figures at 2^20 keys and its worst
// over all checkpoints, against the bounds.
func printSummary(w io.Writer, all [][]result, maxBits, maxFPR float64) {
	fmt.Fprintf(w, "\nBounds: %.2f heap bits/key, FPR %.3f%%.\n\n", maxBits, 100*maxFPR)
	fmt.Fprintln(w, "| design | heap bits/key at 2^20 | FPR % at 2^20 | worst heap bits/key | worst FPR % | false neg | failed inserts | meets both everywhere |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, rs := range all {
		var at *result
		worstB, worstF := 0.0, 0.0
		var fn uint64
		for k := range rs {
			r := &rs[k]
			if r.keys == 1<<20 {
				at = r
			}
			worstB, worstF = max(worstB, r.heapBits), max(worstF, r.fpr)
			fn += r.fn
		}
		a, f := "-", "-"
		if at != nil {
			a, f = fmt.Sprintf("%.2f", at.heapBits), fmt.Sprintf("%.3f", 100*at.fpr)
		}
		meets := "no"
		if worstB <= maxBits && worstF <= maxFPR {
			meets = "yes"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.2f | %.3f | %d | %d | %s |\n",
			rs[0].cfg.name(), a, f, worstB, 100*worstF, fn, rs[len(rs)-1].fails, meets)
	}
}

// mustList parses a comma-separated flag value, exiting with a message
// that names the flag when an element does not parse.
func mustList[T any](name, s string, parse func(string) (T, error)) []T {
	var out []T
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := parse(f)
		if err != nil {
			log.Fatalf("-%s %q: %v", name, f, err)
		}
		out = append(out, v)
	}
	return out
}

func parseUint(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) }
func parseFloat(s string) (float64, error) {
	return strconv.ParseFloat(s, 64)
}

func main() {
	designs := flag.String("designs", "doubling,linear", "designs to run: doubling, linear")
	chunks := flag.String("chunks", "1024,64,1", "linear: buckets split per step")
	fracs := flag.String("fractions", "", "linear: split ceil(N/k) buckets per step for each k listed (N: buckets of the level), besides -chunks")
	targets := flag.String("targets", "0.90,0.93,0.95", "linear: load a shard is kept under")
	tails := flag.String("tails", "7,8", "linear: position bits per entry (lane = 7+T bits)")
	dtails := flag.String("dtails", "7", "doubling: position bits per entry")
	sizesF := flag.String("sizes", "1000000,1048576,1200000,1400000,1600000,1800000,2000000", "checkpoints: keys inserted")
	probes := flag.Uint64("probes", 4000000, "never-inserted keys probed at each checkpoint")
	seed := flag.Uint64("seed", 1, "seed of the keys, masks and offsets")
	start := flag.Int("start", 1000, "capacity the first tables are sized for (NewGrowing(start))")
	shards := flag.Int("shards", 16, "shards (first tables 2^(i/shards) apart); 1, 2, 4, 8 or 16")
	seg := flag.Uint64("seg", 1024, "linear: buckets per storage segment (a power of two)")
	bfsNodes := flag.Int("bfs", 500, "most nodes a relocation search visits")
	maxPath := flag.Int("maxpath", 6, "most moves on a relocation path")
	maxBits := flag.Float64("maxbits", 1.45*13.26, "bound on heap bits per key")
	maxFPR := flag.Float64("maxfpr", 2*0.00238, "bound on the false-positive rate")
	flag.Parse()

	if *shards < 1 || *shards > 16 || 16%*shards != 0 {
		log.Fatalf("shards must divide 16, got %d", *shards)
	}
	if *seg == 0 || *seg&(*seg-1) != 0 {
		log.Fatalf("seg must be a power of two, got %d", *seg)
	}
	sizes := mustList("sizes", *sizesF, parseUint)
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	var cs []uint64
	if *chunks != "" {
		cs = mustList("chunks", *chunks, parseUint)
	}
	ts := mustList("targets", *targets, parseFloat)
	ls := mustList("tails", *tails, parseUint)
	dls := mustList("dtails", *dtails, parseUint)
	var fs []uint64
	if *fracs != "" {
		fs = mustList("fractions", *fracs, parseUint)
	}
	base := config{shards: *shards, seg: *seg, bfsNodes: *bfsNodes, maxPath: *maxPath}
	var cfgs []config
	for _, d := range strings.Split(*designs, ",") {
		switch strings.TrimSpace(d) {
		case "doubling":
			for _, t := range dls {
				c := base
				c.tail = uint(t)
				cfgs = append(cfgs, c)
			}
		case "linear":
			for _, t := range ls {
				for _, ch := range cs {
					for _, tg := range ts {
						c := base
						c.linear, c.chunk, c.target, c.tail = true, ch, tg, uint(t)
						cfgs = append(cfgs, c)
					}
				}
				for _, k := range fs {
					for _, tg := range ts {
						c := base
						c.linear, c.chunk, c.frac, c.target, c.tail = true, 1, k, tg, uint(t)
						cfgs = append(cfgs, c)
					}
				}
			}
		default:
			log.Fatalf("unknown design %q", d)
		}
	}
	for _, c := range cfgs {
		if c.tail < 1 || slots*(7+c.tail) > 64 || c.tail > posBits {
			log.Fatalf("tail %d: four lanes of %d bits do not fit a word", c.tail, 7+c.tail)
		}
		if c.linear && (c.chunk == 0 || c.target <= 0 || c.target > 1) {
			log.Fatalf("bad linear design %+v", c)
		}
	}

	fmt.Printf("%s\n", strings.Join(os.Args, " "))
	fmt.Printf("growsim: seed %d, NewGrowing(%d), %d shards, %d probes, search %d nodes / %d moves, linear segments of %d buckets\n\n",
		*seed, *start, *shards, *probes, *bfsNodes, *maxPath, *seg)
	var all [][]result
	for _, c := range cfgs {
		rs := measure(c, *seed, *start, sizes, *probes)
		all = append(all, rs)
		printResults(os.Stdout, rs)
		fmt.Println()
	}
	printSummary(os.Stdout, all, *maxBits, *maxFPR)
}
