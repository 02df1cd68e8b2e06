package cuckoo

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
)

// TestResetRemovesEveryOldFingerprint fills a filter to 96% with keys whose
// fingerprints lie in the lower half of the range, then resets it while
// goroutines keep inserting keys whose fingerprints lie in the upper half.
// Relocations move fingerprints without changing them, so after the Reset
// any lower-half fingerprint is a key inserted before the Reset that
// survived it, which the Reset doc rules out. Without the snapshot gate
// around LockFree mode's sweep, relocations overlapping it carried hundreds
// of old fingerprints from unswept buckets into swept ones.
func TestResetRemovesEveryOldFingerprint(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run(mode.String(), func(t *testing.T) {
			// The bigger the table, the longer the sweep and the more
			// relocations overlap it: at 400,000 keys on two cores every
			// run of the unguarded sweep left thousands of survivors.
			rounds, capacity := 4, 400000
			if testing.Short() || raceEnabled {
				rounds, capacity = 2, 100000
			}
			for r := 0; r < rounds; r++ {
				testResetDuringInserts(t, mode, capacity, r)
			}
		})
	}
}

func testResetDuringInserts(t *testing.T, mode Mode, capacity, round int) {
	f, err := New(capacity, WithMode(mode), WithSeed(uint64(round)+1))
	if err != nil {
		t.Fatal(err)
	}
	half := f.fpRange / 2
	key := func(i uint64) []byte {
		var k [8]byte
		binary.LittleEndian.PutUint64(k[:], i)
		return k[:]
	}
	low := func(k []byte) bool { _, fp, _ := f.hash(k); return fp <= half }

	// Old keys: lower-half fingerprints, to 96% of Cap.
	next := uint64(0)
	for f.Len() < f.Cap()*96/100 {
		k := key(next)
		next++
		if !low(k) {
			continue
		}
		if err := f.Insert(k); err != nil {
			break
		}
	}

	// New keys, upper-half fingerprints, inserted by goroutines until the
	// Reset is over.
	goroutines := 8
	var stop atomic.Bool
	var started sync.WaitGroup
	var wg sync.WaitGroup
	started.Add(goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g uint64) {
			defer wg.Done()
			i := uint64(1)<<40 + g<<32
			once := false
			for !stop.Load() {
				k := key(i)
				i++
				if low(k) {
					continue
				}
				_ = f.Insert(k)
				if !once {
					once = true
					started.Done()
				}
			}
			if !once {
				started.Done()
			}
		}(uint64(g))
	}
	started.Wait()
	f.Reset()
	stop.Store(true)
	wg.Wait()

	survivors := 0
	for b := uint64(0); b < f.m; b++ {
		w := f.t.load(b)
		for s := 0; s < int(f.lay.b); s++ {
			if fp := f.lay.slot(w, s); fp != 0 && fp <= half {
				survivors++
			}
		}
	}
	if survivors != 0 {
		t.Errorf("round %d: %d fingerprints of keys inserted before Reset survived it", round, survivors)
	}
}
