package cuckoo

import "sync/atomic"

// The two-phase search (LockFree), and what each operation sees of a move.
//
// Moves are atomic. A relocation (migrate.go, move) is one K-CAS of both bucket
// words that takes a copy of fp out of one, puts it into the other and adds one
// to both migration counters (and to a wrapping counter's stripe epoch,
// "Counter wraps"); adds and deletes are one CAS of one word and leave the
// counters alone. The logical table is what kcasTable.load reads: a word
// referring to an undecided or failed K-CAS reads as its old value, to a
// succeeded one as its new value. Every operation reads logical values and
// writes by CAS or K-CAS against values it read (a reference fails a CAS; the
// writer helps and rereads). So an add's or a Delete's CAS (delete.go.tmpl)
// fails if a move changed the word (its counter) since the read; InsertUnique
// and Count decide by decidePair (unique.go); snapshots and Reset hold the
// snapshot gate, which excludes moves; searches: the claims below.
//
// Invariant (copies): for every pair {b, alt(b, fp)}, the copies of fp in
// its two logical words number the inserts that put one there minus the
// deletes that took one (and Reset's clears), and Len sums them. Proof: a
// CAS changes one slot at one instant, a move's K-CAS moves one copy within
// the pair at its decision point, a failed K-CAS changes nothing. So no
// reader sees a half-done move, and at quiescence, when no word holds a
// reference (kcas.go), the physical table holds exactly Len fingerprints.
//
// The search reads the epoch of b1's stripe (t0), b1 (t1), b2 (t2), b1 (t3) and
// the epoch again; b1 is the pair's lower bucket (searchPair). It answers
// "present" if a read shows fp, "absent" only if neither the epoch nor b1's
// counter moved (d1 = c1(t3) - c1(t1) = 0 mod its width), else starts over.
//
// One order for every search. Every search of a pair reads the lower
// bucket first, and every Delete takes from it when its read of it shows a
// copy. Colliding keys' copies are interchangeable, and one's first bucket
// may be another's second: with different orders, key C (first bucket b2)
// could be inserted into b1 after the search read b1, and C's Delete,
// reading b2 first, take the searched key's copy from b2 before the search
// read it (TestSearchAgainstCollidingKeys, "opposite").
//
// Claim: if some key K with fp and this pair was inserted before t1 and no
// Delete of K takes effect before t3, the search does not answer "absent".
// Proof: suppose it does: no move went through b1 in (t1, t3) (d1 = 0, the wrap
// claim below), b1 held no copy at t1, nor b2 at t2. Let A(t) be the copies in
// b1: A(t1) = 0, and A(t2) >= 1 since K's copy exists (the invariant) and b2 is
// empty. In (t1, t2) copies enter b1 only by inserts; let tau be the last
// instant there at which A went from 0 to 1. Write N for the copies at t1 (all
// in b2) and, in (t1, t2), iX, iY for the inserts into b1, b2, dX, dY for the
// deletes from them, mXY for the moves b1 -> b2. b2 empties by t2 and loses
// copies only to deletes: dY = N + iY + mXY. The deletes are of keys present at
// t1 other than K (at most N-1) or inserted in (t1, t2), kX of them into b1 and
// iY into b2: dX + dY <= N - 1 + kX + iY, so dX + mXY + 1 <= kX. A Delete takes
// from b2 only after a read of b1 showing none, after its key's insert
// returned. A key inserted into b1 from tau on is deleted from b1 (b1 holds a
// copy from tau to t2); one inserted before tau is among the inserts into b1 in
// (t1, tau), which equal the copies that left b1 then (A is 0 at t1 and just
// before tau). So kX <= dX + mXY, a contradiction. □
//
// Allowing d1 = 1 (the paper's rule, sound for a single copy that only
// moves) would not do: a copy moved b2 -> b1 after the read of b1 could be
// taken from b1 by a colliding key's Delete before b1 is read again
// (TestSearchAgainstCollidingKeys, "moved"). A retry needs a move through
// b1 or a wrap in its stripe, so the search is lock-free.
//
// Counter wraps. Counters are as narrow as 2 bits (bucket.go): 2^c moves
// through b1 during a search would make d1 look like 0. So buckets are cut
// into stripes (b mod their number, newEpochs), each with an epoch word
// (kcasTable.vers, epochOf), and a move that takes a counter from its
// maximum to 0 adds one to its stripe's epoch in its K-CAS (once when both
// wrap in one stripe). Stripes, not one epoch: with 2-bit counters many
// moves wrap, and one epoch word in every such K-CAS made concurrent moves
// fail and help one another (BENCHMARKS.md, "Tuning constants").
//
// Claim: if the epoch reads are equal, d1 counts exactly the moves through b1
// between the reads of b1. Proof: epochs only grow, and change in the atomic
// step of the wraps they count, so no wrap of b1's counter took effect in (t0,
// t3); without one, a counter grows by one per move and never passes its
// maximum. □ The fast paths' "b1 reread is bit for bit the first read" is d1 = 0
// under the same condition; an epoch read showing a reference sends them to the
// full search. b2's wraps need no epoch: the search ignores b2's counter.

// unchanged reports whether b1 still holds w1 and the epoch e (plain, in
// LockFree mode): fp, absent from the first reads, was not in flight.
func (f *Filter) unchanged(b1, w1, e uint64) bool {
	hookRead(&f.t, b1)
	r1 := f.t.words[b1].Load()
	searchStalled(f, b1, 3) // between b1's re-read and the epoch's
	if r1 != w1 {
		return false
	}
	hookReadAt(&f.t, f.t.epochOf(b1))
	return f.t.epochOf(b1).Load() == e
}

// Wrap epochs: at least epochStripeWords table words each (8 bytes per 32
// KiB; tests give small tables more with setEpochs), at most maxEpochs.
const epochStripeWords, maxEpochs = 4096, 1 << 14

// newEpochs returns the wrap epochs of a one-word table of n words.
func newEpochs(n uint64) []atomic.Uint64 {
	return make([]atomic.Uint64, stripesFor(n, epochStripeWords, maxEpochs))
}

// stripesFor returns the largest power of two v <= most with v·per <= n, or 1.
func stripesFor(n, per, most uint64) uint64 {
	v := uint64(1)
	for v < most && 2*v*per <= n {
		v <<= 1
	}
	return v
}

// searchStalls (race builds) is called with b1 by every search after its
// reads of b1 (stage 1) and b2 (stage 2), by LockFree InsertUnique after b1
// (stage 1), and between a one-word search's rereads of b1 and the epoch
// before "absent" (stage 3). A hook must act only on its own filter.
var searchStalls atomic.Pointer[func(f *Filter, b1 uint64, stage int)]

// readPair is a search's first reads, b1 then b2, with the stall points.
func (f *Filter) readPair(b1, b2 uint64) (w1, w2 uint64) { return f.readSearch(b1, b2, b1) }

// readSearch is readPair of words i1 and i2 for a search of b1.
func (f *Filter) readSearch(i1, i2, b1 uint64) (w1, w2 uint64) {
	words := f.t.words // one load of the slice header for both reads
	hookRead(&f.t, i1)
	w1 = words[i1].Load()
	searchStalled(f, b1, 1)
	hookRead(&f.t, i2)
	w2 = words[i2].Load()
	searchStalled(f, b1, 2)
	return w1, w2
}

func searchStalled(f *Filter, b1 uint64, stage int) {
	if raceEnabled {
		if h := searchStalls.Load(); h != nil {
			(*h)(f, b1, stage)
		}
	}
}

// findAfter finishes a search whose first reads were e (raw), w1 and w2
// (plain loads, possibly references), and reports whether fp is present.
func (f *Filter) findAfter(b1, b2, fp, w1, w2, e uint64) bool {
	if (w1|w2|e)&tagMask == 0 {
		if f.lay.containsEither(w1, w2, fp) {
			return true
		}
		if _, ok, done := f.phase2(b1, b2, fp, w1, e); done {
			return ok
		}
		f.stats.add(statLookupRetries, 1)
	}
	// A move was, or may have been, in flight: search from the start.
	_, ok := f.find(b1, b2, fp)
	return ok
}
