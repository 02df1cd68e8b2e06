package cuckoo

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// This file implements the locks of Locked mode: one queue lock per stripe
// of buckets, after Mellor-Crummey and Scott ("Algorithms for Scalable
// Synchronization on Shared-Memory Multiprocessors", TOCS 1991), elided
// with Intel RTM transactions where the processor supports them (the
// speculative MCS lock of Listings 1.1 and 1.2 in seeds/004).
//
// Why not FIFO hand-off. Goroutines outnumber processors in Go programs,
// and a waiter that has yielded or parked is not running. A classic MCS
// release grants the lock to its successor whatever that goroutine is
// doing, and the stripe then stays idle until the scheduler runs it, while
// every other goroutine that wants the stripe queues behind it: with two
// writers and two lookers on two processors the waiter was behind a looker
// for a whole time slice, and writes ran at a few percent of LockFree's
// rate. Here a release only frees the lock; whoever is running takes it
// (competitive succession), the waiter at the head of the queue competes
// when it runs, and a budget of bypasses per head keeps that from
// starving it, as sync.Mutex's starvation mode does.
//
// The lock word (lockStripe.tail) packs three fields:
//
//	bit 0         held: a goroutine is in a section on this stripe
//	bits 1..7     bypass: acquisitions that overtook the current head
//	bits 8..31    tail: the last queued waiter's node (index+1), 0 = none
//
// The word is 0 exactly when the stripe is free with nobody queued; an
// elision attempt treats any other value as held.
//
// Acquire. An uncontended acquire is one CAS of the word from 0 to held. A
// goroutine that finds the stripe held or queued-for (acquireSlow) may
// barge: if held is clear, it takes the stripe with one CAS that sets held
// and, when the queue is not empty, adds one to bypass, allowed only while
// bypass is below maxBypass. Otherwise it leases a pool node and queues it
// by a CAS that swaps its node into the tail field. With a predecessor it
// links itself into the predecessor's next field and waits, spinning on its
// own node (its own cache line), until the predecessor makes it the head.
// The head competes for the stripe: whenever held is clear it CASes held
// on and bypass to 0, whatever bypass was. Having won, it leaves the queue
// before its section: with a successor it publishes that node as the
// stripe's head and makes it the head; without one it clears the stripe's
// head and CASes the tail field from its node to 0 (if a newcomer swapped
// in first it waits for the newcomer's link). Then nothing refers to its
// node and it goes back to the pool. So only waiters hold nodes, a section
// needs none (lockGuard records none), and uncontended sections never
// touch the pool.
//
// Release. One atomic add clears held. If the tail field is not 0 the
// releaser wakes the head if it is parked (lockStripe.head names it): it
// CASes the head's state from mcsHeadParked to mcsHead and, having won,
// sends on the head's wake channel. The woken head competes; the releaser
// never hands the stripe to anyone, so a waiter that is not running never
// holds up the stripe unless it is the head and the bypass budget is
// spent.
//
// Holders are not preempted. A holder that the Go scheduler deschedules
// in its section keeps the stripe until it runs again, up to a time slice
// later when goroutines outnumber processors, and every goroutine that
// wants the stripe waits that long. lockBuckets therefore runs the section
// with preemption off (runtime.procPin, which sync.Pool uses for its
// per-P caches; the runtime keeps that linkname for outside packages):
// from the moment it holds its stripes until unlockBuckets starts
// releasing them the goroutine stays on its processor. Sections are a few
// loads and stores; they must not block (a blocking operation with
// preemption off is a fatal error, and so is a panic), and lockAll, whose
// sections walk the whole table, does not pin. Only the operating system
// can still deschedule a holder's thread.
//
// Waiting. Every waiter spins mcsSpinIters checks, then yields
// mcsYieldIters times, then parks: a non-head CASes its state from
// mcsQueued to mcsQueuedParked and blocks on its wake channel; the head
// stores mcsHeadParked (nobody else changes a running head's state), checks
// held once more, and blocks unless
// held was clear and it can CAS its state back. A predecessor that makes a
// parked waiter the head sets mcsHeadParked without waking it: it holds
// the stripe, and its release wakes the new head.
//
// Claims (ordering: Go's atomics are sequentially consistent, and every
// step below is one atomic operation on one word).
//
// Mutual exclusion. Held is set only by a CAS from a word with held clear
// (the uncontended CAS, a barge, the head's CAS) and cleared only by the
// holder's release. So at most one goroutine holds a stripe. Each holder's
// accesses happen-before the release's add, which the next holder's CAS
// reads, so sections are ordered for the race detector too.
//
// No lost wake-up. Claim: a head that blocks is woken if the stripe is
// released after it blocked, and a queued waiter that blocks is woken once
// it is the head and the stripe is released. Proof. A head h blocks only
// after it set mcsHeadParked (step P) and then read held set (step R),
// with lockStripe.head = h since before P (h published it when it became
// head, and only h itself changes it again, after winning the stripe).
// The held bit h read at R belongs to an acquisition whose release add A
// follows R (the add clears it; R read the word before A). That release
// sees the tail field nonzero (h is queued), reads lockStripe.head after A,
// hence after P, and finds h; its CAS from mcsHeadParked succeeds unless
// another waker's CAS did first, and whichever CAS succeeds sends exactly
// one token, which h receives. A queued waiter q that parked (state
// mcsQueuedParked) is made the head by its predecessor p while p holds the
// stripe: p publishes q as lockStripe.head, then moves q to mcsHeadParked
// (or to mcsHead if q had not parked; q's park CAS then fails and q goes
// on as the head), and p's own release then wakes q as above. A node's
// channel never holds more than one token: a token is sent only by the
// one CAS that takes the node out of a parked state, and its owner
// receives it before it can park again. A stale waker (one that read
// lockStripe.head before that head left the queue) can only wake a parked
// head early, which then checks held again: harmless.
//
// Bounded bypass. Claim: while a waiter is the head, at most maxBypass
// other goroutines take the stripe; a waiter with p waiters ahead of it
// when it queued takes the stripe after at most (p+1)·maxBypass + p other
// acquisitions. Proof. Bypass is 0 when a waiter becomes the head (it
// becomes the head either by queuing into an empty tail field, when the
// word's bypass is 0 because it is reset by every head's win and is only
// increased while the tail field is nonzero, or from its predecessor, who
// reset it by winning and holds the stripe, so no barge has happened
// since). Every other acquisition while it is head is a barge, which adds
// one and needs bypass < maxBypass; only the head's own win resets it. So
// the head is overtaken at most maxBypass times, and then only the head
// can take the stripe. The queue is FIFO between waiters: the p waiters
// ahead each take the stripe once, each after at most maxBypass barges.
//
// Node pool. Waiters' nodes come from a slotPool (pool.go, which gives the
// chunk layout and the free lists' ABA argument), with one free list per
// shard. A waiter leases its node from the shard of the stripe it waits for
// and returns it there, so waiters on different stripes rarely share a
// free-list head. The pool grows only when more goroutines than ever
// before wait at once (each waits for one stripe at a time), and steady
// state allocates nothing. Node indices stay below 2^24 - 1 (mcsMaxNodes),
// so index+1 fits the tail field; a goroutine that would be the 2^24th
// waiter at once waits for a node to come back (slotPool.lease).
//
// No pointers in integers. Nodes live in tables owned by the stripe set and
// are named by uint32 index+1 (0 is nil), so lock words and links are
// plain atomic integers the garbage collector need not see.

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
	// not by the spatial prefetcher's neighbour. Only the head of a
	// stripe's queue reads the stripe's line while waiting; the others
	// spin on their own nodes (mcsLine).
	stripeLine = min(max(unsafe.Sizeof(cpu.CacheLinePad{}), 64), mcsLine)

	// mcsSpinIters and mcsYieldIters tune how a goroutine waits for a lock.
	//
	// Spin, yield, park. A waiter spins for mcsSpinIters checks, a
	// microsecond or so: long enough for the holder's critical section
	// (two bucket words, tens of nanoseconds) plus the sections of a few
	// waiters ahead, so waiters usually get the lock without leaving the
	// processor. Then it calls runtime.Gosched before each of the next
	// mcsYieldIters checks: the holder may be a goroutine that is not
	// running, and a waiter that kept spinning would burn the processor
	// that goroutine needs until the scheduler preempts it; when nothing
	// else is runnable Gosched returns almost at once (the spin and yield
	// counts: BENCHMARKS.md, "Tuning constants"). A waiter still not served after that parks
	// (see Waiting above): parked waiters leave the run queue to the
	// goroutines that can make progress. A releaser waiting for its
	// successor to link itself (a few instructions after the successor's
	// CAS) spins and then yields, without parking; an elision attempt
	// waiting for a stripe to be free spins and yields as a waiter does,
	// then takes the lock. Go has no portable PAUSE, so a spin is a plain
	// load loop.
	mcsSpinIters  = 1024
	mcsYieldIters = 4

	// mcsMaxBypass is the bypass budget of a head (see Bounded bypass),
	// the most the word's 7-bit bypass field holds. A spent budget
	// makes the stripe wait for the head, which may be parked, so the
	// budget is the price of fairness in idle stripe time: a larger one
	// makes that rarer.
	mcsMaxBypass = 127

	// Fields of the lock word.
	mcsHeld        = 1 << 0
	mcsBypassShift = 1
	mcsBypassOne   = 1 << mcsBypassShift
	mcsBypassMask  = 0x7f << mcsBypassShift
	mcsTailShift   = 8

	// States of a waiter's node.
	mcsQueued       = 1 // waits to become the head, spinning or yielding
	mcsQueuedParked = 2 // waits to become the head, blocked on wake
	mcsHead         = 3 // the head, competing for the stripe
	mcsHeadParked   = 4 // the head, blocked on wake until a release

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
// it takes the MCS locks. The bound keeps a section that can never commit
// from looping, and the queue behind it (see Bounded bypass) bounds every
// goroutine's wait. An MCS acquire always writes the lock word, so
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

// usePin selects, for stripe sets created from now on, whether lockBuckets
// sections run with preemption off (see "Holders are not preempted"). It
// is a variable only so that tests which hold a section while they block
// (waiting for another goroutine to queue) can turn it off (withPin).
var usePin = true

// mcsNode is a pool node, alone on its cache lines.
type mcsNode struct {
	state atomic.Uint32 // mcsQueued ... mcsHeadParked while its owner waits (see Waiting above)
	next  atomic.Uint32 // successor's index+1, 0 = none yet; written once by the successor
	wake  chan struct{} // capacity 1; one send per CAS out of a parked state; set at creation
	_     [mcsLine - 16]byte
}

// lockStripe is one stripe's queue lock, alone on its cache line.
type lockStripe struct {
	tail atomic.Uint32 // the lock word: held, bypass, tail (see the top of this file)
	head atomic.Uint32 // the head's node (index+1), 0 = none or not yet published
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
	maxBypass uint32 // a head's bypass budget: mcsMaxBypass (tests lower it); read-only
	pin       bool   // lockBuckets sections run with preemption off (usePin when created); read-only
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
		maxBypass: mcsMaxBypass,
		pin:       usePin,
		stripes:   make([]lockStripe, n),
		shards:    make([]mcsShard, sh),
	}
	s.pool.init(sh, mcsMaxNodes, initMCSNodes)
	return s
}

// mcsMaxNodes bounds the node pool so that index+1 fits the lock word's
// tail field.
const mcsMaxNodes = 1<<(32-mcsTailShift) - 1

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
// waiting for a stripe get it in the order they queued, each overtaken by
// at most mcsMaxBypass barging goroutines while it is first. The section
// must not call lockBuckets or lockAll (it could deadlock on its own
// stripes), and should only read and write memory: it runs with preemption
// off (a blocking call or a panic in it is fatal), and with elision it runs in
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
	if s.pin {
		runtime_procPin() // see "Holders are not preempted" at the top of this file
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
	if s.pin {
		runtime_procUnpin() // before a release may wake a waiter (a channel send)
	}
	if g.hi != g.lo {
		s.release(g.hi)
	}
	s.release(g.lo)
}

// runtime_procPin turns preemption of the calling goroutine off until
// runtime_procUnpin, and returns its P's id.
//
//go:linkname runtime_procPin runtime.procPin
func runtime_procPin() int

// runtime_procUnpin undoes runtime_procPin.
//
//go:linkname runtime_procUnpin runtime.procUnpin
func runtime_procUnpin()

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
// queue.
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

// acquire locks stripe i: one CAS if it is free with nobody queued, else
// acquireSlow.
func (s *stripedLocks) acquire(i uint32) {
	st := &s.stripes[i]
	if raceEnabled {
		s.step(mcsSiteWord, 0)
	}
	if !st.tail.CompareAndSwap(0, mcsHeld) {
		s.acquireSlow(st, i)
	}
}

// acquireSlow takes stripe st (index i) by barging if the bypass budget
// allows it, or else queues a pool node, waits to win the stripe as the
// head and leaves the queue.
func (s *stripedLocks) acquireSlow(st *lockStripe, i uint32) {
	home := uint(i & s.shardMask)
	var me uint32 // our node once leased
	for {
		if raceEnabled {
			s.step(mcsSiteWord, 0)
		}
		w := st.tail.Load()
		queued := w >= 1<<mcsTailShift
		if w&mcsHeld == 0 && (!queued || w&mcsBypassMask < s.maxBypass<<mcsBypassShift) {
			nw := w | mcsHeld
			if queued {
				nw += mcsBypassOne // we overtake the head
			}
			if raceEnabled {
				s.step(mcsSiteWord, 0)
			}
			if st.tail.CompareAndSwap(w, nw) {
				if me != 0 {
					s.pool.release(home, me)
				}
				return
			}
			continue
		}
		if me == 0 {
			me = s.pool.lease(home)
			n := s.poolNode(me)
			n.next.Store(0)
			n.state.Store(mcsQueued) // before queuing: the predecessor may make us the head at once
			continue                 // the word may have changed meanwhile
		}
		if raceEnabled {
			s.step(mcsSiteWord, 0)
		}
		if st.tail.CompareAndSwap(w, w&(1<<mcsTailShift-1)|me<<mcsTailShift) {
			s.shards[home].waits.Add(1)
			s.await(st, me, w>>mcsTailShift)
			s.pool.release(home, me)
			return
		}
	}
}

// await runs the waiter whose node me was queued behind prev (0: none, it
// is the head at once) until it holds the stripe and has left the queue.
func (s *stripedLocks) await(st *lockStripe, me, prev uint32) {
	n := s.poolNode(me)
	if prev != 0 {
		if raceEnabled {
			s.step(mcsSiteNode, prev)
		}
		s.poolNode(prev).next.Store(me)
		for k := 0; ; k++ {
			if raceEnabled {
				s.step(mcsSiteNode, me)
			}
			if n.state.Load() != mcsQueued {
				break // mcsHead, or mcsQueuedParked from our own CAS below
			}
			if s.patient(k, me) {
				continue
			}
			if raceEnabled {
				s.step(mcsSiteNode, me)
			}
			if n.state.CompareAndSwap(mcsQueued, mcsQueuedParked) {
				// Our predecessor moves us to mcsHeadParked and its
				// release wakes us as the head (mcsHead).
				s.park(n, me)
				break
			}
		}
	} else {
		if raceEnabled {
			s.step(mcsSiteNode, me)
		}
		n.state.Store(mcsHead)
		if raceEnabled {
			s.step(mcsSiteHead, me)
		}
		st.head.Store(me) // before we can park: releasers wake the node named here
	}
	s.compete(st, n, me)
	s.leave(st, n, me)
}

// compete runs the head (node n, v me) until it wins the stripe: whenever
// the stripe is free it CASes held on and the bypass count to 0; while it
// is held it spins, yields, then parks until a release wakes it.
func (s *stripedLocks) compete(st *lockStripe, n *mcsNode, me uint32) {
	for k := 0; ; k++ {
		if raceEnabled {
			s.step(mcsSiteWord, me)
		}
		w := st.tail.Load()
		if w&mcsHeld == 0 {
			if raceEnabled {
				s.step(mcsSiteWord, me)
			}
			if st.tail.CompareAndSwap(w, w&^mcsBypassMask|mcsHeld) {
				return
			}
			continue
		}
		if s.patient(k, me) {
			continue
		}
		if raceEnabled {
			s.step(mcsSiteNode, me)
		}
		n.state.Store(mcsHeadParked) // only wakers change it, and only from mcsHeadParked
		// Check held again after publishing the park: a release that
		// cleared it before that may have found us not parked.
		if raceEnabled {
			s.step(mcsSiteWord, 0)
		}
		if st.tail.Load()&mcsHeld == 0 {
			if raceEnabled {
				s.step(mcsSiteNode, me)
			}
			if n.state.CompareAndSwap(mcsHeadParked, mcsHead) {
				k = -1
				continue // nobody will wake us: compete now
			}
		}
		s.park(n, me) // a waker set mcsHead before sending
		k = -1
	}
}

// leave takes the head (node n, v me), which holds the stripe, out of the
// queue: its successor becomes the head, or the tail field goes back to 0.
func (s *stripedLocks) leave(st *lockStripe, n *mcsNode, me uint32) {
	if raceEnabled {
		s.step(mcsSiteNode, me)
	}
	succ := n.next.Load()
	if succ == 0 {
		if raceEnabled {
			s.step(mcsSiteHead, 0)
		}
		st.head.Store(0) // before the CAS: a newcomer may become the head right after it
		if raceEnabled {
			s.step(mcsSiteWord, 0)
		}
		// Bypass is 0 (our win reset it, and nobody barges while we hold).
		if st.tail.CompareAndSwap(me<<mcsTailShift|mcsHeld, mcsHeld) {
			return
		}
		succ = s.awaitLink(&n.next, me)
	}
	if raceEnabled {
		s.step(mcsSiteHead, succ)
	}
	st.head.Store(succ) // before our release reads it
	sn := s.poolNode(succ)
	for {
		if raceEnabled {
			s.step(mcsSiteNode, succ)
		}
		if sn.state.CompareAndSwap(mcsQueued, mcsHead) {
			return
		}
		if raceEnabled {
			s.step(mcsSiteNode, succ)
		}
		// Parked: it stays asleep until our release wakes it.
		if sn.state.CompareAndSwap(mcsQueuedParked, mcsHeadParked) {
			return
		}
	}
}

// release unlocks stripe i: it clears held and, if a waiter is queued,
// wakes the head if it is parked. It hands the stripe to nobody.
func (s *stripedLocks) release(i uint32) {
	st := &s.stripes[i]
	if raceEnabled {
		s.step(mcsSiteWord, 0)
	}
	if st.tail.Add(^uint32(0)) < 1<<mcsTailShift { // held was set: this clears it
		return
	}
	if raceEnabled {
		s.step(mcsSiteHead, 0)
	}
	h := st.head.Load()
	if h == 0 {
		return // a newcomer head not yet published: it checks held after publishing
	}
	n := s.poolNode(h)
	if raceEnabled {
		s.step(mcsSiteNode, h)
	}
	if n.state.CompareAndSwap(mcsHeadParked, mcsHead) {
		if raceEnabled {
			s.step(mcsSiteWake, h)
		}
		n.wake <- struct{}{} // never blocks: one send per park, capacity 1
	}
}

// patient reports whether a waiter that has checked its condition k times
// should check again (after a yield, past mcsSpinIters) or park.
func (s *stripedLocks) patient(k int, me uint32) bool {
	if raceEnabled {
		if d := s.step(mcsSiteWait, me); d >= 0 {
			return d == 1
		}
	}
	if k < mcsSpinIters {
		return true
	}
	if k < mcsSpinIters+mcsYieldIters {
		runtime.Gosched()
		return true
	}
	return false
}

// park blocks the owner of node n (v me) until a waker's token arrives.
func (s *stripedLocks) park(n *mcsNode, me uint32) {
	if raceEnabled {
		s.step(mcsSitePark, me)
	}
	<-n.wake
}

// awaitLink waits until a successor that has queued itself in the tail
// field links itself into next (a few instructions later, unless it was
// descheduled in between), spinning then yielding, and returns the link.
func (s *stripedLocks) awaitLink(next *atomic.Uint32, me uint32) uint32 {
	for k := 0; ; k++ {
		if raceEnabled {
			s.step(mcsSiteSpin, me)
		}
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

// The tests' scheduling points (race builds only; compiled out otherwise).
// mcsSteps, when set, is called with the stripe set before every step of
// the lock that touches shared memory (an atomic operation on a lock word,
// a stripe's head, a node's state or link, a park, a wake send) and at
// every waiter's choice between checking again and parking. It must
// return -1 for stripe sets that are not its own (other tests' locks call
// it too), which then behave as in other builds; for its own it may block
// to order the goroutines, and at mcsSiteWait returns 1 (check again) or 0
// (park). TestMCSStateMachine drives the lock's real code through it.
var mcsSteps atomic.Pointer[func(s *stripedLocks, site mcsSite, v uint32) int]

// mcsSite names a scheduling point; v is the node involved, or 0.
type mcsSite uint8

const (
	mcsSiteWord mcsSite = iota // an atomic operation on the lock word (v: the head's node in compete, else 0)
	mcsSiteHead                // a load or store of lockStripe.head
	mcsSiteNode                // an operation on node v's state or link
	mcsSiteWait                // node v's owner chooses: check again or park
	mcsSiteSpin                // node v's owner checks again (it never parks here)
	mcsSitePark                // node v's owner blocks on its wake channel
	mcsSiteWake                // a waker sends a token to node v
)

// step calls mcsSteps, if set.
func (s *stripedLocks) step(site mcsSite, v uint32) int {
	if h := mcsSteps.Load(); h != nil {
		return (*h)(s, site, v)
	}
	return -1
}
