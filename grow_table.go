package cuckoo

import (
	"math/bits"
	"sync/atomic"
)

// One table of a Growing filter, and the operations on it in both modes.
//
// Placement. A table of level d whose first p buckets of level d are split
// has m = c·2^d + p buckets (c, the shard's base, need not be a power of
// two). A key whose keyed hash is kh has
//
//	r1  = (kh>>32)·c >> 32            its base bucket, in [0, c)
//	lo  = uint32(kh) ^ uint32(kh>>32)
//	tag = lo>>26                      6 bits, the same in every table
//	P   = (lo mod 2^26)·2             27 position bits, the last one 0
//	g_j = bit 26-j of P               the index bit doubling j adds
//	M   = mask[tag]                   27 bits, the last one 0, M_j = bit 26-j
//	j1  = r1·2^d + (g_0..g_d-1)       its bucket of level d
//	j2  = r2·2^d + (g_0..g_d-1 XOR M_0..M_d-1), r2 = (off[tag] - r1) mod c
//	b   = 2j + g_d if j < p           (split: level d+1)
//	b   = j + p    otherwise          (level d)
//
// b1 from j1, b2 from j2 with the masked bits; off (64 offsets in [0, c)) and
// mask (64 masks) are drawn from the seed. A bucket is of level d+1 exactly when
// b < 2p; at p = c·2^d the table is level d+1's with p = 0. The key's entry in b1
// is tag<<9 | t<<1 | 1 with t the next 8 position bits of b1's level (g_d.. or
// g_d+1..; grow_lane.go), in b2 the same XOR M. At level 19 the last of them is
// g_26 = 0 for every key: the entry compares as a 7-bit tail. So an entry holds
// its bucket's next position bits, not its key's; r1 -> r2 and XOR M are
// involutions for every c, so an entry's other bucket and its value there follow
// from its bucket, tag and tail alone (alt). The mask spreads a key's pair over
// the whole table; without it the table is 2^d independent tables of c buckets,
// and the fullest fails first (BENCHMARKS.md, "Tuning constants").
//
// Linear steps. The next step splits buckets p .. p'-1 of level d into their
// halves 2j and 2j+1 of level d+1. An entry goes to the half its first tail bit
// names (g_d in the key's b1, g_d XOR M_d in its b2: the key's bucket of the
// same role in the next table), with that bit taken out (splitLane); a void
// entry, which no longer knows it, to both. Split buckets below p keep their
// index, those after p'-1 move up by p'-p (copyChunk). The copy needs no key.
//
// Relocation across levels. A move from a split bucket down to an unsplit one
// gives the entry the bit g_d (XOR M_d) the split index held as its first tail
// bit, dropping its last if it held eight (gainLane); a move up takes the first
// tail bit as the half (splitLane), which a void entry does not know: alt refuses
// that move, discovery skips it. Claim: a move keeps the entry in the pair of
// every key it matches, and every key that matched it before matches it after
// (but for a dropped bit). Proof: a key K that matches entry E in bucket b has
// E's tag, b in its pair, and on E's tail bits its own position bits of b's role.
// K's other bucket is base r2 (from b's base and the tag) with K's bits of b's
// role XOR the mask on the bits its index takes: the first l (b's level, which
// b's index holds) when it is of level l or lower, one more (E's first tail bit,
// K's too) when of level l+1. So every key E matches has the one other bucket alt
// computes, except for a void E moving up, which alt refuses. There E holds K's
// bits of b's role XOR the mask on the same positions, as K's entry there would
// (gainLane's bit is b's index bit, K's too), less a dropped last bit. □
// TestGrowStepsKeepMatches checks moves both ways at every level and p.

const (
	growTagBits   = 6
	growTags      = 1 << growTagBits
	growTailBits  = tailBits - 1      // position bits a fresh entry holds
	growIndexBits = 26                // bits of lo below the tag
	growPosBits   = growIndexBits + 1 // bits of P
	// growMaxDoublings bounds d: a fresh entry at level d holds bits
	// 26-d .. 19-d of P.
	growMaxDoublings = growPosBits - growTailBits
)

// growTable is one table and the state of the expansion into it.
type growTable struct {
	t kcasTable
	m uint64 // buckets: c<<d + p
	d uint64 // level: doublings completed since the shard's first table
	p uint64 // split pointer, 0 <= p < c<<d ("Linear steps")
	// The shard's base, and placement's constants (tableShape): lo (uMask)
	// takes g_0..g_d-1 (g_0..g_d), tShift P's bits from g_d+8 on (sh&63 spares
	// the compiler's check), cD(1) = c·2^d(+1); tc[tag] holds off[tag]·2^(d+1)
	// (below 2^32, as c·2^d <= maxBuckets) above mask[tag]<<1>>tShift (as T).
	c, lo, uMask, tShift, cD, cD1, p2 uint64
	tc                                [growTags]uint64
	locks                             *stripedLocks
	// old is the table being copied into this one, nil once copied (or for
	// a first table); next, set once, the table this one is copied into;
	// reset marks a table made by Reset, whose copy drops old's entries.
	old     atomic.Pointer[growTable]
	next    atomic.Pointer[growTable]
	reset   bool
	sh      *growShard    // its shard (canGrow)
	claimed atomic.Uint64 // chunks of old handed out to copiers
	copied  atomic.Uint64 // chunks of old copied
}

// growKey is a key placed in a table: its buckets and fresh entries there.
type growKey struct{ b1, b2, q1, q2 uint64 }

// place places the key whose keyed hash is kh in x ("Placement"). T holds
// g_0..g_d+8 (g_d+8 in bit 0), the tag above; r1·2^(d+1) is the high bits of
// (kh>>32)·cD1 >> 32 (the floor of a floor), and r2·2^(d+1) follows by tc.
func (x *growTable) place(kh uint64) growKey {
	lo := uint64(uint32(kh) ^ uint32(kh>>32))
	tc := x.tc[lo>>growIndexBits]
	T1 := lo << 2 >> (x.tShift & 63)
	T2 := T1 ^ uint64(uint32(tc))
	hi := kh >> 32 * x.cD1 >> 32 &^ x.uMask
	r2, borrow := bits.Sub64(tc>>32, hi, 0)
	tv := lo>>growIndexBits<<tagShift | 1
	b1, q1 := x.slot(hi|T1>>8&x.uMask, T1, tv)
	b2, q2 := x.slot(r2+x.cD1&-borrow|T2>>8&x.uMask, T2, tv)
	return growKey{b1: b1, b2: b2, q1: q1, q2: q2}
}

// slot returns the bucket of J = r·2^(d+1) + (g_0..g_d) = 2j + g_d: J if J <
// 2p, else j + p; and the fresh entry there: tv (tag, marker), tail from T.
// The if compiles to CMOVs: a branch would be taken at random.
func (x *growTable) slot(J, T, tv uint64) (b, q uint64) {
	b, t := J>>1+x.p, T>>1
	if J < x.p2 {
		b, t = J, T
	}
	return b, tv | t&(1<<growTailBits-1)<<1
}

// split returns 1 if bucket b of x is split (of level d+1), else 0.
func (x *growTable) split(b uint64) int { return int((b - x.p2) >> 63) }

// matchBits returns the number of hash bits entry v of bucket b is
// compared on, counted at level d: one more in a split bucket, one fewer
// for a fresh entry at level 19, whose last bit is 0 for every key.
func (x *growTable) matchBits(b, v uint64) int {
	n := matchBits(v) + x.split(b)
	if x.d+uint64(x.split(b)) == growMaxDoublings && laneAge(v) == 0 {
		n--
	}
	return n
}

// alt returns the other bucket of entry v of bucket b, and v as written
// there ("Relocation across levels"); ok is false where altBucket refuses.
func (x *growTable) alt(b, v uint64) (nb, nv uint64, ok bool) {
	nb, ok = x.altBucket(b, v)
	if !ok {
		return 0, 0, false
	}
	mt := uint64(uint32(x.tc[v>>tagShift&(growTags-1)])) // M_0..M_d+8, as T
	from, to := x.split(b), x.split(nb)
	tail := v & tailMask
	above := -(tail & -tail) << 1 // the tail bits above the marker
	v ^= mt >> (1 - from) & (1<<growTailBits - 1) << 1 & above & tailMask
	switch {
	case from > to:
		return nb, gainLane(v, (b^mt>>8)&1), true
	case from < to:
		nv, _, _ = splitLane(v)
		return nb, nv, true
	}
	return nb, v, true
}

// altBucket is alt's bucket alone (discovery calls it per entry it expands):
// false for a void entry of an unsplit bucket whose other one is split.
// r·2^l (l, b's level) gives r2·2^l as in place.
func (x *growTable) altBucket(b, v uint64) (uint64, bool) {
	tc := x.tc[v>>tagShift&(growTags-1)]
	if b < x.p2 { // from a split bucket; M_0..M_d in bits 0..d of uint32(tc)>>8
		r, borrow := bits.Sub64(tc>>32, b&^x.uMask, 0)
		J := r + x.cD1&-borrow | (b^uint64(uint32(tc))>>8)&x.uMask
		if J>>1 >= x.p {
			return J>>1 + x.p, true
		}
		return J, true
	}
	j := b - x.p
	r, borrow := bits.Sub64(tc>>33, j&^x.lo, 0)
	j2 := r + x.cD&-borrow | (j^uint64(uint32(tc))>>9)&x.lo
	if j2 >= x.p {
		return j2 + x.p, true
	}
	if v&tailMask == tailVoid {
		return 0, false
	}
	return j2<<1 | (v^uint64(uint32(tc)))>>(tailBits-1)&1, true // the first tail bit, flipped by M_d, names the half
}

// altOr is altBucket's bucket, or b where altBucket refuses (discovery
// skips a child in its own bucket).
func (x *growTable) altOr(b, v uint64) uint64 {
	if nb, ok := x.altBucket(b, v); ok {
		return nb
	}
	return b
}

// Statuses of a write on one table.
const (
	growDone   = iota // applied
	growFull          // no room for the key in this table
	growFrozen        // the table is being copied: retry on the next
	growStale         // a relocation step no longer applies: discover again
)

// Deletes move both counters. Colliding keys (same tag, position bits and
// buckets, in either order) have interchangeable entries, so a search that
// trusted its first bucket's counter alone could miss a key inserted and never
// deleted, with no entry moved: stalled after reading its first bucket P (empty),
// it sees a colliding key C (first bucket Q) inserted into P and C's Delete take
// the searched key's entry from Q (youngest match, a tie going to C's first
// bucket); after it reads Q, a key D in its order is inserted into Q and deleted
// from P, and P reads the same again (TestGrowingSearchAgainstCollidingDeletes).
// So a Delete that removes an entry bumps both counters of its pair (deleteIn).
//
// Claim: a search of x's pair P, Q (P read at t1 and again at t3, Q at t2) that
// answers "absent" with P's counter and the epoch of P's stripe unchanged is
// right: x had no matching entry throughout, or a Delete of x took effect
// during the search. Proof: unchanged, they show no move through P and no
// Delete from the pair in (t1, t3) (each bumps P's counter; a wrap bumps the
// epoch in the same K-CAS, LockFree, or before and after the stores, Locked; a
// one-bit counter reads the same again only after an even number of bumps, one
// of them a wrap). A match of x in Q moves only into P (a void entry that needs
// a key's bit does not move), so in (t1, t2) Q lost none by a move or by a
// Delete of pair P, Q. A Delete of y whose pair is Q and P' ≠ P (Q unsplit, P'
// split) that takes a match E of x from Q leaves x one: E matches y too, so it
// is void and of level d; y's own entry is no younger than E, the youngest
// match, so it is void in Q too, E's value, and x matches it. If x was inserted
// before and not deleted, the pair held a match of x at t1 (youngest-match
// rule); P held none, so Q held one at t1 and still at t2, where the read shows
// it. Locked: a Delete stores its two words under both locks; with P unchanged
// its store to P fell outside (t1, t3), so Q after its store to Q, with P as
// read at t1, is the pair as the Delete left it, which holds a match unless x
// was deleted; Q read at t2, before or after that store, shows a match. □

// readPair makes a search's first reads of b1 and b2, with the stall points
// (wordAt: place gives buckets below m).
func (x *growTable) readPair(b1, b2 uint64) (w1, w2 uint64) {
	w1 = loadAt(&x.t, wordAt(x.t.words, b1))
	growSearchStalled(x, b1, 1)
	w2 = loadAt(&x.t, wordAt(x.t.words, b2))
	growSearchStalled(x, b1, 2)
	return w1, w2
}

// unchanged reports whether a search that read the epoch ep as e, then w1
// in b1, and found no match may answer "absent" (b1 != b2): b1 reads w1
// again, and then the epoch still reads e.
func (x *growTable) unchanged(b1, w1 uint64, ep *atomic.Uint64, e uint64) bool {
	r1 := loadAt(&x.t, wordAt(x.t.words, b1))
	growSearchStalled(x, b1, 3)
	return r1 == w1 && loadAt(&x.t, ep) == e
}

// lookupIn reports whether x holds an entry matching k (lookup.go.tmpl;
// the search argued above, Locked with the reads of locked.go).
func (g *Growing) lookupIn(x *growTable, k growKey) bool {
	if g.mode == Locked {
		return x.growLookupLocked(k.b1, k.b2, k.q1, k.q2)
	}
	return x.growLookup(k.b1, k.b2, k.q1, k.q2)
}

// addIn puts k's entry into x, relocating entries when both buckets are
// full: growDone, growFull (no path) or growFrozen.
func (g *Growing) addIn(x *growTable, k growKey) int {
	for {
		if st := g.putIn(x, k); st != growFull {
			return st
		}
		if st := g.growRelocate(x, k.b1, k.b2); st != growDone {
			return st
		}
	}
}

// putIn puts k's entry into the emptier bucket (b1 on a tie), relocating
// nothing (add.go.tmpl): growDone, growFull or growFrozen.
func (g *Growing) putIn(x *growTable, k growKey) int {
	if g.mode == Locked {
		return x.growAddLocked(k.b1, k.b2, k.q1, k.q2)
	}
	w1, w2 := loadAt(&x.t, wordAt(x.t.words, k.b1)), loadAt(&x.t, wordAt(x.t.words, k.b2))
	return x.growAdd(k.b1, k.b2, k.q1, k.q2, w1, w2)
}

// uniqueIn puts k's entry into the emptier of its buckets in x unless an
// entry matching k is in either (unique.go.tmpl): present=true with
// growDone, growDone alone when it added, or growFull (both full, no
// match) or growFrozen with nothing changed.
//
// Claim: present, added and growFull each hold at one instant in the call.
// Proof. Every entry matching k in x lies in b1 or b2 (entries move only
// within their pairs), and x is the table writes go to (writable): once a
// step's copy is done the shard's entries are in x only, and a copy in
// progress freezes a word before copying it, which the frozen check sees
// (growFrozen says nothing of the key: the caller starts over). The rest
// is unique.go.tmpl's argument, the words unfrozen at the instant (a
// freeze fails the decidePair; Locked, freezing takes the lock); when
// b1 = b2 the word is read once and tested for both entry forms. □
func (g *Growing) uniqueIn(x *growTable, k growKey) (present bool, st int) {
	if g.mode == Locked {
		return x.growAddUniqueLocked(k.b1, k.b2, k.q1, k.q2)
	}
	return x.growAddUnique(k.b1, k.b2, k.q1, k.q2)
}

// moveIn moves entry v from lane s of src to dst, where it is nv (alt), in
// one step (move.go.tmpl): growDone, growStale, or growFrozen when x is
// being copied (a step never writes a frozen word). A step within one word
// would lose the entry: src = dst is stale, as in migrate.go's move.
func (g *Growing) moveIn(x *growTable, src uint64, s int, v uint64, dst, nv uint64, my **descLease) int {
	var ok bool
	switch {
	case src == dst:
	case g.mode == Locked:
		ok = x.growMoveLocked(src, s, v, dst, nv)
	default:
		ok = x.growMoveLockFree(src, s, v, dst, nv, my)
	}
	switch {
	case ok:
		return growDone
	case x.next.Load() != nil:
		return growFrozen
	}
	return growStale
}

// Why Delete removes the youngest match. Entries of different ages compare
// different numbers of bits, so a key X may match another key Y's entry as well
// as its own. Delete(X) removes, from one atomic view of both buckets, a matching
// entry that knows the most position bits (its bucket's level plus its tail bits;
// youngestOf). Claim: every key that matched some entry before still matches one
// after. Proof: by induction, each key inserted and not deleted owns a matching
// entry distinct from every other key's (its insert wrote one; moves and splits
// keep it matching; a void split leaves a copy in the key's half). Only the
// removed E is lost. If E served Y, X's own entry E_X (E_X = E would mean E
// served X, the key deleted) knows no more bits than E, and its bits are a prefix
// of the positions E's stand for. X and Y share the tag and E's bucket. If their
// other buckets differ, E is void and of level d ("Relocation across levels"), so
// E_X, knowing no more, is void and of level d too (the other bucket is split),
// in E's bucket: E's value, which Y matches. Otherwise they share the pair and
// the mask. Let P_K(b) be the position bits of key K in bucket b of its pair (its
// index bits in its b1, those XOR the mask in its b2; when b1 = b2, either). Both
// match E in its bucket b, so P_X(b) and P_Y(b) agree on E's bits, and flipping
// both by the mask keeps them agreeing in the other bucket. E_X holds P_X of its
// bucket on its bits, hence P_Y's: Y matches E_X. □ Removing an older (shorter)
// match could leave a younger entry that compares bits Y does not share.

// deleteIn removes the youngest entry matching k from x, chosen from one
// atomic view of both buckets, and reports whether there was one; st is
// growFrozen if x is being copied. It holds the snapshot gate throughout,
// as a relocation step does: a snapshot (capture) reads a word at a time,
// and no read order is safe against the schedule of "Deletes move both
// counters" (C's Delete takes the key's entry from a word read later).
func (g *Growing) deleteIn(x *growTable, k growKey) (found bool, st int) {
	defer g.gate.exitMove(g.gate.enterMove())
	t := &x.t
	if g.mode == Locked {
		defer x.locks.unlockBuckets(x.locks.lockBuckets(k.b1, k.b2))
	} else if !g.lookupIn(x, k) {
		return false, growDone
	}
	for {
		w1 := t.load(k.b1)
		w2 := w1
		if k.b2 != k.b1 {
			w2 = t.load(k.b2)
		}
		if (w1|w2)&frozenBit != 0 {
			return false, growFrozen
		}
		b, w, s, ok := x.youngestOf(k, w1, w2)
		n1, n2 := w1, w2
		switch nw := setLane(w, s, 0); {
		case ok && k.b1 == k.b2:
			n1, n2 = nw, nw
		case ok && b == k.b1:
			n1 = nw
		case ok:
			n2 = nw
		}
		// Bump both counters ("Deletes move both counters").
		wrap1, wrap2 := growWraps(w1), growWraps(w2)
		if g.mode == Locked {
			if ok && k.b1 == k.b2 {
				t.words[b].Store(n1)
			} else if ok {
				x.epochWraps(k.b1, wrap1, k.b2, wrap2)
				t.words[k.b1].Store(growBump(n1))
				t.words[k.b2].Store(growBump(n2))
				x.epochWraps(k.b1, wrap1, k.b2, wrap2)
			}
			return ok, growDone
		}
		if !ok || k.b1 == k.b2 {
			if t.decidePair(k.b1, w1, n1, k.b2, w2, n2) {
				return ok, growDone
			}
			continue
		}
		var op kcasOp
		op.add(k.b1, w1, growBump(n1))
		op.add(k.b2, w2, growBump(n2))
		if wrap1 || wrap2 {
			t.addWraps(&op, k.b1, wrap1, k.b2, wrap2)
		}
		if t.kcas(&op) {
			return true, growDone
		}
	}
}

// epochWraps counts a wrap of bucket i's (j's) counter in its stripe's epoch.
func (x *growTable) epochWraps(i uint64, wrapI bool, j uint64, wrapJ bool) {
	if wrapI {
		x.t.epochOf(i).Add(1)
	}
	if wrapJ {
		x.t.epochOf(j).Add(1)
	}
}

// youngestOf picks the youngest entry matching k in w1 (b1) or w2 (b2): the
// one that knows the most position bits (a split bucket's entry knows one
// more than an unsplit one's of the same age); b1 on a tie. When b1 = b2 an
// entry of the key may have either form, and w2 is w1.
func (x *growTable) youngestOf(k growKey, w1, w2 uint64) (b, w uint64, s int, ok bool) {
	s1, a1, ok1 := longestMatch(w1, k.q1)
	s2, a2, ok2 := longestMatch(w2, k.q2)
	if ok2 && (!ok1 || a2-x.split(k.b2) < a1-x.split(k.b1)) {
		return k.b2, w2, s2, true
	}
	return k.b1, w1, s1, ok1
}

// countIn counts k's matches in x at one instant (unique.go.tmpl).
func (g *Growing) countIn(x *growTable, k growKey) int {
	if g.mode == Locked {
		return x.growCountLocked(k.b1, k.b2, k.q1, k.q2)
	}
	return x.growCountLockFree(k.b1, k.b2, k.q1, k.q2)
}

// freezeIn sets the frozen bit of bucket j of x (grow.go, protocol step 2)
// and returns the word it froze, without the bit.
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

// growSearchStalls is twophase.go's searchStalls for growing tables (race
// builds): called with the table and b1 after a search's read of b1 (stage
// 1), of b2 (2), after the full search's re-read of b1 (3), and before an
// insert that found no room grows the table (4).
var growSearchStalls atomic.Pointer[func(x *growTable, b1 uint64, stage int)]

func growSearchStalled(x *growTable, b1 uint64, stage int) {
	if raceEnabled {
		if h := growSearchStalls.Load(); h != nil {
			(*h)(x, b1, stage)
		}
	}
}
