package cuckoo

import (
	"errors"
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// ErrFull is returned by an insert when no slot could be freed for the key,
// or when concurrent writers took the room it made 1,024 times in a row
// (only near full load). The filter keeps every fingerprint it held.
var ErrFull = errors.New("cuckoo: filter is full")

// Mode selects how a Filter synchronizes; the package doc says what waits.
type Mode int

const (
	// LockFree, the default, writes a bucket by one CAS, relocates by one
	// multi-word CAS, looks up in two phases: no stalled goroutine blocks another.
	LockFree Mode = iota
	// Locked guards every change with striped queue locks, elided with
	// Intel RTM where the processor has it (RTMActive). A released stripe
	// goes to a running goroutine first; the first waiter is overtaken at
	// most 127 times. When to choose it: README.md, "Modes".
	Locked
)

// String returns "lockfree" or "locked".
func (m Mode) String() string {
	if m == LockFree || m == Locked {
		return [...]string{"lockfree", "locked"}[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

const (
	// DefaultFingerprintBits is the fingerprint size New uses by default.
	DefaultFingerprintBits = 12
	// New's loads: below the lowest first-ErrFull load measured
	// (BENCHMARKS.md, "Tuning constants").
	targetLoadNum, targetLoadDen   = 19, 20
	targetLoad5Num, targetLoad5Den = 97, 100
	maxBuckets                     = 1 << 31 // indices fit the path search's 32 bits
	// MaxCapacity is the largest capacity New accepts (2^31 four-slot
	// buckets, a 16 GiB table), above the int range of 32-bit platforms.
	MaxCapacity = maxBuckets * slotsPerBucket * targetLoadNum / targetLoadDen
)

type config struct {
	bits, slots       int
	bitsSet, slotsSet bool
	fpr               float64
	fprSet            bool
	seed              uint64
	seedSet           bool // otherwise New draws a random seed
	mode              Mode
	maxCap            int // a Growing filter's bound; 0: none
	maxCapSet         bool
}

// Option configures New.
type Option func(*config)

// WithFingerprintBits sets the fingerprint size: 8 (the packed layout), 12
// (the default) or 15 bits; New rejects other sizes. The layouts, their
// bits per key and rates: README.md, "Choosing a layout".
func WithFingerprintBits(bits int) Option { return func(c *config) { c.bits, c.bitsSet = bits, true } }

// WithSlotsPerBucket sets the fingerprints a bucket holds: 5 (the default,
// 12-bit fingerprints only) or 4. New rejects other values.
func WithSlotsPerBucket(b int) Option { return func(c *config) { c.slots, c.slotsSet = b, true } }

// WithSeed sets the hash seed: filters with the same seed, bucket count and
// layout place every key alike. Without it New draws a random seed, so that
// nobody can choose keys that all land in one pair of buckets; use it only
// where keys cannot come from an adversary. WithSeed(0) places keys as hash
// algorithm 1 of FORMAT.md does unseeded.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed, c.seedSet = seed, true } }

// WithMode selects the synchronization mode (LockFree by default).
func WithMode(m Mode) Option { return func(c *config) { c.mode = m } }

// Filter is a concurrent cuckoo filter, made by New. A zero Filter holds
// nothing, returns ErrZeroFilter from Insert, and can be loaded with
// UnmarshalBinary or ReadFrom. A Filter must not be copied after first use.
type Filter struct {
	_ noCopy

	t        kcasTable // words change only through t (LockFree) or under locks (Locked)
	m        uint64    // buckets
	lay      layout
	fpRange  uint64 // fingerprints are 1..fpRange = 2^f-1
	seed     uint64
	mul      uint64 // hash algorithm 2's multiplier
	fmix     bool   // hash algorithm 1
	mode     Mode
	inline   bool          // LockFree one-word layouts: Lookup searches inline
	pkDirect bool          // LockFree packed layout: Lookup calls pkLookup
	fastPath bool          // adopted under hash algorithm 2: Lookup keys and places inline
	locks    *stripedLocks // Locked mode only
	count    shardedCount  // fingerprints stored
	stats    statCounters
	_        [64]byte     // keeps the fields above, read by every operation, off the gate's written line
	gate     snapshotGate // keeps relocations out of snapshots
}

// New returns a filter that holds capacity keys, sized for its layout's
// load (by default five 12-bit fingerprints per 64-bit bucket; README.md,
// "Choosing a layout") plus a few spare slots. New returns an error for a
// capacity outside [1, MaxCapacity] or an option out of range.
func New(capacity int, opts ...Option) (*Filter, error) {
	c, err := newConfig(capacity, opts)
	if err != nil {
		return nil, err
	}
	if c.maxCapSet {
		return nil, fmt.Errorf("cuckoo: WithMaxCapacity applies to NewGrowing; a Filter's capacity is fixed")
	}
	n, lay := newBuckets(capacity, c.slots), newLayout(uint(c.bits), uint(c.slots))
	if c.bits == 8 {
		n, lay = newPackedWords(capacity), packedLayout()
	}
	f := &Filter{}
	f.adopt(make([]atomic.Uint64, n), lay, c.seed, formatHashXXMul, c.mode, 0)
	return f, nil
}

// New adds spareSlots in whole buckets (BENCHMARKS.md, "Tuning constants"),
// a packed table more: its top slot takes a quarter of the fingerprints.
const spareSlots, pkSpareWords = 32, 48 / (2 * packedSlots)

func newBuckets(capacity, b int) uint64 {
	num, den := targetLoad(b)
	return min(unitsFor(capacity, num, den, uint64(b))+(spareSlots+uint64(b)-1)/uint64(b), maxBuckets)
}

func newPackedWords(capacity int) uint64 {
	return unitsFor(capacity, packedLoadNum, packedLoadDen, 2*packedSlots) + pkSpareWords
}

// bucketsFor returns the four-slot buckets for capacity keys at 95% load.
func bucketsFor(capacity int) uint64 {
	return unitsFor(capacity, targetLoadNum, targetLoadDen, slotsPerBucket)
}

// unitsFor returns how many units of per slots hold capacity keys at num/den.
func unitsFor(capacity int, num, den, per uint64) uint64 {
	slots := (uint64(capacity)*den + num - 1) / num
	return (slots + per - 1) / per
}

func targetLoad(b int) (num, den uint64) {
	if b == 5 {
		return targetLoad5Num, targetLoad5Den
	}
	return targetLoadNum, targetLoadDen
}

func validFingerprintBits(bits int) bool { return bits == 8 || bits == 12 || bits == 15 }

// newConfig applies and checks opts and capacity, drawing a seed unless set.
func newConfig(capacity int, opts []Option) (config, error) {
	c := config{bits: DefaultFingerprintBits, mode: LockFree}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	switch {
	case capacity <= 0:
		return c, fmt.Errorf("cuckoo: capacity must be positive, got %d", capacity)
	case uint64(capacity) > MaxCapacity:
		return c, fmt.Errorf("cuckoo: capacity %d exceeds the maximum %d", capacity, uint64(MaxCapacity))
	case c.fprSet && (c.bitsSet || c.slotsSet):
		return c, fmt.Errorf("cuckoo: WithFalsePositiveRate chooses the layout: give it without WithFingerprintBits and WithSlotsPerBucket")
	case c.fprSet:
		bits, slots, err := layoutFor(c.fpr)
		if err != nil {
			return c, err
		}
		c.bits, c.slots = bits, slots
	case !c.slotsSet && c.bits == 12:
		c.slots = 5
	case !c.slotsSet:
		c.slots = slotsPerBucket
	}
	switch {
	case !validFingerprintBits(c.bits):
		return c, fmt.Errorf("cuckoo: fingerprint bits must be 8, 12 or 15, got %d", c.bits)
	case c.slotsSet && c.slots != 4 && c.slots != 5:
		return c, fmt.Errorf("cuckoo: slots per bucket must be 4 or 5, got %d", c.slots)
	case !validLayout(uint(c.bits), uint(c.slots)):
		return c, fmt.Errorf("cuckoo: %d slots per bucket with %d-bit fingerprints: want 4, or 5 with 12-bit", c.slots, c.bits)
	case c.mode != LockFree && c.mode != Locked:
		return c, fmt.Errorf("cuckoo: unknown mode %d", int(c.mode))
	}
	if !c.seedSet {
		c.seed = randomSeed()
	}
	return c, nil
}

// adopt makes words (len in [1, maxBuckets], plain bucket words) the table,
// holding n fingerprints placed by hash algorithm alg; not concurrently
// with other methods. The event counters keep their sums.
func (f *Filter) adopt(words []atomic.Uint64, lay layout, seed uint64, alg uint8, mode Mode, n int64) {
	nw := uint64(len(words))
	f.t.words, f.m, f.lay, f.fpRange, f.mode = words, nw, lay, 1<<lay.f-1, mode
	if lay.packed {
		f.m *= 2
		f.t.setVers(make([]atomic.Uint64, versionsFor(nw)))
	} else {
		f.t.setVers(newEpochs(nw))
	}
	f.seed, f.fmix, f.mul = seed, alg == formatHashXXFmix, mix64(seed)|1
	f.inline, f.pkDirect = mode == LockFree && !lay.packed, mode == LockFree && lay.packed
	f.fastPath = !f.fmix
	f.locks = nil
	if mode == Locked {
		f.locks = newStripedLocks(len(words))
	}
	f.count.init(countShardBitsFor(nw))
	f.count.add(n)
	sb := shardBitsFor(nw)
	f.gate.movers.init(sb)
	f.stats.resize(sb)
}

// Mode returns the filter's synchronization mode.
func (f *Filter) Mode() Mode { return f.mode }

// FingerprintBits returns the fingerprint size in bits (0 for a zero Filter).
func (f *Filter) FingerprintBits() int { return int(f.lay.f) }

// SlotsPerBucket returns the fingerprints a bucket holds (0 for a zero
// Filter); a key's two buckets hold at most twice this many copies of it.
func (f *Filter) SlotsPerBucket() int { return f.Cap() / max(int(f.m), 1) } // a packed word holds two

// Seed returns the hash seed: WithSeed's, New's random one, or the loaded
// encoding's. Keep it (and encodings) secret where keys come from an adversary.
func (f *Filter) Seed() uint64 { return f.seed }

// mix64 is MurmurHash3's finalizer.
func mix64(h uint64) uint64 {
	h = (h ^ h>>33) * 0xff51afd7ed558ccd
	h = (h ^ h>>33) * 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// keyed keys h = XXH64(key) with a non-zero seed. Hash algorithm 2 of FORMAT.md
// maps h to (h ^ seed) * mul, mul = mix64(seed) | 1: a multiply-shift hash
// whose top bits (the bucket's) collide for distinct h with probability about
// 2^-32 over mul (Dietzfelbinger et al.), so keys crafted to collide under one
// seed do not under another. Algorithm 1 (older encodings): mix64(h ^ seed).
func (f *Filter) keyed(h uint64) uint64 {
	if f.fmix {
		return mix64(h ^ f.seed)
	}
	return (h ^ f.seed) * f.mul
}

func (f *Filter) hash(key []byte) (b1, fp, b2 uint64) { return f.placeHash(hashKey(key)) }

func (f *Filter) placeHash(h uint64) (b1, fp, b2 uint64) {
	if f.seed != 0 {
		h = f.keyed(h)
	}
	return place(h, f.m, f.fpRange)
}

// place maps a keyed hash to its first bucket (from the high 32 bits), its
// fingerprint in [1, fpRange] (from the low 32) and its second bucket in a
// table of m, by multiply-shifts: no division, no power-of-two table.
func place(h, m, fpRange uint64) (b1, fp, b2 uint64) {
	b1, fp = (h>>32*m)>>32, (uint64(uint32(h))*fpRange)>>32+1
	return b1, fp, altBucket(b1, fp, m)
}

// searchPair orders a pair lower index first, as every search reads it and
// every Delete prefers it (twophase.go, "One order for every search").
// Branch-free: the order is a coin toss per key.
func searchPair(b1, b2 uint64) (x, y uint64) {
	diff, swap := bits.Sub64(b2, b1, 0) // swap is 1 when b2 < b1
	d := diff & -swap                   // b2 - b1 when b2 < b1, else 0
	return b1 + d, b2 - d
}

func (f *Filter) alt(b, fp uint64) uint64 { return altBucket(b, fp, f.m) }

// altBucket returns (H(fp) - b) mod m, fp's other bucket: an involution for
// every m (fp has one bucket when 2b = H(fp) mod m). Branch-free: hi >= b
// is a coin toss per key (BENCHMARKS.md, "Tuning constants").
func altBucket(b, fp, m uint64) uint64 {
	hi, _ := bits.Mul64(fp*0x9e3779b97f4a7c15, m)
	d, borrow := bits.Sub64(hi, b, 0)
	return d + m&-borrow
}

// Insert adds a copy of key. It returns ErrFull if no slot could be freed
// for it, and ErrZeroFilter on a zero Filter.
func (f *Filter) Insert(key []byte) error {
	if f.m == 0 {
		return ErrZeroFilter
	}
	// placeHash, written out to save a call (as in Lookup).
	h := uint64(0)
	switch {
	case len(key) == 8:
		h = hash8(key)
	case len(key) == 16:
		h = hash16(key)
	case len(key) < 32:
		h = sum64Short(key)
	default:
		h = xxhash.Sum64(key)
	}
	if f.seed != 0 {
		h = f.keyed(h)
	}
	b1, fp, b2 := place(h, f.m, f.fpRange)
	if f.inline { // insertKey, its first try written out (a call fewer)
		f.count.add(1) // taken back by kept
		w1, w2 := loadAt(&f.t, wordAt(f.t.words, b1)), loadAt(&f.t, wordAt(f.t.words, b2))
		if (w1|w2)&tagMask == 0 {
			if b, w, r := f.lay.choose(b1, b2, w1, w2); r == 0 {
				return f.kept(f.makeRoomAndAdd(b1, b2, fp))
			} else if f.t.cas(b, w, w|fp*f.lay.slotUnit(r)) {
				return nil
			}
		}
		return f.kept(f.insertRead(b1, b2, fp, w1, w2)) // stale reads fail only add's CAS
	}
	if f.lay.packed {
		return f.pkInsertKey(b1, b2, fp)
	}
	return f.insertKey(b1, b2, fp)
}

// Lookup reports whether key may be in the filter: never false for a key
// inserted and not deleted, true for another at the false-positive rate.
func (f *Filter) Lookup(key []byte) bool {
	var h uint64
	switch {
	case len(key) == 8:
		h = hash8(key)
	case len(key) == 16:
		h = hash16(key)
	case len(key) < 32:
		h = sum64Short(key)
	default:
		h = xxhash.Sum64(key)
	}
	if !f.fastPath {
		return f.LookupHash(h)
	}
	// LookupHash and lookup, written out to save calls (BENCHMARKS.md,
	// "Tuning constants"). Algorithm 2 keys a zero seed to h (mul = 1).
	b1, fp, b2 := place((h^f.seed)*f.mul, f.m, f.fpRange)
	if !f.inline {
		if b1, b2 = searchPair(b1, b2); f.pkDirect {
			return f.pkLookup(b1, b2, fp)
		}
		return f.lookupOther(b1, b2, fp)
	}
	// A load of b1's word whose value goes unused (twophase.go's reads follow):
	// its miss starts before b2 is known (BENCHMARKS.md, "Tuning constants").
	wordAt(f.t.words, b1).Load()
	b1, b2 = searchPair(b1, b2)
	// Phase 1 (twophase.go): the epoch of b1's stripe, then b1, then b2.
	ep, p1, p2 := f.t.epochOf(b1), wordAt(f.t.words, b1), wordAt(f.t.words, b2)
	hookReadAt(&f.t, ep)
	e := ep.Load()
	hookRead(&f.t, b1)
	w1 := p1.Load()
	searchStalled(f, b1, 1)
	hookRead(&f.t, b2)
	w2 := p2.Load()
	searchStalled(f, b1, 2)
	if (w1|w2|e)&tagMask == 0 {
		if f.lay.containsEither(w1, w2, fp) {
			return true
		}
		// Phase 2's common "absent": b1 and the epoch unchanged (a key with one
		// bucket too); short so more misses overlap (BENCHMARKS.md, "Tuning constants").
		hookRead(&f.t, b1)
		r1 := p1.Load()
		searchStalled(f, b1, 3) // between b1's re-read and the epoch's
		hookReadAt(&f.t, ep)    // the load below, if r1 == w1
		if r1 == w1 && ep.Load() == e {
			return false
		}
	}
	return f.findAfter(b1, b2, fp, w1, w2, e)
}

// wordAt returns &words[b] without a bounds check: b < len(words), as place
// makes every bucket of a one-word table.
func wordAt(words []atomic.Uint64, b uint64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(words)), b*8))
}

// Delete removes one copy of key's fingerprint and reports whether it found
// one. Delete only keys that were inserted (the package doc says why).
func (f *Filter) Delete(key []byte) bool { return f.DeleteHash(hashKey(key)) }

// deleteFp removes one copy of fp from b1 or b2 and counts it.
func (f *Filter) deleteFp(b1, b2, fp uint64) (ok bool) {
	b1, b2 = searchPair(b1, b2)
	switch {
	case f.lay.packed && f.mode == Locked:
		ok = f.pkDeleteLocked(b1, b2, fp)
	case f.lay.packed:
		ok = f.pkRemove(b1, b2, fp)
	case f.mode == Locked:
		ok = f.deleteLocked(b1, b2, fp)
	default:
		ok = f.remove(b1, b2, fp)
	}
	if ok {
		f.count.add(-1)
	}
	return ok
}

// Len returns the number of fingerprints stored, exact when no operation is
// in flight, and always within [0, Cap()].
func (f *Filter) Len() int { return int(min(max(f.count.sum(), 0), int64(f.Cap()))) }

// Cap returns the number of fingerprint slots.
func (f *Filter) Cap() int { return len(f.t.words) * int(f.lay.b) }

// LoadFactor returns Len()/Cap(), 0 for a zero Filter.
func (f *Filter) LoadFactor() float64 { return float64(f.Len()) / float64(max(f.Cap(), 1)) }

// Reset removes every fingerprint stored before it began. It keeps the
// migration counters, so lookups in flight stay correct.
func (f *Filter) Reset() {
	if f.mode == Locked {
		f.resetLocked()
		return
	}
	f.resetLockFree()
}

type noCopy struct{} // go vet's copylocks check reports copies of a Filter

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
