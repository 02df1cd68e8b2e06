package cuckoo

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// This file implements the locks of Locked mode: Mellor-Crummey and Scott's
// queue lock ("Algorithms for Scalable Synchronization on Shared-Memory
// Multiprocessors", TOCS 1991), one per stripe of buckets, elided with Intel
// RTM transactions where the processor supports them (the speculative MCS
// lock of Listings 1.1 and 1.2 in seeds/004).
//
// MCS. A stripe's lock word is the tail of a queue of nodes, one per waiting
// goroutine. To wait, a goroutine sets its node's locked flag, swaps the
// node into the tail and, if there was a predecessor, links itself into the
// predecessor's next field and spins on its own flag, on its own cache line.
// To release, the holder grants the lock to its successor by clearing the
// successor's flag (FIFO hand-off) or, having none, CASes the tail back to
// empty; if that CAS fails a successor is between its swap and its link, and
// the holder waits for the link.
//
// The stripe is the holder's node (the K42 variant of MCS, Auslander et al.).
// In the classic lock the holder keeps its node until it releases. Here the
// stripe embeds a node's next field, and the tail value mcsSelf names it: an
// uncontended acquire is one CAS of the tail from empty to mcsSelf and an
// uncontended release one CAS back, with no node at all. A goroutine that
// must wait leases a pool node, queues it as above, and once granted moves
// its place in the queue onto the stripe: it copies its node's successor
// link into the stripe's next field, or, with no successor yet, clears that
// field and CASes the tail from its node to mcsSelf (if a newcomer swapped
// in first it waits for the newcomer's link and copies it). Then nothing
// refers to its node any more and it goes back to the pool at once. So only
// waiters hold nodes, uncontended sections never touch the pool, and a
// critical section needs no node (lockGuard records none). Invariant: when
// the tail is empty the stripe's next field is 0 (it is cleared before any
// CAS to mcsSelf, and the only CAS to empty follows a read of 0).
//
// Ordering. Every hand-off is an atomic read-modify-write or store observed
// by an atomic load of the same word (the grant on the successor's flag,
// the CASes and swaps on the tail), so everything a holder did
// happens-before everything the next holder does, also for the race
// detector.
//
// No pointers in integers. Nodes live in tables owned by the stripe set and
// are named by uint32 index+1 (0 is nil, mcsSelf the stripe itself), so lock
// words and links are plain atomic integers the garbage collector need not
// see.
//
// Node pool. Waiters' nodes come from a slotPool (pool.go, which gives the
// chunk layout and the free lists' ABA argument), with one free list per
// shard. A waiter leases its node from the shard of the stripe it waits for
// and returns it there, so waiters on different stripes rarely share a
// free-list head. The pool grows only when more goroutines than ever
// before wait at once (each waits for one stripe at a time), and steady
// state allocates nothing. Node indices stay below 2^31 (the pool's
// chunks), so index+1 never reaches mcsSelf.

const (
	// mcsLine is the padding unit for everything that is spun on or
	// written by different processors: 128 bytes, two 64-byte lines,
	// because Intel's spatial prefetcher pulls lines in pairs and some
	// arm64 cores have 128-byte lines (Listing 1.1 pads to 128 as well).
	mcsLine = 128

	// stripeLine is the size of a lock stripe: one cache line of the
	// architecture as x/sys/cpu pads (64 bytes on amd64, 128 on arm64),
	// kept within [64, mcsLine] (x/sys/cpu pads 0 bytes on wasm and 256
	// on s390x).
	// Stripes are many (64 per processor), so their padding is most of
	// Locked mode's memory; one line per stripe is what keeps two stripes
	// from sharing a line, and an RTM transaction, which tracks its reads
	// by 64-byte line, is aborted only by writes to its own stripes' lines,
	// not by the spatial prefetcher's neighbour. Nobody spins on a stripe:
	// waiters spin on their own nodes (mcsLine).
	stripeLine = min(max(unsafe.Sizeof(cpu.CacheLinePad{}), 64), mcsLine)

	// mcsSpinIters and mcsYieldIters tune how a goroutine waits for a lock.
	//
	// Spin, yield, park. A waiter spins on its own node's locked flag (a
	// load that hits its own cache line, so spinning slows nobody else down)
	// for mcsSpinIters checks, a microsecond or so: long enough for the
	// holder's critical section (two bucket words, tens of nanoseconds) plus
	// the hand-offs of a few waiters ahead, so waiters usually get the lock
	// without leaving the processor. Then it calls runtime.Gosched before
	// each of the next mcsYieldIters checks. Measured with the comparison
	// module (bench/, 1M keys, Locked f=12; BENCHMARKS.md, "Figures behind
	// code comments"): 1024 spins and 4 yields made lookups at 64 goroutines
	// about 3 times faster than 32 spins and 16 yields, and matched them at 2
	// goroutines. Parking right after
	// spinning (no yields) halved the 2-goroutine rate: a park and wake costs
	// microseconds, which rare collisions at 2 goroutines then pay in full.
	// Goroutines can outnumber processors, and the holder, or the waiter the
	// lock was just handed to, may be descheduled; a waiter that kept
	// spinning would burn the processor that goroutine needs until the
	// scheduler preempts it (10ms). Gosched lets it run, and when nothing else
	// is runnable it returns almost at once. A waiter still not served after
	// that is deep in a queue, or the holder is not running: it marks its
	// node parked (CAS mcsWaiting to mcsParked) and blocks on the node's wake
	// channel; the releaser that hands it the lock sees the mark and wakes it.
	// Parking matters once waiters outnumber processors: with 256 goroutines
	// queued on one stripe and GOMAXPROCS=2, waiters that only yielded kept
	// the run queue 256 deep, so each hand-off waited for a whole round of
	// yields before the new holder ran (TestMCSMutualExclusion,
	// pairs=fixed/goroutines=256); parked waiters leave the run queue to the
	// goroutines that can make progress, a woken one runs next on its waker's
	// processor, and the same test takes about 470 times less per section
	// (BENCHMARKS.md, "Figures behind code comments").
	//
	// Fairness. Neither yielding nor parking gives up the queue position: the
	// node stays linked, the holder hands the lock to its successor by
	// setting the successor's flag to mcsGranted whether or not that
	// goroutine is running, and a new arrival can only join at the tail (the
	// uncontended CAS succeeds only on an empty tail, so it overtakes nobody).
	// The acquisition order is the order of the goroutines' atomic operations
	// on the tail word (FIFO), whoever spins and whoever sleeps. The price is the queue lock's convoy: while a
	// successor that was handed the lock waits for a processor the stripe
	// stays idle; yielding and waking bound that to a scheduling round
	// rather than a preemption slice. A releaser waiting for its successor to
	// link itself (a few instructions after the successor's swap) spins and
	// then yields, without parking; an elision attempt waiting for a stripe
	// to be free spins and yields as a waiter does, then joins the queue. Go
	// has no portable PAUSE, so a spin is a plain load loop.
	mcsSpinIters  = 1024
	mcsYieldIters = 4

	// Values of a node's locked flag.
	mcsGranted = 0 // the lock was handed over (or never waited for)
	mcsWaiting = 1 // the owner waits, spinning or yielding
	mcsParked  = 2 // the owner waits blocked on the node's wake channel

	// Stripe count (see lockStripeCount): mcsStripesPerProc stripes per
	// GOMAXPROCS, at least mcsMinStripes and at most mcsMaxStripes, never
	// more than one per 8 buckets, and above mcsMinStripes no more than
	// one per mcsWordsPerStripe words of the table.
	mcsStripesPerProc = 64
	mcsMinStripes     = 64
	mcsMaxStripes     = 4096
	mcsWordsPerStripe = 4096

	// Free-list shards: mcsShardsPerProc per GOMAXPROCS, at most
	// mcsMaxShards, never more than one per mcsStripesPerShard stripes.
	mcsShardsPerProc   = 4
	mcsMaxShards       = 64
	mcsStripesPerShard = 16

	// mcsSelf is the tail value naming the stripe itself as the holder's
	// node. Pool indices+1 stay below 2^31.
	mcsSelf = 0xFFFFFFFF
)

// RTM elision (Listing 1.1 and 1.2). lockBuckets starts a transaction, reads
// the lock words of its stripes inside it and aborts with code txLockHeld if
// either is held; otherwise it returns with the transaction open, the
// critical section runs speculatively, and unlockBuckets commits it with
// XEND. A lock word read inside the transaction is in its read set, so a
// goroutine that later takes the lock the ordinary way aborts the
// transaction: elided and MCS sections exclude each other, and two elided
// sections that touch the same bucket words conflict and abort one another.
// An abort discards every memory write of the section and resumes execution
// inside xbegin, so lockBuckets returns again, this time with the abort
// status; the section may thus run several times, and only its last run takes
// effect. On an abort that may succeed on retry (the RETRY or CONFLICT bit,
// or our explicit lock-held abort) the goroutine waits a while for both lock
// words to be free, as Listing 1.1 does, and tries again, at most
// txMaxAttempts times in all; on any other abort (capacity, interrupt,
// system call), when the attempts are used up, or when the locks stay held
// it takes the MCS locks. The bound keeps a section
// that can never commit from looping, and the FIFO queue behind it bounds
// every goroutine's wait. An MCS acquire always writes the lock word, so
// transactions never delay an MCS holder: they abort.
const (
	txStarted       = 0xFFFFFFFF // xbegin result when the transaction started
	txAbortExplicit = 1 << 0     // XABORT executed; code in bits 31:24
	txAbortRetry    = 1 << 1     // the transaction may succeed on retry
	txAbortConflict = 1 << 2     // another processor touched the read or write set
	txAbortCapacity = 1 << 3     // the read or write set overflowed
	txLockHeld      = 0xff       // XABORT code of xabortLockHeld
	txMaxAttempts   = 4
)

// useRTM selects RTM lock elision for stripe sets created from now on. It is
// a variable so tests can turn elision off (and, only on processors with RTM,
// on) and restore it. The race detector cannot see the synchronization of a
// hardware transaction, so race builds never elide.
var useRTM = rtmSupported() && !raceEnabled

// mcsNode is a pool node, alone on its cache lines.
type mcsNode struct {
	locked atomic.Uint32 // mcsWaiting or mcsParked while its owner waits; the predecessor sets mcsGranted
	next   atomic.Uint32 // successor's index+1, 0 = none yet; written once by the successor
	wake   chan struct{} // capacity 1; the predecessor sends once if it found mcsParked; set at creation
	_      [mcsLine - 16]byte
}

// lockStripe is one stripe's MCS lock, alone on its cache lines.
type lockStripe struct {
	tail atomic.Uint32 // index+1 of the last queued node, mcsSelf = the holder without waiters, 0 = free
	next atomic.Uint32 // the holder's successor (index+1), 0 = none yet; see the K42 note above
	_    [stripeLine - 8]byte
}

// mcsShard is one share of the statistics counters, on its own cache
// lines (the free lists of pool nodes are the pool's).
type mcsShard struct {
	commits   atomic.Uint64
	aborts    [txCauses]atomic.Uint64 // by cause: txCause
	fallbacks atomic.Uint64
	waits     atomic.Uint64 // acquisitions that queued (acquireSlow)
	_         [mcsLine - 24 - 8*txCauses]byte
}

// Abort causes, as counted in mcsShard.aborts.
const (
	txCauseLockHeld = iota
	txCauseConflict
	txCauseCapacity
	txCauseOther
	txCauses
)

// txCause classifies an abort status: our own lock-held XABORT first, then
// the processor's CONFLICT and CAPACITY bits, and anything else as other.
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

// stripedLocks guards the buckets of a table with a power-of-two number of
// MCS queue locks (stripes); bucket b belongs to stripe b & (stripes-1).
// Goroutines lock one or two stripes in ascending order, or all of them in
// ascending order, so they cannot deadlock. Create one with
// newStripedLocks; it must not be copied.
type stripedLocks struct {
	mask      uint32 // stripes-1; read-only
	shardMask uint32 // len(shards)-1; read-only
	elide     bool   // try RTM first (useRTM when created); read-only
	stripes   []lockStripe
	shards    []mcsShard

	pool slotPool[mcsNode] // waiters' queue nodes, one free list per shard (pool.go)
}

// lockGuard records what lockBuckets took, for unlockBuckets. Holders keep
// no MCS node (the stripe is the holder's node), so there is none to record.
type lockGuard struct {
	lo, hi uint32 // stripes, lo <= hi; hi == lo when both buckets share a stripe
	tx     bool   // the section runs inside an RTM transaction that unlockBuckets commits
}

// lockGuardAll records that lockAll took every stripe, for unlockAll.
type lockGuardAll struct {
	n int // stripes held
}

// lockStripeCount returns the number of stripes for a table of nBuckets
// words when GOMAXPROCS is procs: nextPow2(64·procs) clamped to
// [64, 4096], above 64 no more than one per 4,096 words, and no more than
// one per 8 words. At most procs goroutines run critical sections at once,
// each holding two random stripes, so with 64 stripes per processor a
// section finds one of its stripes taken only a few percent of the time;
// more stripes would mostly cost memory (stripeLine bytes each: 64 on
// amd64, at most 256 KiB there, 512 KiB with 128-byte lines)
// and cache misses. A power of two makes the bucket-to-stripe map a mask.
//
// The bound by table size keeps the stripes' padding within 1/512 of the
// table (64-byte lines) whatever GOMAXPROCS is, so a class's bits per key
// hold on any machine: a 1M-key filter (about 2^18 words in the four-slot
// layouts) has 64 stripes, 4 KiB, where 64 per P gave it 1,024 (64 KiB,
// 0.5 bits per key) at GOMAXPROCS=16. The price is contention on many
// processors: a section holds two of the 64 stripes, so with 16 writers in
// sections at once the other 15 hold on average 2·2·15/64 ≈ 0.9 of a
// section's two stripes, and it finds one taken more often than not. A
// filter of 32M keys (2^23 words) has 2,048 stripes, as many as 32 Ps get.
func lockStripeCount(nBuckets, procs int) int {
	n := mcsPow2(mcsStripesPerProc * max(procs, 1))
	n = min(max(n, mcsMinStripes), mcsMaxStripes)
	for n > mcsMinStripes && n*mcsWordsPerStripe > nBuckets {
		n /= 2
	}
	// At most one stripe per 8 buckets: a 100-key filter (28 buckets)
	// carries 2 padded stripes, not 64 (4 KiB on amd64), which is what makes
	// thousands of small Locked filters affordable (TestSmallFiltersAreCheap).
	for n > 1 && n*8 > nBuckets {
		n /= 2
	}
	return n
}

// mcsPow2 returns the smallest power of two >= x (1 for x <= 1).
func mcsPow2(x int) int {
	if x <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(x-1))
}

// newStripedLocks returns the locks for a table of nBuckets buckets, with
// lockStripeCount(nBuckets, GOMAXPROCS) stripes. It elides with RTM if
// useRTM is set now. Nodes for waiters are allocated when first needed.
func newStripedLocks(nBuckets int) *stripedLocks {
	procs := runtime.GOMAXPROCS(0)
	n := lockStripeCount(nBuckets, procs)
	sh := min(mcsPow2(mcsShardsPerProc*procs), mcsMaxShards, max(n/mcsStripesPerShard, 1))
	s := &stripedLocks{
		mask:      uint32(n - 1),
		shardMask: uint32(sh - 1),
		elide:     useRTM,
		stripes:   make([]lockStripe, n),
		shards:    make([]mcsShard, sh),
	}
	s.pool.init(sh, mcsMaxNodes, initMCSNodes)
	return s
}

// mcsMaxNodes bounds the node pool below mcsSelf.
const mcsMaxNodes = 1 << 31

// initMCSNodes gives the nodes of a new pool chunk their wake channels.
func initMCSNodes(c []mcsNode) {
	for i := range c {
		c[i].wake = make(chan struct{}, 1)
	}
}

// lockBuckets locks the stripes of buckets a and b (a may equal b, or map to
// the same stripe) in ascending stripe order, so no two callers can
// deadlock. It returns a guard to pass to unlockBuckets.
//
// The section between lockBuckets and unlockBuckets excludes every other
// section holding one of its stripes and every lockAll holder; goroutines
// waiting for a stripe get it in the order they asked (FIFO). The section
// must not call lockBuckets or lockAll (it could deadlock on its own
// stripes), and should only read and write memory: with elision it runs in
// a hardware transaction that allocation, system calls and blocking abort
// (it then runs again under the MCS locks), and it may run more than once,
// only the last run taking effect. lockBuckets allocates nothing once the
// node pool has grown to the peak number of concurrent waiters.
func (s *stripedLocks) lockBuckets(a, b uint64) lockGuard {
	lo, hi := uint32(a)&s.mask, uint32(b)&s.mask
	if lo > hi {
		lo, hi = hi, lo
	}
	if raceEnabled {
		checkStripeOrder(lo, hi)
	}
	if s.elide && s.elideBegin(lo, hi) {
		return lockGuard{lo: lo, hi: hi, tx: true}
	}
	s.acquire(lo)
	if hi != lo {
		s.acquire(hi)
	}
	return lockGuard{lo: lo, hi: hi}
}

// unlockBuckets ends the section begun by the lockBuckets call that returned
// g: it commits the transaction, or hands each stripe to its next waiter or
// frees it.
func (s *stripedLocks) unlockBuckets(g lockGuard) {
	if g.tx {
		xend()
		s.shards[g.lo&s.shardMask].commits.Add(1)
		return
	}
	if g.hi != g.lo {
		s.release(g.hi)
	}
	s.release(g.lo)
}

// lockAll locks every stripe in ascending order (never elided), for
// operations on the whole table such as Reset and snapshots. It excludes all
// lockBuckets sections and other lockAll callers, and must not be called by
// a goroutine that holds any stripe.
func (s *stripedLocks) lockAll() lockGuardAll {
	for i := range s.stripes {
		s.acquire(uint32(i))
	}
	return lockGuardAll{n: len(s.stripes)}
}

// unlockAll releases the stripes taken by the lockAll call that returned g.
func (s *stripedLocks) unlockAll(g lockGuardAll) {
	for i := g.n - 1; i >= 0; i-- {
		s.release(uint32(i))
	}
}

// stats returns the elision statistics summed over the shards.
func (s *stripedLocks) stats() LockStats {
	st := LockStats{Elided: s.elide}
	for i := range s.shards {
		sh := &s.shards[i]
		st.TxCommits += sh.commits.Load()
		held, conflict := sh.aborts[txCauseLockHeld].Load(), sh.aborts[txCauseConflict].Load()
		capacity, other := sh.aborts[txCauseCapacity].Load(), sh.aborts[txCauseOther].Load()
		st.TxAbortsLockHeld += held
		st.TxAbortsConflict += conflict
		st.TxAbortsCapacity += capacity
		st.TxAbortsOther += other
		st.TxAborts += held + conflict + capacity + other
		st.Fallbacks += sh.fallbacks.Load()
		st.Waits += sh.waits.Load()
	}
	return st
}

// elideBegin tries to start a transaction in which stripes lo and hi are
// free, with the bounded retries described above txStarted. It returns true
// inside the transaction, false (outside any transaction) when the caller
// must take the MCS locks.
func (s *stripedLocks) elideBegin(lo, hi uint32) bool {
	sh := &s.shards[lo&s.shardMask]
	lw, hw := &s.stripes[lo].tail, &s.stripes[hi].tail
	for attempt := 1; ; attempt++ {
		status := xbegin()
		if status == txStarted {
			if lw.Load() != 0 || hw.Load() != 0 {
				xabortLockHeld() // does not return: resumes in xbegin
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

// awaitFree waits for lock words lw and hw to be free so that a retried
// transaction does not abort on them at once, spinning then yielding (see
// mcsSpinIters). It reports false if they are still held after that: under
// a steady stream of MCS holders a stripe's tail may never be empty, and a
// goroutine that kept waiting for it would starve instead of joining the
// FIFO queue.
func awaitFree(lw, hw *atomic.Uint32) bool {
	for k := 0; lw.Load() != 0 || hw.Load() != 0; k++ {
		if k >= mcsSpinIters+mcsYieldIters {
			return false
		}
		if k >= mcsSpinIters {
			runtime.Gosched()
		}
	}
	return true
}

// txRetryable reports whether a transaction that aborted with status may
// commit if retried: the processor says so (RETRY), another processor
// touched its data (CONFLICT), or it found a stripe held (our XABORT).
func txRetryable(status uint32) bool {
	if status&txAbortExplicit != 0 {
		return status>>24 == txLockHeld
	}
	return status&(txAbortRetry|txAbortConflict) != 0
}

// acquire locks stripe i: one CAS if it is free, else acquireSlow.
func (s *stripedLocks) acquire(i uint32) {
	if st := &s.stripes[i]; !st.tail.CompareAndSwap(0, mcsSelf) {
		s.acquireSlow(st, i)
	}
}

// acquireSlow queues a pool node on stripe st (index i), waits to be
// granted the stripe, and moves its place in the queue onto the stripe.
func (s *stripedLocks) acquireSlow(st *lockStripe, i uint32) {
	home := uint(i & s.shardMask)
	sh := &s.shards[home]
	sh.waits.Add(1)
	me := s.pool.lease(home)
	n := s.poolNode(me)
	n.next.Store(0)
	n.locked.Store(mcsWaiting) // before linking: once linked, the predecessor may grant at any time
	if prev := st.tail.Swap(me); prev != 0 {
		if prev == mcsSelf {
			st.next.Store(me)
		} else {
			s.poolNode(prev).next.Store(me)
		}
		for k := 0; n.locked.Load() != mcsGranted; k++ {
			switch {
			case k < mcsSpinIters:
			case k < mcsSpinIters+mcsYieldIters:
				runtime.Gosched()
			default:
				// Park. If the CAS fails the stripe was granted meanwhile.
				if n.locked.CompareAndSwap(mcsWaiting, mcsParked) {
					<-n.wake // sent after the predecessor set mcsGranted
				}
			}
		}
	}
	// We hold the stripe. Hand our queue position to the stripe itself.
	succ := n.next.Load()
	if succ == 0 {
		st.next.Store(0) // before the CAS: a newcomer may link to mcsSelf right after it
		if st.tail.CompareAndSwap(me, mcsSelf) {
			s.pool.release(home, me)
			return
		}
		succ = mcsAwaitLink(&n.next)
	}
	st.next.Store(succ)
	s.pool.release(home, me)
}

// release unlocks stripe i: it grants the stripe to the next waiter, or
// frees it.
func (s *stripedLocks) release(i uint32) {
	st := &s.stripes[i]
	succ := st.next.Load()
	if succ == 0 {
		if st.tail.CompareAndSwap(mcsSelf, 0) {
			return
		}
		succ = mcsAwaitLink(&st.next)
	}
	if n := s.poolNode(succ); n.locked.Swap(mcsGranted) == mcsParked {
		n.wake <- struct{}{} // never blocks: one send per park, capacity 1
	}
}

// mcsAwaitLink waits until a successor that has swapped itself into the
// tail links itself into next (a few instructions later, unless it was
// descheduled in between), spinning then yielding, and returns the link.
func mcsAwaitLink(next *atomic.Uint32) uint32 {
	for k := 0; ; k++ {
		if v := next.Load(); v != 0 {
			return v
		}
		if k >= mcsSpinIters {
			runtime.Gosched()
		}
	}
}

// poolNode returns pool node v (index+1). Its chunk must be published.
func (s *stripedLocks) poolNode(v uint32) *mcsNode { return s.pool.item(v) }
