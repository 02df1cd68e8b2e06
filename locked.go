package cuckoo

// Locked mode: the same table and the same relocation paths as LockFree, with
// every change made under the MCS locks of the stripes of the buckets
// involved (mcs.go). Bucket words still go through sync/atomic, so path
// discovery and the first reads of a lookup need no locks; a word never
// holds a K-CAS reference in this mode.
//
// Linearizability: every write to a bucket (insert, delete, each relocation
// step, which takes the locks of its source and destination) holds that
// bucket's lock. A lookup first reads b1, then b2, without locks; a read
// that shows the fingerprint is a linearization point for "present" (a word
// is always written whole, by one atomic store). If neither does, it reads
// b1 again: if that word is bit for bit what the first read returned, it
// answers "absent", else it takes both locks and reads both buckets at one
// instant.
//
// Why an unchanged b1 proves absence: a relocation step stores the
// destination (fingerprint added, counter bumped) before it stores the
// source (fingerprint removed, counter bumped), so a fingerprint is in at
// least one of its buckets at every instant. Suppose a copy was in the
// filter throughout the three reads (t1 < t2 < t3) and both first reads
// missed it. Not in b1 at t1, so in b2 at t1; not in b2 at t2, so a step
// moved it b2 -> b1 and cleared b2 within (t1, t2), having stored b1 after
// t1. That store bumped b1's counter inside (t1, t3), so the third read
// differs from the first, unless b1's counter wrapped around to the same
// value (2^c relocations through b1, c counter bits). The lookup rules
// that out with the wrap epoch of b1's stripe (twophase.go, "Counter
// wraps"), read before t1 and again after t3 (f.unchanged).
//
// Claim: if 2^c (c >= 1) relocation steps through b1 fall within (t1, t3),
// the epoch of b1's stripe changes between its two reads. Proof: one of
// those steps, W, takes b1's counter from its maximum to 0, and adds one
// to the epoch of b1's stripe under its locks before its stores and again
// after them. If W is not the first of the steps, the step before it
// released b1's lock after t1 and W took it after that, so W's first add
// falls within (t1, t3). If W is the first, the step after it needs b1's
// lock, which W releases only after its second add, so that add falls
// within (t1, t3). Either way the two epoch reads
// differ, and the lookup takes the locks instead of answering. (One add
// would not do: the first add of a step that stalls while holding the locks
// can precede the lookup; its second add can follow it.)
//
// Colliding keys. The lookup's b1 is the pair's lower bucket (searchPair),
// and Delete takes from b1 whenever its read of b1 (unlocked, or under
// both locks) shows the fingerprint, so the counting proof of twophase.go
// ("One order for every search") applies: an unchanged b1 means no step
// moved a copy into b1 during the lookup, so copies entered b1 only by
// inserts and left b2 only by deletes, and a lookup does not answer
// "absent" while one insert of the key from before it is not undone by a
// Delete of the key. (A step stores b2's copy into b1 before clearing b2;
// a copy in both only helps a read find it.)
//
// Path discovery runs without locks; each step re-validates under its locks
// that the fingerprint is still in the slot and the destination still has
// room, and otherwise the path is discovered again (migrate.go). Stripes are
// always taken in ascending order, so operations cannot deadlock.

// addLocked puts fp into the emptier of b1 and b2 (b1 on a tie) and reports
// whether it did; false means both are full.
//
// It follows the Locked add rule, which every Locked add of a free slot
// follows (this one, pkAddLocked, and the growing filter's putLocked):
// choose the bucket from unlocked reads, lock only the stripe of the word
// the bucket is in, and store fp into that word as read under the lock if
// the bucket still has room; only when it has none, lock both stripes and
// choose again.
//
// Claim: such an add takes effect at one instant for every other
// operation, so InsertUnique, Count, Delete and Lookup stay linearizable
// against it. Proof. Every write to a word holds the word's stripe (the
// top of this file), so between the add's read under the lock and its
// store nothing writes the word: no update is lost, and the store is the
// add's instant. InsertUnique, Count and a lookup under locks hold the
// stripes of both of their words, the add's among them, so the add falls
// wholly before or after their critical section, whose reads are one
// instant; a Locked Delete that holds one stripe writes one word under it,
// so it and the add are ordered by that stripe or touch different words. An unlocked lookup's claim (the top of this file) is about
// relocation steps; an add only puts in a copy, which a read can only
// find. A relocation step holds both of its stripes and checks the
// destination's room under them. The other bucket's stripe would exclude
// nothing more: the add writes no other word, and its read of the other
// word only chose where fp goes, which any answer does correctly. So one
// stripe is the rule: holding both would double every insert's lock
// traffic. (A growing table's add also checks under the lock that the
// word is not frozen; freezing holds the word's stripe.)
func (f *Filter) addLocked(b1, b2, fp uint64) bool {
	l := &f.lay
	w1, w2 := f.t.words[b1].Load(), f.t.words[b2].Load()
	b, w := b1, w1
	if l.emptier(w2, w1) {
		b, w = b2, w2
	}
	if l.emptySlot(w) < 0 {
		return false // both full (discovery reads them again)
	}
	g := f.locks.lockBuckets(b, b)
	ok := f.addHeld(b, fp)
	f.locks.unlockBuckets(g)
	if ok {
		return true
	}
	g = f.locks.lockBuckets(b1, b2)
	if l.emptier(f.t.words[b2].Load(), f.t.words[b1].Load()) {
		b1, b2 = b2, b1 // the emptier bucket first, as in LockFree mode
	}
	ok = f.addHeld(b1, fp) || (b2 != b1 && f.addHeld(b2, fp))
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
// whether they are elided with RTM, how many transactions committed and
// aborted, and how often a goroutine queued for a held lock. It returns
// the zero LockStats in LockFree mode. The counts belong to the filter's
// lock stripes: UnmarshalBinary and ReadFrom, which give the filter new
// stripes sized for the loaded table, start them over (Stats' event
// counters carry over; Reset keeps both).
func (f *Filter) LockStats() LockStats {
	if f.locks == nil {
		return LockStats{}
	}
	return f.locks.stats()
}

// RTMActive reports whether Locked-mode filters elide their locks with Intel
// RTM transactions on this machine. It is true only if the processor
// advertises RTM (CPUID leaf 7, EBX bit 11) and does not force every
// transaction to abort (EDX bit 11, RTM_ALWAYS_ABORT), on amd64 builds without
// the purego tag and without the race detector. When it is false, Locked
// mode uses plain MCS queue locks.
func RTMActive() bool { return useRTM }

// LockStats reports how the critical sections of a Locked-mode filter ran.
// The counters only grow; they are read one by one while other goroutines
// may be updating them, so a snapshot taken during operations is
// approximate.
type LockStats struct {
	// Elided reports whether critical sections try RTM transactions before
	// taking locks. When it is false the transaction counters (Tx...) and
	// Fallbacks stay zero; Waits, which counts lock acquisitions, does not.
	Elided bool
	// TxCommits counts critical sections that committed as transactions.
	TxCommits uint64
	// TxAborts counts aborted transactions, including retried ones. The
	// four counters after it split it by the cause the processor reported
	// (the abort status of XBEGIN); they sum to TxAborts.
	TxAborts uint64
	// TxAbortsLockHeld counts transactions that found one of their stripes
	// locked by a goroutine that took the MCS lock, and aborted themselves.
	TxAbortsLockHeld uint64
	// TxAbortsConflict counts transactions aborted because another
	// processor wrote (or read, for a written line) a cache line they had
	// touched.
	TxAbortsConflict uint64
	// TxAbortsCapacity counts transactions whose reads or writes overflowed
	// what the processor can track.
	TxAbortsCapacity uint64
	// TxAbortsOther counts aborts with none of those causes: interrupts,
	// page faults, system calls, and aborts the processor only marked as
	// worth retrying.
	TxAbortsOther uint64
	// Fallbacks counts critical sections that gave up on elision and took
	// the MCS locks.
	Fallbacks uint64
	// Waits counts lock acquisitions that found the stripe held and
	// queued for it, whether or not elision is on.
	Waits uint64
}
