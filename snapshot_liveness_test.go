package cuckoo

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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
