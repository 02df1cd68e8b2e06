package cuckoo

// Locked mode: the same table and the same relocation paths as LockFree, with
// every change and every lookup made under the MCS locks of the stripes of
// the buckets involved (mcs.go). Bucket words still go through sync/atomic, so
// path discovery can read them without locks; a word never holds a K-CAS
// reference in this mode.
//
// Linearizability: a lookup holds the locks of both of its buckets, and every
// write to a bucket (insert, delete, each relocation step, which takes the
// locks of its source and destination) holds that bucket's lock, so a lookup
// sees both buckets at one instant and needs no second phase. Path discovery
// runs without locks; each step re-validates under its locks that the
// fingerprint is still in the slot and the destination still has room, and
// otherwise the path is discovered again (migrate.go). Stripes are always
// taken in ascending order, so operations cannot deadlock.

// addLocked puts fp into an empty slot of b1 or else b2.
func (f *Filter) addLocked(b1, b2, fp uint64) bool {
	g := f.locks.lockBuckets(b1, b2)
	if f.lay.occupied(f.t.words[b2].Load()) < f.lay.occupied(f.t.words[b1].Load()) {
		b1, b2 = b2, b1 // the emptier bucket first, as in LockFree mode
	}
	ok := f.addHeld(b1, fp) || (b2 != b1 && f.addHeld(b2, fp))
	f.locks.unlockBuckets(g)
	return ok
}

// addHeld puts fp into an empty slot of b, whose stripe the caller holds.
func (f *Filter) addHeld(b, fp uint64) bool {
	w := f.t.words[b].Load()
	s := f.lay.emptySlot(w)
	if s < 0 {
		return false
	}
	f.t.words[b].Store(f.lay.setSlot(w, s, fp))
	return true
}

func (f *Filter) lookupLocked(b1, b2, fp uint64) bool {
	g := f.locks.lockBuckets(b1, b2)
	w1, w2 := f.t.words[b1].Load(), f.t.words[b2].Load()
	f.locks.unlockBuckets(g)
	return f.lay.contains(w1, fp) || f.lay.contains(w2, fp)
}

func (f *Filter) deleteLocked(b1, b2, fp uint64) bool {
	g := f.locks.lockBuckets(b1, b2)
	ok := f.deleteHeld(b1, fp) || f.deleteHeld(b2, fp)
	f.locks.unlockBuckets(g)
	return ok
}

func (f *Filter) deleteHeld(b, fp uint64) bool {
	w := f.t.words[b].Load()
	s := f.lay.match(w, fp)
	if s < 0 {
		return false
	}
	f.t.words[b].Store(f.lay.setSlot(w, s, 0))
	return true
}

// moveLocked is one relocation step: fp from slot s of src to an empty slot
// of dst, both counters bumped, under both stripes' locks.
func (f *Filter) moveLocked(src uint64, s int, fp uint64, dst uint64) bool {
	l := &f.lay
	g := f.locks.lockBuckets(src, dst)
	ws, wd := f.t.words[src].Load(), f.t.words[dst].Load()
	e := l.emptySlot(wd)
	ok := l.slot(ws, s) == fp && e >= 0
	if ok {
		f.t.words[src].Store(l.bumpCounter(l.setSlot(ws, s, 0)))
		f.t.words[dst].Store(l.bumpCounter(l.setSlot(wd, e, fp)))
	}
	f.locks.unlockBuckets(g)
	return ok
}

// resetLocked empties every bucket with all stripes held.
func (f *Filter) resetLocked() {
	g := f.locks.lockAll()
	for b := range f.t.words {
		w := f.t.words[b].Load()
		f.count.add(-int64(f.lay.occupied(w)))
		f.t.words[b].Store(w &^ f.lay.fpMask)
	}
	f.locks.unlockAll(g)
}

// LockStats reports how the critical sections of a Locked-mode filter ran:
// whether they are elided with RTM and how many transactions committed and
// aborted. It returns the zero LockStats in LockFree mode.
func (f *Filter) LockStats() LockStats {
	if f.locks == nil {
		return LockStats{}
	}
	return f.locks.stats()
}
