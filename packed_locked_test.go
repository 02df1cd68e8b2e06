package cuckoo

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// checkPackedTopSlots checks that slot 3 of every odd bucket (bits 56 to
// 63 of every word) holds only 0 to pkTopLimit-1.
func checkPackedTopSlots(t *testing.T, f *Filter) {
	t.Helper()
	for i := range f.t.words {
		if w := f.t.words[i].Load(); w>>56 >= pkTopLimit {
			t.Fatalf("word %d = %#x: restricted top slot holds %d", i, w, w>>56)
		}
	}
}

// TestPackedLockedInsertVsUnique races plain Inserts of one key against
// InsertUniques of it in a Locked packed filter held near 70% load, while
// churners insert and delete their own keys and two goroutines relocate
// fingerprints, often those of the key's own buckets. The key's pair of
// buckets and fingerprint are used by no other key. Each round: at most one
// InsertUnique adds; when none adds and none met ErrFull a plain Insert
// added; Count equals the copies added, and exactly that many Deletes
// succeed. At the end the table holds Len fingerprints, every stable key,
// and no fingerprint of 64 or more in a restricted top slot. It fails when
// pkAddLocked writes from its unlocked read instead of re-reading under
// the lock, and when it locks the stripe of the bucket index instead of
// the word's (both checked, the latter with RTM elision on, where the
// relocation stress tests missed it; written by an adversarial review).
func TestPackedLockedInsertVsUnique(t *testing.T) {
	for _, capacity := range []int{64, 1024} {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("cap=%d/seed=%d", capacity, seed), func(t *testing.T) {
				packedInsertVsUnique(t, capacity, seed)
			})
		}
	}
}

func packedInsertVsUnique(t *testing.T, capacity int, seed uint64) {
	f, err := New(capacity, WithFingerprintBits(8), WithMode(Locked), WithSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	cp := f.Cap()
	taken := map[[3]uint64]bool{}
	var stable [][]byte
	for i := 0; len(stable) < cp*70/100; i++ {
		k := key8('s', i)
		if err := f.Insert(k); err != nil {
			t.Fatalf("filling: %v", err)
		}
		stable = append(stable, k)
		taken[pairOf(f, k)] = true
	}
	const churners, relocators = 4, 2
	var churn [churners][][]byte
	for g := range churners {
		for i := 0; len(churn[g]) < max(cp*6/100/churners, 2); i++ {
			k := key8(byte('a'+g), i)
			if !taken[pairOf(f, k)] {
				taken[pairOf(f, k)] = true
				churn[g] = append(churn[g], k)
			}
		}
	}
	var targets [][]byte
	for i := 0; len(targets) < 8; i++ {
		k := key8('t', i)
		if !taken[pairOf(f, k)] {
			taken[pairOf(f, k)] = true
			targets = append(targets, k)
		}
	}
	stop := make(chan struct{})
	var bg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range churners {
		bg.Add(1)
		go func() {
			defer bg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var in [][]byte
				for _, k := range churn[g] {
					if err := f.Insert(k); err == nil {
						in = append(in, k)
					}
				}
				for _, k := range in {
					if !f.Delete(k) {
						errs <- fmt.Errorf("churn delete failed")
						return
					}
				}
			}
		}()
	}
	var cur atomic.Pointer[[]byte]
	cur.Store(&targets[0])
	for g := range relocators {
		bg.Add(1)
		go func() {
			defer bg.Done()
			x := uint64(g)*0x9e3779b97f4a7c15 + seed
			relocate(f, stop, func(i int) uint64 {
				if i%2 == 0 {
					b1, _, b2 := f.hash(*cur.Load())
					if i%4 == 0 {
						return b1
					}
					return b2
				}
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				return x % f.m
			})
		}()
	}
	const P, U = 3, 3
	rounds := RaceScaled(scaled(800, 4), 4)
	fulls := 0
	for r := 0; r < rounds; r++ {
		k := targets[r%len(targets)]
		cur.Store(&k)
		var plainAdded, uniqAdded, uniqFull atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range P {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if err := f.Insert(k); err == nil {
					plainAdded.Add(1)
				} else if !errors.Is(err, ErrFull) {
					errs <- err
				}
			}()
		}
		for range U {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ok, err := f.InsertUnique(k)
				if ok {
					uniqAdded.Add(1)
				} else if errors.Is(err, ErrFull) {
					uniqFull.Add(1)
				} else if err != nil {
					errs <- err
				}
			}()
		}
		close(start)
		wg.Wait()
		pa, ua := int(plainAdded.Load()), int(uniqAdded.Load())
		if uniqFull.Load() > 0 {
			fulls++
		}
		if ua > 1 {
			t.Fatalf("round %d: %d InsertUniques added", r, ua)
		}
		if ua == 0 && uniqFull.Load() == 0 && pa == 0 {
			t.Fatalf("round %d: no InsertUnique added and none full, but no plain insert added either", r)
		}
		if n := f.Count(k); n != pa+ua {
			t.Fatalf("round %d: Count = %d; plain %d + unique %d", r, n, pa, ua)
		}
		if pa+ua > 0 && !f.Lookup(k) {
			t.Fatalf("round %d: Lookup false with %d copies", r, pa+ua)
		}
		for i := 0; i < pa+ua; i++ {
			if !f.Delete(k) {
				t.Fatalf("round %d: Delete %d of %d failed", r, i+1, pa+ua)
			}
		}
		if n := f.Count(k); n != 0 {
			t.Fatalf("round %d: Count after deletes = %d", r, n)
		}
		if f.Lookup(k) {
			t.Fatalf("round %d: Lookup true after deleting all copies", r)
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
	}
	close(stop)
	bg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkPackedTopSlots(t, f)
	if got, want := physicalCount(t, f), f.Len(); got != want {
		t.Errorf("physical %d != Len %d", got, want)
	}
	if f.Len() != len(stable) {
		t.Errorf("Len %d != stable %d", f.Len(), len(stable))
	}
	for _, k := range stable {
		if !f.Lookup(k) {
			t.Fatalf("stable key lost")
		}
	}
	t.Logf("cap %d rounds %d unique-full rounds %d relocations %d", cp, rounds, fulls, f.stats.sum(statRelocations))
}
