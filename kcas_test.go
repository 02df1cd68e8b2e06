package cuckoo

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newTestTable(n int, v uint64) *kcasTable {
	t := &kcasTable{words: make([]atomic.Uint64, n)}
	for i := range t.words {
		t.words[i].Store(v)
	}
	return t
}

func TestKCASSequential(t *testing.T) {
	tb := newTestTable(8, 10)
	var op kcasOp
	op.add(5, 10, 11)
	op.add(1, 10, 9)
	op.add(3, 10, 10)
	if !tb.kcas(&op) {
		t.Fatal("kcas with matching old values failed")
	}
	for i, want := range []uint64{10, 9, 10, 10, 10, 11, 10, 10} {
		if got := tb.load(uint64(i)); got != want {
			t.Errorf("word %d = %d; want %d", i, got, want)
		}
	}
	op = kcasOp{}
	op.add(1, 9, 100)
	op.add(2, 11, 100) // word 2 holds 10: must fail and change nothing
	if tb.kcas(&op) {
		t.Fatal("kcas with a mismatching old value succeeded")
	}
	if got := tb.load(1); got != 9 {
		t.Errorf("word 1 after failed kcas = %d; want 9", got)
	}
	for i := range tb.words {
		if v := tb.words[i].Load(); v&tagMask != 0 {
			t.Errorf("word %d still holds a reference %#x", i, v)
		}
	}
}

// TestKCASTransfers runs random concurrent transfers between 2..maxK words.
// Every transfer keeps the total constant, so the total must be unchanged at
// the end, and every atomic snapshot taken meanwhile (a K-CAS whose new values
// equal its old ones succeeds only if the values were all current at once)
// must see the same total. Small values make ABA frequent, which exercises
// the RDCSS guard against late helpers.
func TestKCASTransfers(t *testing.T) {
	for _, g := range []int{1, runtime.GOMAXPROCS(0), 4 * runtime.GOMAXPROCS(0), 64} {
		for _, words := range []int{4, 64} {
			t.Run(fmt.Sprintf("goroutines=%d/words=%d", g, words), func(t *testing.T) {
				testTransfers(t, g, words)
			})
		}
	}
}

func testTransfers(t *testing.T, goroutines, nwords int) {
	const start = 3
	iters := 20000
	if testing.Short() {
		iters = 2000
	}
	tb := newTestTable(nwords, start)
	capBefore := descriptors.pool.capacity()
	total := uint64(start * nwords)
	var wg sync.WaitGroup
	var bad atomic.Int64
	var succeeded atomic.Int64
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 7))
			for it := 0; it < iters/goroutines+1; it++ {
				k := 2 + r.IntN(maxK-1)
				if k > nwords {
					k = nwords
				}
				var op kcasOp
				perm := r.Perm(nwords)[:k]
				var sum uint64
				for _, i := range perm {
					v := tb.load(uint64(i))
					sum += v
					op.add(uint64(i), v, v)
				}
				if it%4 == 0 && k == nwords {
					// Snapshot: all words at once.
					if tb.kcas(&op) && sum != total {
						bad.Add(1)
					}
					continue
				}
				// Move one unit from the first word to another.
				if op.old[0] == 0 {
					continue
				}
				op.new[0]--
				op.new[1+r.IntN(k-1)]++
				if tb.kcas(&op) {
					succeeded.Add(1)
				}
			}
		}(uint64(g))
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Errorf("%d atomic snapshots saw a total other than %d", n, total)
	}
	var sum uint64
	for i := range tb.words {
		v := tb.words[i].Load()
		if v&tagMask != 0 {
			t.Fatalf("word %d holds a reference %#x after all operations", i, v)
		}
		sum += v
	}
	if sum != total {
		t.Fatalf("total after %d transfers = %d; want %d", succeeded.Load(), sum, total)
	}
	if succeeded.Load() == 0 {
		t.Fatal("no transfer succeeded")
	}
	// Descriptors are reused: the table grows with the goroutines that run
	// at once (each holds at most one lease), not with the operations. The
	// bound allows for leases that sat in the per-P cache when a garbage
	// collection dropped them and whose cleanup has not yet returned
	// their slots: at most one per goroutine of this test again.
	// Chunks double, so one more chunk can overshoot twofold.
	grown := descriptors.pool.capacity() - capBefore
	if max := uint32(4*goroutines + poolChunk0); grown > max {
		t.Errorf("descriptor table grew by %d slots for %d goroutines; want <= %d", grown, goroutines, max)
	}
}

// TestKCASMixedWithCAS interleaves single-word CAS increments with K-CAS
// transfers: increments on a word add to the total, so the final total must
// equal the start plus the number of successful increments.
func TestKCASMixedWithCAS(t *testing.T) {
	const nwords = 8
	tb := newTestTable(nwords, 5)
	iters := 20000
	if testing.Short() {
		iters = 2000
	}
	var incs atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for it := 0; it < iters/8; it++ {
				if g%2 == 0 {
					i := uint64(r.IntN(nwords))
					for {
						v := tb.words[i].Load()
						if v&tagMask != 0 {
							tb.helpWord(v)
							continue
						}
						if tb.cas(i, v, v+1) {
							incs.Add(1)
							break
						}
					}
					continue
				}
				a, b := uint64(r.IntN(nwords)), uint64(r.IntN(nwords))
				if a == b {
					continue
				}
				va, vb := tb.load(a), tb.load(b)
				if va == 0 {
					continue
				}
				var op kcasOp
				op.add(a, va, va-1)
				op.add(b, vb, vb+1)
				tb.kcas(&op)
			}
		}(g)
	}
	wg.Wait()
	var sum int64
	for i := range tb.words {
		sum += int64(tb.words[i].Load())
	}
	if want := 5*nwords + incs.Load(); sum != want {
		t.Fatalf("total = %d; want %d", sum, want)
	}
}

func TestKCASAllocs(t *testing.T) {
	tb := newTestTable(4, 1)
	var op kcasOp
	allocs := testing.AllocsPerRun(1000, func() {
		op = kcasOp{}
		a, b := tb.load(0), tb.load(3)
		op.add(0, a, b)
		op.add(3, b, a)
		if !tb.kcas(&op) {
			t.Fatal("uncontended kcas failed")
		}
	})
	if allocs != 0 {
		t.Fatalf("kcas allocates %.1f times per call; want 0", allocs)
	}
}

func TestDescPoolLeases(t *testing.T) {
	p := newDescPool()
	const n = 3 * poolChunk0
	seen := map[uint32]bool{}
	var held []uint32
	for i := 0; i < n; i++ {
		s := p.lease()
		if seen[s] {
			t.Fatalf("slot %d leased twice", s)
		}
		seen[s] = true
		held = append(held, s)
	}
	capacity := p.pool.capacity()
	if capacity < n || capacity > 2*n {
		t.Fatalf("capacity %d after %d leases; want in [%d, %d]", capacity, n, n, 2*n)
	}
	for _, s := range held {
		p.release(s)
	}
	for i := 0; i < n; i++ {
		if s := p.lease(); !seen[s] {
			t.Fatalf("lease after release returned fresh slot %d", s)
		}
	}
	if got := p.pool.capacity(); got != capacity {
		t.Fatalf("capacity after reuse = %d; want %d", got, capacity)
	}
}

// TestDescriptorReuseRejectsStaleRead reuses a descriptor slot while a
// reader still holds references to its previous operation, and reads them
// at the worst point: after the new operation's fields are written and
// before it is published (descFieldsWritten). A seqlock read of the old
// K-CAS reference or of the old RDCSS reference must then either fail or
// return the old operation's fields, never the new ones. It fails when the
// sequence bump is moved after the hook, in kcasWith or in rdcss (both
// mutations checked); a bump moved between the field writes and the hook
// is TestDescriptorSeqlockUnderReuse's to catch.
func TestDescriptorReuseRejectsStaleRead(t *testing.T) {
	if !raceEnabled {
		t.Skip("descFieldsWritten is called in race builds only")
	}
	tb := newTestTable(8, 10)
	my := leaseDesc()
	defer my.release()
	d := descriptors.desc(my.slot)

	var op1 kcasSnap
	op1.add(1, 10, 11)
	op1.add(2, 10, 12) // installed by rdcss
	if !tb.kcasWith(&op1, my) {
		t.Fatal("first K-CAS failed")
	}
	kref1 := makeRef(tagKCAS, my.slot, stateSeq(d.state.Load()))
	rref1 := makeRef(tagRDCSS, my.slot, d.rseq.Load())

	calls := 0
	descFieldsWritten = func(slot uint32) {
		if slot != my.slot {
			return
		}
		calls++
		var s kcasSnap
		if _, ok := tb.snapKCAS(kref1, &s); ok {
			if s.n != 2 || s.idx[0] != 1 || s.idx[1] != 2 || s.new[0] != 11 || s.new[1] != 12 {
				t.Errorf("call %d: a read of the finished K-CAS accepted fields %v %v %v (n %d) of the next use of its slot", calls, s.idx, s.old, s.new, s.n)
			}
		}
		if kref, idx, old, ok := tb.snapRDCSS(rref1); ok && (kref != kref1 || idx != 2 || old != 10) {
			t.Errorf("call %d: a read of the finished RDCSS accepted %#x, word %d, old %d from the next use of its slot", calls, kref, idx, old)
		}
	}
	defer func() { descFieldsWritten = nil }()

	var op2 kcasSnap
	op2.add(3, 10, 20)
	op2.add(4, 10, 30)
	if !tb.kcasWith(&op2, my) {
		t.Fatal("second K-CAS failed")
	}
	if calls < 2 {
		t.Fatalf("descFieldsWritten ran %d times; want 2 (the K-CAS part and the RDCSS part)", calls)
	}
	for i, want := range []uint64{10, 11, 12, 20, 30, 10, 10, 10} {
		if got := tb.load(uint64(i)); got != want {
			t.Errorf("word %d = %d; want %d", i, got, want)
		}
	}
}

// TestDescriptorSeqlockUnderReuse runs K-CASes of three words on two
// disjoint groups of words, reusing descriptor slots, while two readers
// take the references they find in the words and read the descriptors they
// name with the seqlock reads. Every snapshot a reader accepts must be one
// operation's: three consecutive words of one group, all with the same old
// value and that value plus one as the new, the word it was found in among
// them; every accepted RDCSS snapshot must target the word it was found in.
// It fails when kcasWith bumps the sequence after its field writes
// (checked: 598 mixed snapshots accepted in 1.5 s, among 17 million).
func TestDescriptorSeqlockUnderReuse(t *testing.T) {
	d := 1500 * time.Millisecond
	if testing.Short() || raceEnabled {
		d = 300 * time.Millisecond
	}
	tb := newTestTable(8, 0)
	var stop atomic.Bool
	var bad, kAccepted, rAccepted atomic.Int64
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := uint64(4 * w)
			for !stop.Load() {
				a := tb.load(base)
				var op kcasOp
				for k := range uint64(3) {
					op.add(base+k, a, a+1)
				}
				tb.kcas(&op)
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				for i := range uint64(8) {
					v := tb.word(i).Load()
					switch {
					case v&tagKCAS != 0:
						var s kcasSnap
						if _, ok := tb.snapKCAS(v, &s); ok {
							kAccepted.Add(1)
							b := s.idx[0]
							one := s.n == 3 && b%4 == 0 && i >= b && i <= b+2
							for k := range 3 {
								one = one && s.idx[k] == b+uint64(k) && s.old[k] == s.old[0] && s.new[k] == s.old[0]+1
							}
							if !one {
								bad.Add(1)
							}
						}
					case v&tagRDCSS != 0:
						if kref, idx, _, ok := tb.snapRDCSS(v); ok {
							rAccepted.Add(1)
							if idx != i || kref&tagKCAS == 0 {
								bad.Add(1)
							}
						}
					}
				}
			}
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d K-CAS and %d RDCSS snapshots accepted, %d of them mixed", kAccepted.Load(), rAccepted.Load(), bad.Load())
	if bad.Load() != 0 {
		t.Errorf("%d snapshots mixing two uses of a descriptor slot were accepted", bad.Load())
	}
	if kAccepted.Load() == 0 {
		t.Error("no K-CAS snapshot was read: the test checked nothing")
	}
}

// TestKCASUnhookCompletesALaggingRDCSS steps by hand the schedule in which
// step 3's CAS on a word fails because a helper's RDCSS of this use still
// sits there: the owner must complete that RDCSS (unhook) before it reuses
// its slot, else a completer that read "undecided" before the decision
// later puts the K-CAS reference back, the reused slot disowns it, and the
// word is lost (load spins). Real functions take every step that is a whole
// call; the stalls inside rdcss and completeRDCSS are made by hand. The
// completer resumes after step 3 ("after") or between step 3's CAS and its
// unhook ("between": unhook then finds the reference back). "after" fails
// when help's fallback call t.unhook(s, k, final[k]) is removed (checked).
func TestKCASUnhookCompletesALaggingRDCSS(t *testing.T) {
	for _, between := range []bool{false, true} {
		t.Run(map[bool]string{false: "after", true: "between"}[between], func(t *testing.T) {
			testUnhookLaggingRDCSS(t, between)
		})
	}
}

func testUnhookLaggingRDCSS(t *testing.T, between bool) {
	tb := newTestTable(4, 10)
	my, h, dl := leaseDesc(), leaseDesc(), leaseDesc()
	defer my.release()
	defer h.release()
	defer dl.release()

	// Owner: kcasWith writes the descriptor, then meets 99 in word 0 and
	// returns with the operation unseen; we make the CAS it makes when
	// word 0 holds its old value, and stall the owner before its help.
	var s kcasSnap
	for i := range uint64(3) {
		s.add(i, 10, 11)
	}
	tb.word(0).Store(99)
	if tb.kcasWith(&s, my) {
		t.Fatal("K-CAS succeeded with 99 in word 0")
	}
	if !tb.cas(0, 99, 10) || !tb.word(0).CompareAndSwap(10, s.ref) {
		t.Fatal("could not place the K-CAS reference in word 0")
	}
	tb.word(2).Store(99)

	// Helper D installs word 1, reads 99 in word 2 and stalls before it
	// decides failure.
	var sD kcasSnap
	st, ok := tb.snapKCAS(tb.word(0).Load(), &sD)
	if !ok || st&3 != statusUndecided {
		t.Fatal("no snapshot of the undecided K-CAS")
	}
	if v := tb.rdcss(dl.slot, &sD, 1); v != 10 {
		t.Fatalf("D's install of word 1 returned %#x", v)
	}
	if v := tb.rdcss(dl.slot, &sD, 2); v != 99 {
		t.Fatalf("D read %#x in word 2; want 99", v)
	}

	// Word 2 gets its old value back; helper H, still seeing the operation
	// undecided, places its RDCSS reference there (rdcss up to its placing
	// CAS) and stalls before completing it.
	if !tb.cas(2, 99, 10) {
		t.Fatal("word 2 did not hold 99")
	}
	var sH kcasSnap
	if _, ok := tb.snapKCAS(tb.word(0).Load(), &sH); !ok {
		t.Fatal("H got no snapshot")
	}
	hd := descriptors.desc(h.slot)
	rseq := hd.rseq.Load() + 1
	hd.rseq.Store(rseq)
	hd.rref.Store(sH.ref)
	hd.ridx.Store(2)
	hd.rold.Store(10)
	rref := makeRef(tagRDCSS, h.slot, rseq)
	if !tb.word(2).CompareAndSwap(10, rref) {
		t.Fatal("H could not place its RDCSS reference")
	}

	// C meets rref in word 2 and runs completeRDCSSRef: it reads the state
	// undecided and stalls before its CAS (stale keeps what it read).
	kref, ci, cold, ok := tb.snapRDCSS(tb.word(2).Load())
	if !ok || kref != s.ref {
		t.Fatal("C could not read H's RDCSS")
	}
	var stale kcasDesc
	stale.state.Store(descriptors.desc(refSlot(kref)).state.Load())

	// D decides failure (help's decide step); the owner resumes and runs
	// step 3: by its help (which finds the state decided), or, "between",
	// as help's loop does, C resuming after the CAS on word 2 fails.
	if !sD.d.state.CompareAndSwap(st, st&^3|statusFailed) {
		t.Fatal("D could not decide failure")
	}
	if !between {
		if tb.help(&s, my.slot, 1) {
			t.Fatal("the failed K-CAS reported success")
		}
		tb.completeRDCSS(&stale, rref, kref, ci, cold)
	} else {
		for k := range 3 {
			if !tb.word(s.idx[k]).CompareAndSwap(s.ref, s.old[k]) {
				if k != 2 {
					t.Fatalf("step 3's CAS on word %d failed", k)
				}
				tb.completeRDCSS(&stale, rref, kref, ci, cold)
				if v := tb.word(2).Load(); v != s.ref {
					t.Fatalf("C's late completion left %#x in word 2; want the K-CAS reference", v)
				}
				tb.unhook(&s, k, s.old[k])
			}
		}
	}

	// H resumes; then the owner reuses its slot for a new K-CAS.
	tb.completeRDCSS(sH.d, rref, sH.ref, 2, 10)
	var next kcasSnap
	next.add(3, 10, 12)
	if !tb.kcasWith(&next, my) {
		t.Fatal("the owner's next K-CAS failed")
	}

	for i, want := range []uint64{10, 10, 10, 12} {
		if v := tb.word(uint64(i)).Load(); v != want {
			t.Errorf("word %d holds %#x; want %d", i, v, want)
		}
		got := make(chan uint64, 1)
		go func() { got <- tb.load(uint64(i)) }()
		select {
		case v := <-got:
			if v != want {
				t.Errorf("load(%d) = %d; want %d", i, v, want)
			}
		case <-time.After(2 * time.Second):
			tb.word(uint64(i)).Store(want) // releases the spinning load
			t.Errorf("load(%d) spins: its word holds a reference no descriptor owns", i)
		}
	}
}
