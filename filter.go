package cuckoo

import (
	"errors"
	"fmt"
	"math/bits"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// ErrFull is returned by Insert when no slot could be freed for the key, or
// when concurrent writers took the room it made (or changed the paths it
// found) 1,024 times in a row, which happens only near full load. The
// filter keeps every fingerprint it held.
var ErrFull = errors.New("cuckoo: filter is full")

// Mode selects how a Filter synchronizes concurrent operations.
type Mode int

const (
	// LockFree uses single-word CAS for inserts and deletes, a multi-word
	// CAS for each relocation (so no operation sees a fingerprint half
	// moved) and a two-phase lookup. Lookups, deletes and inserts into a
	// free slot never wait for another goroutine; a stalled goroutine never
	// blocks the others. The one wait: while WriteTo, MarshalBinary, Clone
	// or Reset copies or sweeps the table, inserts that need to relocate
	// fingerprints wait for it to end (a growing filter's deletes too, and
	// its writes for their shard's growth step). Snapshots cannot shut
	// relocations out: a relocation that keeps meeting snapshots gets in
	// before the next one (snapshot.go). It is the default.
	LockFree Mode = iota
	// Locked guards every change to the buckets with striped queue locks
	// (mcs.go), elided with Intel RTM transactions where the processor
	// supports them (see RTMActive). Lookups read without locks and lock
	// only when a relocation overlaps them. A released stripe goes to
	// whichever goroutine is running, not to a queued waiter that may be
	// descheduled; a waiter first in line is overtaken at most 127 times;
	// and the Go scheduler does not preempt a goroutine inside a section.
	// Its writes cost more than LockFree's, most when CPU-bound goroutines
	// share the processors (README.md, "Modes", has the figures): choose it
	// on processors with RTM, or where a lock-based protocol is preferred.
	Locked
)

// String returns "lockfree" or "locked".
func (m Mode) String() string {
	switch m {
	case LockFree:
		return "lockfree"
	case Locked:
		return "locked"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

const (
	// DefaultFingerprintBits is the fingerprint size New uses unless told
	// otherwise.
	DefaultFingerprintBits = 12
	// targetLoad is the load factor a table of four-slot buckets is sized
	// for: Cap() is capacity/0.95 rounded up to whole buckets.
	targetLoadNum, targetLoadDen = 19, 20
	// targetLoad5 is the load factor a table of five-slot buckets is
	// sized for: 97%, below the lowest first-ErrFull load measured
	// (BENCHMARKS.md, "Tuning constants").
	targetLoad5Num, targetLoad5Den = 97, 100
	// maxBuckets bounds the table at 16 GiB: bucket indices must fit in 32
	// bits for the index arithmetic and the path search.
	maxBuckets = 1 << 31
	// MaxCapacity is the largest capacity New accepts: 8,160,437,862 keys
	// (2^31 buckets of four slots at 95% load, a 16 GiB table). It exceeds
	// the int range of 32-bit platforms.
	MaxCapacity = maxBuckets * slotsPerBucket * targetLoadNum / targetLoadDen
)

type config struct {
	bits     int
	slots    int     // slots per bucket: 4, or 5 (12-bit fingerprints only)
	bitsSet  bool    // WithFingerprintBits was given
	slotsSet bool    // WithSlotsPerBucket was given
	fpr      float64 // WithFalsePositiveRate's rate, when fprSet
	fprSet   bool
	seed     uint64
	seedSet  bool // WithSeed was given; otherwise New draws a random seed
	mode     Mode
	// maxCap bounds a Growing filter (WithMaxCapacity; 0: no bound).
	maxCap    int
	maxCapSet bool
}

// Option configures New.
type Option func(*config)

// WithFingerprintBits sets the fingerprint size: 8, 12 (the default) or 15
// bits, each with its own layout. 12-bit fingerprints come five to a
// 64-bit bucket word unless WithSlotsPerBucket(4) says otherwise; 15-bit
// ones four to a word; 8-bit ones use the packed layout (two buckets of
// four slots per word, relocations counted in striped version words beside
// the table, sized for a lower load). The false-positive rate at load α is
// about 2·b·α/(2^bits-1) for b slots per bucket; bits per key and rates of
// each layout: README.md, "Choosing a layout". New rejects other sizes.
// WithFalsePositiveRate chooses the layout from a rate instead.
func WithFingerprintBits(bits int) Option {
	return func(c *config) { c.bits, c.bitsSet = bits, true }
}

// WithSlotsPerBucket sets the fingerprints a bucket holds: 5 (the default
// with 12-bit fingerprints, the only size five fit) or 4 (the only choice
// with 8 and 15 bits). Four 12-bit slots trade memory for a lower rate
// (README.md, "Choosing a layout"). New rejects other values and five
// slots with other fingerprint sizes.
func WithSlotsPerBucket(b int) Option {
	return func(c *config) { c.slots, c.slotsSet = b, true }
}

// defaultSlots returns the slots per bucket of bits-bit fingerprints when
// WithSlotsPerBucket is not given: five 12-bit slots (the standard class),
// four of any other size.
func defaultSlots(bits int) int {
	if bits == 12 {
		return 5
	}
	return slotsPerBucket
}

// validFingerprintBits reports whether bits is a fingerprint size the
// fixed filter supports.
func validFingerprintBits(bits int) bool { return bits == 8 || bits == 12 || bits == 15 }

// WithSeed sets the hash seed. Filters with the same seed, bucket count
// and layout place every key in the same buckets with the same
// fingerprint. Without WithSeed, New draws a random seed for each filter
// (math/rand/v2, seeded by the runtime from the operating system), so that
// nobody who does not know it can choose keys that all land in one pair of
// buckets. Use WithSeed only where keys cannot come from an adversary;
// WithSeed(0) places keys as hash algorithm 1 of FORMAT.md does without a
// seed.
func WithSeed(seed uint64) Option {
	return func(c *config) { c.seed, c.seedSet = seed, true }
}

// WithMode selects the synchronization mode (LockFree by default).
func WithMode(m Mode) Option {
	return func(c *config) { c.mode = m }
}

// Filter is a concurrent cuckoo filter. Create one with New; a zero Filter
// holds nothing, reports every Insert as ErrZeroFilter, and can be loaded with
// UnmarshalBinary or ReadFrom. A Filter must not be copied after first use.
type Filter struct {
	_ noCopy

	t       kcasTable // the buckets; words change only through t (LockFree) or under locks (Locked)
	m       uint64    // number of buckets
	lay     layout
	fpRange uint64 // 2^f - 1: fingerprints are 1..fpRange
	seed    uint64
	mul     uint64 // the seed's multiplier (hash algorithm 2)
	fmix    bool   // hash algorithm 1: keyed through mix64 (filters decoded from it)
	mode    Mode
	// inline is true for LockFree mode in the one-bucket-per-word
	// layouts, whose Lookup runs inline; Locked mode and the packed
	// layout take their own paths.
	inline bool
	// pkDirect is true for LockFree mode in the packed layout, whose
	// Lookup calls pkLookup directly, saving lookupOther's call.
	pkDirect bool
	locks    *stripedLocks // Locked mode only; guards the buckets' stripes
	count    shardedCount  // fingerprints stored (the shards, written often, are off this line)
	stats    statCounters  // rare events, for Stats
	_        [64]byte      // keeps the fields above, read by every operation, off the gate's written line
	gate     snapshotGate  // keeps relocations out of snapshots
}

// New returns a filter that can hold capacity keys. By default its table
// has five 12-bit fingerprint slots per 64-bit bucket word and Cap() =
// capacity/0.97 slots rounded up to whole buckets, plus spare buckets. In
// the four-slot layouts (WithSlotsPerBucket(4), WithFingerprintBits(15),
// or WithFalsePositiveRate below 0.237%) it sizes for 95% load; in the
// packed layout (WithFingerprintBits(8), or WithFalsePositiveRate of 2.89%
// or more) for 92%, plus a power of two of version words. Every table gets
// at least 32 spare slots, so that small tables, whose first
// ErrFull varies most, take capacity keys. Beside the table a filter has a
// fixed part: its struct, cache-line-padded counter shards (two per P, at
// most 64, bounded by the table's size) and, in Locked mode, lock stripes
// (64 per P, at most 4,096, bounded likewise). Bits per key, rates and the
// fixed part measured: README.md, "Choosing a layout".
//
// New returns an error if capacity is not positive or above MaxCapacity,
// or if an option has a value outside its range.
func New(capacity int, opts ...Option) (*Filter, error) {
	c, err := newConfig(capacity, opts)
	if err != nil {
		return nil, err
	}
	if c.maxCapSet {
		return nil, fmt.Errorf("cuckoo: WithMaxCapacity applies to NewGrowing; a Filter's capacity is fixed")
	}
	f := &Filter{}
	if c.bits == 8 {
		f.init(newPackedWords(capacity), packedLayout(), c.seed, c.mode)
		return f, nil
	}
	f.init(newBuckets(capacity, c.slots), newLayout(uint(c.bits), uint(c.slots)), c.seed, c.mode)
	return f, nil
}

// spareSlots is what New adds to every table beyond its target load: at
// least 32 slots, in whole buckets (48 in the packed layout, pkSpareWords).
// Small tables need them: their first ErrFull varies most (BENCHMARKS.md,
// "Tuning constants"). In a table for 1M keys they cost 0.0005 bits per
// key.
const spareSlots = 32

// newBuckets returns the buckets New gives a table of b-slot buckets for
// capacity keys: bucketsForSlots plus spareSlots, within maxBuckets.
func newBuckets(capacity, b int) uint64 {
	return min(bucketsForSlots(capacity, b)+(spareSlots+uint64(b)-1)/uint64(b), maxBuckets)
}

// newPackedWords returns the words New gives a packed table for capacity
// keys: packedWordsFor plus pkSpareWords.
func newPackedWords(capacity int) uint64 {
	return packedWordsFor(capacity) + pkSpareWords
}

// pkSpareWords is the spare words of a packed table: 48 slots, more than
// spareSlots because the restricted top slot leaves three quarters of the
// fingerprints only seven slots in a word, which tells in tiny tables.
const pkSpareWords = 48 / (2 * packedSlots)

// newConfig applies opts and checks them and capacity (New, NewGrowing); it
// draws the random seed unless WithSeed was given.
func newConfig(capacity int, opts []Option) (config, error) {
	c := config{bits: DefaultFingerprintBits, mode: LockFree}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if capacity <= 0 {
		return c, fmt.Errorf("cuckoo: capacity must be positive, got %d", capacity)
	}
	if uint64(capacity) > MaxCapacity {
		return c, fmt.Errorf("cuckoo: capacity %d exceeds the maximum %d", capacity, uint64(MaxCapacity))
	}
	if c.fprSet {
		if c.bitsSet || c.slotsSet {
			return c, fmt.Errorf("cuckoo: WithFalsePositiveRate chooses the layout: give it without WithFingerprintBits and WithSlotsPerBucket")
		}
		bits, slots, err := layoutFor(c.fpr)
		if err != nil {
			return c, err
		}
		c.bits, c.slots = bits, slots
	}
	if !validFingerprintBits(c.bits) {
		return c, fmt.Errorf("cuckoo: fingerprint bits must be 8, 12 or 15, got %d", c.bits)
	}
	if !c.slotsSet && !c.fprSet {
		c.slots = defaultSlots(c.bits)
	}
	if c.slotsSet && c.slots != 4 && c.slots != 5 {
		return c, fmt.Errorf("cuckoo: slots per bucket must be 4 or 5, got %d", c.slots)
	}
	if !validLayout(uint(c.bits), uint(c.slots)) {
		return c, fmt.Errorf("cuckoo: %d slots per bucket with %d-bit fingerprints: want 4, or 5 with 12-bit", c.slots, c.bits)
	}
	if c.mode != LockFree && c.mode != Locked {
		return c, fmt.Errorf("cuckoo: unknown mode %d", int(c.mode))
	}
	if !c.seedSet {
		c.seed = randomSeed()
	}
	return c, nil
}

// bucketsFor returns the four-slot buckets of a table sized for capacity
// keys at 95% load (capacity in [1, MaxCapacity]).
func bucketsFor(capacity int) uint64 { return bucketsForSlots(capacity, slotsPerBucket) }

// bucketsForSlots returns the buckets of b slots each of a table sized
// for capacity keys at its target load (targetLoad).
func bucketsForSlots(capacity, b int) uint64 {
	num, den := targetLoad(b)
	slots := (uint64(capacity)*den + num - 1) / num
	return (slots + uint64(b) - 1) / uint64(b)
}

// targetLoad returns the load factor, num/den, that New sizes a table of
// b-slot buckets for: 95% for four slots, 97% for five.
func targetLoad(b int) (num, den uint64) {
	if b == 5 {
		return targetLoad5Num, targetLoad5Den
	}
	return targetLoadNum, targetLoadDen
}

// packedWordsFor returns the words of a packed table (two buckets each)
// sized for capacity keys at packedLoad.
func packedWordsFor(capacity int) uint64 {
	slots := (uint64(capacity)*packedLoadDen + packedLoadNum - 1) / packedLoadNum
	return (slots + 2*packedSlots - 1) / (2 * packedSlots)
}

// init sets up an empty table of n words with layout lay. n must be in
// [1, maxBuckets].
func (f *Filter) init(n uint64, lay layout, seed uint64, mode Mode) {
	f.adopt(make([]atomic.Uint64, n), lay, seed, formatHashXXMul, mode, 0)
}

// adopt makes words (len in [1, maxBuckets], plain bucket words only) the
// filter's table, holding n fingerprints placed by hash algorithm alg. It
// is not safe to call while other goroutines use the filter.
func (f *Filter) adopt(words []atomic.Uint64, lay layout, seed uint64, alg uint8, mode Mode, n int64) {
	var locks *stripedLocks
	if mode == Locked {
		locks = newStripedLocks(len(words))
	}
	f.adoptWith(words, lay, seed, alg, mode, n, locks, shardBitsFor(uint64(len(words))))
}

// adoptWith is adopt with the Locked mode's locks (nil in LockFree mode)
// and the shard bits of the snapshot gate and the event counters chosen by
// the caller (the count of fingerprints takes countShardBitsFor's).
func (f *Filter) adoptWith(words []atomic.Uint64, lay layout, seed uint64, alg uint8, mode Mode, n int64, locks *stripedLocks, sb uint) {
	f.t.words = words
	f.m = uint64(len(words))
	if lay.packed {
		f.m *= 2
		f.t.setVers(newVersions(uint64(len(words))))
	} else {
		f.t.setVers(newEpochs(uint64(len(words))))
	}
	f.lay = lay
	f.fpRange = 1<<lay.f - 1
	f.setSeed(seed, alg)
	f.mode = mode
	f.inline = mode == LockFree && !lay.packed
	f.pkDirect = mode == LockFree && lay.packed
	f.locks = locks
	f.count.init(countShardBitsFor(uint64(len(words))))
	f.count.add(n)
	f.gate.movers.init(sb)
	// The event counters count from New: a filter that loads another's
	// table (UnmarshalBinary, ReadFrom) keeps its sums.
	var kept [numStats]uint64
	for id := range kept {
		kept[id] = f.stats.sum(statID(id))
	}
	f.stats.init(sb)
	for id, n := range kept {
		if n != 0 {
			f.stats.shards[0].n[id].Add(n)
		}
	}
}

// Mode returns the filter's synchronization mode.
func (f *Filter) Mode() Mode { return f.mode }

// FingerprintBits returns the fingerprint size in bits (0 for a zero Filter).
func (f *Filter) FingerprintBits() int { return int(f.lay.f) }

// SlotsPerBucket returns the fingerprints a bucket holds: 5 in New's
// default layout (12-bit fingerprints), 4 with WithSlotsPerBucket(4) or
// 8- or 15-bit fingerprints (0 for a zero Filter). A key's two buckets
// hold at most twice this many copies of it.
func (f *Filter) SlotsPerBucket() int {
	if f.lay.packed {
		return packedSlots
	}
	return int(f.lay.b)
}

// Seed returns the hash seed: the one given to WithSeed, the random one New
// drew, or the one stored in the encoding the filter was loaded from.
func (f *Filter) Seed() uint64 { return f.seed }

// mix64 is the finalizer of MurmurHash3: it spreads the seed into every bit
// so that different seeds give unrelated placements.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Seeding. The filter places a key by its 64-bit hash h = XXH64(key),
// keyed with the seed. Seed 0 uses h as it is (XXH64's output is already
// fully mixed). Another seed maps h to (h ^ seed) * mul, where mul =
// mix64(seed) | 1 is odd (hash algorithm 2 of FORMAT.md): a multiply-shift
// hash, whose top bits, from which the bucket comes, collide for two
// distinct h with probability about 2^-32 over the choice of mul
// (Dietzfelbinger et al.), so keys crafted to share a bucket under one seed
// do not under another. It costs one multiply on the lookup's dependency
// chain; the full mix64(h ^ seed) of hash algorithm 1, which older
// encodings keep (fmix), costs more.

// keyed returns the key hash h keyed with the filter's seed. Callers skip
// it for seed 0.
func (f *Filter) keyed(h uint64) uint64 {
	if f.fmix {
		return mix64(h ^ f.seed)
	}
	return (h ^ f.seed) * f.mul
}

// setSeed sets the seed and the hash algorithm that keys hashes with it.
func (f *Filter) setSeed(seed uint64, alg uint8) {
	f.seed = seed
	f.fmix = alg == formatHashXXFmix
	f.mul = mix64(seed) | 1
}

// hash returns the key's first bucket, its fingerprint and its second
// bucket (see place). The filter must have a table.
func (f *Filter) hash(key []byte) (b1, fp, b2 uint64) {
	return f.placeHash(xxhash.Sum64(key))
}

// placeHash returns the buckets and fingerprint of the key whose hash is h
// (what hash returns for a key with xxhash.Sum64(key) == h). The filter
// must have a table.
func (f *Filter) placeHash(h uint64) (b1, fp, b2 uint64) {
	if f.seed != 0 {
		h = f.keyed(h)
	}
	return place(h, f.m, f.fpRange)
}

// place maps a key's (seeded) hash h to its first bucket, its fingerprint
// and its second bucket in a table of m buckets with fingerprints
// 1..fpRange. The bucket comes from the high 32 bits of h and the
// fingerprint from the low 32, each mapped onto its range by a
// multiply-shift (no division, no power-of-two table); the fingerprint is
// never 0. It is small enough to inline, so a loop over many keys keeps m
// and fpRange in registers.
func place(h, m, fpRange uint64) (b1, fp, b2 uint64) {
	b1, fp = (h>>32*m)>>32, (uint64(uint32(h))*fpRange)>>32+1
	return b1, fp, altBucket(b1, fp, m)
}

// searchPair returns a pair's two buckets in the order in which every
// search reads them and every Delete prefers them: the lower index first,
// whichever of them is the key's first bucket. Keys that collide on
// fingerprint and buckets may have them in either order, and a search is
// only sound when every Delete of a colliding key looks where it looks
// first (twophase.go, "One order for every search").
// It is written without a branch: the order of a key's buckets is a coin
// toss, and a branch would be mispredicted for half of all lookups.
func searchPair(b1, b2 uint64) (x, y uint64) {
	diff, swap := bits.Sub64(b2, b1, 0) // swap is 1 when b2 < b1
	d := diff & -swap                   // b2 - b1 when b2 < b1, else 0
	return b1 + d, b2 - d
}

// alt returns the other bucket of fp when it is in bucket b.
func (f *Filter) alt(b, fp uint64) uint64 { return altBucket(b, fp, f.m) }

// altBucket returns the other bucket of fp when it is in bucket b of a table
// of m buckets: (H(fp) - b) mod m. It is an involution for every m, so no
// power-of-two table is needed; when 2b = H(fp) mod m the fingerprint has
// one bucket.
//
// The reduction adds m back from the borrow instead of branching on hi >= b:
// that comparison is a coin toss per key (BENCHMARKS.md, "Tuning constants").
func altBucket(b, fp, m uint64) uint64 {
	hi, _ := bits.Mul64(fp*0x9e3779b97f4a7c15, m)
	d, borrow := bits.Sub64(hi, b, 0)
	return d + m&-borrow
}

// Insert adds key to the filter. It returns ErrFull if no slot could be
// freed for it, in which case the filter holds exactly what it held before
// (fingerprints may have moved between their two buckets). Inserting a key
// again stores another copy. On a zero Filter it returns ErrZeroFilter.
func (f *Filter) Insert(key []byte) error {
	if f.m == 0 {
		return ErrZeroFilter
	}
	// hash, written out as in Lookup, to save a call.
	h := xxhash.Sum64(key)
	if f.seed != 0 {
		h = f.keyed(h)
	}
	b1, fp, b2 := place(h, f.m, f.fpRange)
	if f.lay.packed {
		return f.pkInsert(b1, b2, fp)
	}
	if !f.insert(b1, b2, fp, f.t.words[b1].Load(), f.t.words[b2].Load()) {
		return ErrFull
	}
	f.count.add(1)
	return nil
}

// insert stores fp in b1 or b2, relocating fingerprints when both are full,
// and reports whether it did; it does not count it. w1 and w2 are recent
// reads of b1 and b2 (LockFree mode tries them first).
func (f *Filter) insert(b1, b2, fp, w1, w2 uint64) bool {
	for round := 0; ; round++ {
		var added bool
		if f.mode == Locked {
			added = f.addLocked(b1, b2, fp)
		} else {
			added = f.addEither(b1, b2, fp, w1, w2)
		}
		if added {
			return true
		}
		if round == maxRoomRounds || !f.makeRoom(b1, b2, fp) {
			f.stats.add(statFull, 1)
			return false
		}
		roomMade(f, b1, b2)
		w1, w2 = f.t.words[b1].Load(), f.t.words[b2].Load()
	}
}

// Lookup reports whether key may be in the filter. It never reports false
// for a key that was inserted and not deleted (see the package doc for the
// precise statement), and reports true for a key that was never inserted
// with probability about 2·b·α/(2^f-1) (b slots per bucket of f-bit
// fingerprints at load α).
func (f *Filter) Lookup(key []byte) bool {
	if f.m == 0 {
		return false
	}
	// hash, written out to save a call (BENCHMARKS.md, "Tuning constants").
	h := xxhash.Sum64(key)
	if f.seed != 0 {
		h = f.keyed(h)
	}
	b1, fp, b2 := place(h, f.m, f.fpRange)
	b1, b2 = searchPair(b1, b2)
	if !f.inline {
		if f.pkDirect {
			return f.pkLookup(b1, b2, fp)
		}
		return f.lookupOther(b1, b2, fp)
	}
	// Phase 1 of the two-phase search (twophase.go), inlined: most lookups
	// end here. The epoch of b1's stripe is read first.
	ep := f.t.epochOf(b1)
	hookReadAt(&f.t, ep)
	e := ep.Load()
	words := f.t.words // one load of the slice header for both reads
	hookRead(&f.t, b1)
	w1 := words[b1].Load()
	if raceEnabled {
		searchStalled(f, b1, 1) // the tests' stall points (twophase.go, searchStalls)
	}
	hookRead(&f.t, b2)
	w2 := words[b2].Load()
	if raceEnabled {
		searchStalled(f, b1, 2)
	}
	if (w1|w2|e)&tagMask == 0 {
		if f.lay.containsEither(w1, w2, fp) {
			return true
		}
		// The common absent case of phase 2 (twophase.go): b1 read again
		// is bit for bit what phase 1 read, so its counter did not move
		// and fp cannot have been in flight. Keeping this path short lets
		// the processor overlap more lookups' cache misses (BENCHMARKS.md,
		// "Tuning constants").
		if b1 == b2 {
			return false
		}
		hookRead(&f.t, b1)
		r1 := words[b1].Load()
		if raceEnabled {
			searchStalled(f, b1, 3) // between b1's re-read and the epoch's
		}
		hookReadAt(&f.t, ep) // the load below, if r1 == w1
		if r1 == w1 && ep.Load() == e {
			return false
		}
	}
	return f.findAfter(b1, b2, fp, w1, w2, e)
}

// Delete removes one copy of key's fingerprint and reports whether it found
// one. Delete only keys that were inserted: deleting another key can remove
// a colliding fingerprint and so create a false negative.
func (f *Filter) Delete(key []byte) bool {
	if f.m == 0 {
		return false
	}
	b1, fp, b2 := f.hash(key)
	return f.deleteFp(b1, b2, fp)
}

// deleteFp removes one copy of fp from b1 or b2 and counts it: Delete's
// work once the key is hashed.
func (f *Filter) deleteFp(b1, b2, fp uint64) bool {
	b1, b2 = searchPair(b1, b2)
	var ok bool
	if f.lay.packed {
		if f.mode == Locked {
			ok = f.pkDeleteLocked(b1, b2, fp)
		} else {
			ok = f.pkRemove(b1, b2, fp)
		}
	} else if f.mode == Locked {
		ok = f.deleteLocked(b1, b2, fp)
	} else {
		ok = f.remove(b1, b2, fp)
	}
	if ok {
		f.count.add(-1)
	}
	return ok
}

// Len returns the number of fingerprints stored. It is exact when no
// operation is in flight. While inserts and deletes run it is a sum of
// per-goroutine counters read one after another, which can fall outside the
// possible range (above Cap on a small, busy filter); Len reports such a sum
// clamped to [0, Cap()].
func (f *Filter) Len() int {
	n := f.count.sum()
	if n < 0 {
		return 0
	}
	return int(min(uint64(n), uint64(f.Cap())))
}

// Cap returns the number of fingerprint slots.
func (f *Filter) Cap() int { return len(f.t.words) * int(f.lay.b) }

// LoadFactor returns Len()/Cap(), or 0 for a zero Filter. Since Len is
// clamped, it is always in [0, 1].
func (f *Filter) LoadFactor() float64 {
	if f.m == 0 {
		return 0
	}
	return float64(f.Len()) / float64(f.Cap())
}

// Reset removes every fingerprint. It may run concurrently with other
// operations; those that overlap it may or may not see their effects
// survive. Migration counters are kept, so lookups in flight stay correct.
func (f *Filter) Reset() {
	if f.mode == Locked {
		f.resetLocked()
		return
	}
	f.resetLockFree()
}

// noCopy makes go vet's copylocks check report copies of a Filter.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
