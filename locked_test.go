package cuckoo

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Tests of Locked mode's protocol (locked.go): the unlocked lookup is sound
// because a relocation step stores the destination before it clears the
// source.

// TestLockedMoveDestinationFirst moves one fingerprint back and forth
// between its two buckets while readers look it up without pause: every
// lookup must find it. A relocation step that cleared the source before
// storing the destination would leave the fingerprint in neither bucket for
// a moment; a lookup whose two unlocked reads fall into that moment, and
// whose re-read of b1 then matches its first read, answers "absent". The
// test fails when the two stores of moveLocked are swapped: checked by
// swapping them, when 30 of 30 subtests failed without -race and 20 of 20
// with it (2-core AMD EPYC VM); with -short (200000 moves) 18 of 20.
//
// moveLocked and lookupLocked are the one-bucket-per-word layouts' code, so
// 8-bit fingerprints run in that layout (bits8OneWord); the packed layout's
// Locked moves (pkMoveLocked) are tested in packed_test.go.
func TestLockedMoveDestinationFirst(t *testing.T) {
	withRTM(t, false)
	for _, bits := range []int{bits8OneWord, 12, 15, Bits12x5} {
		t.Run(fmt.Sprintf("bits=%s", layoutName(bits)), func(t *testing.T) {
			f := NewTestFilter(t, 1000, Locked, bits, 1)
			b1 := uint64(10)
			fp := uint64(1)
			for f.alt(b1, fp) == b1 {
				fp++
			}
			b2 := f.alt(b1, fp)
			// Other fingerprints in both buckets, so that the moving one
			// takes different slots and the words never repeat.
			f.t.words[b1].Store(tpWord(&f.lay, 0, fp, fp+1))
			f.t.words[b2].Store(tpWord(&f.lay, 0, fp+2))

			moves := 1000000
			switch {
			case raceEnabled:
				moves = 20000 // the race build widens the window
			case testing.Short():
				moves = 200000
			}
			// One reader per processor besides the mover's, and one more,
			// so that lookups run while a move stores its two words.
			readers := runtime.GOMAXPROCS(0)
			var (
				stop    atomic.Bool
				misses  atomic.Int64
				lookups atomic.Int64
				wg      sync.WaitGroup
			)
			for r := 0; r < readers; r++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := int64(0)
					for !stop.Load() {
						if !f.lookupLocked(b1, b2, fp) {
							misses.Add(1)
						}
						if n++; n%256 == 0 {
							runtime.Gosched() // leave the mover its turn when readers outnumber processors
						}
					}
					lookups.Add(n)
				}()
			}
			src, dst := b1, b2
			for i := 0; i < moves && misses.Load() == 0; i++ {
				s := f.lay.match(f.t.words[src].Load(), fp)
				if s < 0 || !f.moveLocked(src, s, fp, dst) {
					stop.Store(true)
					wg.Wait()
					t.Fatalf("move %d of fp from bucket %d to %d did not apply", i, src, dst)
				}
				src, dst = dst, src
				if i%64 == 0 {
					runtime.Gosched() // let readers run on a single processor too
				}
			}
			stop.Store(true)
			WaitOrFail(t, Done(&wg), StressWatchdog, "readers")
			t.Logf("%d lookups during the moves", lookups.Load())
			if n := misses.Load(); n != 0 {
				t.Errorf("lookups missed a fingerprint present throughout %d times; want 0", n)
			}
			if lookups.Load() == 0 {
				t.Error("no lookup ran during the moves: the test proved nothing")
			}
		})
	}
}

// pkLockedWords locks the stripes of the words of b1 and b2.
func (f *Filter) pkLockedWords(b1, b2 uint64) lockGuard {
	return f.locks.lockBuckets(b1>>1, b2>>1)
}
