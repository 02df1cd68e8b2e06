package cuckoo

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// A filter that grows (Growing): one table that doubles in place.
//
// A Growing filter keeps one table at a time (grow_table.go has its
// placement and its operations). When an insert finds no room and the
// table is at least growFullLoad full, the filter makes the next table,
// with twice the buckets, and copies the old one into it bucket by bucket:
// each old bucket splits into two adjacent new ones, each entry going to
// the half its stored index bit names (splitLane). No key is needed, so
// entries keep their place in every later table, and a lookup reads two
// buckets whatever the size.
//
// The expansion protocol. Tables form a chain through next: the filter's
// current table cur is the last one (or, for a moment, the one before it).
//
//  1. Start: an insert that found its table x full makes n with n.old = x,
//     publishes it with one CAS on x.next, and moves cur from x to n (a
//     CAS, so cur only ever moves forward along the chain).
//  2. Copy: the old table is cut into chunks of growChunk buckets, handed
//     out by a counter (n.claimed). A copier freezes each bucket of its
//     chunk (sets the word's frozen bit; a frozen word never changes
//     again) and stores the two new words. When the last chunk is done,
//     n.old is set to nil.
//  3. Writers: every insert, delete and Reset first takes the table from
//     writable, which moves cur forward if next is set and, while cur's
//     copy is unfinished, copies chunks itself and then waits for the
//     others' (runtime.Gosched). So no write reaches a table whose copy is
//     unfinished, and the new words are written by their copier only. A
//     write that meets a frozen word in its table (growFrozen: its CAS or
//     K-CAS failed against the frozen word, or its locks showed the bit)
//     changed nothing and starts over on the next table.
//  4. Lookups read cur and, while cur.old is not nil, search cur.old
//     instead; they never wait and never copy.
//
// Claim (no false negatives): a Lookup of x that starts after an Insert of
// x returned, with no Delete of x and no Reset begun since, reports true.
// Proof. The insert wrote x's entry into an unfrozen word of some table T
// (its CAS compared the unfrozen word; in Locked mode it checked the bit
// under the lock), at a moment when T was cur (writable returned T, and
// cur only moves forward). (a) From then on T holds an entry matching x in
// x's pair of T: relocations keep entries in their pairs, deletes remove
// only matches of the deleted key with the rule in grow_table.go (another
// key's delete leaves x a match), and freezing changes no entry. (b) If
// T's successor n finished its copy (n.old = nil), n holds a match of x
// in x's pair of n: the copy took every frozen word of T, each entry
// to the half of its bucket that its top stored bit names, which is in
// x's pair of n for an entry matching x (an entry matching x stores x's
// position bit for its bucket, and that half is x's bucket of the same
// role in n, grow_table.go; a void entry goes to both halves), with one
// bit fewer compared, the rest still x's position bits there; writes
// on n began after the copy, and (a) applies to n from then on. By
// induction every table after T in the chain whose copy finished holds a
// match of x. Now the lookup loads cur = C (C is T or later: cur was T
// when the insert wrote, and only moves forward) and reads C.old. If it
// reads nil, C's copy finished (or C = T), so C holds a match of x; if it
// reads O, no write has reached C yet, so T is not C: T is O or earlier,
// O's own copy finished before C was made (expansions start only from a
// table writable returned, whose copy was done), and O holds a match of x.
// The search of that table is the fixed filter's (twophase.go or
// locked.go), whose claim needs only that a match stays in the pair
// throughout, which (a) gives. A Reset between T and C would break the
// chain, but a Reset begun after the insert is outside the claim.
//
// Nothing is lost: a write that changed its table before the bucket was
// frozen is in the copy; one that did not changed nothing and is redone on
// the next table. ErrFull leaves every entry in its pair (relocations only
// move entries within their pairs).
//
// The cost of waiting: a copy runs at memory speed, shared by every writer
// that arrives, but a copier that the scheduler stops while it holds a
// chunk holds back the writers until it runs again: writes are not
// lock-free during an expansion (lookups are).

// growMinBase is the smallest first table: 1024 buckets (8 KiB, 3,891 keys
// at 95%), so that the 19 doublings the hash bits allow reach 2^29
// buckets (2 billion keys).
const growMinBase = 1024

// growChunk is the number of old buckets a copier claims at once.
const growChunk = 1024

// growFullLoad is the load at which an insert that finds no room doubles
// the table; below it the insert returns ErrFull, as a fixed filter's does.
// A table fails its first insert between about 93% and 97% load, but one
// that holds many copies of some keys can fail earlier, so the line is
// low; what it excludes is the case of a few keys with more copies than
// their pair holds in a table far from full: doubling would not give them
// room (their copies all go the same way), and each attempt would double
// the memory.
const growFullLoad = 0.5

// Growing is a concurrent cuckoo filter that grows when it is full,
// instead of returning ErrFull, up to an optional maximum
// (WithMaxCapacity). It keeps the guarantees of Filter: no false negatives
// for keys inserted and not deleted, also while it grows; deletes of
// inserted keys are safe (the insert, delete and reinsert of one key under
// growth included); lookups never wait for another goroutine. Create one
// with NewGrowing; a zero Growing holds nothing and reports every Insert as
// ErrZeroFilter.
//
// A Growing filter is one table of four-slot buckets, as a Filter's, that
// doubles in place: each bucket splits into two and every entry moves to
// the half its stored bits name. Its costs (measured in BENCHMARKS.md,
// "Growing filter"):
//
//   - lookups read two buckets at every size, as in a fixed filter;
//   - memory: 64 bits per bucket of four slots, as a fixed filter's; the
//     table doubles at its first failed insert (at 93% to 97% load in the
//     measurements), so it holds between about 1 and 2 times the memory of
//     a fixed filter sized for its keys (16.8 to 33.7 bits per key);
//   - false positives: an entry has a 6-bit tag and up to 7 bits of its
//     key's position, and each doubling moves one of those bits into the
//     bucket index, so older entries compare fewer bits. An entry that has
//     lived through k doublings compares 13-k bits (6 once k >= 7); since
//     the table doubles when full, half of its entries are from the last
//     doubling, a quarter from the one before, and so on. FalsePositiveRate
//     reports the expected rate from the entries actually stored; it was
//     2.5 to 3.1 times a fixed 12-bit filter's after 9 to 10 doublings;
//   - growing: an insert that finds the table full makes the next one and
//     copies the old one into it; inserts and deletes that arrive while the
//     copy runs share the copying and wait for it to end; lookups never
//     wait, and read the old table until the copy is done.
//
// A Growing filter must not be copied after first use.
type Growing struct {
	_ noCopy

	cur   atomic.Pointer[growTable]
	base  uint64 // buckets of the first table (c in grow_table.go); 0 for a zero Growing
	off   [growTags]uint32
	mask  [growTags]uint32
	seed  uint64
	mul   uint64
	mode  Mode
	maxD  uint // the most doublings (growMaxDoublings, or fewer under WithMaxCapacity)
	count shardedCount
	gate  snapshotGate
}

// WithMaxCapacity bounds a Growing filter: it doubles only while the
// doubled table still holds at most maxCapacity keys at 95% load; past
// that, an insert that finds no room returns ErrFull with nothing lost, as
// a Filter's does. So Cap never exceeds maxCapacity/0.95 slots. 0 (the
// default) means no bound but the 19 doublings the hash allows. New
// rejects it.
func WithMaxCapacity(maxCapacity int) Option {
	return func(c *config) { c.maxCap, c.maxCapSet = maxCapacity, true }
}

// NewGrowing returns a filter that starts with room for capacity keys (at
// least 3,891: the smallest table has 1024 buckets) and doubles as keys
// arrive, up to 19 times. It takes the options of New (seed, mode; the
// fingerprint size must be the default 12) and WithMaxCapacity. It returns
// an error if capacity is not positive or above MaxCapacity, if the maximum
// is below the first table's capacity, or if an option has a value outside
// its range.
func NewGrowing(capacity int, opts ...Option) (*Growing, error) {
	c, err := newConfig(capacity, opts)
	if err != nil {
		return nil, err
	}
	if c.bits != DefaultFingerprintBits {
		return nil, fmt.Errorf("cuckoo: a growing filter has %d-bit fingerprints (it stores 14-bit slots that give up bits as it doubles); got %d", DefaultFingerprintBits, c.bits)
	}
	base := max(bucketsFor(capacity), growMinBase)
	if c.maxCap < 0 {
		return nil, fmt.Errorf("cuckoo: maximum capacity must not be negative, got %d", c.maxCap)
	}
	maxD := uint(growMaxDoublings)
	for maxD > 0 && base<<maxD > maxBuckets {
		maxD--
	}
	if c.maxCap > 0 {
		if first := growKeys(base); uint64(c.maxCap) < first {
			return nil, fmt.Errorf("cuckoo: maximum capacity %d is below the first table's %d keys", c.maxCap, first)
		}
		d := uint(0)
		for d < maxD && growKeys(base<<(d+1)) <= uint64(c.maxCap) {
			d++
		}
		maxD = d
	}
	g := &Growing{}
	g.setup(base, c.seed, c.mode, maxD)
	g.cur.Store(g.newTable(0))
	return g, nil
}

// setup sets the filter's parameters.
func (g *Growing) setup(base, seed uint64, mode Mode, maxD uint) {
	g.base, g.seed, g.mode, g.maxD = base, seed, mode, maxD
	g.mul = mix64(seed) | 1
	for t := range g.off {
		hi, _ := bits.Mul64(mix64(seed^uint64(t+1)*0x9e3779b97f4a7c15), base)
		g.off[t] = uint32(hi)
		g.mask[t] = uint32(mix64(seed^uint64(t+1)*0xc2b2ae3d27d4eb4f)) & (1<<growIndexBits - 1)
	}
	sb := shardBitsFor(base)
	g.count.init(sb)
	g.gate.movers.init(sb)
}

// growKeys is the number of keys a table of m buckets is sized for (95%).
func growKeys(m uint64) uint64 {
	return m * slotsPerBucket * targetLoadNum / targetLoadDen
}

// newTable returns an empty table of d doublings.
func (g *Growing) newTable(d uint) *growTable {
	x := g.tableShape(d)
	x.t.words = make([]atomic.Uint64, x.m)
	if g.mode == Locked {
		x.locks = newStripedLocks(int(x.m))
	}
	return x
}

// tableShape returns a table of d doublings without its words: what
// placement needs.
func (g *Growing) tableShape(d uint) *growTable {
	x := &growTable{m: g.base << d, d: uint64(d)}
	x.sShift, x.tShift, x.sMask = uint64(growIndexBits-d), uint64(growIndexBits-growTailBits-d), 1<<d-1
	return x
}

// keyed returns the key hash h keyed with the seed, as Filter.keyed does
// with hash algorithm 2 (seed 0 leaves h as it is).
func (g *Growing) keyed(h uint64) uint64 {
	if g.seed == 0 {
		return h
	}
	return (h ^ g.seed) * g.mul
}

// place places the key whose keyed hash is kh in table x.
func (g *Growing) place(x *growTable, kh uint64) growKey {
	return x.place(kh, g.base, &g.off, &g.mask)
}

// writable returns the table writes go to, after moving cur forward and
// helping with (and waiting for) an unfinished copy into it.
func (g *Growing) writable() *growTable {
	for {
		x := g.cur.Load()
		if n := x.next.Load(); n != nil {
			g.cur.CompareAndSwap(x, n)
			continue
		}
		if o := x.old.Load(); o != nil {
			g.copyInto(x, o)
			continue
		}
		return x
	}
}

// searched returns the table lookups search: cur, or the table being
// copied into it.
func (g *Growing) searched() *growTable {
	x := g.cur.Load()
	if o := x.old.Load(); o != nil {
		return o
	}
	return x
}

// expand starts the expansion of x (or joins one that started) and
// reports whether there is one: false at the bound, or when x is less
// than growFullLoad full.
func (g *Growing) expand(x *growTable) bool {
	if x.next.Load() == nil {
		if x.d >= uint64(g.maxD) || float64(g.count.sum()) < growFullLoad*float64(x.m*slotsPerBucket) {
			return false
		}
		n := g.newTable(uint(x.d) + 1)
		n.old.Store(x)
		x.next.CompareAndSwap(nil, n)
	}
	g.cur.CompareAndSwap(x, x.next.Load())
	return true
}

// copyInto copies chunks of o into n until none is left to claim, then
// waits until every claimed chunk is copied.
func (g *Growing) copyInto(n, o *growTable) {
	chunks := (o.m + growChunk - 1) / growChunk
	for {
		i := n.claimed.Add(1) - 1
		if i >= chunks {
			break
		}
		mv := g.gate.enterMove() // snapshots see a table before or after a chunk
		g.copyChunk(n, o, i*growChunk, min((i+1)*growChunk, o.m))
		g.gate.exitMove(mv)
		if n.copied.Add(1) == chunks {
			n.old.Store(nil)
		}
	}
	for n.old.Load() != nil {
		runtime.Gosched()
	}
}

// copyChunk freezes the buckets [lo, hi) of o and writes their entries
// into n: bucket j's into 2j and 2j+1, or nowhere if n was made by Reset.
func (g *Growing) copyChunk(n, o *growTable, lo, hi uint64) {
	for j := lo; j < hi; j++ {
		w := g.freezeIn(o, j)
		if n.reset {
			if k := laneCount(w); k != 0 {
				g.count.add(-int64(k))
			}
			continue
		}
		var half [2]uint64
		voids := 0
		for s := range slotsPerBucket {
			v := lane(w, s)
			if v == 0 {
				continue
			}
			nv, h, both := splitLane(v)
			if both {
				half[0], _ = putLane(half[0], nv)
				half[1], _ = putLane(half[1], nv)
				voids++
				continue
			}
			half[h], _ = putLane(half[h], nv)
		}
		n.t.words[2*j].Store(half[0])
		n.t.words[2*j+1].Store(half[1])
		if voids != 0 {
			g.count.add(int64(voids))
		}
	}
}

// Insert adds key to the filter, doubling the table if the key finds no
// room. It returns ErrFull only at the maximum (WithMaxCapacity or 19
// doublings) or when the key's buckets are full of copies of keys like it
// while the table is less than half full; the filter then holds what it
// held before. On a zero Growing it returns ErrZeroFilter.
func (g *Growing) Insert(key []byte) error { return g.InsertHash(xxhash.Sum64(key)) }

// InsertString is Insert for a string key, without copying it.
func (g *Growing) InsertString(key string) error { return g.Insert(bytesOf(key)) }

// InsertHash is Insert for a key given by its 64-bit hash, as
// Filter.InsertHash (the same assumptions on h).
func (g *Growing) InsertHash(h uint64) error {
	if g.base == 0 {
		return ErrZeroFilter
	}
	kh := g.keyed(h)
	for {
		x := g.writable()
		switch g.addIn(x, g.place(x, kh)) {
		case growDone:
			g.count.add(1)
			return nil
		case growFull:
			if !g.expand(x) {
				return ErrFull
			}
		}
		// growFrozen, or a new table: start over on the table writable
		// gives now.
	}
}

// Lookup reports whether key may be in the filter: true for every key
// inserted and not deleted (also while the filter grows), and false with
// the probability FalsePositiveRate reports for a key never inserted.
func (g *Growing) Lookup(key []byte) bool { return g.LookupHash(xxhash.Sum64(key)) }

// LookupString is Lookup for a string key, without copying it.
func (g *Growing) LookupString(key string) bool { return g.Lookup(bytesOf(key)) }

// LookupHash is Lookup for a key given by its 64-bit hash.
func (g *Growing) LookupHash(h uint64) bool {
	if g.base == 0 {
		return false
	}
	x := g.searched()
	k := g.place(x, g.keyed(h))
	// The fast paths of lookupIn, inlined: a match, or a miss whose first
	// bucket reads the same again under the same epoch.
	t := &x.t
	e := t.epoch.Load()
	w1, w2 := t.words[k.b1].Load(), t.words[k.b2].Load()
	if (w1|w2|e)&tagMask == 0 {
		if k.matches(w1, w2) {
			return true
		}
		if k.b1 == k.b2 || (t.words[k.b1].Load() == w1 && t.epoch.Load() == e) {
			return false
		}
	}
	return g.lookupIn(x, k)
}

// Delete removes one copy of key and reports whether it found one. As
// with Filter, only delete keys that were inserted: deleting another key
// may remove an entry that a colliding inserted key needs.
func (g *Growing) Delete(key []byte) bool { return g.DeleteHash(xxhash.Sum64(key)) }

// DeleteString is Delete for a string key, without copying it.
func (g *Growing) DeleteString(key string) bool { return g.Delete(bytesOf(key)) }

// DeleteHash is Delete for a key given by its 64-bit hash.
func (g *Growing) DeleteHash(h uint64) bool {
	if g.base == 0 {
		return false
	}
	kh := g.keyed(h)
	for {
		x := g.writable()
		ok, st := g.deleteIn(x, g.place(x, kh))
		if st == growDone {
			if ok {
				g.count.add(-1)
			}
			return ok
		}
	}
}

// Count returns the number of entries that match key: the copies of key
// stored (each Insert of it adds one, each Delete removes one), plus those
// of other keys that collide with it. Entries that have lived through many
// doublings match more keys.
func (g *Growing) Count(key []byte) int {
	if g.base == 0 {
		return 0
	}
	kh := g.keyed(xxhash.Sum64(key))
	x := g.searched()
	n, _ := g.countIn(x, g.place(x, kh))
	return n
}

// InsertBatch inserts keys in order and returns how many it inserted; if
// that is less than len(keys), keys[n] did not fit (only where Insert
// returns ErrFull), err is ErrFull, and keys[n:] were not inserted.
func (g *Growing) InsertBatch(keys [][]byte) (n int, err error) {
	for n = range keys {
		if err = g.Insert(keys[n]); err != nil {
			return n, err
		}
	}
	return len(keys), nil
}

// LookupBatch stores in found[i] whether keys[i] may be in the filter, for
// i below n = min(len(keys), len(found)), and returns n, with Lookup's
// guarantee for each key. It loads the buckets of a group of keys before
// it tests any of them, so that their cache misses overlap.
func (g *Growing) LookupBatch(keys [][]byte, found []bool) (n int) {
	n = min(len(keys), len(found))
	if g.base == 0 {
		clear(found[:n])
		return n
	}
	var hs [batchGroup]uint64
	for base := 0; base < n; base += batchGroup {
		ks := keys[base:min(base+batchGroup, n)]
		for j, k := range ks {
			hs[j] = xxhash.Sum64(k)
		}
		g.lookupGroup(hs[:len(ks)], found[base:base+len(ks)])
	}
	return n
}

// lookupGroup answers the keys whose hashes are hs (at most batchGroup):
// for each key, the epoch and both words are loaded before any key is
// tested; a key decided by those reads (a match, or a miss whose first
// bucket reads the same again under the same epoch: the fast paths of
// lookupIn) is answered, the others take lookupIn.
func (g *Growing) lookupGroup(hs []uint64, found []bool) {
	x := g.searched()
	t := &x.t
	var ks [batchGroup]growKey
	var w1, w2, e [batchGroup]uint64
	for j, h := range hs {
		ks[j] = g.place(x, g.keyed(h))
	}
	for j := range hs {
		e[j] = t.epoch.Load()
		w1[j], w2[j] = t.words[ks[j].b1].Load(), t.words[ks[j].b2].Load()
	}
	for j := range hs {
		k := ks[j]
		switch {
		case (w1[j]|w2[j]|e[j])&tagMask != 0:
			found[j] = g.lookupIn(x, k)
		case k.matches(w1[j], w2[j]):
			found[j] = true
		case k.b1 == k.b2 || (t.words[k.b1].Load() == w1[j] && t.epoch.Load() == e[j]):
			found[j] = false
		default:
			found[j] = g.lookupIn(x, k)
		}
	}
}

// Len returns the number of entries stored: one per insert not deleted,
// plus one for each extra copy of a void entry a doubling made (a few in a
// thousand after ten doublings). Like Filter.Len it is exact when no write
// is in progress.
func (g *Growing) Len() int {
	if g.base == 0 {
		return 0
	}
	return int(max(g.count.sum(), 0))
}

// Cap returns the number of slots of the current table (during an
// expansion, of the new one).
func (g *Growing) Cap() int {
	if g.base == 0 {
		return 0
	}
	return int(g.cur.Load().m * slotsPerBucket)
}

// LoadFactor returns Len()/Cap(), or 0 for a zero Growing.
func (g *Growing) LoadFactor() float64 {
	c := g.Cap()
	if c == 0 {
		return 0
	}
	return float64(g.Len()) / float64(c)
}

// Doublings returns how many times the table has doubled since the filter
// was made (or last Reset): its table has 2^Doublings times the buckets it
// started with.
func (g *Growing) Doublings() int {
	if g.base == 0 {
		return 0
	}
	return int(g.cur.Load().d)
}

// BaseCapacity returns the number of keys the first table is sized for
// (95% load): the capacity the filter started with, rounded up to whole
// buckets and to at least 3,891.
func (g *Growing) BaseCapacity() int { return int(growKeys(g.base)) }

// FalsePositiveRate returns the expected rate at which Lookup reports a
// never-inserted key present, from the entries stored now: a key's two
// buckets are a random pair, and an entry that compares k bits matches it
// with probability 2^-k. It reads the whole table.
func (g *Growing) FalsePositiveRate() float64 {
	if g.base == 0 {
		return 0
	}
	x := g.searched()
	var perBits [14]int
	for i := range x.t.words {
		w := x.t.load(uint64(i))
		for s := range slotsPerBucket {
			if v := lane(w, s); v != 0 {
				perBits[matchBits(v)]++
			}
		}
	}
	sum := 0.0
	for k, n := range perBits {
		sum += float64(n) * math.Ldexp(1, -k)
	}
	return 2 * sum / float64(x.m)
}

// Reset removes every key and shrinks the filter back to its first table.
// Lookups that overlap it may still report keys it removes; writes that
// overlap it take effect before or after it, whole.
func (g *Growing) Reset() {
	if g.base == 0 {
		return
	}
	for {
		x := g.writable()
		n := g.newTable(0)
		n.reset = true
		n.old.Store(x)
		if !x.next.CompareAndSwap(nil, n) {
			continue // an expansion started: help it, then reset
		}
		g.cur.CompareAndSwap(x, n)
		g.copyInto(n, x)
		return
	}
}

// Mode returns the filter's synchronization mode.
func (g *Growing) Mode() Mode { return g.mode }

// FingerprintBits returns 12, the fingerprint size a growing filter is
// compared with (0 for a zero Growing): a fresh entry compares 13 bits of
// its key, an entry that lived through k doublings 13-k (at least 6).
func (g *Growing) FingerprintBits() int {
	if g.base == 0 {
		return 0
	}
	return DefaultFingerprintBits
}

// Seed returns the hash seed, as Filter.Seed.
func (g *Growing) Seed() uint64 { return g.seed }
