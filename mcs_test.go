package cuckoo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// withRTM sets useRTM to v for the rest of the test and restores it after.
// It must not be set to true unless rtmSupported() reports true.
func withRTM(t *testing.T, v bool) {
	t.Helper()
	if v && !rtmSupported() {
		t.Fatal("withRTM(true) on a processor without RTM: XBEGIN would raise #UD")
	}
	old := useRTM
	useRTM = v
	t.Cleanup(func() { useRTM = old })
}

// withPin sets usePin to v for the rest of the test and restores it after:
// stripe sets created meanwhile pin their sections only if v. Tests that
// block (yield, wait on a channel) while they hold a lockBuckets section
// turn it off, since blocking with preemption off is a fatal error.
func withPin(t testing.TB, v bool) {
	old := usePin
	usePin = v
	t.Cleanup(func() { usePin = old })
}

// withProcs sets GOMAXPROCS to n for the rest of the test and restores it
// after.
func withProcs(t *testing.T, n int) {
	t.Helper()
	old := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// scaled returns n, or n/div (at least 1) under -short, and in race
// builds outside the long suite (long_test.go).
func scaled(n, div int) int {
	if testing.Short() || raceEnabled && !LongTests() {
		return max(n/div, 1)
	}
	return n
}

// stripesOf returns the stripes lockBuckets(a, b) must take, ascending.
func stripesOf(s *stripedLocks, a, b uint64) (lo, hi uint32) {
	lo, hi = uint32(a)&s.mask, uint32(b)&s.mask
	if lo > hi {
		lo, hi = hi, lo
	}
	return lo, hi
}

func TestLockStripeCount(t *testing.T) {
	for _, tc := range []struct{ buckets, procs, want int }{
		{0, 2, 1},
		{1, 2, 1},
		{2, 2, 1},
		{15, 2, 1},
		{16, 2, 2},
		{100, 2, 8},
		{1000, 1, 64},
		{1000, 2, 64},
		{1024, 2, 64},     // 128 by P, but one per 4,096 words above 64
		{8192, 4, 64},     // 256 by P
		{1 << 18, 16, 64}, // a 1M-key four-slot table: 1,024 by P
		{1 << 19, 2, 128}, // 128 by P, and 2^19 words allow 128
		{1 << 20, 2, 128},
		{1 << 20, 6, 256},  // 512 by P
		{1 << 20, 64, 256}, // 4,096 by P
		{1 << 23, 64, 2048},
		{1 << 24, 64, 4096},
		{1 << 24, 1024, 4096},
		{min(1<<31, math.MaxInt), 0, 64},
	} {
		t.Run(fmt.Sprintf("buckets=%d/procs=%d", tc.buckets, tc.procs), func(t *testing.T) {
			if got := lockStripeCount(tc.buckets, tc.procs); got != tc.want {
				t.Errorf("lockStripeCount(%d, %d) = %d; want %d", tc.buckets, tc.procs, got, tc.want)
			}
		})
	}
}

func TestStripeLayout(t *testing.T) {
	for _, n := range []int{1, 5, 1000, 1 << 20} {
		t.Run(fmt.Sprintf("buckets=%d", n), func(t *testing.T) {
			s := newStripedLocks(n)
			stripes := len(s.stripes)
			if want := lockStripeCount(n, runtime.GOMAXPROCS(0)); stripes != want {
				t.Errorf("got %d stripes; want %d", stripes, want)
			}
			if int(s.mask)+1 != stripes {
				t.Errorf("got mask %d; want %d", s.mask, stripes-1)
			}
			shards := len(s.shards)
			if shards&(shards-1) != 0 || int(s.shardMask)+1 != shards || shards > stripes {
				t.Errorf("got %d shards, mask %d; want a power of two <= %d", shards, s.shardMask, stripes)
			}
		})
	}
}

// capacity returns the number of items in published chunks.
func (p *slotPool[T]) capacity() uint32 {
	return min(poolChunk0*(1<<p.nchunks.Load()-1), p.limit)
}

func TestPoolChunkOf(t *testing.T) {
	// Walk the first chunks index by index.
	var i uint32
	for k := uint32(0); k < 6; k++ {
		for off := uint32(0); off < poolChunk0<<k; off++ {
			gk, goff := poolChunkOf(i)
			if gk != k || goff != off {
				t.Fatalf("poolChunkOf(%d) = %d, %d; want %d, %d", i, gk, goff, k, off)
			}
			i++
		}
	}
	// The last index a pool can name lies in the last chunk, and the node
	// pool's v (index+1) fits the lock word's tail field.
	last := uint32(poolChunk0*(1<<poolMaxChunks-1) - 1)
	if got := uint64(mcsMaxNodes) << mcsTailShift; got >= 1<<32 {
		t.Fatalf("node v %#x shifted into the tail field overflows the lock word (%#x)", mcsMaxNodes, got)
	}
	if k, off := poolChunkOf(last); k != poolMaxChunks-1 || off != poolChunk0<<k-1 {
		t.Errorf("poolChunkOf(%d) = %d, %d; want %d, %d", last, k, off, poolMaxChunks-1, poolChunk0<<(poolMaxChunks-1)-1)
	}
}

// TestMCSMutualExclusion increments plain (non-atomic) counters under the
// locks: one counter per stripe, bumped for each stripe a section holds.
// Lost updates show as a wrong count, and under -race a missing
// happens-before edge is reported.
func TestMCSMutualExclusion(t *testing.T) {
	withRTM(t, false)
	for _, pairs := range []string{"fixed", "random"} {
		for _, g := range []int{1, runtime.GOMAXPROCS(0), 256} {
			t.Run(fmt.Sprintf("pairs=%s/goroutines=%d", pairs, g), func(t *testing.T) {
				testMutualExclusion(t, pairs == "fixed", g, scaled(200000/g+100, 10))
			})
		}
	}
}

// testMutualExclusion runs g goroutines doing iters sections each on a fresh
// stripe set. With fixed, every section holds stripe 0 (bucket 0 and a random
// bucket), so one counter sees every increment.
func testMutualExclusion(t *testing.T, fixed bool, g, iters int) *stripedLocks {
	s := newStripedLocks(1 << 16)
	counts := make([]int, len(s.stripes)) // counts[i] guarded by stripe i
	want := make([]int, len(s.stripes))
	var mu sync.Mutex // guards want
	var wg sync.WaitGroup
	for w := 0; w < g; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			local := make([]int, len(s.stripes))
			for range iters {
				a, b := r.Uint64(), r.Uint64()
				if fixed {
					a = 0
				}
				lo, hi := stripesOf(s, a, b)
				lg := s.lockBuckets(a, b)
				counts[lo]++
				if hi != lo {
					counts[hi]++
				}
				s.unlockBuckets(lg)
				local[lo]++
				if hi != lo {
					local[hi]++
				}
			}
			mu.Lock()
			for i, n := range local {
				want[i] += n
			}
			mu.Unlock()
		}()
	}
	WaitOrFail(t, Done(&wg), StressWatchdog, "mutual exclusion sections")
	for i := range counts {
		if counts[i] != want[i] {
			t.Errorf("stripe %d: got count %d; want %d", i, counts[i], want[i])
		}
	}
	if fixed && counts[0] != g*iters {
		t.Errorf("stripe 0: got count %d; want %d", counts[0], g*iters)
	}
	for i := range s.stripes {
		if v := s.stripes[i].tail.Load(); v != 0 {
			t.Errorf("stripe %d: got tail %d after all sections; want 0", i, v)
		}
	}
	return s
}

// TestMCSFIFO holds a stripe, queues waiters one at a time (each visibly in
// the queue, its node swapped into the tail, before the next starts), then
// releases it: the waiters must get the stripe in queue order.
func TestMCSFIFO(t *testing.T) {
	withPin(t, false) // holds a section while it blocks
	withRTM(t, false)
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			withProcs(t, procs)
			n := scaled(64, 4)
			s := newStripedLocks(8 * 64) // 64 stripes
			b := uint64(5)
			st := &s.stripes[uint32(b)&s.mask]
			g0 := s.lockBuckets(b, b)
			var order []int // guarded by the stripe
			var wg sync.WaitGroup
			for i := range n {
				prev := st.tail.Load()
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Half the waiters take a second, private stripe too,
					// so FIFO is checked for pairs as well.
					other := b
					if i%2 == 1 {
						other = b + 1 + uint64(i)
					}
					g := s.lockBuckets(other, b)
					order = append(order, i)
					s.unlockBuckets(g)
				}()
				deadline := time.Now().Add(30 * time.Second)
				for st.tail.Load() == prev {
					if time.Now().After(deadline) {
						t.Fatalf("waiter %d never joined the queue", i)
					}
					runtime.Gosched()
				}
			}
			s.unlockBuckets(g0)
			WaitOrFail(t, Done(&wg), time.Minute, "FIFO waiters")
			for i, got := range order {
				if got != i {
					t.Fatalf("acquisition %d: got waiter %d; want %d (order %v)", i, got, i, order)
				}
			}
			if len(order) != n {
				t.Fatalf("got %d acquisitions; want %d", len(order), n)
			}
		})
	}
}

// TestStripeNoDeadlock runs 256 goroutines on GOMAXPROCS=2 locking random
// pairs of stripes (some goroutines also taking every stripe now and then),
// and fails instead of hanging if they deadlock.
func TestStripeNoDeadlock(t *testing.T) {
	withRTM(t, false)
	withProcs(t, 2)
	for _, stripes := range []int{1, 4, 128} {
		t.Run(fmt.Sprintf("stripes=%d", stripes), func(t *testing.T) {
			words := 8 * stripes // one stripe per 8 words
			if stripes > mcsMinStripes {
				words = stripes * mcsWordsPerStripe
			}
			s := newStripedLocks(words)
			if len(s.stripes) != stripes {
				t.Fatalf("got %d stripes; want %d", len(s.stripes), stripes)
			}
			const g = 256
			iters := RaceScaled(scaled(2000, 10), 2)
			var total int // guarded by lockAll
			var wg sync.WaitGroup
			for w := range g {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(w), 2))
					for i := range iters {
						if w%64 == 0 && i%100 == 0 {
							s.lockAll()
							total++
							s.unlockAll()
							continue
						}
						lg := s.lockBuckets(r.Uint64N(1<<20), r.Uint64N(1<<20))
						s.unlockBuckets(lg)
					}
				}()
			}
			WaitOrFail(t, Done(&wg), StressWatchdog, "random pairs")
			if want := 4 * ((iters + 99) / 100); total != want {
				t.Errorf("got %d lockAll sections; want %d", total, want)
			}
		})
	}
}

// blocked starts lock in a goroutine and reports whether it is still waiting
// after a short while; release is called before the result is returned, and
// the goroutine must then finish.
func blocked(t *testing.T, lock func(), release func()) bool {
	t.Helper()
	done := make(chan struct{})
	go func() { lock(); close(done) }()
	var waiting bool
	select {
	case <-done:
	case <-time.After(20 * time.Millisecond):
		waiting = true
	}
	release()
	WaitOrFail(t, done, time.Minute, "blocked locker")
	return waiting
}

func TestLockBucketsShapes(t *testing.T) {
	withPin(t, false) // holds a section while it blocks
	withRTM(t, false)
	s := newStripedLocks(1 << 16)
	n := uint64(len(s.stripes))
	for _, tc := range []struct {
		name string
		a, b uint64
	}{
		{"a=b", 7, 7},
		{"same-stripe", 7, 7 + n},
		{"same-stripe-reversed", 7 + 3*n, 7},
		{"ascending", 3, 9},
		{"reversed", 9, 3},
		{"high-bits", 1<<40 | 2, 1<<63 | 11},
	} {
		t.Run("pair="+tc.name, func(t *testing.T) {
			lo, hi := stripesOf(s, tc.a, tc.b)
			g := s.lockBuckets(tc.a, tc.b)
			if g.lo != lo || g.hi != hi {
				t.Errorf("got stripes %d, %d; want %d, %d", g.lo, g.hi, lo, hi)
			}
			if g.tx {
				t.Errorf("got tx guard with useRTM=false; want MCS")
			}
			for i := range s.stripes {
				held := s.stripes[i].tail.Load() != 0
				if want := uint32(i) == lo || uint32(i) == hi; held != want {
					t.Errorf("stripe %d: got held=%v; want %v", i, held, want)
				}
			}
			// Any section on the same buckets, in either order, waits.
			var g2 lockGuard
			if !blocked(t, func() { g2 = s.lockBuckets(tc.b, tc.a) }, func() { s.unlockBuckets(g) }) {
				t.Errorf("lockBuckets(%d, %d) did not wait for lockBuckets(%d, %d)", tc.b, tc.a, tc.a, tc.b)
			}
			s.unlockBuckets(g2)
			// A section on other stripes does not.
			other := uint64(hi+1) % n
			if other != uint64(lo) && other != uint64(hi) {
				g3 := s.lockBuckets(other, other)
				done := make(chan struct{})
				go func() {
					s.unlockBuckets(s.lockBuckets(tc.a, tc.b))
					close(done)
				}()
				WaitOrFail(t, done, time.Minute, "section beside an unrelated stripe")
				s.unlockBuckets(g3)
			}
			for i := range s.stripes {
				if v := s.stripes[i].tail.Load(); v != 0 {
					t.Errorf("stripe %d: got tail %d after unlock; want 0", i, v)
				}
			}
		})
	}
}

func TestLockAll(t *testing.T) {
	withPin(t, false) // holds a section while it blocks
	withRTM(t, false)
	s := newStripedLocks(1 << 16)
	n := uint64(len(s.stripes))
	s.lockAll()
	for i := range s.stripes {
		if s.stripes[i].tail.Load() == 0 {
			t.Errorf("stripe %d: free under lockAll", i)
		}
	}
	var g lockGuard
	if !blocked(t, func() { g = s.lockBuckets(n-1, 0) }, s.unlockAll) {
		t.Error("lockBuckets did not wait for lockAll")
	}
	if !blocked(t, s.lockAll, func() { s.unlockBuckets(g) }) {
		t.Error("lockAll did not wait for lockBuckets")
	}
	if !blocked(t, s.lockAll, s.unlockAll) {
		t.Error("lockAll did not wait for lockAll")
	}
	s.unlockAll()
	for i := range s.stripes {
		if v := s.stripes[i].tail.Load(); v != 0 {
			t.Errorf("stripe %d: got tail %d after unlockAll; want 0", i, v)
		}
	}
}

func TestLockAllocs(t *testing.T) {
	withPin(t, false) // holds a section while it blocks
	withRTM(t, false)
	s := newStripedLocks(1 << 16)
	n := uint64(len(s.stripes))
	// Warm up: the first section grows the node pool.
	s.unlockBuckets(s.lockBuckets(1, 2))
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"op=pair", func() { s.unlockBuckets(s.lockBuckets(1, 2)) }},
		{"op=same-stripe", func() { s.unlockBuckets(s.lockBuckets(3, 3+n)) }},
		{"op=reversed", func() { s.unlockBuckets(s.lockBuckets(n-1, 0)) }},
		{"op=all", func() { s.lockAll(); s.unlockAll() }},
		{"op=contended", contendedSection(t, s, 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := testing.AllocsPerRun(1000, tc.f); got != 0 {
				t.Errorf("got %v allocs per lock/unlock; want 0", got)
			}
		})
	}
}

// contendedSection returns a function that makes a helper goroutine wait
// for bucket b's stripe while the caller holds it, then hands the stripe
// over: the waiter's path (lease, queue, wait, hand-over, return the node)
// and the granting release. The helper lives until the test ends.
func contendedSection(t *testing.T, s *stripedLocks, b uint64) func() {
	start, acquired := make(chan struct{}), make(chan struct{})
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case <-start:
			case <-stop:
				return
			}
			g := s.lockBuckets(b, b)
			s.unlockBuckets(g)
			acquired <- struct{}{}
		}
	}()
	st := &s.stripes[uint32(b)&s.mask]
	return func() {
		g := s.lockBuckets(b, b)
		start <- struct{}{}
		for st.tail.Load() == mcsHeld { // until the helper is queued
			runtime.Gosched()
		}
		s.unlockBuckets(g)
		<-acquired
	}
}

// TestMCSPoolConserved has many goroutines wait at once, so the node
// pool grows, then checks that every node came back to exactly one free
// list.
func TestMCSPoolConserved(t *testing.T) {
	withPin(t, false) // holds a section while it blocks
	withRTM(t, false)
	withProcs(t, 2)
	s := newStripedLocks(8) // few stripes: long queues, many nodes in use
	const g = 300
	iters := scaled(300, 10)
	var wg sync.WaitGroup
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for range iters {
				lg := s.lockBuckets(r.Uint64N(8), r.Uint64N(8))
				if r.IntN(4) == 0 {
					runtime.Gosched() // hold a while so queues build up
				}
				s.unlockBuckets(lg)
			}
		}()
	}
	WaitOrFail(t, Done(&wg), StressWatchdog, "pool stress")

	k := s.pool.nchunks.Load()
	if k < 1 {
		t.Fatalf("got %d chunks; want at least 1", k)
	}
	total := int(s.pool.capacity())
	seen := make([]bool, total)
	free := 0
	for i := range s.pool.heads {
		for v := uint32(s.pool.heads[i].v.Load()); v != 0; v = s.pool.link(v).Load() {
			if int(v) > total {
				t.Fatalf("shard %d: node %d beyond the %d allocated", i, v, total)
			}
			if seen[v-1] {
				t.Fatalf("shard %d: node %d on the free lists twice", i, v)
			}
			seen[v-1] = true
			free++
		}
	}
	if free != total {
		t.Errorf("got %d free nodes; want all %d", free, total)
	}
	// At most g goroutines wait at once, one node each. Doubling chunks can
	// overshoot twofold, and a lease that misses nodes pushed onto a shard
	// it has already scanned may grow once more: a leak or unbounded growth
	// would exceed 4g.
	if limit := 4*g + poolChunk0; total > limit {
		t.Errorf("got %d nodes; want at most %d", total, limit)
	}
	t.Logf("%d chunks, %d nodes", k, total)
}

func TestMCSPadding(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"mcsNode", unsafe.Sizeof(mcsNode{}), mcsLine},
		{"lockStripe", unsafe.Sizeof(lockStripe{}), stripeLine},
		{"mcsShard", unsafe.Sizeof(mcsShard{}), mcsLine},
		{"poolHead", unsafe.Sizeof(poolHead{}), poolLine},
	} {
		t.Run("type="+tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got size %d; want %d", tc.got, tc.want)
			}
		})
	}
}

// TestStripesAligned checks that the stripe array starts on a cache line
// for every stripe count, so that each stripe has a line of its own (the
// padding alone would not give that from a misaligned start: two stripes
// would share every line). The allocator rounds each count's array to a
// power-of-two size class aligned to its size, or to whole pages.
func TestStripesAligned(t *testing.T) {
	for buckets := 8; buckets <= 1<<22; buckets *= 2 {
		s := newStripedLocks(buckets)
		if a := uintptr(unsafe.Pointer(&s.stripes[0])); a%stripeLine != 0 {
			t.Errorf("%d buckets (%d stripes): stripes start at %#x, not on a %d-byte line", buckets, len(s.stripes), a, stripeLine)
		}
	}
}

// BenchmarkStripedLocks measures a lock/unlock of two random buckets'
// stripes, with GOMAXPROCS goroutines and with 64 per processor.
func BenchmarkStripedLocks(b *testing.B) {
	withRTMBench(b, false)
	for _, par := range []int{1, 64} {
		b.Run(fmt.Sprintf("goroutines=%dxprocs", par), func(b *testing.B) {
			s := newStripedLocks(1 << 20)
			b.SetParallelism(par)
			b.ReportAllocs()
			var seed atomic.Uint64
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(seed.Add(1), 4))
				for pb.Next() {
					s.unlockBuckets(s.lockBuckets(r.Uint64N(1<<20), r.Uint64N(1<<20)))
				}
			})
		})
	}
	b.Run("uncontended", func(b *testing.B) {
		s := newStripedLocks(1 << 20)
		b.ReportAllocs()
		for i := range b.N {
			s.unlockBuckets(s.lockBuckets(uint64(i), uint64(i)*7+3))
		}
	})
	b.Run("mutex", func(b *testing.B) { // the baseline: one sync.Mutex
		var mu sync.Mutex
		n := 0 // guarded by mu
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				mu.Lock()
				n++
				mu.Unlock()
			}
		})
		_ = n
	})
}

func withRTMBench(b *testing.B, v bool) {
	old := useRTM
	useRTM = v
	b.Cleanup(func() { useRTM = old })
}

// TestMCSStateMachine enumerates the schedules of a few goroutines taking
// one stripe through the lock's real code (acquire, acquireSlow, await,
// compete, leave, release), one step at a time: mcsSteps stops every
// goroutine before each step that touches shared memory, and lockModel
// decides who goes next, and at every waiter's choice point whether it
// checks again or parks. So it enumerates acquisitions, barges, queuing,
// spinning, parking, wakes and releases as they interleave (the steps are
// the code's own atomic operations; the node pool's free-list operations
// run inside the step that leases or returns a node). It checks the claims
// at the top of mcs.go:
//
//   - mutual exclusion: no two goroutines in a section at once;
//   - no lost wake-up: at no point are all unfinished goroutines parked
//     with no token on their way (or spinning on a state nobody can
//     change), and every run finishes;
//   - bounded bypass: between two wins of a head, at most maxBypass
//     acquisitions by others while the queue is not empty;
//
// and at the end of every run the stripe is free (word 0, no head), no
// token is left in a wake channel, and every node is back in the pool.
//
// The search is depth-first over every schedule with at most bound
// preemptions (switching away from a goroutine that could go on), as in
// CHESS (Musuvathi and Qadeer, PLDI 2007), and a waiter re-checks only
// after the lock's state changed (checking again unchanged state repeats
// itself). maxBypass is 1 so that the bound is reached. The scheduling
// points exist in race builds only. Breaking the code on purpose fails it:
// a barge that ignores the bypass budget (bounded bypass), a head that
// parks without checking held again, or a release that does not wake a
// parked head (lost wake-up).
func TestMCSStateMachine(t *testing.T) {
	if !raceEnabled {
		t.Skip("the lock's scheduling points exist in race builds only (CI runs this package under -race)")
	}
	bound, pair := 2, 6
	if os.Getenv("CUCKOO_LONG") == "1" {
		bound, pair = 3, 1000 // 1000: every schedule of two goroutines
	}
	for _, tc := range []struct {
		iters []int // acquisitions per goroutine
		bound int
	}{
		{[]int{1, 1}, pair},
		{[]int{2, 2}, bound + 1},
		{[]int{1, 1, 1}, bound},
		{[]int{2, 1, 1}, bound},
	} {
		t.Run(fmt.Sprintf("iters=%v/preemptions=%d", tc.iters, tc.bound), func(t *testing.T) {
			runs, maxDepth := exploreLock(t, tc.iters, tc.bound, 1)
			t.Logf("%d schedules, up to %d steps", runs, maxDepth)
		})
	}
}

// lockModelSite is the test's own scheduling point inside a section.
const lockModelSite mcsSite = 100

// modelStop is what a goroutine reports when it reaches a scheduling
// point, or finishes.
type modelStop struct {
	site mcsSite
	v    uint32
	done bool
}

// lockModel runs one schedule of goroutines over a fresh stripe set.
type lockModel struct {
	t       *testing.T
	s       *stripedLocks
	iters   []int
	cur     int            // the goroutine allowed to run
	resume  []chan int     // per goroutine: go on with this decision
	arrived chan modelStop // the running goroutine stopped
	pend    []modelStop    // where each goroutine stands
	tokens  map[uint32]int // wake sends not yet received, by node
	again   []uint64       // state fingerprint when a waiter last chose to check again, 0 = none
	holders int            // goroutines in a section (changed only by the running one)
	bypass  int            // acquisitions by others since the head's last win, with the queue not empty
	errs    []string       // broken claims (appended only by the scheduler or the running goroutine)
}

// exploreLock enumerates the schedules of len(iters) goroutines, goroutine
// g taking stripe 0 iters[g] times, with at most bound preemptions, and
// returns how many schedules it ran and the longest.
func exploreLock(t *testing.T, iters []int, bound, maxBypass int) (runs, maxDepth int) {
	type choice struct{ n, i int }
	var stack []choice
	for {
		m := newLockModel(t, iters, maxBypass)
		depth := 0
		last, preempt := -1, 0
		for {
			var opts [][2]int // (goroutine, decision)
			for g := range iters {
				for _, d := range m.options(g) {
					if g != last && last >= 0 && len(m.options(last)) > 0 && preempt >= bound {
						continue // a preemption beyond the bound
					}
					opts = append(opts, [2]int{g, d})
				}
			}
			if len(opts) == 0 {
				if !m.finished() {
					m.fail("no goroutine can go on: %s", m.describe())
				}
				break
			}
			i := 0
			if depth < len(stack) {
				if stack[depth].n != len(opts) {
					t.Fatalf("replay diverged at step %d: %d choices, had %d (the lock's code is not deterministic under the scheduler)", depth, len(opts), stack[depth].n)
				}
				i = stack[depth].i
			} else {
				stack = append(stack, choice{len(opts), 0})
			}
			g, d := opts[i][0], opts[i][1]
			if g != last && last >= 0 && len(m.options(last)) > 0 {
				preempt++
			}
			last = g
			m.step(g, d)
			depth++
			if depth > 2000 {
				m.fail("schedule longer than 2000 steps (livelock?): %s", m.describe())
			}
			if len(m.errs) > 0 {
				break
			}
		}
		if len(m.errs) == 0 {
			m.checkEnd()
		}
		runs++
		maxDepth = max(maxDepth, depth)
		if len(m.errs) > 0 {
			var sched []string
			for _, c := range stack[:min(depth, len(stack))] {
				sched = append(sched, fmt.Sprintf("%d/%d", c.i, c.n))
			}
			t.Fatalf("schedule %d (choices %v): %s", runs, sched, strings.Join(m.errs, "; "))
		}
		m.close()
		stack = stack[:min(depth, len(stack))]
		for len(stack) > 0 && stack[len(stack)-1].i+1 >= stack[len(stack)-1].n {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return runs, maxDepth
		}
		stack[len(stack)-1].i++
	}
}

// newLockModel starts the goroutines of one schedule, each stopped at its
// first scheduling point.
func newLockModel(t *testing.T, iters []int, maxBypass int) *lockModel {
	m := &lockModel{
		t:       t,
		s:       newStripedLocks(8), // one stripe
		iters:   iters,
		resume:  make([]chan int, len(iters)),
		arrived: make(chan modelStop),
		pend:    make([]modelStop, len(iters)),
		tokens:  map[uint32]int{},
		again:   make([]uint64, len(iters)),
	}
	m.s.maxBypass = uint32(maxBypass)
	hook := func(s *stripedLocks, site mcsSite, v uint32) int {
		if s != m.s {
			return -1 // another test's locks
		}
		g := m.cur
		m.arrived <- modelStop{site: site, v: v}
		return <-m.resume[g]
	}
	mcsSteps.Store(&hook)
	for g := range iters {
		m.resume[g] = make(chan int)
		m.cur = g
		go m.body(g)
		m.pend[g] = m.wait()
	}
	return m
}

// body is goroutine g: iters[g] sections on stripe 0.
func (m *lockModel) body(g int) {
	m.point()
	for range m.iters[g] {
		m.s.acquire(0)
		m.holders++
		if m.holders != 1 {
			m.errs = append(m.errs, fmt.Sprintf("mutual exclusion: goroutine %d entered a section with %d holders", g, m.holders))
		}
		m.point()
		m.holders--
		m.s.release(0)
	}
	m.arrived <- modelStop{done: true}
}

// point is the test's own scheduling point.
func (m *lockModel) point() {
	g := m.cur
	m.arrived <- modelStop{site: lockModelSite}
	<-m.resume[g]
}

// wait returns the running goroutine's next stop.
func (m *lockModel) wait() modelStop {
	select {
	case st := <-m.arrived:
		return st
	case <-time.After(time.Minute):
		m.t.Fatalf("goroutine %d blocked outside the scheduling points (a send on a full wake channel, or a receive with no token?): %s", m.cur, m.describe())
		return modelStop{}
	}
}

// options returns the decisions goroutine g can take now, or none.
func (m *lockModel) options(g int) []int {
	p := m.pend[g]
	switch {
	case p.done:
		return nil
	case p.site == mcsSitePark:
		if m.tokens[p.v] > 0 {
			return []int{0}
		}
		return nil
	case p.site == mcsSiteWait:
		if m.again[g] != m.fingerprint() {
			return []int{1, 0}
		}
		return []int{0} // checking again would see what it saw
	case p.site == mcsSiteSpin:
		if m.again[g] != m.fingerprint() {
			return []int{1}
		}
		return nil
	}
	return []int{0}
}

// step lets goroutine g go on with decision d to its next stop, and checks
// the bypass bound on the way.
func (m *lockModel) step(g, d int) {
	p := m.pend[g]
	switch p.site {
	case mcsSitePark:
		m.tokens[p.v]--
		m.again[g] = 0
	case mcsSiteWake:
		m.tokens[p.v]++
	case mcsSiteWait, mcsSiteSpin:
		m.again[g] = 0
		if d == 1 {
			m.again[g] = m.fingerprint()
		}
	}
	before := m.s.stripes[0].tail.Load()
	m.cur = g
	m.resume[g] <- d
	m.pend[g] = m.wait()
	after := m.s.stripes[0].tail.Load()
	if before&mcsHeld == 0 && after&mcsHeld != 0 { // g took the stripe
		switch {
		case p.site == mcsSiteWord && p.v != 0: // the head's win
			m.bypass = 0
		case before>>mcsTailShift != 0: // a barge past a queued head
			m.bypass++
			if m.bypass > int(m.s.maxBypass) {
				m.fail("bounded bypass: goroutine %d overtook the head as acquisition %d since its last win (maxBypass %d)", g, m.bypass, m.s.maxBypass)
			}
		}
	}
	if after>>mcsTailShift == 0 && after&mcsBypassMask != 0 {
		m.fail("lock word %#x: bypass count with an empty queue", after)
	}
}

// fingerprint hashes the lock's shared state: the word, the head, every
// node's state and link, the tokens in flight.
func (m *lockModel) fingerprint() uint64 {
	st := &m.s.stripes[0]
	h := uint64(st.tail.Load())<<32 | uint64(st.head.Load())
	for v := uint32(1); v <= m.s.pool.capacity(); v++ {
		n := m.s.pool.item(v)
		h = h*0x9E3779B97F4A7C15 + uint64(n.state.Load())<<40 + uint64(n.next.Load())<<8 + uint64(m.tokens[v])
	}
	return h | 1
}

func (m *lockModel) finished() bool {
	for _, p := range m.pend {
		if !p.done {
			return false
		}
	}
	return true
}

func (m *lockModel) fail(format string, args ...any) {
	m.errs = append(m.errs, fmt.Sprintf(format, args...))
}

// describe says where every goroutine stands.
func (m *lockModel) describe() string {
	st := &m.s.stripes[0]
	out := fmt.Sprintf("word %#x head %d tokens %v;", st.tail.Load(), st.head.Load(), m.tokens)
	for g, p := range m.pend {
		out += fmt.Sprintf(" g%d: site %d v %d done %v;", g, p.site, p.v, p.done)
	}
	for v := uint32(1); v <= m.s.pool.capacity(); v++ {
		n := m.s.pool.item(v)
		out += fmt.Sprintf(" node %d: state %d next %d;", v, n.state.Load(), n.next.Load())
	}
	return out
}

// checkEnd checks a finished schedule: the stripe free, no token left,
// every node back in the pool.
func (m *lockModel) checkEnd() {
	st := &m.s.stripes[0]
	if w, h := st.tail.Load(), st.head.Load(); w != 0 || h != 0 {
		m.fail("at the end: lock word %#x, head %d; want 0, 0", w, h)
	}
	free := 0
	for i := range m.s.pool.heads {
		for v := uint32(m.s.pool.heads[i].v.Load()); v != 0; v = m.s.pool.link(v).Load() {
			free++
		}
	}
	if c := int(m.s.pool.capacity()); free != c {
		m.fail("at the end: %d of %d nodes free", free, c)
	}
	for v := uint32(1); v <= m.s.pool.capacity(); v++ {
		if n := len(m.s.pool.item(v).wake); n != 0 {
			m.fail("at the end: node %d has %d tokens in its wake channel", v, n)
		}
	}
}

// close removes the hook once a schedule has finished.
func (m *lockModel) close() { mcsSteps.Store(nil) }
