package cuckoo

import "math/bits"

// Locked mode over the packed layout (packed.go): every change to a word
// holds the stripe lock of that word (the stripes are those of the words,
// b>>1), and lookups read without locks, as in locked.go.
//
// A relocation step stores the destination word (fingerprint added), then
// adds one to the destination bucket's version, then stores the source
// word (fingerprint removed), all under both words' locks; when both
// buckets share a word, one store moves the fingerprint and the version
// follows.
//
// Claim: an unlocked lookup that reads V(b1) at t0, b1's word at t1, b2's
// word at t2 and V(b1) again at t3 and sees neither fp nor a change of
// V(b1) may answer "absent" for every copy of fp present throughout
// [t0, t3]. Proof: a copy is in at least one of its buckets at every
// instant (the destination is stored before the source is cleared). Not
// in b1 at t1, so in b2 at t1; not in b2 at t2, so a step moving it from
// b2 to b1 stored b2 (the source) at some ts in (t1, t2). That step stored
// b1 (the destination) at td < ts; td > t1, for had b1 held the copy from
// td on, the read at t1 would have shown it, and no other step could take
// it out of b1 before ts, since this one holds b1's lock until after ts.
// The step's version add, to V(b1) since b1 is its destination, falls
// between td and ts, inside (t0, t3), so the two reads of V(b1) differ.
// When b1 and b2 share a word the lookup decides from one read of it. □
//
// InsertUnique and Count hold both words' locks, so their reads and
// writes are one instant; Delete (pkDeleteLocked, delete.go.tmpl) changes
// one word under its lock, or answers "absent" as the unlocked lookup
// does (the claim above) or with both locks held. With
// colliding keys, whose copies are interchangeable and whose first bucket
// may be the other's second, the lookup's b1 is the pair's lower bucket
// (searchPair) and Delete takes from b2 only after a read of b1 showed no
// copy, so the counting proof of twophase.go ("One order for every
// search") applies with the version in place of b1's counter.

// pkLockedWords locks the stripes of the words of b1 and b2.
func (f *Filter) pkLockedWords(b1, b2 uint64) lockGuard {
	return f.locks.lockBuckets(b1>>1, b2>>1)
}

// pkAddLocked puts fp into whichever of b1 and b2 has more slots that may
// take it (b1 on a tie) and reports whether it did; false means neither
// has such a slot. It follows the Locked add rule (locked.go, addLocked):
// it chooses from unlocked reads and locks only the chosen word's stripe.
// Under the lock it stores the choice as made when the word still holds
// the value it was made from (cheaper than recomputing it: BENCHMARKS.md,
// "Tuning constants"), and otherwise re-checks that the bucket still has a slot that may take fp;
// only when the choice went stale does it lock both words and choose
// again, as locked.go's addLocked does.
//
// Claim and proof: addLocked's. What is written is built from the read
// under the lock (the stored choice only when that read equals the
// unlocked one, bit for bit).
func (f *Filter) pkAddLocked(b1, b2, fp uint64) bool {
	w1, w2 := f.pkReadPair(b1, b2)
	b, wb, put := pkChoose(b1, b2, fp, w1, w2)
	if put == 0 {
		return false // neither has room (discovery reads them again)
	}
	g := f.locks.lockBuckets(b>>1, b>>1)
	w := f.t.words[b>>1].Load()
	ok := true
	if w == wb {
		// The word is what the choice was made from, so its put holds.
		f.t.words[b>>1].Store(w | put)
	} else if fr := pkFree(pkHalf(w, b), b, fp); fr != 0 {
		f.t.words[b>>1].Store(pkPut(w, b, fp, fr))
	} else {
		ok = false
	}
	f.locks.unlockBuckets(g)
	if ok {
		return true
	}
	g = f.pkLockedWords(b1, b2)
	ok = f.pkAddHeld(b1, b2, fp)
	f.locks.unlockBuckets(g)
	return ok
}

// pkAddHeld is pkAddLocked's work, with the locks held.
func (f *Filter) pkAddHeld(b1, b2, fp uint64) bool {
	w1, w2 := f.t.words[b1>>1].Load(), f.t.words[b2>>1].Load()
	b, w, put := pkChoose(b1, b2, fp, w1, w2)
	if put == 0 {
		return false
	}
	f.t.words[b>>1].Store(w | put)
	return true
}

// pkAddUniqueLocked is addUniqueLocked for the packed layout.
func (f *Filter) pkAddUniqueLocked(b1, b2, fp uint64) (present, added bool) {
	g := f.pkLockedWords(b1, b2)
	w1, w2 := f.t.words[b1>>1].Load(), f.t.words[b2>>1].Load()
	if pkHasEither(w1, w2, b1, b2, fp) {
		present = true
	} else {
		added = f.pkAddHeld(b1, b2, fp)
	}
	f.locks.unlockBuckets(g)
	return present, added
}

// pkCountLocked is countCopies for the packed layout in Locked mode: both
// buckets read under both words' locks.
func (f *Filter) pkCountLocked(b1, b2, fp uint64) int {
	g := f.pkLockedWords(b1, b2)
	w1, w2 := f.t.words[b1>>1].Load(), f.t.words[b2>>1].Load()
	f.locks.unlockBuckets(g)
	n := bits.OnesCount64(pkMatches(pkHalf(w1, b1), fp))
	if b2 != b1 {
		n += bits.OnesCount64(pkMatches(pkHalf(w2, b2), fp))
	}
	return n
}
