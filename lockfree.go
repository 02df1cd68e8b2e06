package cuckoo

// LockFree writes (add.go.tmpl, delete.go.tmpl, migrate.go) are CASes and
// K-CASes of bucket words; a writer that finds a K-CAS reference helps it
// to completion first (kcas.go), so no writer waits for another.

// resetLockFree empties every bucket, one CAS each, under the snapshot
// gate: a relocation during the sweep could move a fingerprint from an
// unswept bucket into a swept one, and a key inserted before Reset would
// survive it. Adds and deletes go on meanwhile.
func (f *Filter) resetLockFree() {
	f.gate.beginSnapshot()
	defer f.gate.endSnapshot()
	l := &f.lay
	for b := range uint64(len(f.t.words)) {
		w := f.t.words[b].Load()
		for w&tagMask != 0 || !f.t.cas(b, w, w&^l.fpMask) {
			if w&tagMask != 0 {
				f.helpWord(w)
			}
			w = f.t.words[b].Load()
		}
		f.count.add(-int64(l.occupied(w)))
	}
}
