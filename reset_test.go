package cuckoo

import (
	"encoding/binary"
	"fmt"
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
// of old fingerprints from unswept buckets into swept ones. It runs on New's
// default layout and on the packed layout of 8-bit fingerprints, whose
// relocations (makeRoom with pkDiscover) pass the same gate.
func TestResetRemovesEveryOldFingerprint(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{Bits12x5, 8} {
			t.Run(fmt.Sprintf("%v/bits=%d", mode, bits), func(t *testing.T) {
				// The bigger the table, the longer the sweep and the more
				// relocations overlap it: at 400,000 keys on two cores every
				// run of the unguarded sweep left thousands of survivors.
				rounds, capacity := Sized(1, 2, 4), 400000
				if testing.Short() || raceEnabled {
					rounds, capacity = Sized(1, 1, 2), 100000
				}
				for r := 0; r < rounds; r++ {
					testResetDuringInserts(t, mode, bits, capacity, r)
				}
			})
		}
	}
}

func testResetDuringInserts(t *testing.T, mode Mode, bits, capacity, round int) {
	f := NewTestFilter(t, capacity, mode, bits, uint64(round)+1)
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
		for _, fp := range bucketFps(f, b) {
			if fp != 0 && fp <= half {
				survivors++
			}
		}
	}
	if survivors != 0 {
		t.Errorf("round %d: %d fingerprints of keys inserted before Reset survived it", round, survivors)
	}
}
