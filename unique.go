package cuckoo

// Insert-if-absent and counting (both modes).
//
// Every copy of a key's fingerprint fp lives in one of the key's buckets b1
// and b2 = alt(b1, fp): a fingerprint in bucket b can only move to
// alt(b, fp) and back, and alt is an involution, so any copy of fp found in
// b1 or b2 (whichever key put it there) belongs to the pair {b1, b2}, and
// no copy belonging to that pair is anywhere else. The two words of b1 and
// b2 therefore decide whether the filter holds fp for this pair.

// InsertUnique adds key to the filter unless its fingerprint is already in
// one of the key's two buckets, and reports whether it added it. It returns
// ErrFull (and inserted=false) when the fingerprint was absent but no slot
// could be freed for it; the filter then holds what it held before, as
// after a failed Insert.
//
// InsertUnique is linearizable in both modes, also against Insert, Delete
// and relocations: it takes effect at one instant at which it either finds
// the fingerprint or finds it absent and adds it. So any number of
// goroutines calling InsertUnique with one key leave exactly one copy.
//
// A false positive here means a refusal: inserted=false with a nil error
// can also mean that a different key with the same fingerprint and buckets
// is stored (the probability that Lookup reports a never-inserted key),
// and the key itself was not added. Lookup still reports it present, since
// it finds the other key's fingerprint; deleting that other key then makes
// it absent.
func (f *Filter) InsertUnique(key []byte) (inserted bool, err error) {
	if f.m == 0 {
		return false, ErrZeroFilter
	}
	b1, fp, b2 := f.hash(key)
	return f.insertUnique(b1, b2, fp)
}

// Count returns the number of copies of key's fingerprint in its two
// buckets at one instant during the call: Count is linearizable in both
// modes, also against Insert, Delete and relocations, and a relocation
// never makes it count a copy twice or miss one. It also counts copies of
// other keys that share the fingerprint and buckets (false positives; at
// most 2·SlotsPerBucket() copies in all, 10 by default).
func (f *Filter) Count(key []byte) int {
	if f.m == 0 {
		return 0
	}
	b1, fp, b2 := f.hash(key)
	return f.countCopies(b1, b2, fp)
}

// insertUnique is InsertUnique for a key placed in b1, b2 with fingerprint
// fp.
//
// Claim: every answer has one instant inside the call at which it holds.
// Proof. Each attempt (addUnique*) reports present, added or full, each
// decided at one instant (the claims of addUniqueLockFree and
// addUniqueLocked). "present" and "added" are returned as such. ErrFull
// comes only after an attempt that reported full, that is, an instant at
// which both buckets were full and held no copy of fp, followed by a
// makeRoom that found no path (or the last of maxRoomRounds); the call
// changed nothing, so it takes effect at that instant, as a refusal that
// found fp absent. A "full" taken from two reads at two instants would not
// do: a copy can move from the bucket read second into the one read first
// between the reads (TestInsertUniqueAgainstMove).
func (f *Filter) insertUnique(b1, b2, fp uint64) (bool, error) {
	for round := 0; ; round++ {
		var present, added bool
		switch {
		case f.lay.packed && f.mode == Locked:
			present, added = f.pkAddUniqueLocked(b1, b2, fp)
		case f.lay.packed:
			present, added = f.pkAddUnique(b1, b2, fp)
		case f.mode == Locked:
			present, added = f.addUniqueLocked(b1, b2, fp)
		default:
			present, added = f.addUniqueLockFree(b1, b2, fp)
		}
		if present {
			return false, nil
		}
		if added {
			f.count.add(1)
			return true, nil
		}
		if round == maxRoomRounds || !f.makeRoom(b1, b2, fp) {
			f.stats.add(statFull, 1)
			return false, ErrFull
		}
		roomMade(f, b1, b2)
	}
}

// decidePair is the one instant of a LockFree InsertUnique and Count, in
// every layout and in the growing filter: it changes word i1 from w1 to n1
// and word i2 from w2 to n2 if both hold those values, at one instant, and
// reports whether it did. The caller read w1 and w2 (logical values) and
// decided from them: fp added to one word, or both left as they are (both
// buckets full, or a count). When one word holds both buckets (i1 == i2)
// the caller passes its one read of it as w1 and w2 and the one new word
// as n1 and n2.
//
// Claim: if it returns true, there is an instant inside the call at which
// word i1 held w1 and word i2 held w2, and at that instant they became n1
// and n2. Proof: a K-CAS takes effect at its decision point, at which
// every word it covers holds its old value (kcas.go); a word written back
// unchanged is compared all the same. One word: a CAS compares and writes
// at one instant; a word left unchanged was read once, and that read is
// the instant.
func (t *kcasTable) decidePair(i1, w1, n1, i2, w2, n2 uint64) bool {
	if i1 == i2 {
		if n1 == w1 || t.cas(i1, w1, n1) {
			return true
		}
		hookRead(t, i1)
		if v := t.words[i1].Load(); v&tagMask != 0 {
			t.helpWord(v) // a reference fails every CAS until it leaves
		}
		return false
	}
	var op kcasOp
	op.add(i1, w1, n1)
	op.add(i2, w2, n2)
	return t.kcas(&op)
}

// addUniqueLockFree puts fp into the emptier of b1 and b2 if neither holds
// it. present reports that one did; added that fp was put in; both false
// means both buckets are full.
//
// Claim: each outcome holds at one instant during the call: present, fp
// in b1 or b2; added, fp in neither and added at that instant; neither,
// both buckets full and without fp.
//
// Proof. Each attempt reads b1 (w1) and b2 (w2) as plain words, helping any
// K-CAS it finds there to completion first. (a) A read that shows fp is an
// atomic read of the bucket at that instant: present. (b) Otherwise both
// words are decided on in one decidePair: the emptier one gets fp and
// the other is written back unchanged, or, when both are full, both are
// written back unchanged. At its instant both words hold exactly w1 and
// w2, neither holding fp, and by the note at the top of this file no copy
// of fp for this pair lies outside b1 and b2: so the filter holds no copy
// then, and the same instant adds one or finds both buckets full. Any
// change to either word between the reads and that instant, including
// the migration counters' bumps of a relocation through either bucket and
// an insert by a racing InsertUnique, fails it, and the attempt starts
// over from fresh reads. When b1 == b2 the word read once decides.
//
// The attempt is lock-free: a failed K-CAS or CAS means a word changed, that
// is, another operation took effect.
func (f *Filter) addUniqueLockFree(b1, b2, fp uint64) (present, added bool) {
	l := &f.lay
	for {
		hookRead(&f.t, b1)
		w1 := f.t.words[b1].Load()
		if w1&tagMask != 0 {
			f.helpWord(w1)
			continue
		}
		if raceEnabled {
			searchStalled(f, b1, 1) // the tests' stall point (twophase.go, searchStalls)
		}
		w2 := w1
		if b2 != b1 {
			hookRead(&f.t, b2)
			w2 = f.t.words[b2].Load()
			if w2&tagMask != 0 {
				f.helpWord(w2)
				continue
			}
		}
		if l.containsEither(w1, w2, fp) {
			return true, false
		}
		// The emptier bucket gets fp, b1 on a tie (as addEither); the other
		// is only compared, and both when both are full.
		n1, ok1 := l.put(w1, fp)
		n2, ok2 := l.put(w2, fp)
		switch {
		case !ok1 && !ok2:
			n1, n2 = w1, w2
		case !ok1 || ok2 && l.emptier(w2, w1):
			n1 = w1
		default:
			n2 = w2
		}
		if b1 == b2 {
			n2 = n1
		}
		if f.t.decidePair(b1, w1, n1, b2, w2, n2) {
			return false, ok1 || ok2
		}
		f.stats.add(statKCASRetries, 1)
	}
}

// addUniqueLocked is addUniqueLockFree for Locked mode: under the stripes of
// both buckets, which every write to either bucket holds (locked.go), the
// two reads and the insert are one instant.
func (f *Filter) addUniqueLocked(b1, b2, fp uint64) (present, added bool) {
	l := &f.lay
	g := f.locks.lockBuckets(b1, b2)
	w1, w2 := f.t.words[b1].Load(), f.t.words[b2].Load()
	switch {
	case l.containsEither(w1, w2, fp):
		present = true
	case l.emptier(w2, w1):
		added = f.addHeld(b2, fp)
	default:
		added = f.addHeld(b1, fp) || b2 != b1 && f.addHeld(b2, fp)
	}
	f.locks.unlockBuckets(g)
	return present, added
}

// matches returns the number of slots of w holding fp: the slots of
// w ^ fp·lo that are zero, counted exactly (occupied counts the non-zero
// ones without zeroSlots' borrow error).
func (l *layout) matches(w, fp uint64) int {
	return int(l.b) - l.occupied(w^fp*l.lo)
}

// countCopies returns the number of copies of fp in b1 and b2.
//
// Claim: the result is the number of copies of fp for this pair at one
// instant inside the call, so Count is linearizable.
//
// Proof (LockFree). An attempt reads b1 and then b2 and counts those two
// values only if decidePair, comparing both words with them and changing
// neither, succeeds: then both words held them at one instant (unique.go,
// decidePair), and by the note at the top of this file every copy for the
// pair is in one of the two. Otherwise a word changed and the attempt
// starts over; each retry means another operation took effect. When
// b1 == b2 one read decides. Two reads at two instants would not do, even
// with a check that no copy moved: a copy in b1 can be deleted after b1
// is read and, after that Delete returns, an Insert of a colliding key
// can put one into b2 before b2 is read, and the sum, 2, was never there
// (TestCountAgainstDeleteThenInsert).
//
// Locked mode reads both words under both buckets' stripe locks, which
// every write to either bucket holds (locked.go): one instant.
func (f *Filter) countCopies(b1, b2, fp uint64) int {
	b1, b2 = searchPair(b1, b2)
	if f.lay.packed {
		if f.mode == Locked {
			return f.pkCountLocked(b1, b2, fp)
		}
		return f.pkCount(b1, b2, fp)
	}
	l := &f.lay
	if f.mode == Locked {
		g := f.locks.lockBuckets(b1, b2)
		w1, w2 := f.t.words[b1].Load(), f.t.words[b2].Load()
		f.locks.unlockBuckets(g)
		if b1 == b2 {
			return l.matches(w1, fp)
		}
		return l.matches(w1, fp) + l.matches(w2, fp)
	}
	for {
		w1 := f.t.load(b1)
		if b1 == b2 {
			return l.matches(w1, fp)
		}
		if raceEnabled {
			searchStalled(f, b1, 1) // the tests' stall points (twophase.go, searchStalls)
		}
		w2 := f.t.load(b2)
		if raceEnabled {
			searchStalled(f, b1, 2)
		}
		if f.t.decidePair(b1, w1, w1, b2, w2, w2) {
			return l.matches(w1, fp) + l.matches(w2, fp)
		}
		f.stats.add(statLookupRetries, 1)
	}
}
