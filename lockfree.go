package cuckoo

// LockFree mode's writes: inserting into a free slot, deleting and resetting,
// each one single-word CAS on a bucket word. A word that holds a K-CAS
// reference is helped to completion first (kcas.go), so no writer waits for
// another. Relocations are in migrate.go, the lookup's two-phase search in
// twophase.go; locked.go is the mirror of this file for Locked mode.

// addEither puts fp into whichever of b1 and b2 holds fewer fingerprints
// (b1 on a tie) and reports whether it did; false means both are full.
// Choosing the emptier bucket (the power of two choices) keeps buckets even,
// so fewer inserts later need relocations (BENCHMARKS.md, "Tuning constants").
//
// w1 and w2 are the caller's reads of b1 and b2; a stale word only fails the
// CAS, and the choice is made again from fresh reads, so an InsertBatch
// places keys exactly as a loop of Inserts would. The swap compiles to
// conditional moves (which bucket is emptier is a coin toss, a branch on it
// mispredicts half the time) and put finds the slot without a branch. If the
// emptier bucket is full, so is the other.
func (f *Filter) addEither(b1, b2, fp, w1, w2 uint64) bool {
	l := &f.lay
	for {
		if (w1|w2)&tagMask == 0 {
			b, w := b1, w1
			if l.emptier(w2, w1) {
				b, w = b2, w2
			}
			nw, ok := l.put(w, fp)
			if !ok {
				return false
			}
			if f.t.cas(b, w, nw) {
				return true
			}
		} else {
			if w1&tagMask != 0 {
				f.helpWord(w1)
			}
			if w2&tagMask != 0 {
				f.helpWord(w2)
			}
		}
		w1, w2 = f.t.words[b1].Load(), f.t.words[b2].Load()
	}
}

// remove deletes one copy of fp from b1 or b2: the two-phase search finds a
// bucket holding it, then one CAS clears the slot. If the fingerprint left
// that bucket before the CAS the search runs again.
//
// The first attempt takes phase 1's two reads as they are: the bucket where
// the first read shows fp (b1 before b2, as find would answer) is chosen by
// conditional moves, since which bucket holds a key is a coin toss, and its
// word is cleared with one CAS. Anything else (fp in neither read, a lost
// CAS, a K-CAS in flight) takes the general loop.
func (f *Filter) remove(b1, b2, fp uint64) bool {
	l := &f.lay
	w1, w2 := f.readPair(b1, b2)
	if (w1|w2)&tagMask == 0 {
		// take changes a word exactly when the word holds fp.
		n1, _ := l.take(w1, fp)
		n2, _ := l.take(w2, fp)
		b, w, nw := b2, w2, n2
		if n1 != w1 {
			b, w, nw = b1, w1, n1
		}
		if nw != w && f.t.cas(b, w, nw) {
			return true
		}
	}
	for {
		b, ok := f.find(b1, b2, fp)
		if !ok {
			return false
		}
		for {
			w := f.t.words[b].Load()
			if w&tagMask != 0 {
				f.helpWord(w)
				continue
			}
			nw, ok := l.take(w, fp)
			if !ok {
				break // moved or deleted meanwhile: search again
			}
			if f.t.cas(b, w, nw) {
				return true
			}
		}
	}
}

// resetLockFree empties every bucket, one CAS per bucket, holding the
// snapshot gate so that no relocation runs during the sweep: a relocation
// could otherwise move a fingerprint from a bucket not yet swept into one
// already swept, and a key inserted before Reset would survive it. Inserts
// into free slots and deletes go on meanwhile; inserts that need to
// relocate wait for the sweep, which runs at memory speed.
func (f *Filter) resetLockFree() {
	f.gate.beginSnapshot()
	defer f.gate.endSnapshot()
	l := &f.lay
	for b := range uint64(len(f.t.words)) {
		for {
			w := f.t.words[b].Load()
			if w&tagMask != 0 {
				f.helpWord(w)
				continue
			}
			if f.t.cas(b, w, w&^l.fpMask) {
				f.count.add(-int64(l.occupied(w)))
				break
			}
		}
	}
}
