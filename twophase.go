package cuckoo

import "sync/atomic"

// The two-phase search (LockFree mode), and what every operation sees of
// a relocation.
//
// Moves are atomic. A fingerprint fp lives in one of its two buckets b1,
// b2 and moves between them only by a relocation (migrate.go, move): one
// K-CAS of both bucket words that takes a copy of fp out of one, puts it
// into the other and adds one to both migration counters (and, when a
// counter wraps, to the epoch of its bucket's stripe in the same K-CAS;
// "Counter wraps" below). Inserting into an empty slot and deleting are
// one CAS of one word and do not touch the counters.
//
// The logical table is the table as kcasTable.load reads it: a word that
// holds a reference to an undecided or failed K-CAS reads as its old
// value, one that holds a reference to a succeeded K-CAS as its new value
// (kcas.go). Every operation reads only logical values, and writes only by
// a CAS or K-CAS against logical values it read (a word holding a
// reference fails a plain CAS; the writer helps the K-CAS to completion
// and reads again).
//
// Invariant (copies). For every bucket pair {b, alt(b, fp)} and
// fingerprint fp, the number of copies of fp in the pair's two logical
// words equals the number the operations put there (each successful
// Insert, InsertUnique, InsertBatch key) minus the number they took (each
// Delete that returned true, each copy Reset cleared); and Len is the sum
// of these numbers over the table, since every such operation updates the
// count once after its CAS. Proof: an insert's or delete's CAS changes one
// slot of one word at one instant, and the count follows it; a move's
// K-CAS changes both words at its decision point, the one instant at which
// every reader switches from both old values to both new ones, and it
// takes one copy of fp out of one bucket of the pair and puts one into the
// other, so the pair's number of copies is the same before and after. A
// failed K-CAS changes no logical value. So no instant shows a half-done
// move: no reader can see fp in both buckets for a single copy, or in
// neither. At quiescence no word holds a reference (the owner of a K-CAS
// removes its references before it returns, kcas.go), so the physical
// table is the logical one and holds exactly Len fingerprints.
//
// What each operation may observe of a move, and why its answer is
// linearizable:
//   - Insert (and each key of InsertBatch): one CAS into a plain word it
//     read; it takes effect at the CAS. A move between its read and its
//     CAS changes the word (the counter at least), so the CAS fails and
//     the insert chooses again from fresh reads.
//   - InsertUnique and Count: one K-CAS over both words that compares
//     both with the values read (decidePair, unique.go): at its decision
//     point both words hold exactly those values, so "fp absent from
//     both", "both full" and the count hold at that instant. A refusal
//     reports a read that showed fp, a logical copy at that instant.
//   - Delete: the search below finds a bucket where a read showed fp, and
//     one CAS takes a copy out of that word's value; it returns true
//     exactly when that CAS succeeded, at which instant the copy it
//     removed was logically present. If a move took fp out of that bucket
//     first, the CAS fails (the counter changed) and the search runs
//     again. "false" comes from the search's "absent", argued below.
//   - Lookup, LookupBatch and the search of Delete: the claim below.
//   - Snapshots and Reset hold the snapshot gate, which excludes moves
//     (snapshot.go, lockfree.go), and read every word logically.
//
// The search reads the wrap epoch of b1's stripe (see "Counter wraps")
// at t0, b1 at t1, b2 at t2 and b1 again at t3 (t0 < t1 < t2 < t3, each
// read an atomic logical read: kcasTable.load), and before it answers
// "absent" that epoch again. Here b1 is the first bucket of the pair in
// search order (searchPair: the lower index), which is the key's own
// first bucket or its second. It reports the fingerprint present as soon
// as one read shows it. If none does, it compares the counters of the two
// reads of b1: d1 = c1(t3) - c1(t1), modulo the counter width, and answers
// "absent" only when d1 = 0 and the epoch did not move.
//
// One order for every search. Every search of a pair (Lookup, LookupBatch,
// the Hash forms, Count, and the search of Delete) reads the pair's lower
// bucket first, and every Delete takes a copy from the lower bucket when
// its read of it shows one. Keys that collide on fingerprint and buckets
// have interchangeable copies, and a colliding key's first bucket may be
// the searched key's second; inserts and deletes move no counter. Were
// the orders different, key C (first bucket b2) could be inserted into b1
// after the search read b1, and C's Delete, reading b2 first, could take
// the searched key's copy from b2 before the search read it: a key
// inserted before the search and never deleted would be reported absent
// (TestSearchAgainstCollidingKeys, "opposite").
//
// Claim: if some key K with fingerprint fp and this pair was inserted
// before t1 and no Delete of K takes effect before t3, the search does
// not answer "absent". Proof: suppose it does, so d1 = 0 with the epoch
// unchanged: no move went through b1 in (t1, t3) (the wrap claim below),
// and b1 held no copy at t1 or t3, nor b2 at t2. Count copies in the pair
// (the invariant above: each insert adds one, each delete takes one, moves
// keep the number). Let A(t) be the copies in b1; A(t1) = 0, and since the
// copies present at t2 are at least 1 (K's, counted from its insert) and
// b2 held none, A(t2) >= 1. Between t1 and t2 copies enter b1 only by
// inserts (no move into b1); let tau be the last instant in (t1, t2] at
// which A went from 0 to 1. Write N for the copies at t1 (all in b2),
// and, for (t1, t2): iX, iY the inserts into b1 and b2, dX, dY the deletes
// from them, mXY the moves b1 -> b2. b2 is empty at t2 and loses copies
// only to deletes (a move out of b2 goes into b1), so dY = N + iY + mXY.
// The deletes belong to keys present at t1 other than K (at most N - 1)
// and to keys inserted in (t1, t2) and deleted there, at most kX of them
// inserted into b1 and iY into b2: dX + dY <= N - 1 + kX + iY, hence
// dX + mXY + 1 <= kX. A Delete takes from b2 only after a read of b1 that
// showed no copy, made after its key's insert returned. A key inserted
// into b1 at tau or later is deleted from b1, since from tau to t2 b1
// holds a copy (so at most dX' of them, dX' the deletes from b1 after
// tau); one inserted into b1 before tau is one of the inserts into b1 in
// (t1, tau), which equal the copies that left b1 in that time, since A is
// 0 at t1 and just before tau: dX'' + mXY'' of them (the deletes and
// moves out of b1 before tau). So kX <= dX + mXY, a contradiction. □
//
// So an "absent" answer needs every key inserted before the search began
// to have been deleted meanwhile, which is what a Lookup (and a Delete
// that returns false) may report. A single move through b1 already
// forces a retry: with d1 = 1 allowed (the paper's rule, which holds for
// a single copy that only moves), a copy moved b2 -> b1 after the read of
// b1 could be taken from b1 by a colliding key's Delete (one whose copy
// went into b2 after the read of b2) before b1 is read again
// (TestSearchAgainstCollidingKeys, "moved"). A retry needs a relocation
// through b1 during the search, or a wrap in b1's stripe ("Counter
// wraps"); every retry means other inserts made progress, so the search
// is lock-free.
//
// Counter wraps. The counters wrap (14 bits at f=12, 30 at f=8, 2 at
// f=15 and with five 12-bit slots, where every fourth relocation through a
// bucket wraps), and d1 is taken modulo 2^c: 2^c relocations through b1
// while a search is between its reads (well within a scheduler time slice)
// would make d1 look like 0. The wrap epochs close this. The
// buckets are cut into stripes (bucket b is in stripe b mod the number of
// stripes, epochsFor), each with an epoch word (kcasTable.vers, epochOf).
// Every relocation that takes a counter from its maximum to 0 adds one to
// the epoch of that bucket's stripe in its K-CAS (migrate.go, move; one
// add for both buckets when both wrap and share a stripe), so an epoch's
// logical value is the number of wraps in its stripe so far, changing
// atomically with them. A search reads b1's stripe's epoch (e0) before its
// first read of b1, and before it answers "absent" it reads that epoch
// again; it answers only if the two reads are equal, and otherwise starts
// over.
//
// Claim: if the epoch reads are equal, d1 counts exactly the relocations
// through b1 between the search's two reads of b1 (up to 2^c-1 of them).
// Proof: a wrap of b1's counter adds one to the epoch of b1's stripe in
// the same atomic step, and the epoch only grows, so equal reads at t0 and
// after t3 mean no wrap of b1's counter took effect in (t0, t3) ⊇ (t1,
// t3); with no wrap, a counter only grows by one per relocation and never
// passes its maximum, so the difference of two reads, taken as plain
// integers, is the number of relocations. The fast path's "b1 read again
// is bit for bit what phase 1 read" is d1 = 0 with the same condition.
// With the wrap accounted for, the claim above holds however long a search
// is delayed. A plain read of an epoch that shows a K-CAS reference is
// not compared as a raw word: the fast paths then take the full search,
// which resolves it (load). Wraps of b2's counter need no epoch: the
// search draws no conclusion from b2's counter.
//
// Why stripes, not one epoch for the table: with 2-bit counters and churn
// a large share of relocations wrap a counter, and with one epoch every
// such move put the same word into its K-CAS, so concurrent relocations
// failed and helped one another (BENCHMARKS.md, "Tuning constants"). Stripes
// spread those writes over epochsFor's words. An epoch is read twice per
// absent answer (usually in cache) and written by one relocation in
// 2^(c-1) through its stripe. A search starts over on any wrap in its first
// bucket's stripe, not only in that bucket; like a counter retry, each one
// means relocations made progress.
//
// What this guarantees, precisely (the claim of "One order for every
// search"): a search finds a key if at least one of the key's inserts
// that returned before the search began is not undone by a Delete of the
// key that takes effect before the search returns, whatever other keys,
// colliding ones included, are inserted, deleted and relocated meanwhile.
// Moves alone never make a search miss a copy.

// unchanged reports whether b1 holds w1, bit for bit, and the epoch still
// holds e: the fast paths' proof that fp, absent from phase 1's reads of b1
// (w1, after e) and b2, was not in flight (d1 = 0 with no wrap). e must be
// a plain epoch value for LockFree mode's callers (Locked mode's epoch is
// always plain).
func (f *Filter) unchanged(b1, w1, e uint64) bool {
	hookRead(&f.t, b1)
	r1 := f.t.words[b1].Load()
	if raceEnabled {
		searchStalled(f, b1, 3) // between b1's re-read and the epoch's
	}
	if r1 != w1 {
		return false
	}
	hookReadAt(&f.t, f.t.epochOf(b1))
	return f.t.epochOf(b1).Load() == e
}

// find runs the two-phase search for fp in buckets b1 and b2 and returns the
// bucket where a read saw it.
func (f *Filter) find(b1, b2, fp uint64) (uint64, bool) {
	l := &f.lay
	t := &f.t
	for {
		e := t.load(t.epochIdx(b1))
		// Phase 1. Both loads are issued before either is tested, so
		// their cache misses overlap; b1 is still read first.
		w1, w2 := f.readPair(b1, b2)
		if (w1|w2)&tagMask != 0 {
			// A relocation is in flight: resolve, reading in order.
			w1 = t.load(b1)
			w2 = t.load(b2)
		}
		if l.contains(w1, fp) {
			return b1, true
		}
		if l.contains(w2, fp) {
			return b2, true
		}
		if b, ok, done := f.phase2(b1, b2, fp, w1, e); done {
			return b, ok
		}
		f.stats.add(statLookupRetries, 1)
	}
}

// phase2 completes a search whose first phase read the logical value e of
// b1's stripe's epoch, then w1 from b1 and then w2 from b2, without finding
// fp. done is false when b1's counter or that epoch show that fp may have
// been in flight and the search must start over.
//
// It reads b1 again and answers "absent" when b1's counter did not move
// and the epoch did not move (the claim above). Otherwise it reads b2 once
// more, which can only find fp.
func (f *Filter) phase2(b1, b2, fp, w1, e uint64) (b uint64, ok, done bool) {
	if b1 == b2 {
		// A key with one bucket never moves: one read decides.
		return 0, false, true
	}
	l := &f.lay
	t := &f.t
	hookRead(t, b1)
	v1 := t.words[b1].Load()
	if v1&tagMask != 0 {
		v1 = t.load(b1)
	}
	if raceEnabled {
		searchStalled(f, b1, 3) // between b1's re-read and the epoch's
	}
	if l.contains(v1, fp) {
		return b1, true, true
	}
	if l.counter(v1) == l.counter(w1) {
		return 0, false, t.load(t.epochIdx(b1)) == e
	}
	if l.contains(t.load(b2), fp) {
		return b2, true, true
	}
	return 0, false, false
}

// epochStripeWords is the number of table words per wrap epoch: each
// stripe's epoch costs 8 bytes per 32 KiB of table or more (1/4096 of
// it). Tables below 8,192 words have one epoch (tests give a small table
// more with setEpochs).
const epochStripeWords = 4096

// maxEpochs bounds the wrap epochs of a table (128 KiB of them, from 2^26
// words on).
const maxEpochs = 1 << 14

// epochsFor returns the number of wrap epochs for a one-word table of n
// words: the largest power of two that gives each at least
// epochStripeWords words, 1 to maxEpochs.
func epochsFor(n uint64) uint64 {
	v := uint64(1)
	for v < maxEpochs && 2*v*epochStripeWords <= n {
		v <<= 1
	}
	return v
}

// newEpochs returns the wrap epochs of a one-word table of n words.
func newEpochs(n uint64) []atomic.Uint64 {
	return make([]atomic.Uint64, epochsFor(n))
}

// searchStalls, in race builds only, is called by every search of a
// searchStalls, in race builds only, is called by every search of a
// one-word table (Lookup, the batch and Hash forms, find and so Delete,
// Count, remove's first reads, and Locked mode's lookups) and by the
// packed layout's lookups, pkFind, pkRemove's first reads and pkCount,
// after its first read of b1 (stage 1) and of b2 (stage 2), and by a one-word search deciding
// "absent" between its re-read of b1 and its re-read of the epoch (stage
// 3), with the filter and b1 (the lower bucket); and by LockFree
// InsertUnique after its read of the key's first bucket (stage 1, with
// that bucket). Tests set it to relocate while a search is stalled between
// its reads; a hook must act only on its own filter, since other tests'
// searches call it too. In other builds the calls are compiled out.
var searchStalls atomic.Pointer[func(f *Filter, b1 uint64, stage int)]

// readPair reads b1 and then b2 with plain loads, stopping at the tests'
// stall points after each read in race builds: a search's first reads.
func (f *Filter) readPair(b1, b2 uint64) (w1, w2 uint64) {
	hookRead(&f.t, b1)
	w1 = f.t.words[b1].Load()
	if raceEnabled {
		searchStalled(f, b1, 1)
	}
	hookRead(&f.t, b2)
	w2 = f.t.words[b2].Load()
	if raceEnabled {
		searchStalled(f, b1, 2)
	}
	return w1, w2
}

// searchStalled calls searchStalls, if set (race builds only).
func searchStalled(f *Filter, b1 uint64, stage int) {
	if h := searchStalls.Load(); h != nil {
		(*h)(f, b1, stage)
	}
}

// findAfter finishes a search whose first phase read the epoch (e, a raw
// read) and then w1 from b1 and w2 from b2 (plain loads, possibly
// references) and did not find fp in them if they were plain. It reports
// whether fp is present.
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
	// A relocation was in flight, or the counters say fp may have been:
	// search from the start.
	_, ok := f.find(b1, b2, fp)
	return ok
}
