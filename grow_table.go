package cuckoo

import (
	"math/bits"
	"sync/atomic"
)

// One table of a Growing filter, and the operations on it in both modes.
//
// Placement. A table of level d with no bucket split (p = 0; Linear
// steps below for the others) has m = c·2^d buckets (c, the base, is fixed
// for the filter's life and need not be a power of two). A key whose keyed
// hash is kh has
//
//	r1 = (kh>>32)·c >> 32            its base bucket, in [0, c)
//	lo = uint32(kh) ^ uint32(kh>>32) 32 bits for the rest:
//	tag = lo>>26                     6 bits, the same in every table
//	P   = (lo mod 2^26)·2            27 position bits, the last one 0
//	g_j = bit 26-j of P              the index bit a doubling j adds
//	s   = g_0 .. g_d-1               d bits, g_0 the most significant
//	M   = mask[tag]                  27 bits, the last one 0, M_j = bit 26-j
//	b1  = r1·2^d + s
//	b2  = r2·2^d + (s XOR M_0..M_d-1), r2 = (off[tag] - r1) mod c
//
// off is a table of 64 offsets in [0, c) and mask one of 64 masks, both
// drawn from the seed. The key's entry in b1 is tag<<9 | p<<1 | 1 with
// p = g_d..g_d+7 (grow_lane.go); in b2 the same with p XOR M_d..M_d+7.
// g_26 and M_26 are 0 for every key and mask (lo has 26 bits below the
// tag), so at d = 19 an entry holds the key's last 7 bits and a 0 that
// every key shares: it compares as a 7-bit tail would.
// So an entry stores the next index bits of the bucket it is in (its
// position bits), not its key's: in b1 they are the key's, in b2 they are
// the key's XOR the mask. r1 -> r2 is an involution for every c, and so is
// flipping by M, so an entry's other bucket, and its value there, follow
// from its bucket, its tag and its tail alone (alt): a move flips the
// position bits above the entry's marker.
//
// Why a mask. Without it (b2 = r2·2^d + s) both buckets of a key share s,
// and the table is 2^d independent cuckoo tables of c buckets; the fullest
// of them, a few standard deviations above the mean, fails first. With the
// mask a key's pair spans the whole table, which fills as one
// (BENCHMARKS.md, "Tuning constants").
//
// Doubling. The buckets r·2^(d+1) + 2s and r·2^(d+1) + 2s + 1 of the next
// table are the two halves of bucket r·2^d + s: an entry goes to the half
// its top position bit names. That is the key's bit g_d in b1, and
// g_d XOR M_d in b2, which is where the key's b2 is in the next table. So
// copying bucket j moves each entry to bucket 2j + (bit 8 of its tail)
// with that bit taken out of the tail (splitLane), and a void entry,
// which no longer knows the bit, to both. The entry's new bucket is one of
// its key's new pair, in the same role, and its remaining bits are the
// position bits there: the copy needs no key.
//
// Linear steps. A table does not double at once: it splits the buckets
// of its level in order, a sixteenth of them at a time (grow.go), and a
// table whose first p buckets of level d (in the numbering above) are
// split puts them first, as their 2p halves, and the others after:
//
//	j = r·2^d + s                       the key's bucket of level d
//	b = 2j + g_d      if j < p          (a split bucket: level d+1)
//	b = j + p         otherwise         (level d)
//
// and the same for b2 with r2 and the masked bits. m = c·2^d + p. A
// bucket b is of level d+1 exactly when b < 2p. An entry's tail holds the
// next position bits of its bucket's level: g_d+1.. in a split bucket,
// g_d.. in the others, so the fresh entry q of a key depends on the level
// of its bucket (slot computes both and picks one without a branch). At
// p = 0 this is the placement above, and at p = c·2^d it is level d+1's
// with p = 0, so a table that completes its level is the doubled one.
// The next step splits buckets p .. p' - 1 of level d: their entries go to
// their halves as in a doubling, the split buckets before p keep their
// index, and the buckets after p' - 1 move up by p' - p (copyChunk).
//
// Relocation across levels. An entry's other bucket may be of the other
// level. From a split bucket (level d+1) to an unsplit one (level d) the
// entry gains its new bucket's bit g_d (XOR M_d), which the index of the
// split bucket held, as its first tail bit, dropping its last tail bit if
// it held eight (gainLane). From an unsplit bucket to a split one, the
// entry's first tail bit names the half, and leaves the tail, as in a
// split (splitLane); a void entry does not know it, and cannot make that
// move (alt refuses it, and path discovery skips it). Claim: a move keeps
// the entry in the pair of every key it matches, and every key that
// matched it before matches it after. Proof: a key K that matches entry
// E in bucket b has E's tag, b as one of its buckets, and on E's tail
// bits the position bits of its own in b's role; K's other bucket is its
// role's other base r2 (from b's base and the tag) and its position bits
// of b's role XOR the mask, on the bits the other bucket's index takes:
// the first l of them, l = b's level (which b's index holds), when the
// other bucket is of level l or lower, and one more (E's first tail bit,
// K's too) when it is of level l+1. So every key E matches has the same
// other bucket, the one alt computes, except for a void E moving up, which
// alt refuses. There E holds the K's bits of b's role XOR the mask on the
// same positions, as K's entry there would (gainLane's new bit is the one
// b's index held, K's too), minus the last bit when it drops one: a key
// matching E matches it there, and a key matching it there matches E,
// unless it differs from E only in a dropped bit.
// TestGrowStepsKeepMatches checks moves both ways at every level and split
// pointer, with the bits dropped.
//
// Relocation, the two-phase search and the epoch are those of the fixed
// filter (migrate.go, twophase.go, locked.go): a move takes an entry out
// of one of its buckets and puts it into the other (its position bits
// flipped by the mask) in one K-CAS of both words (LockFree), or under both
// stripes' locks with the destination stored first (Locked), and adds one
// to both buckets' counters. The counters are one bit wide (grow_lane.go),
// so every second change wraps one; each wrap is counted in the epoch of
// its bucket's stripe (epochOf; twophase.go, "Counter wraps"). Inserts do
// not touch counters; deletes bump both of their pair's (below). Freezing
// (grow.go) moves nothing.
//
// Deletes move both counters. Keys that collide (same tag, position bits
// and buckets) have interchangeable entries, and one key's first bucket
// may be the other's second. A search trusting its first bucket's counter
// alone could then miss a key inserted before it and never deleted, with
// no entry moved: stalled after reading its first bucket P (empty), it
// sees a colliding key C (first bucket Q, the searched key's second)
// inserted into P and a Delete of C take the searched key's entry from Q
// (youngest match, a tie going to C's first bucket); after it reads Q, a
// key D in the searched key's order is inserted into Q and deleted from
// P; P then reads the same again (TestGrowingSearchAgainstCollidingDeletes).
// So a Delete that removes an entry adds one to the counters of both
// buckets of its pair (LockFree: in the K-CAS over both words it already
// makes, with the epoch when a counter wraps; Locked: under both locks,
// the epoch added before and after the stores), and the search answers
// "absent" only when its first bucket's counter did not move at all.
//
// Claim: a search of key x's pair P, Q (P read first, at t1 and again at
// t3, Q at t2) that answers "absent" with P's counter and the epoch of P's
// stripe unchanged is right: x had no entry matching it throughout, or a
// Delete of x took effect during the search. Proof: an unchanged counter
// with an unchanged epoch means no move through P and no Delete of an
// entry of the pair in (t1, t3) (each adds one to P's counter; one that
// wraps it adds one to the epoch of P's stripe in the same atomic step,
// LockFree, or before and after its stores, Locked; a one-bit counter
// reads the same again only after an even number of changes, at least
// one of them a wrap). An entry that matches x in Q moves only into x's
// other bucket P ("Relocation across levels": a void entry that would
// need a key's bit to choose its half does not move). So in (t1, t2) Q
// lost no match of x by a move, and no Delete whose pair is P, Q ran. A
// Delete of a key y whose pair is Q and some P' other than P (possible
// only when Q is unsplit and P' split) that removes a match E of x from Q
// leaves x one in Q: E matches y as well, so it is void and of level d
// (it matches keys with either half of the split bucket), and the entry y
// removes is its youngest match; y's own entry (there is one: y was
// inserted) is then no younger, so void in Q too, the same lane value as
// E: x matches it. If x was inserted before the search and not deleted,
// the pair held a match of x at t1 (Delete's youngest-match rule keeps
// one for x when other keys are deleted, "Why Delete removes the youngest
// match"); P held none, so Q held one at t1, and still at t2, where the
// read would have shown it. In Locked mode a Delete stores its two words
// one after the other under both locks, so with P unchanged in (t1, t3)
// its store to P fell outside that time: Q's value after its store to Q
// then completes, with P's value read at t1, the pair as the Delete left
// it, which holds a match of x if x was not the key deleted; so the read
// of Q at t2, before or after that store, shows a match. □
//
// Deletes wait for snapshots. A snapshot (capture, grow_encode.go) reads
// the table one word at a time, in ascending order, and no order of reads
// is safe against the schedule above by itself: after the snapshot read P,
// C is inserted into P and C's Delete takes the searched key's entry from
// Q, which the snapshot reads afterwards (a tie may go to either bucket,
// so no bucket order of Deletes lines up with the snapshot's). So deleteIn
// holds the snapshot gate (snapshot.go) for its whole run, as a relocation
// step does: it waits for a snapshot in progress, and a snapshot waits for
// the deletes in progress to finish.
//
// Claim: a snapshot holds an entry matching every key x inserted before it
// began and not deleted before it ended. Proof: the gate keeps every
// Delete, move and expansion copy apart from the snapshot (Dekker's
// protocol, snapshot.go), so while it reads, entries are only added to
// the table it reads (capture: the table lookups search, which holds
// every key whose insert finished before, grow.go). x had a matching entry
// when the snapshot began (youngest-match rule), that entry stays in its
// word until the snapshot ends, and the snapshot reads that word once,
// whole. □ Without the gate in deleteIn, TestGrowingSnapshotAgainstColliding-
// Deletes loses the key in both modes. Deletes that keep finding snapshots
// starve and get in between them, as relocations do (snapshot.go).
//
// Why Delete removes the youngest match. Entries of different ages
// compare different numbers of bits, so a key X may match an entry E_Y of
// another key Y as well as its own E_X. Delete(X) removes, from one atomic
// view of both buckets, a matching entry that knows the most position
// bits (its bucket's level plus its tail bits: a split bucket's entry
// knows one more than an unsplit one's of the same age, youngestOf).
// Claim: every key that matched some entry before still matches one
// after. Proof: by induction, each key inserted and not deleted owns an
// entry that matches it, distinct from every other key's (its insert
// wrote one; moves and splits keep it matching, a void split keeps a copy
// in the key's half). Only the removed entry E is lost; if E served a key
// Y, X's own entry E_X (still there, unless E_X = E, in which case E
// served X itself and X is being deleted) knows no more bits than E, and its
// bits are a prefix of the positions E's bits stand for. X and Y share
// the tag (both match E), and their pairs share E's bucket; if their
// other buckets differ, E is void and of level d ("Relocation across
// levels"), E_X knows no more than E's d bits, so it is void and of level
// d as well (the other bucket is split), in E's bucket: the same value as
// E, which Y matches. Otherwise they have the same pair and the same
// mask. Write P_K(b) for
// the position bits key K has in bucket b of its pair: K's index bits in
// the bucket that is its b1, those XOR the mask in its b2 (when b1 = b2,
// either, and a match with either counts). Both match E in its bucket b,
// so P_X(b) and P_Y(b) agree on E's bits; going to the other bucket of the
// pair flips both by the same mask, so they agree there too. E_X, in b or
// in the other bucket b', holds P_X of its bucket on its bits, hence P_Y
// of its bucket: Y matches E_X. A delete that removed an older (shorter)
// match could leave a younger entry that compares bits Y does not share.

const (
	growTagBits   = 6
	growTags      = 1 << growTagBits
	growTailBits  = tailBits - 1      // index bits a fresh entry holds
	growIndexBits = 26                // bits of lo left below the tag for s and the tail
	growPosBits   = growIndexBits + 1 // bits of P: lo's and a 0 below them
	// growMaxDoublings bounds d: the tail of a key written into a table of
	// d doublings is bits 26-d .. 19-d of P (for d = 19, lo's last 7 bits
	// and P's 0).
	growMaxDoublings = growPosBits - growTailBits
)

// growTable is one table and the state of the expansion into it.
type growTable struct {
	t kcasTable
	m uint64 // buckets: c<<d + p
	d uint64 // the table's level: the doublings completed since the shard's first table
	// p is the split pointer: the first p buckets of level d (in its
	// numbering) have been split, each into two buckets of level d+1
	// (Linear steps, above); 0 <= p < c<<d.
	p uint64
	// The shard's base c and offsets, and the filter's masks, copied here
	// so that placement reads them without following a pointer.
	c         uint64
	off, mask [growTags]uint32
	// Placement's shifts of P and of a mask: uShift (growPosBits-d-1)
	// takes the d+1 bits g_0..g_d, uMask their mask; tShift
	// (growPosBits-8-d) and tShift-1 take a fresh tail at level d and
	// d+1; d1 is d+1 and p2 is 2p. Shifts are written x >> (sh & 63): the
	// shifts are below 64 (at d = 19, where p is 0, tShift-1 wraps and is
	// never used), and the mask spares the compiler's check for larger
	// ones.
	uShift, uMask, tShift, d1, p2 uint64
	locks                         *stripedLocks

	// old is the table being copied into this one, nil once every bucket
	// of it is copied (or for a filter's first table). next is the table
	// this one is being copied into, set once. reset marks a table made
	// by Reset: the copy drops the old table's entries instead.
	old     atomic.Pointer[growTable]
	next    atomic.Pointer[growTable]
	reset   bool
	claimed atomic.Uint64 // chunks of old handed out to copiers
	copied  atomic.Uint64 // chunks of old copied
}

// growKey is a key placed in one table: its buckets and its fresh entry
// for each (q1 in b1, q2 in b2).
type growKey struct {
	b1, b2, q1, q2 uint64
}

// place places the key whose keyed hash is kh in x (see the top of this
// file).
func (x *growTable) place(kh uint64) growKey {
	r1 := (kh >> 32 * x.c) >> 32
	lo := uint64(uint32(kh) ^ uint32(kh>>32))
	tag := lo >> growIndexBits & (growTags - 1)
	p := lo << 1 // P, with the tag above it: every use masks it off
	tv := tag << tagShift
	b1, q1 := x.slot(r1, p, tv)
	b2, q2 := x.slot(growAltBase(r1, uint64(x.off[tag]), x.c), p^uint64(x.mask[tag]), tv)
	return growKey{b1: b1, b2: b2, q1: q1, q2: q2}
}

// slot returns the bucket of x that base r and position bits p (P, or P
// XOR the mask, with anything above bit 26) name, and the fresh entry
// with tag bits tv there: with J = r·2^(d+1) + (g_0..g_d), the bucket of
// level d+1 (J = 2j + g_d for the bucket j of level d), the bucket is J
// if j is split (j < p, so J < 2p), else j + p, each with the next eight
// position bits of its level. The choice is made with a mask, not a
// branch, which would be taken at random.
func (x *growTable) slot(r, p, tv uint64) (b, q uint64) {
	J := r<<(x.d1&63) | p>>(x.uShift&63)&x.uMask
	lt := (J - x.p2) >> 63 // 1 if J < 2p (both below 2^33)
	b = (J>>1+x.p)&(lt-1) | J&-lt
	return b, tv | p>>((x.tShift-lt)&63)&(1<<growTailBits-1)<<1 | 1
}

// split returns 1 if bucket b of x is split (of level d+1), else 0.
func (x *growTable) split(b uint64) int {
	if b < x.p2 {
		return 1
	}
	return 0
}

// settled reports whether a search of a key with buckets b1, b2 that read the epoch e of b1's
// stripe (ep), then w1 from b1, and found no match in either bucket may
// answer "absent" without more: the key has one bucket, or b1 reads w1 again
// and then the epoch still reads e (in that order; stage 3 of the tests'
// stall points sits between). lookupIn in Locked mode and LookupHash's
// fast path call it, lookupGroup has it written out; the fixed filter's
// counterpart is unchanged (twophase.go).
func (x *growTable) settled(b1, b2, w1 uint64, ep *atomic.Uint64, e uint64) bool {
	if b1 == b2 {
		return true
	}
	r1 := x.t.words[b1].Load()
	if raceEnabled {
		growSearchStalled(x, b1, 3) // between b1's re-read and the epoch's
	}
	return r1 == w1 && ep.Load() == e
}

// matchBits returns the number of hash bits entry v in bucket b of x is
// compared on, counted against a bucket of level d: matchBits's, plus one
// in a split bucket (its index holds one bit more of the key), less one
// for a fresh entry of a bucket of level 19 (the last doubling, or a split
// bucket at 18), whose last tail bit is g_26, 0 for every key.
func (x *growTable) matchBits(b, v uint64) int {
	n := matchBits(v) + x.split(b)
	if x.d+uint64(x.split(b)) == growMaxDoublings && laneAge(v) == 0 {
		n--
	}
	return n
}

// matches reports whether an entry of w1 (the word of b1) or of w2 (of
// b2) matches k.
func (k *growKey) matches(w1, w2 uint64) bool {
	return matchLanes(w1, k.q1)|matchLanes(w2, k.q2) != 0
}

// growAltBase returns (o - r) mod c for r, o in [0, c).
func growAltBase(r, o, c uint64) uint64 {
	d, borrow := bits.Sub64(o, r, 0)
	return d + c&-borrow
}

// alt returns the other bucket of entry v of bucket b of x, and v as it
// is written there (Relocation across levels, above); ok is false for a
// void entry of an unsplit bucket whose other bucket is split: it does not
// know which half. The bucket is altBucket's; the value flips the
// position bits above the marker by the mask at b's level, and then gains
// the bit b's index held (down a level: g_d of b's role, XOR M_d in the
// other) or gives its first bit to the index (up a level).
func (x *growTable) alt(b, v uint64) (nb, nv uint64, ok bool) {
	nb, ok = x.altBucket(b, v)
	if !ok {
		return 0, 0, false
	}
	m := uint64(x.mask[v>>tagShift&(growTags-1)])
	d := x.d & 63
	from, to := x.split(b), x.split(nb)
	l := d + uint64(from) // b's level
	tail := v & tailMask
	above := -(tail & -tail) << 1 // the tail bits above the marker
	v ^= m >> (growPosBits - growTailBits - l) & (1<<growTailBits - 1) << 1 & above & tailMask
	switch {
	case from > to:
		return nb, gainLane(v, (b^m>>(growPosBits-1-d))&1), true
	case from < to:
		nv, _, _ = splitLane(v)
		return nb, nv, true
	}
	return nb, v, true
}

// altBucket is alt's bucket alone, for path discovery, which calls it for
// every entry of every bucket it expands and so must not pay for alt's
// value: the other bucket of entry v of bucket b, and false for a void
// entry of an unsplit bucket whose other bucket is split.
func (x *growTable) altBucket(b, v uint64) (uint64, bool) {
	tag := v >> tagShift & (growTags - 1)
	m := uint64(x.mask[tag])
	d := x.d & 63
	if b < x.p2 { // from a split bucket
		l := d + 1
		r2 := growAltBase(b>>l, uint64(x.off[tag]), x.c)
		u2 := (b ^ m>>(growPosBits-l)) & (1<<l - 1)
		if j2 := r2<<d | u2>>1; j2 >= x.p {
			return j2 + x.p, true
		}
		return r2<<l | u2, true
	}
	j := b - x.p
	j2 := growAltBase(j>>d, uint64(x.off[tag]), x.c)<<d | (j^m>>(growPosBits-d))&(1<<d-1)
	if j2 >= x.p {
		return j2 + x.p, true
	}
	if v&tailMask == tailVoid {
		return 0, false
	}
	// The first tail bit, flipped by M_d, names the half.
	return j2<<1 | (v>>(tailBits-1)^m>>(growPosBits-1-d))&1, true
}

// Statuses of a write on one table.
const (
	growDone      = iota // applied
	growFull             // no room for the key in this table
	growFrozen           // the table is being copied into the next one: retry there
	growStale            // a relocation step no longer applies: discover again
	growTruncated        // path discovery needs the longer queue
)

// lookupIn reports whether the table x holds an entry matching k: the
// search of "Deletes move both counters" above (LockFree), or the unlocked
// reads of locked.go with the same argument and, when the first bucket
// changed, both buckets read under their locks (Locked).
func (g *Growing) lookupIn(x *growTable, k growKey) bool {
	t := &x.t
	if g.mode == Locked {
		ep := t.epochOf(k.b1)
		e := ep.Load()
		w1 := t.words[k.b1].Load()
		if raceEnabled {
			growSearchStalled(x, k.b1, 1)
		}
		w2 := t.words[k.b2].Load()
		if raceEnabled {
			growSearchStalled(x, k.b1, 2)
		}
		if k.matches(w1, w2) {
			return true
		}
		if x.settled(k.b1, k.b2, w1, ep, e) {
			return false
		}
		gd := x.locks.lockBuckets(k.b1, k.b2)
		w1, w2 = t.words[k.b1].Load(), t.words[k.b2].Load()
		x.locks.unlockBuckets(gd)
		return k.matches(w1, w2)
	}
	ei := t.epochIdx(k.b1)
	for {
		e := t.load(ei)
		w1 := t.load(k.b1)
		if raceEnabled {
			growSearchStalled(x, k.b1, 1)
		}
		w2 := t.load(k.b2)
		if raceEnabled {
			growSearchStalled(x, k.b1, 2)
		}
		if k.matches(w1, w2) {
			return true
		}
		if k.b1 == k.b2 {
			return false
		}
		v1 := t.load(k.b1)
		if matchLanes(v1, k.q1) != 0 {
			return true
		}
		if growCounter(v1) == growCounter(w1) {
			if raceEnabled {
				growSearchStalled(x, k.b1, 3)
			}
			if t.load(ei) == e {
				return false
			}
			continue
		}
		if matchLanes(t.load(k.b2), k.q2) != 0 {
			return true
		}
	}
}

// addIn puts k's entry into the emptier of its buckets in x, relocating
// entries when both are full. It returns growDone, growFull (no path
// within maxPathLen moves) or growFrozen.
func (g *Growing) addIn(x *growTable, k growKey) int {
	for {
		st := g.putIn(x, k)
		if st != growFull {
			return st
		}
		if st = g.makeRoomIn(x, k.b1, k.b2); st != growDone {
			return st
		}
	}
}

// putIn puts k's entry into an empty lane of the emptier of its buckets
// (b1 on a tie) without relocating anything.
func (g *Growing) putIn(x *growTable, k growKey) int {
	t := &x.t
	if g.mode == Locked {
		return x.putLocked(k)
	}
	for {
		b, w, nw, st := placeEntry(k, t.load(k.b1), t.load(k.b2))
		if st != growDone {
			return st
		}
		if t.cas(b, w, nw) {
			return growDone
		}
		if v := t.words[b].Load(); v&tagMask != 0 {
			t.helpWord(v)
		}
	}
}

// putLocked is putIn for Locked mode, by the fixed filter's rule for a
// Locked add (locked.go, addLocked, which argues it): the bucket is chosen
// from unlocked reads, and only its stripe is locked; under the lock the
// entry goes into the word as read there, unless that word is frozen or
// full; only when the choice went stale are both stripes locked and the
// choice made again.
func (x *growTable) putLocked(k growKey) int {
	t := &x.t
	b, _, _, st := placeEntry(k, t.words[k.b1].Load(), t.words[k.b2].Load())
	if st != growDone {
		return st // frozen, or both full (discovery reads them again)
	}
	q := k.q1
	if b != k.b1 {
		q = k.q2
	}
	gd := x.locks.lockBuckets(b, b)
	w := t.words[b].Load()
	nw, ok := putLane(w, q)
	switch {
	case w&frozenBit != 0:
		st = growFrozen
	case ok:
		t.words[b].Store(nw)
	default:
		st = growFull
	}
	x.locks.unlockBuckets(gd)
	if st != growFull {
		return st
	}
	gd = x.locks.lockBuckets(k.b1, k.b2)
	defer x.locks.unlockBuckets(gd)
	b, _, nw, st = placeEntry(k, t.words[k.b1].Load(), t.words[k.b2].Load())
	if st == growDone {
		t.words[b].Store(nw)
	}
	return st
}

// placeEntry chooses, from the words w1 of b1 and w2 of b2, the emptier
// bucket (b1 on a tie) and returns it, its word and the word with k's
// entry added, or growFrozen or growFull.
func placeEntry(k growKey, w1, w2 uint64) (b, w, nw uint64, st int) {
	if (w1|w2)&frozenBit != 0 {
		return 0, 0, 0, growFrozen
	}
	b, w, q := k.b1, w1, k.q1
	if laneCount(w2) < laneCount(w1) {
		b, w, q = k.b2, w2, k.q2
	}
	nw, ok := putLane(w, q)
	if !ok {
		return 0, 0, 0, growFull
	}
	return b, w, nw, growDone
}

// growPathNode is one bucket reached by path discovery: from is the index
// of the node it was reached from (-1 for the key's own buckets), slot the
// lane whose entry moves from there to here, v that entry.
type growPathNode struct {
	b     uint64
	v     uint64 // the entry, as it is in the bucket it moves from
	from  int32
	slot  int8
	depth int8
}

// growQueueLen holds both roots and four children per node down to depth
// maxPathLen-1, plus the one node at depth maxPathLen that ends a path
// (nodes at that depth are only tested for room, never expanded).
const growQueueLen = bfsQueueLen + 1

// makeRoomIn frees a lane in b1 or b2 of x by relocating entries along a
// shortest path to a bucket with an empty lane (migrate.go describes the
// same discovery and backward migration for the fixed filter). It searches
// with a short queue first, as the fixed filter does: Go zeroes a local
// array on every call, and most searches end within a few buckets.
func (g *Growing) makeRoomIn(x *growTable, b1, b2 uint64) int {
	var q [bfsShortQueue]growPathNode
	if st := g.relocateIn(x, b1, b2, q[:]); st != growTruncated {
		return st
	}
	return g.makeRoomDeep(x, b1, b2)
}

// makeRoomDeep is makeRoomIn with the full queue, which a search never
// outgrows.
//
//go:noinline
func (g *Growing) makeRoomDeep(x *growTable, b1, b2 uint64) int {
	var q [growQueueLen]growPathNode
	return g.relocateIn(x, b1, b2, q[:])
}

// relocateIn discovers a path with the queue q and migrates along it,
// discovering again while a step finds the path stale.
func (g *Growing) relocateIn(x *growTable, b1, b2 uint64, q []growPathNode) int {
	for {
		end, st := g.discoverIn(x, b1, b2, q)
		if st == growDone {
			st = g.migrateIn(x, q, end)
		}
		if st != growStale {
			return st
		}
	}
}

// discoverIn searches breadth first from b1 and b2 for a bucket with an
// empty lane and returns the queue index of the path's last node, or
// growTruncated if q is too short for the search.
func (g *Growing) discoverIn(x *growTable, b1, b2 uint64, q []growPathNode) (end int, st int) {
	q[0] = growPathNode{b: b1, from: -1}
	n := 1
	if b2 != b1 {
		q[1] = growPathNode{b: b2, from: -1}
		n = 2
	}
	for head := 0; head < n; head++ {
		p := q[head]
		w := x.t.words[p.b].Load()
		if w&tagMask != 0 {
			w = x.t.load(p.b) // a K-CAS in flight: its logical value
		}
		if w&frozenBit != 0 {
			return 0, growFrozen
		}
		if laneCount(w) < slotsPerBucket {
			return head, growDone
		}
		for s := 0; s < slotsPerBucket; s++ {
			v := lane(w, s)
			nb, ok := x.altBucket(p.b, v)
			if !ok || nb == p.b {
				continue // a void entry cannot move into a split bucket
			}
			if n == len(q) {
				return 0, growTruncated
			}
			c := growPathNode{b: nb, v: v, from: int32(head), slot: int8(s), depth: p.depth + 1}
			// A child is tested for room when it is reached, not when it
			// is expanded: the search ends a level earlier, with a path
			// as short (the children of one level are tested in the order
			// they would have been expanded).
			// A word that holds a K-CAS reference counts as full here.
			if cw := x.t.words[nb].Load(); cw&(frozenBit|tagMask) == 0 && laneCount(cw) < slotsPerBucket {
				q[n] = c
				return n, growDone
			}
			if int(c.depth) == maxPathLen {
				continue // the last depth: tested, not queued
			}
			q[n] = c
			n++
		}
	}
	return 0, growFull
}

// migrateIn moves the entries of the path ending at q[end] backwards, from
// the bucket with room towards the key's bucket.
func (g *Growing) migrateIn(x *growTable, q []growPathNode, end int) int {
	if q[end].from < 0 {
		return growDone // the key's own bucket has room
	}
	defer g.gate.exitMove(g.gate.enterMove())
	var my *descLease
	if g.mode == LockFree {
		my = leaseDesc()
		defer my.release()
	}
	for i := end; q[i].from >= 0; i = int(q[i].from) {
		src := q[q[i].from].b
		_, nv, _ := x.alt(src, q[i].v)
		if st := g.moveIn(x, src, int(q[i].slot), q[i].v, q[i].b, nv, my); st != growDone {
			return st
		}
	}
	return growDone
}

// moveIn moves entry v from lane s of src to an empty lane of dst, where
// it is nv (alt), in one atomic step that adds one to both counters.
func (g *Growing) moveIn(x *growTable, src uint64, s int, v uint64, dst, nv uint64, my *descLease) int {
	t := &x.t
	if g.mode == Locked {
		gd := x.locks.lockBuckets(src, dst)
		defer x.locks.unlockBuckets(gd)
		ws, wd := t.words[src].Load(), t.words[dst].Load()
		if (ws|wd)&frozenBit != 0 {
			return growFrozen
		}
		nd, ok := putLane(wd, nv)
		if lane(ws, s) != v || !ok {
			return growStale
		}
		x.storeBumped(dst, wd, nd, src, ws, setLane(ws, s, 0)) // destination first (locked.go)
		return growDone
	}
	for {
		ws, wd := t.load(src), t.load(dst)
		if (ws|wd)&frozenBit != 0 {
			return growFrozen
		}
		nd, ok := putLane(wd, nv)
		if lane(ws, s) != v || !ok {
			return growStale
		}
		var op kcasOp
		x.addBumped(&op, src, ws, setLane(ws, s, 0), dst, wd, nd)
		if t.kcasWith(&op, my.slot) {
			return growDone
		}
	}
}

// addBumped adds to op a LockFree step that changes buckets i and j from
// wi, wj to ni, nj, both counters bumped, and the epoch of the stripe of
// each bucket whose counter wraps bumped with them (one add when both
// wrap in one stripe, since a K-CAS names each word once): a relocation
// step or a delete. op then names at most four words.
func (x *growTable) addBumped(op *kcasOp, i, wi, ni, j, wj, nj uint64) {
	op.add(i, wi, growBump(ni))
	op.add(j, wj, growBump(nj))
	if wrapI, wrapJ := growWraps(wi), growWraps(wj); wrapI || wrapJ {
		x.t.addWraps(op, i, wrapI, j, wrapJ)
	}
}

// storeBumped is addBumped for Locked mode, with both buckets' locks held:
// it stores bucket i, then bucket j, and counts each wrap in the epoch of
// its bucket's stripe before and after the stores (the wrap claim at the
// top of locked.go).
func (x *growTable) storeBumped(i, wi, ni, j, wj, nj uint64) {
	t := &x.t
	wrapI, wrapJ := growWraps(wi), growWraps(wj)
	if wrapI {
		t.epochOf(i).Add(1)
	}
	if wrapJ {
		t.epochOf(j).Add(1)
	}
	t.words[i].Store(growBump(ni))
	t.words[j].Store(growBump(nj))
	if wrapI {
		t.epochOf(i).Add(1)
	}
	if wrapJ {
		t.epochOf(j).Add(1)
	}
}

// deleteIn removes the youngest entry matching k from x, chosen from one
// atomic view of both buckets (see "Why Delete removes the youngest match"
// above), and reports whether there was one; st is growFrozen if x is
// being copied. It holds the snapshot gate, as a relocation step does
// ("Deletes wait for snapshots" above).
func (g *Growing) deleteIn(x *growTable, k growKey) (found bool, st int) {
	defer g.gate.exitMove(g.gate.enterMove())
	t := &x.t
	if g.mode == Locked {
		gd := x.locks.lockBuckets(k.b1, k.b2)
		defer x.locks.unlockBuckets(gd)
		w1, w2 := t.words[k.b1].Load(), t.words[k.b2].Load()
		if (w1|w2)&frozenBit != 0 {
			return false, growFrozen
		}
		b, w, s, ok := x.youngestOf(k, w1, w2)
		if !ok {
			return false, growDone
		}
		if k.b1 == k.b2 {
			t.words[b].Store(setLane(w, s, 0))
			return true, growDone
		}
		// Both counters bumped ("Deletes move both counters" above).
		n1, n2 := w1, w2
		if b == k.b1 {
			n1 = setLane(w, s, 0)
		} else {
			n2 = setLane(w, s, 0)
		}
		x.storeBumped(k.b1, w1, n1, k.b2, w2, n2)
		return true, growDone
	}
	if !g.lookupIn(x, k) {
		return false, growDone
	}
	var my *descLease
	for {
		w1, w2 := t.load(k.b1), t.load(k.b2)
		if (w1|w2)&frozenBit != 0 {
			if my != nil {
				my.release()
			}
			return false, growFrozen
		}
		b, w, s, ok := x.youngestOf(k, w1, w2)
		nw := setLane(w, s, 0)
		if k.b1 == k.b2 {
			if !ok {
				return false, growDone
			}
			if t.cas(b, w, nw) {
				return true, growDone
			}
			if v := t.words[b].Load(); v&tagMask != 0 {
				t.helpWord(v)
			}
			continue
		}
		// Both words in one K-CAS, the one not changed with its own
		// value: the choice stands only if neither changed since it was
		// read. With no match, the K-CAS proves absence at one instant.
		n1, n2 := w1, w2
		if ok && b == k.b1 {
			n1 = nw
		} else if ok {
			n2 = nw
		}
		var op kcasOp
		if ok {
			// A delete moves both counters ("Deletes move both
			// counters" above).
			x.addBumped(&op, k.b1, w1, n1, k.b2, w2, n2)
		} else {
			op.add(k.b1, w1, n1)
			op.add(k.b2, w2, n2)
		}
		if my == nil {
			my = leaseDesc()
		}
		if t.kcasWith(&op, my.slot) {
			my.release()
			return ok, growDone
		}
	}
}

// youngestOf picks the youngest entry matching k in w1 (bucket b1) or w2
// (bucket b2) of x: the one that knows the most position bits, its
// bucket's level plus the bits above its marker; b1 on a tie. When b1 = b2
// an entry of the key may have either form (q1 or q2), and w2 is w1.
func (x *growTable) youngestOf(k growKey, w1, w2 uint64) (b, w uint64, s int, ok bool) {
	s1, a1, ok1 := longestMatch(w1, k.q1)
	s2, a2, ok2 := longestMatch(w2, k.q2)
	if ok2 && (!ok1 || a2-x.split(k.b2) < a1-x.split(k.b1)) {
		return k.b2, w2, s2, true
	}
	return k.b1, w1, s1, ok1
}

// countIn returns the number of entries matching k in x, from one atomic
// view of both buckets, or growFrozen.
func (g *Growing) countIn(x *growTable, k growKey) (n int, st int) {
	t := &x.t
	count := func(w1, w2 uint64) int {
		if k.b2 == k.b1 {
			return bits.OnesCount64(matchLanes(w1, k.q1) | matchLanes(w1, k.q2))
		}
		return bits.OnesCount64(matchLanes(w1, k.q1)) + bits.OnesCount64(matchLanes(w2, k.q2))
	}
	if g.mode == Locked {
		gd := x.locks.lockBuckets(k.b1, k.b2)
		defer x.locks.unlockBuckets(gd)
		return count(t.words[k.b1].Load(), t.words[k.b2].Load()), growDone
	}
	for {
		w1 := t.load(k.b1)
		if k.b1 == k.b2 {
			return count(w1, w1), growDone
		}
		if raceEnabled {
			growSearchStalled(x, k.b1, 1) // the tests' stall point
		}
		w2 := t.load(k.b2)
		if t.decidePair(k.b1, w1, w1, k.b2, w2, w2) { // both words at one instant (unique.go)
			return count(w1, w2), growDone
		}
	}
}

// freezeIn sets the frozen bit of bucket j of x and returns the word it
// froze (without the bit). From then on no write changes the word:
// LockFree writers compare the whole word in their CAS or K-CAS, Locked
// writers check the bit under the bucket's lock.
func (g *Growing) freezeIn(x *growTable, j uint64) uint64 {
	t := &x.t
	if g.mode == Locked {
		gd := x.locks.lockBuckets(j, j)
		w := t.words[j].Load()
		t.words[j].Store(w | frozenBit)
		x.locks.unlockBuckets(gd)
		return w &^ frozenBit
	}
	for {
		w := t.words[j].Load()
		if w&tagMask != 0 {
			t.helpWord(w)
			continue
		}
		if w&frozenBit != 0 || t.cas(j, w, w|frozenBit) {
			return w &^ frozenBit
		}
	}
}

// growSearchStalls, in race builds only, is called by lookupIn (in each
// round), LookupHash's fast path and lookupGroup after their first read of
// b1 (stage 1) and of b2 (stage 2), and, on the way to "absent", between
// their re-read of b1 and their re-read of the epoch (stage 3), and by
// LockFree uniqueIn and countIn after their read of b1 (stage 1), with the
// table and b1: the growing filter's counterpart of searchStalls
// (twophase.go). In other builds the calls are compiled out.
var growSearchStalls atomic.Pointer[func(x *growTable, b1 uint64, stage int)]

// growSearchStalled calls growSearchStalls, if set.
func growSearchStalled(x *growTable, b1 uint64, stage int) {
	if h := growSearchStalls.Load(); h != nil {
		(*h)(x, b1, stage)
	}
}
