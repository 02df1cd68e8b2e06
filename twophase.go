package cuckoo

// The two-phase search (LockFree mode).
//
// A fingerprint lives in its two buckets b1, b2 and moves between them
// only by a relocation (migrate.go, move), which adds one to the migration
// counter of each bucket it changes. Inserting into an empty slot and
// deleting do not touch the counters. Reading b1 and then b2 is not
// atomic, so a lookup can miss a fingerprint that moves from b2 to b1
// between the two reads.
//
// Relocation in two steps. A move of fp from src to dst is two CASes of
// one word each: first fp is added to an empty slot of dst, then a copy of
// fp is taken out of src, each step bumping its bucket's counter (a step
// that wraps a counter is a K-CAS with the epoch instead, see "Counter
// wraps"). Between the steps fp is in both buckets: a lookup sees it
// either way, and a copy is in at least one of its buckets at every
// instant. If src holds no copy of fp by the second step (a Delete took
// it, or another goroutine moved it), the mover takes a copy of fp out of
// dst again (none, if a Delete took that one) and the move fails. Copies
// of fp in one bucket are interchangeable: they all belong to the pair of
// that bucket and alt(b, fp), so only their number matters, and it comes
// out right: a move adds one and then takes one; a Delete that runs
// between the steps takes one, and the mover's second step then finds
// either the copy in src (the Delete took the one in dst) or, with src
// empty of fp, the one it added in dst. This needs no descriptor, and
// replaces a K-CAS of about ten locked instructions by two CASes.
//
// Tracking a copy C through moves: C is in its home bucket; a move of C
// from src makes the copy it added to dst C's home when its second step
// takes C out of src (copies of fp in one bucket are interchangeable, so
// the copy a step takes may be named the one the move meant; a copy that a
// move adds and then takes back is nobody's home). So C's home changes
// only at a move's second step, and the new home got the copy earlier, in
// the move's first step. If a Delete takes that added copy before the
// second step, the second step still takes C out of src, and C is gone.
//
// The search reads b1 at t1, b2 at t2, b1 again at t3 and b2 again at t4
// (t1 < t2 < t3 < t4, each read an atomic logical read: kcasTable.load),
// and the epoch before t1 and after its last read (see "Counter wraps"). It
// reports the fingerprint present as soon as one read shows it. If none
// does, it compares the counters of the first and second read of each bucket:
// d1 = c1(t3) - c1(t1) and d2 = c2(t4) - c2(t2), modulo the counter width.
//
// Claim: if a copy C of the fingerprint is in b1 or b2 during all of
// [t1, t4] and no read saw it, then d1 >= 2 and d2 >= 2. Proof: C is
// always in its home bucket, and a read of the home shows fp. Not seen in
// b1 at t1, so C's home at t1 is b2; not seen in b2 at t2, so a move M1
// made b1 C's home inside (t1, t2). M1's first step added the copy to b1
// before that and after t1 (had the copy been in b1 at t1, the read would
// have seen it; had a Delete taken it, C would be gone): one bump of c1
// inside (t1, t2). At t2, C's home is b1 (it is not b2, whose read missed
// fp); not seen in b1 at t3, so a move M2 took C out of b1 inside (t2, t3):
// a second bump of c1, so d1 >= 2. M2's first step added C's new copy to
// b2 after t2 (the read at t2 saw none) and before its second step, so
// before t3: one bump of c2 inside (t2, t4). Not seen in b2 at t4, so a
// move M3 took C out of b2 inside (t3, t4): a second bump of c2, so
// d2 >= 2. A step done as a K-CAS with the epoch is one of the two steps
// at one instant, and the argument holds as it is.
//
// So when d1 < 2 or d2 < 2 the fingerprint was not present throughout, and
// answering "absent" is linearizable; otherwise the search starts over. This
// is the paper's test without its cross-bucket term c2' >= c1+3, which
// needs unbounded counters. A retry needs two relocations through each of
// the two buckets inside one search, which is rare even at 95% load, and
// every retry means other inserts made progress, so the search is
// lock-free.
//
// Counter wraps. The counters wrap (14 bits at f=12, 30 at f=8), and d is
// taken modulo 2^c: 2^c relocations through b1 while a search is between
// its reads (a few milliseconds of relocations on one core, as the review
// that found it measured: less than a scheduler time slice) would make d1
// look like 0. The epoch (kcasTable.epoch) closes this. Every relocation
// step that takes a counter from its maximum to 0 adds one to the epoch in
// the same K-CAS (migrate.go, stepCAS: such a step, one in 2^(c-1) on
// average, is a K-CAS of the bucket word and the epoch instead of a CAS),
// so the epoch's logical value is the number of wraps so far, changing
// atomically with them. A search reads the epoch (e0) before its first
// read of b1, and before it answers "absent" it reads the epoch again; it
// answers only if the two reads are equal, and otherwise starts over.
//
// Claim: if the epoch reads are equal, every counter difference the search
// computed counts exactly the relocation steps through that bucket between
// its two reads (up to 2^c-1 of them). Proof: with no wrap in between, a
// counter only grows by one per step and never passes its maximum, so
// the difference of two reads, taken as plain integers, is the number of
// steps; equal epoch values mean no wrap took effect in between (the
// epoch only grows). The fast path's "b1 read again is bit for bit what
// phase 1 read" is d1 = 0 with the same condition. With the wrap accounted
// for, the claim above holds however long a search is delayed. A plain read
// of the epoch that shows a K-CAS reference is not compared as a raw word:
// the fast paths then take the full search, which resolves it (load).
//
// Cost: the epoch is one word on a line of its own, read twice per absent
// answer, written once per 2^(c-1) relocations on average. Epoch retries
// are rarer than counter retries; like them, each one means relocations
// made progress.
//
// What this guarantees, precisely: a search finds the fingerprint if some
// copy of it stays in the filter for the whole search. Copies come from
// inserting a key more than once or from keys that collide on fingerprint
// and buckets. If, during one search, a new copy is inserted and an older one
// is deleted, no single copy spans the search and the search may answer
// "absent" even though a copy existed at every instant; a key that is only
// inserted, or whose deletes do not overlap the search, is always found.

// unchanged reports whether b1 holds w1, bit for bit, and the epoch still
// holds e: the fast paths' proof that fp, absent from phase 1's reads of b1
// (w1, after e) and b2, was not in flight (d1 = 0 with no wrap). e must be
// a plain epoch value for LockFree mode's callers (Locked mode's epoch is
// always plain).
func (f *Filter) unchanged(b1, w1, e uint64) bool {
	if f.t.words[b1].Load() != w1 {
		return false
	}
	return f.t.epoch.Load() == e
}

// find runs the two-phase search for fp in buckets b1 and b2 and returns the
// bucket where a read saw it.
func (f *Filter) find(b1, b2, fp uint64) (uint64, bool) {
	l := &f.lay
	t := &f.t
	for {
		e := t.load(epochWord)
		// Phase 1. Both loads are issued before either is tested, so
		// their cache misses overlap; b1 is still read first.
		w1, w2 := t.words[b1].Load(), t.words[b2].Load()
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
		if b, ok, done := f.phase2(b1, b2, fp, w1, w2, e); done {
			return b, ok
		}
		f.stats.add(statLookupRetries, 1)
	}
}

// phase2 completes a search whose first phase read the epoch's logical
// value e, then w1 from b1 and then w2 from b2, without finding fp. done is
// false when the counters or the epoch show that fp may have been in flight
// and the search must start over.
//
// It reads b1 again first and stops there when b1's counter moved by less
// than 2: three reads that missed a copy present throughout (b1 at t1, b2
// at t2, b1 at t3) need a move b2 -> b1 in (t1, t2) and a move b1 -> b2 in
// (t2, t3), both counted by b1 within (t1, t3), so d1 < 2 already rules that
// out. This saves the fourth read on almost every absent key (negative
// lookups about 7% faster with 2 goroutines in the comparison module;
// BENCHMARKS.md, "Figures behind code comments"); only when d1 >= 2 does it
// read b2 and apply the full test above. Either way the answer "absent"
// stands only if the epoch did not move.
func (f *Filter) phase2(b1, b2, fp, w1, w2, e uint64) (b uint64, ok, done bool) {
	if b1 == b2 {
		// A key with one bucket never moves: one read decides.
		return 0, false, true
	}
	l := &f.lay
	t := &f.t
	v1 := t.words[b1].Load()
	if v1&tagMask != 0 {
		v1 = t.load(b1)
	}
	if l.contains(v1, fp) {
		return b1, true, true
	}
	if (l.counter(v1)-l.counter(w1))&l.ctrMask < 2 {
		return 0, false, t.load(epochWord) == e
	}
	v2 := t.load(b2)
	if l.contains(v2, fp) {
		return b2, true, true
	}
	return 0, false, (l.counter(v2)-l.counter(w2))&l.ctrMask < 2 && t.load(epochWord) == e
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
		if _, ok, done := f.phase2(b1, b2, fp, w1, w2, e); done {
			return ok
		}
		f.stats.add(statLookupRetries, 1)
	}
	// A relocation was in flight, or the counters say fp may have been:
	// search from the start.
	_, ok := f.find(b1, b2, fp)
	return ok
}
