package cuckoo

// Locked mode: LockFree's table and relocation paths, with every write to a
// bucket word made under its stripe's MCS lock (mcs.go); a step holds both
// of its stripes. Words still go through sync/atomic, so path discovery and
// a lookup's first reads take no lock, and no word holds a K-CAS reference.
//
// Lookup reads b1 (t1), then b2 (t2); a read that shows fp answers
// "present". Else it reads b1 again (t3) and answers "absent" if that is
// bit for bit the first read and the wrap epoch of b1's stripe, read before
// t1, is unchanged after t3 (f.unchanged); else both under both locks.
//
// Claim: an unchanged b1 proves absence. Proof: a step stores its destination
// (fp added, counter bumped) before its source, so a copy is in one of its
// buckets at every instant. A copy present throughout and missed by both reads
// was in b2 at t1 and gone from b2 at t2: a step moved it b2 -> b1 within (t1,
// t2), storing b1 after t1 and bumping b1's counter, so the third read differs,
// unless the counter wrapped (2^c steps through b1). The epoch rules that out:
//
// Claim: if 2^c (c >= 1) steps through b1 fall within (t1, t3), the epoch
// of b1's stripe changes between its reads. Proof: one of them, W, takes
// b1's counter from its maximum to 0 and adds one to the epoch under its
// locks both before and after its stores. If W is not the first, the step
// before it released b1's lock after t1, so W's first add falls in (t1,
// t3); if W is the first, the next needs b1's lock, released after W's
// second add, which so falls in (t1, t3). (One add would not do: a step
// stalled holding the locks can add before the lookup and store after.)
//
// Colliding keys: b1 is the pair's lower bucket (searchPair) and Delete
// takes from b1 whenever its read of b1 shows fp, so the counting proof of
// twophase.go ("One order for every search") applies: an unchanged b1
// means copies entered b1 only by inserts and left b2 only by deletes.
//
// The Locked add rule (addLocked, add.go.tmpl; the growing filter's putLocked):
// choose the bucket from unlocked reads, lock only its word's stripe, and store
// into the word as read under the lock if the bucket still has room; else lock
// both and choose again. Claim: such an add takes effect at one instant for every
// other operation. Proof: every write to a word holds its stripe, so the store is
// the add's instant. Operations under both stripes (InsertUnique, Count, a locked
// lookup, a step, which checks room under them) fall wholly before or after it; a
// Locked Delete writes one word under its stripe; an unlocked lookup's claim is
// about steps, and an add only puts in a copy. The add writes no other word, so
// the other stripe would exclude nothing more. (A growing table's add also checks
// the word is unfrozen under the lock, which freezing takes.)

// resetLocked empties every bucket with all stripes held.
func (f *Filter) resetLocked() {
	f.locks.lockAll()
	for b := range f.t.words {
		w := f.t.words[b].Load()
		f.count.add(-int64(f.lay.occupied(w)))
		f.t.words[b].Store(w &^ f.lay.fpMask)
	}
	f.locks.unlockAll()
}

// LockStats returns the filter's LockStats (zero in LockFree mode), counted
// since its stripes were made: UnmarshalBinary and ReadFrom make new ones
// (Stats' event counters carry over; Reset keeps both).
func (f *Filter) LockStats() LockStats {
	if f.locks == nil {
		return LockStats{}
	}
	return f.locks.stats()
}

// RTMActive reports whether Locked-mode filters elide their locks with Intel
// RTM transactions on this machine: only if the processor advertises RTM
// (CPUID leaf 7, EBX bit 11) and does not force every transaction to abort
// (EDX bit 11, RTM_ALWAYS_ABORT), on amd64 builds without the purego tag and
// without the race detector. Otherwise Locked mode uses plain MCS locks.
func RTMActive() bool { return useRTM }

// LockStats reports how the critical sections of a Locked-mode filter ran.
// The counters only grow, and are read one by one while others update them:
// a snapshot taken during operations is approximate.
type LockStats struct {
	// Elided reports whether critical sections try RTM transactions before
	// taking locks; if not, the Tx counters and Fallbacks stay zero.
	Elided bool
	// TxCommits counts critical sections that committed as transactions.
	TxCommits uint64
	// TxAborts counts aborted transactions, retried ones included; the four
	// counters after it split it by XBEGIN's abort status: one of its stripes
	// held by an MCS holder (it aborted itself), another processor wrote (or
	// read, for a written line) a line it touched, its reads or writes
	// overflowed what the processor tracks, and the rest (interrupts, page
	// faults, system calls, aborts only marked as worth retrying).
	TxAborts, TxAbortsLockHeld, TxAbortsConflict, TxAbortsCapacity, TxAbortsOther uint64
	// Fallbacks counts critical sections that gave up elision for the locks.
	Fallbacks uint64
	// Waits counts acquisitions that queued for a held stripe, elision on or off.
	Waits uint64
}
