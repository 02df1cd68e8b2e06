package cuckoo

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Tests of the snapshot gate (snapshot.go): relocations and snapshots never
// overlap, so a snapshot taken while other goroutines insert, delete and
// relocate holds every fingerprint that stayed in the filter throughout.

// TestSnapshotGateExcludes checks the gate's two waits one at a time: a
// relocation step does not start while a snapshot runs, and a snapshot does
// not start while a relocation step runs.
func TestSnapshotGateExcludes(t *testing.T) {
	var g snapshotGate
	g.movers.init(3)
	g.beginSnapshot()
	entered := make(chan struct{})
	go func() {
		g.exitMove(g.enterMove())
		close(entered)
	}()
	select {
	case <-entered:
		t.Fatal("enterMove returned while a snapshot ran; want it to wait")
	case <-time.After(20 * time.Millisecond):
	}
	g.endSnapshot()
	WaitOrFail(t, entered, time.Minute, "enterMove after endSnapshot")

	m := g.enterMove()
	begun := make(chan struct{})
	go func() {
		g.beginSnapshot()
		close(begun)
	}()
	select {
	case <-begun:
		t.Fatal("beginSnapshot returned while a relocation step ran; want it to wait")
	case <-time.After(20 * time.Millisecond):
	}
	g.exitMove(m)
	WaitOrFail(t, begun, time.Minute, "beginSnapshot after exitMove")
	g.endSnapshot()
}

// TestSnapshotGateStress runs movers and snapshotters on one gate, more
// goroutines than processors, and fails if a mover and a snapshot are ever
// inside the gate at once. Each side announces itself in a counter once the
// gate let it in and then checks the other side's counter, so any overlap
// is seen by at least one of them.
func TestSnapshotGateStress(t *testing.T) {
	for _, movers := range []int{1, runtime.GOMAXPROCS(0), 100} {
		t.Run(fmt.Sprintf("movers=%d", movers), func(t *testing.T) {
			var (
				g               snapshotGate
				inMove, inSnap  atomic.Int32
				overlaps        atomic.Int64
				moves, snaps    atomic.Int64
				stop            atomic.Bool
				moverWG, snapWG sync.WaitGroup
			)
			g.movers.init(3)
			for i := 0; i < movers; i++ {
				moverWG.Add(1)
				go func() {
					defer moverWG.Done()
					for !stop.Load() {
						m := g.enterMove()
						inMove.Add(1)
						if inSnap.Load() != 0 {
							overlaps.Add(1)
						}
						inMove.Add(-1)
						g.exitMove(m)
						moves.Add(1)
						// Yield as a relocating insert does between steps
						// (it has keys to hash and buckets to read); a tight
						// loop would hold its processor for a whole time
						// slice whenever no snapshot runs.
						runtime.Gosched()
					}
				}()
			}
			rounds := 500
			if testing.Short() {
				rounds = 100
			}
			// The snapshotters go on past their rounds until moves have
			// passed the gate too: on a loaded machine the movers may not
			// have run at all by the time the rounds are done (seen with
			// one mover in CI's purego run).
			const minMoves = 100
			for i := 0; i < 2; i++ {
				snapWG.Add(1)
				go func() {
					defer snapWG.Done()
					for r := 0; r < rounds || moves.Load() < minMoves; r++ {
						g.beginSnapshot()
						inSnap.Add(1)
						if inMove.Load() != 0 {
							overlaps.Add(1)
						}
						runtime.Gosched()
						inSnap.Add(-1)
						g.endSnapshot()
						snaps.Add(1)
						runtime.Gosched()
					}
				}()
			}
			WaitOrFail(t, Done(&snapWG), StressWatchdog, "snapshotters")
			stop.Store(true)
			WaitOrFail(t, Done(&moverWG), StressWatchdog, "movers")
			t.Logf("%d moves, %d snapshots", moves.Load(), snaps.Load())
			if n := overlaps.Load(); n != 0 {
				t.Errorf("a move and a snapshot overlapped %d times; want 0", n)
			}
		})
	}
}

// TestMoverGetsInBetweenOverlappingSnapshots runs snapshotters in a loop,
// more of them than processors, so that their snapshots keep overlapping
// and the gate is almost never free of them, and checks that movers still
// get in: a gate that lets a mover in only when it finds no snapshot at
// all keeps them out for as long as the loop runs.
func TestMoverGetsInBetweenOverlappingSnapshots(t *testing.T) {
	var (
		g     snapshotGate
		stop  atomic.Bool
		snaps atomic.Int64
		wg    sync.WaitGroup
	)
	g.movers.init(3)
	defer func() {
		stop.Store(true)
		WaitOrFail(t, Done(&wg), StressWatchdog, "snapshotters")
	}()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				g.beginSnapshot()
				runtime.Gosched() // a snapshot's copy: others begin meanwhile
				g.endSnapshot()
				snaps.Add(1)
			}
		}()
	}
	for snaps.Load() < 100 {
		runtime.Gosched()
	}
	const moves = 20
	entered := make(chan struct{})
	go func() {
		for range moves {
			g.exitMove(g.enterMove())
		}
		close(entered)
	}()
	// Each move waits for about one snapshot; a minute is a hang.
	WaitOrFail(t, entered, time.Minute, fmt.Sprintf("%d moves beside 8 looping snapshotters", moves))
	t.Logf("%d snapshots", snaps.Load())
}

// TestEncodeSnapshotUnderLoad takes snapshots (MarshalBinary and WriteTo,
// several at once) while churn goroutines insert and delete at 90-95% load,
// where most inserts need relocations, and checks that every snapshot loads
// and holds every key that was in the filter throughout.
func TestEncodeSnapshotUnderLoad(t *testing.T) {
	for _, mode := range encModes {
		for _, fbits := range []int{8, 12, 15, Bits12x5} {
			for _, churners := range []int{1, runtime.GOMAXPROCS(0), 100} {
				t.Run(fmt.Sprintf("mode=%v/bits=%d/churners=%d", mode, fbits, churners), func(t *testing.T) {
					encSnapshotStress(t, mode, fbits, churners)
				})
			}
		}
	}
}

func encSnapshotStress(t *testing.T, mode Mode, fbits, churners int) {
	// Each snapshotter takes rounds snapshots, or as many as fit in budget
	// (at least 2), and goes on until some insert needed a relocation
	// during a snapshot.
	capacity, rounds, budgetMS := 16384, Sized(4, 16, 40), Sized(100, 500, 2000)
	if testing.Short() || raceEnabled {
		capacity, rounds, budgetMS = 4096, Sized(4, 4, 8), Sized(100, 250, 1000)
	}
	budget := time.Duration(budgetMS) * time.Millisecond
	const snapshotters = 4
	f := NewTestFilter(t, capacity, mode, fbits, 0xfeed)
	slots := f.Cap()
	target := slots * 93 / 100

	// Stable keys fill 45% of the slots before the churn starts. Churn keys
	// that share a stable key's fingerprint and buckets are not used: a
	// delete of one could remove the other's copy, the one case the
	// snapshot guarantee (a copy present throughout) does not cover.
	nStable := slots * 45 / 100
	if n := encFill(t, f, "stable-", nStable); n != nStable {
		t.Fatalf("inserted %d stable keys; want %d", n, nStable)
	}
	pair := func(key []byte) uint64 {
		b1, fp, _ := f.hash(key)
		return fp<<32 | min(b1, f.alt(b1, fp))
	}
	stablePairs := make(map[uint64]bool, nStable)
	var buf []byte
	for i := 0; i < nStable; i++ {
		buf = encKey(buf, "stable-", i)
		stablePairs[pair(buf)] = true
	}
	// bothFull reports whether an insert of key has to relocate.
	bothFull := func(key []byte) bool {
		b1, fp, _ := f.hash(key)
		b2 := f.alt(b1, fp)
		return !hasRoom(f, b1, fp) && !hasRoom(f, b2, fp)
	}

	var (
		stop        = make(chan struct{})
		active      atomic.Int32 // snapshots being taken
		maxActive   atomic.Int32 // most snapshots seen running at once
		relocDuring atomic.Int64 // inserts that needed a relocation while a snapshot ran
		inserts     atomic.Int64
		deletes     atomic.Int64
		full        atomic.Int64
		churnWG     sync.WaitGroup
		snapWG      sync.WaitGroup
	)
	for g := 0; g < churners; g++ {
		churnWG.Add(1)
		go func(g int) {
			defer churnWG.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			prefix := fmt.Sprintf("churn-%d-", g)
			var own [][]byte
			next := 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				if f.Len() < target || len(own) == 0 {
					key := encKey(nil, prefix, next)
					next++
					if stablePairs[pair(key)] {
						continue
					}
					if active.Load() > 0 && bothFull(key) {
						relocDuring.Add(1)
					}
					if err := f.Insert(key); err != nil {
						full.Add(1)
						if len(own) == 0 {
							runtime.Gosched()
							continue
						}
					} else {
						inserts.Add(1)
						own = append(own, key)
						continue
					}
				}
				i := rng.IntN(len(own))
				f.Delete(own[i])
				deletes.Add(1)
				own[i] = own[len(own)-1]
				own = own[:len(own)-1]
			}
		}(g)
	}
	// Let the churn reach its target load before snapshotting.
	for deadline := time.Now().Add(10 * time.Second); f.Len() < target*98/100 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if lf := f.LoadFactor(); lf < 0.85 {
		t.Errorf("load factor %.3f before the snapshots; want at least 0.85", lf)
	}

	var snapshots atomic.Int64
	start := time.Now()
	for s := 0; s < snapshotters; s++ {
		snapWG.Add(1)
		go func(s int) {
			defer snapWG.Done()
			var existing *Filter
			more := func(r int) bool {
				// Go on until an insert relocated during a snapshot and
				// two snapshots overlapped (a snapshot copies the table in
				// a millisecond or two, so overlaps take a while).
				if (relocDuring.Load() == 0 || maxActive.Load() < 2) && time.Since(start) < 20*time.Second {
					return true
				}
				return r < 2 || r < rounds && time.Since(start) < budget
			}
			for r := 0; more(r); r++ {
				var data []byte
				if a := active.Add(1); a > maxActive.Load() {
					maxActive.Store(a) // racy max: a lower bound is enough
				}
				if (r+s)%2 == 0 {
					var err error
					data, err = f.MarshalBinary()
					if err != nil {
						t.Errorf("MarshalBinary: %v", err)
					}
				} else {
					var b bytes.Buffer
					if _, err := f.WriteTo(&b); err != nil {
						t.Errorf("WriteTo: %v", err)
					}
					data = b.Bytes()
				}
				active.Add(-1)
				snapshots.Add(1)

				// Load into a zero Filter or into an existing one of the
				// same mode, alternately with UnmarshalBinary and ReadFrom.
				g := new(Filter)
				if r%3 == 2 {
					if existing == nil {
						existing = NewTestFilter(t, 100, mode, 8, 5)
					}
					g = existing
				}
				var err error
				if r%2 == 0 {
					err = g.UnmarshalBinary(data)
				} else {
					_, err = g.ReadFrom(bytes.NewReader(data))
				}
				if err != nil {
					t.Errorf("snapshot %d.%d does not load: %v", s, r, err)
					return
				}
				if r%3 == 2 && g.Mode() != mode {
					t.Errorf("Mode() = %v after loading into a %v filter", g.Mode(), mode)
				}
				if g.Len() < nStable || g.Len() > g.Cap() {
					t.Errorf("snapshot %d.%d: Len() = %d; want %d to %d", s, r, g.Len(), nStable, g.Cap())
				}
				var buf []byte
				for i := 0; i < nStable; i++ {
					buf = encKey(buf, "stable-", i)
					if !g.Lookup(buf) {
						t.Errorf("snapshot %d.%d misses stable key %q", s, r, buf)
						return
					}
				}
				time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
			}
		}(s)
	}
	snapWG.Wait()
	close(stop)
	churnWG.Wait()
	t.Logf("%d snapshots (up to %d at once), %d inserts, %d deletes, %d ErrFull, %d inserts needing relocation during a snapshot, final load %.3f",
		snapshots.Load(), maxActive.Load(), inserts.Load(), deletes.Load(), full.Load(), relocDuring.Load(), f.LoadFactor())
	if relocDuring.Load() == 0 {
		t.Error("no insert needed a relocation while a snapshot ran: the test proved nothing")
	}
	if maxActive.Load() < 2 && !testing.Short() {
		t.Error("no two snapshots ran at once")
	}

	// At rest, a snapshot is the table itself.
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if g.Len() != f.Len() || !equalUint64s(encWords(&g), encWords(f)) {
		t.Fatalf("quiescent snapshot: Len() = %d, original %d, or tables differ", g.Len(), f.Len())
	}
	encCheckKeys(t, &g, "stable-", nStable)
}

// Snapshots against keys that collide with a key already in the filter.
// A snapshot copies the table word by word, lower words first, while
// other goroutines insert and delete (relocations wait for it). As with a
// search (lookup_test.go), a colliding key c whose first bucket is the
// second bucket q of key a can be inserted into a's first bucket p after
// the copy read p; were c's Delete to take a copy from q first, it would
// take a's, and the snapshot would hold a in neither bucket. These tests
// stall a snapshot right after it read p's word (the stall point of
// snapshot.go, race builds) and run that schedule: a was inserted before
// the snapshot and never deleted, so the loaded snapshot must hold it.

func TestSnapshotAgainstCollidingKeys(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	captures := []struct {
		name string
		copy func(t *testing.T, f *Filter) *Filter
	}{
		{"WriteTo", func(t *testing.T, f *Filter) *Filter {
			var b bytes.Buffer
			if _, err := f.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			var g Filter
			if _, err := g.ReadFrom(&b); err != nil {
				t.Fatal(err)
			}
			return &g
		}},
		{"Clone", func(t *testing.T, f *Filter) *Filter { return f.Clone() }},
	}
	for _, bits := range []int{8, 12, 15, Bits12x5} {
		for _, mode := range []Mode{LockFree, Locked} {
			for _, c := range captures {
				t.Run(fmt.Sprintf("bits=%d/mode=%v/%s", bits, mode, c.name), func(t *testing.T) {
					f := NewTestFilter(t, 64, mode, bits, 99)
					x := newCollision(t, f)
					pw := x.p // the word holding p
					if f.lay.packed {
						pw >>= 1
					}
					done := false
					stall := func(owner any, i uint64) {
						if owner != f || i != pw || done {
							return
						}
						done = true
						x.churn(x.p) // c lands in p, the emptier, and is deleted
					}
					snapshotStalls.Store(&stall)
					defer snapshotStalls.Store(nil)
					g := c.copy(t, f)
					if !done {
						t.Fatal("the snapshot did not reach its stall point")
					}
					if !g.Lookup(x.a) {
						t.Errorf("a key inserted before the snapshot and never deleted is missing from it (p %d: %v, q %d: %v in the copy)",
							x.p, bucketFps(g, x.p), x.q, bucketFps(g, x.q))
					}
				})
			}
		}
	}
}

// TestGrowingSnapshotAgainstCollidingDeletes runs the schedule above on a
// growing filter's table, where a Delete takes the youngest matching
// entry, a tie going to the deleting key's first bucket, so that no order
// of reads makes a snapshot safe by itself: C (first bucket Q, K's second)
// is inserted into P after the snapshot read P, and C's Delete, were it to
// run at once, would take K's entry from Q. Deletes wait for a snapshot
// (they hold the snapshot gate, as relocations do), so the snapshot reads
// Q before C's Delete runs. The stall gives that Delete a quarter of a second to
// finish before the snapshot goes on, long enough for a Delete that does
// not wait.
func TestGrowingSnapshotAgainstCollidingDeletes(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run(fmt.Sprintf("mode=%v", mode), func(t *testing.T) {
			// P = k.b1 is the lower word: the snapshot reads it first.
			g, x, k, c := growCollision(t, mode, func(k growKey) bool { return k.b1 < k.b2 })
			p, q := k.b1, k.b2
			churned := make(chan string, 1)
			stalled := false
			stall := func(owner any, i uint64) {
				if owner != x || i != p || stalled {
					return
				}
				stalled = true
				go func() {
					if st := g.addIn(x, c); st != growDone {
						churned <- fmt.Sprintf("insert of C: status %d", st)
						return
					}
					if matchLanes(x.t.load(p), k.q1) == 0 {
						churned <- "C did not land in P"
						return
					}
					if ok, st := g.deleteIn(x, c); !ok || st != growDone {
						churned <- fmt.Sprintf("delete of C: %v, status %d", ok, st)
						return
					}
					churned <- ""
				}()
				select {
				case msg := <-churned:
					churned <- msg // the Delete did not wait: the check below will tell
				case <-time.After(250 * time.Millisecond):
				}
			}
			snapshotStalls.Store(&stall)
			defer snapshotStalls.Store(nil)
			data, err := g.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if msg := <-churned; msg != "" {
				t.Fatal(msg)
			}
			if !stalled {
				t.Fatal("the snapshot did not reach its stall point")
			}
			var h Growing
			if err := h.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			y := h.st.shards[0].searched()
			if !h.lookupIn(y, k) {
				t.Errorf("a key inserted before the snapshot and never deleted is missing from it (P: %#x, Q: %#x in the copy)",
					y.t.load(p), y.t.load(q))
			}
			if !g.lookupIn(x, k) {
				t.Errorf("K is missing from the filter itself")
			}
		})
	}
}

// Liveness of the snapshot gate through the API: relocating inserts and a
// growing filter's deletes wait for snapshots, and must still get through
// while several goroutines take snapshots in a loop, so that the
// snapshots keep overlapping (snapshot.go, "Claim (movers are not shut
// out)").

// loopSnapshots starts n goroutines that call snap until the returned stop
// function is called; stop waits for them. It returns once they have taken
// some snapshots.
func loopSnapshots(t *testing.T, n int, snap func() error) (stop func()) {
	t.Helper()
	var (
		done  atomic.Bool
		snaps atomic.Int64
		wg    sync.WaitGroup
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				if err := snap(); err != nil {
					t.Errorf("snapshot: %v", err)
					return
				}
				snaps.Add(1)
			}
		}()
	}
	// If the test fails before it calls stop, the snapshotters still end.
	t.Cleanup(func() { done.Store(true) })
	for snaps.Load() < int64(2*n) {
		runtime.Gosched()
	}
	return func() {
		done.Store(true)
		WaitOrFail(t, Done(&wg), StressWatchdog, "snapshotters")
		t.Logf("%d snapshots", snaps.Load())
	}
}

// livenessOps is how many relocating inserts or growing deletes each liveness test
// makes: each waits for about one snapshot.
const livenessOps = 100

// TestRelocationsGetInBetweenOverlappingSnapshots churns a full fixed
// filter, so that its inserts relocate, beside 8 goroutines taking
// snapshots in a loop, and checks that the churn finishes and relocated.
func TestRelocationsGetInBetweenOverlappingSnapshots(t *testing.T) {
	for _, mode := range encModes {
		t.Run(mode.String(), func(t *testing.T) {
			f := NewTestFilter(t, 4096, mode, Bits12x5, 7)
			var keys [][]byte
			for i := 0; f.LoadFactor() < 0.93; i++ {
				k := fmt.Appendf(nil, "stable-%d", i)
				if f.Insert(k) == nil {
					keys = append(keys, k)
				}
			}
			before := f.Stats().Relocations
			stop := loopSnapshots(t, 8, func() error { _, err := f.MarshalBinary(); return err })
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := range livenessOps {
					k := fmt.Appendf(nil, "churn-%d", i)
					if f.Insert(k) == nil {
						j := i % len(keys)
						f.Delete(keys[j])
						keys[j] = k
					}
				}
			}()
			WaitOrFail(t, done, time.Minute, fmt.Sprintf("%d inserts at 93%% load beside 8 looping snapshotters", livenessOps))
			stop()
			if r := f.Stats().Relocations - before; r == 0 {
				t.Errorf("the churn relocated nothing; want relocations, which wait for snapshots")
			}
			for i, k := range keys {
				if !f.Lookup(k) {
					t.Fatalf("key %d (%q) is missing after the churn", i, k)
				}
			}
		})
	}
}

// TestGrowingDeletesGetInBetweenOverlappingSnapshots deletes from a
// growing filter, whose deletes wait for snapshots, beside 8 goroutines
// taking snapshots in a loop, and checks that the deletes finish.
func TestGrowingDeletesGetInBetweenOverlappingSnapshots(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(3))
			const n = 5000
			for i := range n {
				if err := g.Insert(fmt.Appendf(nil, "k%d", i)); err != nil {
					t.Fatalf("Insert %d: %v", i, err)
				}
			}
			stop := loopSnapshots(t, 8, func() error { _, err := g.MarshalBinary(); return err })
			done := make(chan struct{})
			deleted := 0
			go func() {
				defer close(done)
				for i := range livenessOps {
					if g.Delete(fmt.Appendf(nil, "k%d", i)) {
						deleted++
					}
				}
			}()
			WaitOrFail(t, done, time.Minute, fmt.Sprintf("%d growing deletes beside 8 looping snapshotters", livenessOps))
			stop()
			if deleted != livenessOps {
				t.Errorf("deleted %d of %d inserted keys; want all", deleted, livenessOps)
			}
		})
	}
}
