package cuckoo

// LockFree mode's writes: inserting into a free slot and resetting, each
// one single-word CAS on a bucket word. A word that holds a K-CAS
// reference is helped to completion first (kcas.go), so no writer waits for
// another. Delete is generated from delete.go.tmpl, relocations are in
// migrate.go, the lookup's two-phase search in twophase.go; locked.go is
// the mirror of this file for Locked mode.

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
		hookRead(&f.t, b1)
		w1 = f.t.words[b1].Load()
		hookRead(&f.t, b2)
		w2 = f.t.words[b2].Load()
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
