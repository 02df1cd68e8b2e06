package cuckoo

// LockFree mode's single-word writes: insert into a free slot, and Reset.
// A word holding a K-CAS reference is helped first (kcas.go), so no writer
// waits for another. locked.go is this file's mirror for Locked mode.

// addEither puts fp into the emptier of b1 and b2 (b1 on a tie: the power
// of two choices keeps buckets even; BENCHMARKS.md, "Tuning constants") and
// reports whether it did; if the emptier is full, so is the other. w1 and
// w2 are the caller's reads: a stale one only fails the CAS, and the choice
// is made again from fresh reads, so InsertBatch places keys as a loop of
// Inserts would. The choice compiles to conditional moves (a branch on a
// coin toss mispredicts half the time).
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

// resetLockFree empties every bucket, one CAS each, holding the snapshot
// gate: a relocation could otherwise move a fingerprint from an unswept
// bucket into a swept one, and a key inserted before Reset would survive it.
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
