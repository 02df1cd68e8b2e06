package cuckoo

// Insert-if-absent and counting (per-codec work: unique.go.tmpl). A copy
// of fp in b moves only to alt(b, fp) and back, an involution: every copy
// of fp in b1 or b2 belongs to the pair {b1, b2} and none of the pair's is
// elsewhere, so the two words decide whether the filter holds fp for it.

// InsertUnique adds key unless its fingerprint is in one of the key's buckets,
// and reports whether it added it. It returns ErrFull, with the filter
// unchanged, when the fingerprint was absent and no slot could be freed.
//
// InsertUnique is linearizable in both modes, also against Insert, Delete and
// relocations: it takes effect at one instant, finding the fingerprint or adding
// it, absent. So concurrent InsertUniques of one key leave exactly one copy.
//
// A false positive means a refusal: inserted=false with a nil error can mean
// another key sharing its fingerprint and buckets is stored (as likely as a
// Lookup false positive); Lookup reports it present until that key is deleted.
func (f *Filter) InsertUnique(key []byte) (inserted bool, err error) {
	if f.m == 0 {
		return false, ErrZeroFilter
	}
	b1, fp, b2 := f.hash(key)
	return f.insertUnique(b1, b2, fp)
}

// Count counts the copies of key's fingerprint in its two buckets at one
// instant in the call: it is linearizable in both modes, also against Insert,
// Delete and relocations, and a relocation never makes it count a copy twice or
// miss one. It also counts other keys' copies with the same fingerprint and
// buckets (false positives; at most 2·SlotsPerBucket() in all, 10 by default).
func (f *Filter) Count(key []byte) int {
	if f.m == 0 {
		return 0
	}
	b1, fp, b2 := f.hash(key)
	return f.countCopies(b1, b2, fp)
}

// insertUnique is InsertUnique for a placed key.
//
// Claim: every answer holds at one instant inside the call. Proof: each attempt
// (addUnique, addUniqueLocked) reports present, added or full at one instant.
// ErrFull follows an attempt finding both buckets full without fp and a failed
// makeRoom: the call changed nothing, so it takes effect then. A "full" from
// reads at two instants would not do: a copy can move from the bucket read
// second into the one read first between them (TestInsertUniqueAgainstMove).
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
			present, added = f.addUnique(b1, b2, fp)
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

// decidePair is the one instant of a LockFree InsertUnique and Count (every
// codec): it changes word i1 from w1 to n1 and i2 from w2 to n2 if both
// hold those (logical) values, and reports whether it did. One word
// (i1 == i2): its one read as w1 and w2, the one new word as n1 and n2.
//
// Claim: if true, at one instant inside the call word i1 held w1 and i2
// held w2, and they became n1 and n2. Proof: a K-CAS takes effect at its
// decision point, where every word it covers holds its old value
// (kcas.go); a word written back unchanged is compared all the same. One
// word: a CAS is one instant, and an unchanged word's one read is.
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

// matches counts w's slots holding fp, exactly: occupied has no borrow error.
func (l *layout) matches(w, fp uint64) int { return int(l.b) - l.occupied(w^fp*l.lo) }

// countCopies counts fp in b1 and b2 at one instant (unique.go.tmpl argues it).
func (f *Filter) countCopies(b1, b2, fp uint64) int {
	b1, b2 = searchPair(b1, b2)
	switch {
	case f.lay.packed && f.mode == Locked:
		return f.pkCountLocked(b1, b2, fp)
	case f.lay.packed:
		return f.pkCountLockFree(b1, b2, fp)
	case f.mode == Locked:
		return f.countLocked(b1, b2, fp)
	}
	return f.countLockFree(b1, b2, fp)
}
