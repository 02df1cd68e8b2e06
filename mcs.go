package cuckoo

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Locked mode's locks: an MCS queue lock (Mellor-Crummey and Scott, TOCS 1991)
// per stripe of buckets, elided with Intel RTM where available (seeds/004,
// Listings 1.1 and 1.2). The lock word, lockStripe.tail, is 0 iff the stripe is
// free with nobody queued (elision treats any other value as held):
//
//	bit 0       held
//	bits 1..7   bypass: acquisitions that overtook the current head
//	bits 8..31  tail: the last queued waiter's node (index+1), 0 = none
//
// A waiter swaps a pool node into tail, links it into its predecessor's next
// and waits to be made head; the head takes held (resetting bypass) whenever
// held is clear, then leaves the queue. No FIFO hand-off, as a waiter handed
// the stripe may not be running (goroutines outnumber processors): a release
// clears held and wakes a parked head, and a running goroutine may barge in
// first while the bypass budget allows, as in sync.Mutex. Each step is one
// atomic operation on one word; Go's atomics are sequentially consistent.
//
// Mutual exclusion. Claim: at most one goroutine holds a stripe. Proof: only a
// CAS from held clear sets held, only the holder's release clears it, and the
// next holder's CAS reads that add (so the race detector sees the order).
//
// No lost wake-up. Claim: a head that blocks is woken by a release after it
// blocked; a queued waiter that blocks is woken once it is head and the stripe is
// released. Proof. A head h blocks only after it stored mcsHeadParked (P), then
// read held set (R), with lockStripe.head = h since before P (only h changes it,
// after winning). The add A clearing that held bit follows R, sees tail != 0 (h
// is queued), reads head after A, hence after P, finds h, and its CAS from
// mcsHeadParked (or another waker's) sends one token. A parked queued waiter q is
// made head by its predecessor p while p holds the stripe: p publishes q as head,
// then moves q to mcsHeadParked (or to mcsHead if q has not parked; q's park CAS
// then fails), and p's release wakes q as above. A wake channel never holds two
// tokens: only the CAS out of a parked state sends, and the owner receives before
// it can park again. A stale waker (it read head before that head left) can only
// wake a parked head early, which checks held again.
//
// Bounded bypass. Claim: while a waiter is head, at most maxBypass others
// take the stripe; a waiter queued behind p others takes it after at most
// (p+1)·maxBypass + p other acquisitions. Proof. Bypass is 0 when a waiter
// becomes head: it queued into an empty tail (a head's win resets bypass,
// and only barges while tail != 0 raise it), or its predecessor made it
// head, having reset bypass by winning and still holding the stripe. While
// it is head every other acquisition is a barge, which needs bypass <
// maxBypass and adds one; only the head's win resets it. The queue is FIFO.

const (
	// mcsLine pads what different processors spin on or write: two 64-byte
	// lines (Intel's spatial prefetcher pulls pairs; some arm64 lines are 128).
	mcsLine = 128
	// stripeLine, a stripe's size, is x/sys/cpu's line within [64, mcsLine]:
	// stripes are many, and an RTM transaction, which tracks 64-byte lines,
	// aborts only on writes to its own stripes.
	stripeLine = min(max(unsafe.Sizeof(cpu.CacheLinePad{}), 64), mcsLine)
	// A waiter checks mcsSpinIters times, then parks; it never yields: a holder
	// runs with preemption off for tens of nanoseconds, and a yield may give the
	// processor away for a time slice (BENCHMARKS.md, "Tuning constants").
	mcsSpinIters   = 1 << 13
	mcsMaxBypass   = 127 // fills the bypass field; a spent budget waits for a head, maybe parked
	mcsHeld        = 1 << 0
	mcsBypassShift = 1
	mcsBypassOne   = 1 << mcsBypassShift
	mcsBypassMask  = 0x7f << mcsBypassShift
	mcsTailShift   = 8
	mcsMaxNodes    = 1<<(32-mcsTailShift) - 1 // index+1 fits the tail field
	// States of a waiter's node; a parked one is blocked on its wake.
	mcsQueued         = 1 // waits to become head
	mcsQueuedParked   = 2
	mcsHead           = 3  // competes for the stripe
	mcsHeadParked     = 4  // until a release
	mcsMinStripes     = 64 // lockStripeCount
	mcsWordsPerStripe = 4096
)

// Abort causes counted apart (txCause); RTM's abort status bits (SDM names).
const (
	txCauseLockHeld = iota
	txCauseConflict
	txCauseCapacity
	txCauseOther
	txCauses
	txStarted       = 0xFFFFFFFF // xbegin's result when the transaction started
	txAbortExplicit = 1 << 0     // XABORT's code in bits 31:24
	txAbortRetry    = 1 << 1
	txAbortConflict = 1 << 2
	txAbortCapacity = 1 << 3
	txLockHeld      = 0xff // XABORT code of xabortLockHeld
	txMaxAttempts   = 4
)

// useRTM and usePin select elision (the race detector cannot see a
// transaction) and pinned sections for stripe sets created from now on.
var (
	useRTM = rtmSupported() && !raceEnabled
	usePin = true
)

// mcsNode is a pool node, alone on its cache lines.
type mcsNode struct {
	state atomic.Uint32 // mcsQueued ... mcsHeadParked while its owner waits
	next  atomic.Uint32 // successor's index+1, 0 = none yet; written once by it
	wake  chan struct{} // capacity 1; one send per CAS out of a parked state
	_     [mcsLine - 16]byte
}

// lockStripe is one stripe's queue lock, alone on its cache line.
type lockStripe struct {
	tail atomic.Uint32 // the lock word
	head atomic.Uint32 // the head's node (index+1), 0 = none or not yet published
	_    [stripeLine - 8]byte
}

// mcsShard is one share of the statistics, on its own cache lines.
type mcsShard struct {
	commits   atomic.Uint64
	aborts    [txCauses]atomic.Uint64 // by txCause
	fallbacks atomic.Uint64
	waits     atomic.Uint64 // acquisitions that queued
	_         [mcsLine - 24 - 8*txCauses]byte
}

func txCause(status uint32) int {
	switch {
	case status&txAbortExplicit != 0 && status>>24 == txLockHeld:
		return txCauseLockHeld
	case status&txAbortConflict != 0:
		return txCauseConflict
	case status&txAbortCapacity != 0:
		return txCauseCapacity
	}
	return txCauseOther
}

// stripedLocks guards a table's buckets with 2^k stripes, bucket b in stripe
// b & mask, taken in ascending order: no deadlock. It must not be copied.
type stripedLocks struct {
	mask      uint32 // stripes-1; read-only
	shardMask uint32 // len(shards)-1; read-only
	elide     bool   // useRTM when created; read-only
	maxBypass uint32 // mcsMaxBypass (tests lower it); read-only
	pin       bool   // usePin when created; read-only
	stripes   []lockStripe
	shards    []mcsShard
	pool      slotPool[mcsNode] // waiters' nodes, one free list per shard
}

// lockGuard records what lockBuckets took; holders keep no node.
type lockGuard struct {
	lo, hi uint32 // stripes, lo <= hi
	tx     bool   // inside an RTM transaction that unlockBuckets commits
}

// lockStripeCount returns the stripe count for nBuckets words at GOMAXPROCS
// procs: pow2(64·procs) within [64, 4096] (two random stripes per section,
// at most procs sections at once: collisions stay rare), above 64 at most
// one per 4,096 words (padding within 1/512 of the table whatever
// GOMAXPROCS is), and at most one per 8 words (TestSmallFiltersAreCheap).
func lockStripeCount(nBuckets, procs int) int {
	n := min(max(pow2(64*max(procs, 1)), mcsMinStripes), 4096)
	for n > mcsMinStripes && n*mcsWordsPerStripe > nBuckets {
		n /= 2
	}
	for n > 1 && n*8 > nBuckets {
		n /= 2
	}
	return n
}

// pow2 returns the smallest power of two >= x (1 for x <= 1).
func pow2(x int) int { return 1 << bits.Len(uint(max(x, 1)-1)) }

// newStripedLocks returns the locks for nBuckets buckets: 4 statistics
// shards per processor, at most 64, and at least 16 stripes each.
func newStripedLocks(nBuckets int) *stripedLocks {
	procs := runtime.GOMAXPROCS(0)
	n := lockStripeCount(nBuckets, procs)
	sh := min(pow2(4*procs), 64, max(n/16, 1))
	return &stripedLocks{
		mask:      uint32(n - 1),
		shardMask: uint32(sh - 1),
		elide:     useRTM,
		maxBypass: mcsMaxBypass,
		pin:       usePin,
		stripes:   make([]lockStripe, n),
		shards:    make([]mcsShard, sh),
		pool: slotPool[mcsNode]{heads: make([]poolHead, sh), limit: mcsMaxNodes, newChunk: func(c []mcsNode) {
			for i := range c {
				c[i].wake = make(chan struct{}, 1)
			}
		}},
	}
}

// lockBuckets locks the stripes of buckets a and b and returns the guard for
// unlockBuckets. The section must not lock again (it would deadlock on its
// own stripes) and should only read and write memory: it runs with preemption
// off (runtime.procPin, as sync.Pool does: a descheduled holder would keep
// its stripes for a time slice), or in a transaction that allocation, system
// calls and blocking abort, possibly more than once. Free stripes are taken
// inline (acquire's first step; in full for hi if it fails).
func (s *stripedLocks) lockBuckets(a, b uint64) lockGuard {
	lo, hi := uint32(a)&s.mask, uint32(b)&s.mask
	lo, hi = min(lo, hi), max(lo, hi)
	if s.pin && !s.elide && s.stripes[lo&s.mask].tail.CompareAndSwap(0, mcsHeld) {
		if hi != lo && !s.stripes[hi&s.mask].tail.CompareAndSwap(0, mcsHeld) {
			s.acquire(hi)
		}
		runtime_procPin()
		return lockGuard{lo: lo, hi: hi}
	}
	return s.lockStripes(lo, hi)
}

// lockStripes is lockBuckets of stripes lo <= hi, taken in ascending order.
func (s *stripedLocks) lockStripes(lo, hi uint32) lockGuard {
	if s.elide && s.elideBegin(lo, hi) {
		return lockGuard{lo: lo, hi: hi, tx: true}
	}
	s.acquire(lo)
	if hi != lo {
		s.acquire(hi)
	}
	if s.pin {
		runtime_procPin()
	}
	return lockGuard{lo: lo, hi: hi}
}

// unlockBuckets ends g's section, releasing inline (release's steps, hi first).
func (s *stripedLocks) unlockBuckets(g lockGuard) {
	if s.pin && !s.elide {
		runtime_procUnpin() // before a release may wake a waiter (a channel send)
		if g.hi != g.lo && s.stripes[g.hi&s.mask].tail.Add(^uint32(0)) >= 1<<mcsTailShift {
			s.wake(&s.stripes[g.hi&s.mask])
		}
		if s.stripes[g.lo&s.mask].tail.Add(^uint32(0)) >= 1<<mcsTailShift {
			s.wake(&s.stripes[g.lo&s.mask])
		}
		return
	}
	s.unlockStripes(g)
}

func (s *stripedLocks) unlockStripes(g lockGuard) {
	if g.tx {
		xend()
		s.shards[g.lo&s.shardMask].commits.Add(1)
		return
	}
	if s.pin {
		runtime_procUnpin() // before a release may wake a waiter (a channel send)
	}
	if g.hi != g.lo {
		s.release(g.hi)
	}
	s.release(g.lo)
}

//go:linkname runtime_procPin runtime.procPin
func runtime_procPin() int

//go:linkname runtime_procUnpin runtime.procUnpin
func runtime_procUnpin()

// lockAll locks every stripe in ascending order, neither elided nor pinned
// (Reset). The caller must hold no stripe.
func (s *stripedLocks) lockAll() {
	for i := range s.stripes {
		s.acquire(uint32(i))
	}
}
func (s *stripedLocks) unlockAll() {
	for i := len(s.stripes) - 1; i >= 0; i-- {
		s.release(uint32(i))
	}
}

func (s *stripedLocks) stats() LockStats {
	st := LockStats{Elided: s.elide}
	byCause := [txCauses]*uint64{&st.TxAbortsLockHeld, &st.TxAbortsConflict, &st.TxAbortsCapacity, &st.TxAbortsOther}
	for i := range s.shards {
		sh := &s.shards[i]
		st.TxCommits += sh.commits.Load()
		for c, p := range byCause {
			*p += sh.aborts[c].Load()
		}
		st.Fallbacks += sh.fallbacks.Load()
		st.Waits += sh.waits.Load()
	}
	st.TxAborts = st.TxAbortsLockHeld + st.TxAbortsConflict + st.TxAbortsCapacity + st.TxAbortsOther
	return st
}

// elideBegin returns true inside a transaction in which stripes lo and hi are
// free (unlockBuckets commits it), or false, outside any transaction, when
// the caller must take the MCS locks. The transaction reads both lock words,
// so a later MCS acquire, which always writes the word, aborts it. A
// retryable abort waits for free words and retries, up to txMaxAttempts in
// all; then the MCS locks, whose queue bounds every wait.
func (s *stripedLocks) elideBegin(lo, hi uint32) bool {
	sh := &s.shards[lo&s.shardMask]
	lw, hw := &s.stripes[lo].tail, &s.stripes[hi].tail
	for attempt := 1; ; attempt++ {
		status := xbegin()
		if status == txStarted {
			if lw.Load() != 0 || hw.Load() != 0 {
				xabortLockHeld() // resumes in xbegin
			}
			return true
		}
		sh.aborts[txCause(status)].Add(1)
		if !txRetryable(status) || attempt >= txMaxAttempts || !awaitFree(lw, hw) {
			break
		}
	}
	sh.fallbacks.Add(1)
	return false
}

// awaitFree reports whether lw and hw became free within mcsSpinIters
// checks and one yield (for a holder that is not running, such as lockAll's):
// under a steady stream of MCS holders tail may never be 0.
func awaitFree(lw, hw *atomic.Uint32) bool {
	for k := 0; lw.Load() != 0 || hw.Load() != 0; k++ {
		if k == mcsSpinIters {
			runtime.Gosched()
		} else if k > mcsSpinIters {
			return false
		}
	}
	return true
}

// txRetryable reports whether an abort with status may commit if retried.
func txRetryable(status uint32) bool {
	if status&txAbortExplicit != 0 {
		return status>>24 == txLockHeld
	}
	return status&(txAbortRetry|txAbortConflict) != 0
}

func (s *stripedLocks) acquire(i uint32) {
	st := &s.stripes[i]
	s.step(mcsSiteWord, 0)
	if !st.tail.CompareAndSwap(0, mcsHeld) {
		s.acquireSlow(st, i)
	}
}

func (s *stripedLocks) acquireSlow(st *lockStripe, i uint32) {
	home := uint(i & s.shardMask)
	var me uint32 // our node once leased
	for {
		s.step(mcsSiteWord, 0)
		w := st.tail.Load()
		queued := w >= 1<<mcsTailShift
		if w&mcsHeld == 0 && (!queued || w&mcsBypassMask < s.maxBypass<<mcsBypassShift) {
			nw := w | mcsHeld
			if queued {
				nw += mcsBypassOne
			}
			s.step(mcsSiteWord, 0)
			if st.tail.CompareAndSwap(w, nw) {
				break
			}
		} else if me == 0 { // lease a node, then read the word again
			me = s.pool.lease(home)
			n := s.pool.item(me)
			n.next.Store(0)
			n.state.Store(mcsQueued) // before queuing: the predecessor may make us head at once
		} else {
			s.step(mcsSiteWord, 0)
			if st.tail.CompareAndSwap(w, w&(1<<mcsTailShift-1)|me<<mcsTailShift) {
				s.shards[home].waits.Add(1)
				s.await(st, me, w>>mcsTailShift)
				break
			}
		}
	}
	if me != 0 {
		s.pool.release(home, me)
	}
}

// await runs the waiter of node me, queued behind prev (0: none, head at
// once), until it holds the stripe and has left the queue.
func (s *stripedLocks) await(st *lockStripe, me, prev uint32) {
	n := s.pool.item(me)
	if prev != 0 {
		s.step(mcsSiteNode, prev)
		s.pool.item(prev).next.Store(me)
		for k := 0; ; k++ {
			s.step(mcsSiteNode, me)
			if n.state.Load() != mcsQueued {
				break // made head
			}
			if !s.patient(k, me) && s.casState(n, me, mcsQueued, mcsQueuedParked) {
				s.step(mcsSitePark, me)
				<-n.wake // the predecessor makes us mcsHeadParked; its release wakes us
				break
			}
		}
	} else {
		s.step(mcsSiteNode, me)
		n.state.Store(mcsHead)
		s.step(mcsSiteHead, me)
		st.head.Store(me) // before we can park: releasers wake the node named here
	}
	s.compete(st, n, me)
	s.leave(st, n, me)
}

// compete runs the head until it wins the stripe.
func (s *stripedLocks) compete(st *lockStripe, n *mcsNode, me uint32) {
	for k := 0; ; k++ {
		s.step(mcsSiteWord, me)
		w := st.tail.Load()
		if w&mcsHeld == 0 {
			s.step(mcsSiteWord, me)
			if st.tail.CompareAndSwap(w, w&^mcsBypassMask|mcsHeld) {
				return
			}
		} else if !s.patient(k, me) {
			k = -1 // patient again once awake
			s.step(mcsSiteNode, me)
			n.state.Store(mcsHeadParked) // only wakers change it, and only from mcsHeadParked
			// A release that cleared held before that store may not have seen us parked.
			s.step(mcsSiteWord, 0)
			if st.tail.Load()&mcsHeld == 0 && s.casState(n, me, mcsHeadParked, mcsHead) {
				continue // nobody will wake us: compete now
			}
			s.step(mcsSitePark, me)
			<-n.wake // a waker set mcsHead before sending
		}
	}
}

// leave dequeues the head, which holds the stripe: a successor becomes head.
func (s *stripedLocks) leave(st *lockStripe, n *mcsNode, me uint32) {
	s.step(mcsSiteNode, me)
	succ := n.next.Load()
	if succ == 0 {
		s.step(mcsSiteHead, 0)
		st.head.Store(0) // before the CAS: a newcomer may become head right after it
		s.step(mcsSiteWord, 0)
		// Bypass is 0: our win reset it, and nobody barges while we hold.
		if st.tail.CompareAndSwap(me<<mcsTailShift|mcsHeld, mcsHeld) {
			return
		}
		// A successor swapped itself into tail: await its link.
		for k := 0; succ == 0; k++ {
			if k > mcsSpinIters {
				runtime.Gosched()
			}
			s.step(mcsSiteSpin, me)
			succ = n.next.Load()
		}
	}
	s.step(mcsSiteHead, succ)
	st.head.Store(succ) // before our release reads it
	// Make it head; if parked, it sleeps until our release wakes it.
	sn := s.pool.item(succ)
	for !s.casState(sn, succ, mcsQueued, mcsHead) && !s.casState(sn, succ, mcsQueuedParked, mcsHeadParked) {
	}
}

func (s *stripedLocks) release(i uint32) {
	st := &s.stripes[i]
	s.step(mcsSiteWord, 0)
	if st.tail.Add(^uint32(0)) >= 1<<mcsTailShift { // clears held
		s.wake(st)
	}
}

// wake wakes st's head if parked, after a release found the queue non-empty.
func (s *stripedLocks) wake(st *lockStripe) {
	s.step(mcsSiteHead, 0)
	h := st.head.Load()
	if h == 0 {
		return // a newcomer head not yet published checks held after publishing
	}
	if n := s.pool.item(h); s.casState(n, h, mcsHeadParked, mcsHead) {
		s.step(mcsSiteWake, h)
		n.wake <- struct{}{} // never blocks: one send per park, capacity 1
	}
}

// casState is a step: a CAS of node n (v)'s state from old to new.
func (s *stripedLocks) casState(n *mcsNode, v, old, new uint32) bool {
	s.step(mcsSiteNode, v)
	return n.state.CompareAndSwap(old, new)
}

// patient reports whether a waiter that checked k times should keep checking.
func (s *stripedLocks) patient(k int, me uint32) bool {
	if d := s.step(mcsSiteWait, me); d >= 0 {
		return d == 1 // race builds: the scheduler decides
	}
	return k < mcsSpinIters
}

// mcsSteps, in race builds, is called before every step of the lock that
// touches shared memory and at every waiter's choice to check again or park
// (TestMCSStateMachine). It returns -1 for stripe sets not its own; for its
// own it may block, and at mcsSiteWait returns 1 (check again) or 0 (park).
var mcsSteps atomic.Pointer[func(s *stripedLocks, site mcsSite, v uint32) int]

// mcsSite names a scheduling point; v is the node involved, or 0.
type mcsSite uint8

const (
	mcsSiteWord mcsSite = iota // an operation on the lock word (v: the head's node in compete)
	mcsSiteHead                // a load or store of lockStripe.head
	mcsSiteNode                // an operation on node v's state or link
	mcsSiteWait                // node v's owner chooses: check again or park
	mcsSiteSpin                // node v's owner checks again (it never parks here)
	mcsSitePark                // node v's owner blocks on its wake channel
	mcsSiteWake                // a waker sends a token to node v
)

// step calls mcsSteps, if set; it compiles to nothing outside race builds.
func (s *stripedLocks) step(site mcsSite, v uint32) int {
	if raceEnabled {
		if h := mcsSteps.Load(); h != nil {
			return (*h)(s, site, v)
		}
	}
	return -1
}
