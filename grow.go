package cuckoo

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync/atomic"
)

// A Growing filter: sixteen shards of one table each (grow_table.go). An
// insert that finds no room grows its shard (growTargetLoad, growFullLoad) to
// its next table, a sixteenth of its level's buckets more split (nextStep),
// copied bucket by bucket (copyChunk). Small steps keep memory per key near a
// fixed filter's (BENCHMARKS.md, "Growing filter").
//
// The expansion protocol, per shard. Its tables form a chain through next;
// cur is the last one (or, for a moment, the one before it).
//
//  1. Start: an insert that found its table x full makes n, x's next step,
//     with n.old = x, publishes it by CAS on x.next, and moves cur from x
//     to n by CAS (so cur only moves forward along the chain).
//  2. Copy: copiers claim chunks of growChunk old buckets (n.claimed),
//     freeze each bucket (a frozen word never changes again) and store its
//     new word, or the halves of a bucket the step splits (copyChunk).
//     After the last chunk, n.old = nil.
//  3. Writers (Insert, Delete, Reset) take their table from writable,
//     which moves cur forward and, while cur's copy is unfinished, copies
//     chunks itself and then waits for the others'. So no write reaches a
//     table whose copy is unfinished, and only its copier writes a new
//     word. A write that meets a frozen word (its CAS or K-CAS fails
//     against it, or its locks show the bit) changed nothing and starts
//     over on the next table.
//  4. Lookups search cur.old while it is not nil, else cur; they never
//     wait and never copy.
//
// Claim (no false negatives): a Lookup of x that starts after an Insert of x
// returned, with no Delete of x and no Reset begun since, reports true. Proof.
// Every operation on x uses the chain of x's shard. The insert wrote x's entry
// into an unfrozen word of some table T while T was cur (step 3). (a) From then
// on T holds a match of x in x's pair: moves keep entries in their pairs,
// Deletes remove only matches of the deleted key (grow_table.go's rule),
// freezing changes no entry. (b) If T's successor n finished its copy, n holds
// a match of x in x's pair of n: the copy took every frozen word of T, a match
// of x to x's bucket of the same role in n (grow_table.go, "Linear steps");
// writes on n began after the copy, and (a) applies to n from then on. By
// induction so does every later table whose copy finished. The lookup loads C
// from cur (T or later), then C.old. If nil, C's copy finished (or C = T): C
// holds a match. If O, no write has reached C, so T is O or earlier, and O's
// copy finished before C was made (expansions start only from a table writable
// returned): O holds a match. Its search finds x, as x's pair holds a match
// throughout (grow_table.go, "Deletes move both counters"). □
//
// Nothing is lost: a write that changed its table before the bucket froze
// is in the copy, and ErrFull leaves every entry in its pair. Writes are
// not lock-free during an expansion: a copier descheduled with a chunk
// holds back its shard's writers (lookups, and the other shards, go on).

const (
	// growShardBits sets growShards = 16: more shards make smaller steps,
	// but round more large tables up to whole pages, which at 32 cost more
	// than they saved (BENCHMARKS.md, "Tuning constants").
	growShardBits = 4
	growShards    = 1 << growShardBits
	// A key's shard is the top bits of kh·growShardMul, which depend on all
	// of kh: placement's bits stay uniform within a shard.
	growShardMul = 0x9e3779b97f4a7c15
	// growMinBase is the smallest first table: with it, the 19 doublings
	// the hash allows take the shards past 2^30 buckets.
	growMinBase = 64
	growChunk   = 1024 // old buckets a copier claims at once
	// growTargetLoad: an insert that finds both its buckets full in a shard
	// this full grows it at once rather than search for a path, whose cost
	// grows steeply with the load (BENCHMARKS.md, "Tuning constants").
	growTargetLoad = 0.90
	// growFullLoad: below it an insert that finds no room returns ErrFull:
	// only many copies of a key, which share its buckets, fill them this
	// early, and growing adds memory, not room (TestGrowingCopiesOfManyKeys).
	growFullLoad = 0.5
	// growStepParts: a step splits ceil(N/growStepParts) of the level's N
	// buckets; smaller steps keep the load nearer the target, copying more.
	growStepParts = 16
	// A step rounds a table above growLargeWords (32 KiB, the largest size
	// class) up to whole 8 KiB pages, a large allocation's unit.
	growPageWords  = 1024
	growLargeWords = 4096
)

// growShardScale[i] is 2^(i/16) in 16.16 fixed point: shard i's first table has
// ceil(B·2^(i/16)) buckets for shard 0's B, so shards do not step together.
var growShardScale = [growShards]uint64{
	65536, 68438, 71468, 74632, 77936, 81386, 84990, 88752,
	92682, 96785, 101070, 105545, 110218, 115098, 120194, 125515,
}

// Growing is a concurrent cuckoo filter that grows when it is full, instead of
// returning ErrFull, up to an optional maximum (WithMaxCapacity). It keeps the
// guarantees of Filter: no false negatives for keys inserted and not deleted,
// also while it grows and while colliding keys are inserted and deleted;
// lookups never wait for another goroutine. Create one with NewGrowing; a zero
// Growing holds nothing and reports every Insert as ErrZeroFilter.
//
// It is sixteen shards, each a table of four-slot buckets; a key belongs to one
// shard, chosen by its hash, and a lookup reads two buckets at every size. An
// entry compares fewer bits of its key each time its bucket is split, so the
// false-positive rate rises with growth (FalsePositiveRate). Writes to a shard
// that copies its table share the copying and wait for it; on snapshots, see
// the package doc. Memory, precision and speed: README.md, "Growing filter".
//
// Its method set is Filter's, String and Hash forms included, without
// Stats and LockStats. Use Clone (not an assignment) to copy it; a Growing
// filter must not be copied after first use.
type Growing struct {
	_    noCopy
	st   *growState // nil for a zero Growing
	seed uint64
	mul  uint64
	mode Mode
	gate snapshotGate
}

// growState is a Growing filter's masks and shards; ReadFrom replaces it.
type growState struct {
	mask   [growTags]uint32
	shards [growShards]growShard
}

type growShard struct {
	cur   atomic.Pointer[growTable]
	base  uint64 // buckets of the shard's first table (c in grow_table.go)
	maxD  uint64 // the most doublings
	off   [growTags]uint32
	count shardedCount
}

// WithMaxCapacity bounds a Growing filter: each shard grows up to the
// doublings at which all together hold at most maxCapacity keys at 95% load
// (Cap at most (maxCapacity+16)/0.95 slots); past that, an insert that finds
// no room returns ErrFull with nothing lost. Each shard receives a sixteenth
// of the keys, so the first ErrFull comes from about two thirds of
// maxCapacity keys on. 0 (the default), or a bound above what the hash's 19
// doublings reach, means no bound but those. New rejects it.
func WithMaxCapacity(maxCapacity int) Option {
	return func(c *config) { c.maxCap, c.maxCapSet = maxCapacity, true }
}

// NewGrowing returns a filter whose first tables are sized for capacity keys at
// 95% load or more (BaseCapacity) and that grows as keys arrive, each shard by
// steps of a sixteenth of a doubling, up to 19 doublings (about four billion
// keys). For many small sets of known size a fixed Filter is much smaller. It
// takes New's options (fingerprint size 12 only, no WithSlotsPerBucket) and
// WithMaxCapacity. It returns an error for a capacity outside [1, MaxCapacity],
// a maximum below the first tables' capacity, or an option out of range.
func NewGrowing(capacity int, opts ...Option) (*Growing, error) {
	var given config // New's own options are refused whatever their values
	for _, o := range opts {
		if o != nil {
			o(&given)
		}
	}
	if given.fprSet {
		return nil, fmt.Errorf("cuckoo: a growing filter has one precision (%d-bit fingerprints; about 0.27%% false positives after growing 1,000-fold, FalsePositiveRate reports it): WithFalsePositiveRate is for New", DefaultFingerprintBits)
	}
	if given.slotsSet {
		return nil, fmt.Errorf("cuckoo: a growing filter has its own layout (four 15-bit lanes per bucket); WithSlotsPerBucket is for New")
	}
	c, err := newConfig(capacity, opts)
	if err != nil {
		return nil, err
	}
	if c.bits != DefaultFingerprintBits {
		return nil, fmt.Errorf("cuckoo: a growing filter has %d-bit fingerprints (it stores 15-bit slots that give up bits as it doubles); got %d", DefaultFingerprintBits, c.bits)
	}
	if c.maxCap < 0 {
		return nil, fmt.Errorf("cuckoo: maximum capacity must not be negative, got %d", c.maxCap)
	}
	b0 := max(bucketsFor((capacity+growShards-1)/growShards), growMinBase)
	var bases, maxD [growShards]uint64
	for i := range bases {
		bases[i] = (b0*growShardScale[i] + 1<<16 - 1) >> 16
		maxD[i] = growMaxDoublings
		for maxD[i] > 0 && bases[i]<<maxD[i] > maxBuckets {
			maxD[i]--
		}
	}
	if c.maxCap > 0 {
		if first := growStateKeys(&bases, &[growShards]uint64{}); uint64(c.maxCap) < first {
			return nil, fmt.Errorf("cuckoo: maximum capacity %d is below the first tables' %d keys (a growing filter starts with sixteen shards of at least 64 buckets; use New for a filter of fixed size)", c.maxCap, first)
		}
		maxD = growBounds(&bases, &maxD, uint64(c.maxCap))
	}
	st := newGrowState(&bases, &maxD, c.seed)
	for i := range st.shards {
		st.shards[i].cur.Store(st.newTable(&st.shards[i], 0, 0, c.mode))
	}
	g := &Growing{}
	g.setup(c.seed, c.mode, st)
	return g, nil
}

// growStateKeys sums the keys (growKeys) of shard i after ds[i] doublings.
func growStateKeys(bases, ds *[growShards]uint64) uint64 {
	var n uint64
	for i, b := range bases {
		n += growKeys(b << ds[i])
	}
	return n
}

// growBounds returns doubling bounds, each at most limit's, under which
// shards with first tables of bases buckets (at most maxCap keys) hold at
// most maxCap keys: it doubles the smallest shard while the total allows,
// so that the shard that returns the first ErrFull is as large as it can be.
func growBounds(bases, limit *[growShards]uint64, maxCap uint64) [growShards]uint64 {
	var ds [growShards]uint64
	for {
		small := -1
		for i, b := range bases {
			if small < 0 || b<<ds[i] < bases[small]<<ds[small] {
				small = i
			}
		}
		if ds[small] == limit[small] {
			return ds
		}
		ds[small]++
		if growStateKeys(bases, &ds) > maxCap {
			ds[small]--
			return ds
		}
	}
}

// newGrowState returns the state, without tables, for bases, maxD, seed.
func newGrowState(bases, maxD *[growShards]uint64, seed uint64) *growState {
	st := &growState{}
	for t := range st.mask {
		st.mask[t] = uint32(mix64(seed^uint64(t+1)*0xc2b2ae3d27d4eb4f)) & (1<<growIndexBits - 1) << 1
	}
	for i := range st.shards {
		sh := &st.shards[i]
		sh.base, sh.maxD = bases[i], maxD[i]
		for t := range sh.off {
			hi, _ := bits.Mul64(mix64(seed^uint64(t+1)*0x9e3779b97f4a7c15), sh.base)
			sh.off[t] = uint32(hi)
		}
		sh.count.init(shardBitsFor(sh.base))
	}
	return st
}

func (g *Growing) setup(seed uint64, mode Mode, st *growState) {
	g.seed, g.mode, g.mul = seed, mode, mix64(seed)|1
	var first uint64 // buckets of the shards' first tables
	for i := range st.shards {
		first += st.shards[i].base
	}
	g.gate.movers.init(shardBitsFor(first))
	g.st = st
}

// growKeys is the number of keys a table of m buckets is sized for (95%).
func growKeys(m uint64) uint64 { return m * slotsPerBucket * targetLoadNum / targetLoadDen }

// newTable returns an empty table of shard sh at level d, split pointer p.
func (st *growState) newTable(sh *growShard, d, p uint64, mode Mode) *growTable {
	x := st.tableShape(sh, d, p)
	x.t.words = make([]atomic.Uint64, x.m)
	x.t.setVers(newEpochs(x.m))
	if mode == Locked {
		x.locks = newStripedLocks(int(x.m))
	}
	return x
}

// tableShape is newTable without words: what placement needs.
func (st *growState) tableShape(sh *growShard, d, p uint64) *growTable {
	x := &growTable{m: sh.base<<d + p, d: d, p: p, c: sh.base, cD: sh.base << d, cD1: sh.base << (d + 1), p2: 2 * p, sh: sh}
	x.lo, x.uMask, x.tShift = 1<<d-1, 1<<(d+1)-1, growPosBits-growTailBits-d
	for t := range x.tc {
		x.tc[t] = uint64(sh.off[t])<<(d+1)<<32 | uint64(st.mask[t])<<1>>x.tShift
	}
	return x
}

// nextStep returns the level and split pointer of the table after x: a
// growStepParts-th of level d more split, rounded up to whole pages above
// growLargeWords, or level d+1 with none split at the level's end.
func (x *growTable) nextStep() (d, p uint64) {
	n := x.c << x.d
	p = x.p + (n+growStepParts-1)/growStepParts
	if m := n + p; m > growLargeWords {
		p = (m+growPageWords-1)/growPageWords*growPageWords - n
	}
	if p >= n {
		return x.d + 1, 0
	}
	return x.d, p
}

// keyed is Filter.keyed for hash algorithm 2 (seed 0: mul = mix64(0)|1 = 1).
func (g *Growing) keyed(h uint64) uint64 { return (h ^ g.seed) * g.mul }

func (g *Growing) shardOf(kh uint64) *growShard {
	return &g.st.shards[kh*growShardMul>>(64-growShardBits)]
}

// writable returns the table writes to sh go to (protocol step 3).
func (g *Growing) writable(sh *growShard) *growTable {
	for {
		x := sh.cur.Load()
		if n := x.next.Load(); n != nil {
			sh.cur.CompareAndSwap(x, n)
			continue
		}
		if o := x.old.Load(); o != nil {
			g.copyInto(sh, x, o)
			continue
		}
		return x
	}
}

// searched returns the table lookups in sh search (protocol step 4).
func (sh *growShard) searched() *growTable {
	x := sh.cur.Load()
	if o := x.old.Load(); o != nil {
		return o
	}
	return x
}

// loaded reports whether sh holds at least load times its table x's slots.
func (sh *growShard) loaded(x *growTable, load float64) bool {
	return float64(sh.count.sum()) >= load*float64(x.m*slotsPerBucket)
}

// eager reports whether an insert that found both buckets full grows x now.
func (sh *growShard) eager(x *growTable) bool {
	return x.d < sh.maxD && sh.loaded(x, growTargetLoad)
}

// canGrow reports whether an insert that finds no room in x grows it (below the
// shard's bound, growFullLoad full); only then does a search stop short (Shallow).
func (x *growTable) canGrow() bool { return x.d < x.sh.maxD && x.sh.loaded(x, growFullLoad) }

// expand starts or joins the expansion of x, sh's table (protocol step 1),
// and reports whether there is one: false where x cannot grow.
func (g *Growing) expand(sh *growShard, x *growTable) bool {
	if x.next.Load() == nil {
		if !x.canGrow() {
			return false
		}
		d, p := x.nextStep()
		n := g.st.newTable(sh, d, p, g.mode)
		n.old.Store(x)
		x.next.CompareAndSwap(nil, n)
	}
	sh.cur.CompareAndSwap(x, x.next.Load())
	return true
}

// copyInto copies chunks of o into n until none is left to claim, then waits
// for every claimed one (protocol step 2). Each chunk holds the snapshot
// gate: a snapshot sees it before or after.
func (g *Growing) copyInto(sh *growShard, n, o *growTable) {
	chunks := (o.m + growChunk - 1) / growChunk
	for {
		i := n.claimed.Add(1) - 1
		if i >= chunks {
			break
		}
		mv := g.gate.enterMove()
		g.copyChunk(sh, n, o, i*growChunk, min((i+1)*growChunk, o.m))
		g.gate.exitMove(mv)
		if n.copied.Add(1) == chunks {
			n.old.Store(nil)
		}
	}
	for n.old.Load() != nil {
		runtime.Gosched()
	}
}

// copyChunk freezes buckets [lo, hi) of o and writes their entries into n
// as grow_table.go's "Linear steps" says (nowhere if n was made by Reset):
// [lo, a) keep their index, [a, b) split, [b, hi) move up by n.p-o.p. A
// void entry goes to both halves and counts once more.
func (g *Growing) copyChunk(sh *growShard, n, o *growTable, lo, hi uint64) {
	if n.reset {
		for i := lo; i < hi; i++ {
			if k := laneCount(g.freezeIn(o, i)); k != 0 {
				sh.count.add(-int64(k))
			}
		}
		return
	}
	end := o.p + n.p // o's buckets of level d below end-o.p are split in n
	if n.d > o.d {
		end = o.p + o.c<<o.d
	}
	a, b := min(max(lo, o.p2), hi), min(max(lo, end), hi)
	g.copyRun(n, o, lo, a, lo)
	for i := a; i < b; i++ {
		h0, h1, voids := splitWord(g.freezeIn(o, i))
		n.t.words[2*(i-o.p)].Store(h0)
		n.t.words[2*(i-o.p)+1].Store(h1)
		if voids != 0 {
			sh.count.add(int64(voids))
		}
	}
	if b < hi {
		g.copyRun(n, o, b, hi, b-o.p+n.p)
	}
}

// copyRun freezes buckets [lo, hi) of o and stores their words at at.. of n.
func (g *Growing) copyRun(n, o *growTable, lo, hi, at uint64) {
	dst, src, locked := n.t.words[at:at+hi-lo], o.t.words[lo:hi], g.mode == Locked
	src = src[:len(dst)]
	for k := range dst {
		i := lo + uint64(k)
		w := src[k].Load() // freezeIn's first try, written out
		if locked || w&(tagMask|frozenBit) != 0 || !o.t.cas(i, w, w|frozenBit) {
			w = g.freezeIn(o, i)
		}
		dst[k].Store(w & lanesMask)
	}
}

// Insert adds key, growing its shard's table if the key finds no room. It
// returns ErrFull, with nothing changed, only at the maximum
// (WithMaxCapacity or 19 doublings) or when no path of at most five moves
// frees a slot in a shard less than half full: likely when many keys are
// stored several times (InsertUnique stores each once).
func (g *Growing) Insert(key []byte) error {
	if len(key) == 8 { // hashKey's first case: a call keeps hash8 from inlining
		return g.InsertHash(hash8(key))
	}
	return g.InsertHash(hashKey(key))
}

// InsertString is Insert for a string key, without copying it.
func (g *Growing) InsertString(key string) error { return g.Insert(bytesOf(key)) }

// InsertHash is Insert for a key given by its hash, as Filter.InsertHash.
func (g *Growing) InsertHash(h uint64) error {
	_, err := g.insertHash(h, false)
	return err
}

// InsertUnique adds key unless an entry matching it is in one of its
// buckets, and reports whether it added it, linearizably as
// Filter.InsertUnique, also against growth steps. It returns ErrFull only
// where Insert would; a refusal may mean another key's entry matches.
func (g *Growing) InsertUnique(key []byte) (inserted bool, err error) {
	return g.InsertUniqueHash(hashKey(key))
}

// InsertUniqueString is InsertUnique for a string key, without copying it.
func (g *Growing) InsertUniqueString(key string) (bool, error) { return g.InsertUnique(bytesOf(key)) }

// InsertUniqueHash is InsertUnique for a key given by its 64-bit hash.
func (g *Growing) InsertUniqueHash(h uint64) (bool, error) { return g.insertHash(h, true) }

// insertHash adds the key whose hash is h, or, if unique, adds it unless
// an entry matches it (uniqueIn), and reports whether it added it.
func (g *Growing) insertHash(h uint64, unique bool) (bool, error) {
	if g.st == nil {
		return false, ErrZeroFilter
	}
	kh := g.keyed(h)
	sh := g.shardOf(kh)
	for retried := false; ; {
		x := g.writable(sh)
		k := x.place(kh)
		present, st := false, growDone
		if unique {
			present, st = g.uniqueIn(x, k)
		} else if st = g.putIn(x, k); st == growFull && !sh.eager(x) {
			if st = g.growRelocate(x, k.b1, k.b2); st == growDone {
				st = g.addIn(x, k) // addIn without its first putIn
			}
		}
		switch {
		case st == growDone:
			if !present {
				sh.count.add(1)
			}
			return !present, nil
		case st == growFull && (!unique || sh.eager(x) || g.growRelocate(x, k.b1, k.b2) == growFull):
			growSearchStalled(x, k.b1, 4)
			if !g.expand(sh, x) {
				if retried || x.d >= sh.maxD {
					return false, ErrFull
				}
				retried = true // below half full since its search stopped short or was skipped: once more, deep
			}
		} // growFrozen, room made, or a new table: start over
	}
}

// Lookup reports whether key may be in the filter: true for every key
// inserted and not deleted (also while the filter grows), and true with
// the probability FalsePositiveRate reports for a key never inserted.
func (g *Growing) Lookup(key []byte) bool {
	if len(key) == 8 { // as Insert
		return g.LookupHash(hash8(key))
	}
	return g.LookupHash(hashKey(key))
}

// LookupString is Lookup for a string key, without copying it.
func (g *Growing) LookupString(key string) bool { return g.Lookup(bytesOf(key)) }

// LookupHash is Lookup for a key given by its 64-bit hash.
func (g *Growing) LookupHash(h uint64) bool {
	if g.st == nil {
		return false
	}
	kh := g.keyed(h)
	x := g.shardOf(kh).searched()
	k := x.place(kh)
	// growLookup's first round (lookup.go.tmpl, also Locked's) inline.
	ep := x.t.epochOf(k.b1)
	e := ep.Load()
	w1, w2 := x.readPair(k.b1, k.b2)
	if (w1|w2|e)&tagMask == 0 {
		if matchEither(laneDiff(w1, k.q1), laneDiff(w2, k.q2)) {
			return true
		}
		if k.b1 == k.b2 || x.unchanged(k.b1, w1, ep, e) {
			return false
		}
	}
	return g.lookupIn(x, k)
}

// Delete removes one copy of key and reports whether it found one. Delete
// only keys that were inserted (the package doc says why).
func (g *Growing) Delete(key []byte) bool { return g.DeleteHash(hashKey(key)) }

// DeleteString is Delete for a string key, without copying it.
func (g *Growing) DeleteString(key string) bool { return g.Delete(bytesOf(key)) }

// DeleteHash is Delete for a key given by its 64-bit hash.
func (g *Growing) DeleteHash(h uint64) bool {
	if g.st == nil {
		return false
	}
	kh := g.keyed(h)
	sh := g.shardOf(kh)
	for {
		x := g.writable(sh)
		if ok, st := g.deleteIn(x, x.place(kh)); st == growDone {
			if ok {
				sh.count.add(-1)
			}
			return ok
		}
	}
}

// Count returns the number of entries that match key: the copies of key stored
// (each Insert of it adds one, each Delete removes one), plus colliding keys'
// entries. Entries that lived through many doublings match more keys.
func (g *Growing) Count(key []byte) int { return g.CountHash(hashKey(key)) }

// CountString is Count for a string key, without copying it.
func (g *Growing) CountString(key string) int { return g.Count(bytesOf(key)) }

// CountHash is Count for a key given by its 64-bit hash.
func (g *Growing) CountHash(h uint64) int {
	if g.st == nil {
		return 0
	}
	kh := g.keyed(h)
	x := g.shardOf(kh).searched()
	return g.countIn(x, x.place(kh))
}

// InsertBatch inserts keys in order, each as Insert does, and returns how
// many it inserted; if fewer than len(keys), keys[n] met Insert's error,
// err. It prefetches a group's buckets first, so that their misses overlap.
func (g *Growing) InsertBatch(keys [][]byte) (n int, err error) {
	return g.insertBatch(&batchKeys{keys: keys}, len(keys))
}

// InsertBatchString is InsertBatch for string keys, without copying them.
func (g *Growing) InsertBatchString(keys []string) (n int, err error) {
	return g.insertBatch(&batchKeys{strs: keys}, len(keys))
}

// InsertBatchHash is InsertBatch for keys given by their 64-bit hashes.
func (g *Growing) InsertBatchHash(hs []uint64) (n int, err error) {
	return g.insertBatch(&batchKeys{hs: hs}, len(hs))
}

// insertBatch is InsertBatch for the n keys of b.
func (g *Growing) insertBatch(b *batchKeys, n int) (int, error) {
	if g.st == nil && n > 0 {
		return 0, ErrZeroFilter
	}
	var hs [batchGroup]uint64
	for base := 0; base < n; base += batchGroup {
		group := hs[:min(batchGroup, n-base)]
		b.hashGroup(&hs, base, base+len(group))
		for _, h := range group {
			kh := g.keyed(h)
			x := g.shardOf(kh).cur.Load()
			k := x.place(kh)
			prefetchTwo(x.t.words, k.b1, k.b2)
		}
		for j, h := range group {
			if err := g.InsertHash(h); err != nil {
				return base + j, err
			}
		}
	}
	return n, nil
}

// LookupBatch stores Lookup(keys[i]) in found[i] for every i below n =
// min(len(keys), len(found)) and returns n, as Filter.LookupBatch does.
func (g *Growing) LookupBatch(keys [][]byte, found []bool) (n int) {
	return g.lookupBatch(&batchKeys{keys: keys}, found[:min(len(keys), len(found))])
}

// LookupBatchString is LookupBatch for string keys, without copying them.
func (g *Growing) LookupBatchString(keys []string, found []bool) (n int) {
	return g.lookupBatch(&batchKeys{strs: keys}, found[:min(len(keys), len(found))])
}

// LookupBatchHash is LookupBatch for keys given by their 64-bit hashes.
func (g *Growing) LookupBatchHash(hs []uint64, found []bool) (n int) {
	return g.lookupBatch(&batchKeys{hs: hs}, found[:min(len(hs), len(found))])
}

// lookupBatch is LookupBatch for the first len(found) keys of b, placing the
// next group (from batchPrefetchWords on, prefetching it) before answering
// one: a table chosen after the call began holds every key inserted before.
func (g *Growing) lookupBatch(b *batchKeys, found []bool) int {
	if g.st == nil {
		clear(found)
		return len(found)
	}
	n := len(found)
	prefetch := n > batchGroup && g.Cap() >= batchPrefetchWords*slotsPerBucket
	var gs [2]growGroup
	g.placeGroup(b, &gs[0], 0, min(batchGroup, n), false)
	for base, i := 0, 0; base < n; base, i = base+batchGroup, i^1 {
		if next := base + batchGroup; next < n {
			g.placeGroup(b, &gs[i^1], next, min(next+batchGroup, n), prefetch)
		}
		g.lookupGroup(&gs[i], found[base:min(base+batchGroup, n)])
	}
	return n
}

// growGroup is a batch group placed: each key's table and placement there.
type growGroup struct {
	xs [batchGroup]*growTable
	ks [batchGroup]growKey
}

// placeGroup places keys [base, end) of b in gr as LookupHash does.
func (g *Growing) placeGroup(b *batchKeys, gr *growGroup, base, end int, prefetch bool) {
	var hs [batchGroup]uint64
	b.hashGroup(&hs, base, end)
	for j, h := range hs[:end-base] {
		kh := g.keyed(h)
		x := g.shardOf(kh).searched()
		gr.xs[j], gr.ks[j] = x, x.place(kh)
		if prefetch {
			prefetchReadPairs(&x.t.words[0], &gr.ks[j].b1, &gr.ks[j].b2, 1, 0)
		}
	}
}

// lookupGroup answers gr's first len(found) keys as LookupHash does, making
// every key's first reads before it tests any.
func (g *Growing) lookupGroup(gr *growGroup, found []bool) {
	var w1, w2, e [batchGroup]uint64
	found = found[:min(len(found), batchGroup)]
	for j := range found {
		e[j] = gr.xs[j].t.epochOf(gr.ks[j].b1).Load()
		w1[j], w2[j] = gr.xs[j].readPair(gr.ks[j].b1, gr.ks[j].b2)
	}
	for j := range found {
		k, x := &gr.ks[j], gr.xs[j]
		if (w1[j]|w2[j]|e[j])&tagMask == 0 {
			if matchEither(laneDiff(w1[j], k.q1), laneDiff(w2[j], k.q2)) {
				found[j] = true
				continue
			}
			if k.b1 == k.b2 || x.unchanged(k.b1, w1[j], x.t.epochOf(k.b1), e[j]) {
				found[j] = false
				continue
			}
		}
		found[j] = g.lookupIn(x, *k)
	}
}

func (g *Growing) sumShards(f func(sh *growShard) uint64) uint64 {
	if g.st == nil {
		return 0
	}
	var n uint64
	for i := range g.st.shards {
		n += f(&g.st.shards[i])
	}
	return n
}

// Len returns the number of entries stored: one per insert not deleted,
// plus one for each extra copy of a void entry a split made (measured and
// bounded in BENCHMARKS.md, "Growing filter"). Like Filter.Len it is exact
// when no write is in progress.
func (g *Growing) Len() int {
	return int(max(int64(g.sumShards(func(sh *growShard) uint64 { return uint64(sh.count.sum()) })), 0))
}

// Cap returns the number of slots of the shards' current tables (during
// an expansion, of the new ones).
func (g *Growing) Cap() int {
	return int(g.sumShards(func(sh *growShard) uint64 { return sh.cur.Load().m }) * slotsPerBucket)
}

// LoadFactor returns Len()/Cap(), or 0 for a zero Growing.
func (g *Growing) LoadFactor() float64 { return float64(g.Len()) / float64(max(g.Cap(), 1)) }

// Doublings returns the doublings the shards' tables have completed since
// the filter was made or Reset, summed over the shards (each adds about a
// sixteenth of the memory); the steps of one under way show in Cap.
func (g *Growing) Doublings() int {
	return int(g.sumShards(func(sh *growShard) uint64 { return sh.cur.Load().d }))
}

// BaseCapacity returns the number of keys the shards' first tables are
// sized for (95% load): at least 5,512 (64-bucket shards), else about 1.4
// times the starting capacity, as the smallest shard must hold a sixteenth.
func (g *Growing) BaseCapacity() int {
	return int(g.sumShards(func(sh *growShard) uint64 { return growKeys(sh.base) }))
}

// FalsePositiveRate returns the rate at which Lookup is expected to report
// a never-inserted key, from the entries stored now (it reads every table):
// a key falls in each shard with probability 1/16, its buckets there are a
// random pair, and an entry that compares k bits matches it with 2^-k.
func (g *Growing) FalsePositiveRate() float64 {
	if g.st == nil {
		return 0
	}
	sum := 0.0
	for i := range g.st.shards {
		x := g.st.shards[i].searched()
		var perBits [growTagBits + tailBits + 1]int
		for b := range uint64(len(x.t.words)) {
			w := x.t.load(b)
			for s := range slotsPerBucket {
				if v := lane(w, s); v != 0 {
					perBits[x.matchBits(b, v)]++
				}
			}
		}
		shard := 0.0
		for k, n := range perBits {
			shard += float64(n) * math.Ldexp(1, -k)
		}
		sum += 2 * shard / float64(x.c<<x.d)
	}
	return sum / growShards
}

// Reset removes every key and shrinks each shard back to its first table.
// Lookups that overlap it may still report keys it removes; writes that
// overlap it take effect before or after it, whole.
func (g *Growing) Reset() {
	if g.st == nil {
		return
	}
	for i := range g.st.shards {
		sh := &g.st.shards[i]
		for {
			x := g.writable(sh)
			n := g.st.newTable(sh, 0, 0, g.mode)
			n.reset = true
			n.old.Store(x)
			if x.next.CompareAndSwap(nil, n) {
				sh.cur.CompareAndSwap(x, n)
				g.copyInto(sh, n, x)
				break
			} // an expansion started: help it, then reset
		}
	}
}

// Shards returns the number of shards, 16 (0 for a zero Growing).
func (g *Growing) Shards() int { return int(g.sumShards(func(*growShard) uint64 { return 1 })) }

// Mode returns the filter's synchronization mode.
func (g *Growing) Mode() Mode { return g.mode }

// FingerprintBits returns 12, the fingerprint size a growing filter is
// compared with (0 for a zero Growing): a fresh entry compares 14 bits of
// its key, an entry whose bucket was split k times since 14-k (at least 6).
func (g *Growing) FingerprintBits() int { return DefaultFingerprintBits * min(g.Shards(), 1) }

// Seed returns the hash seed, as Filter.Seed.
func (g *Growing) Seed() uint64 { return g.seed }
