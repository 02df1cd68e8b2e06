package cuckoo_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// BenchmarkLockMix runs the oversubscribed write mixes of Locked mode
// against LockFree, each mix in both modes one after the other:
//
//	go test -run '^$' -bench LockMix -benchtime 2s
//
// A 1M-key filter (New(1<<20), default layout) holds 2^19 stable keys. W
// writers each insert 1,000 keys of their own and then delete them, in a
// loop, and L lookers look up the stable keys in a loop until the writers
// are done. b.N is the number of writes over all writers (each writer does
// whole rounds of 2,000, so the filter is half full again after every
// run). Metrics: wMops/s (writes), lMops/s (lookups), worst-us (the longest
// time a writer took for blockOps consecutive writes: an upper bound on the
// longest single write, within blockOps ordinary writes), and for Locked
// waits/op (LockStats.Waits per write). Compare a mix's modes within one
// run: other load on the machine shifts both.
func BenchmarkLockMix(b *testing.B) {
	for _, mx := range lockMixes {
		for _, mode := range benchModes {
			b.Run(fmt.Sprintf("mix=%dw+%dl/mode=%v", mx.w, mx.l, mode), func(b *testing.B) {
				runLockMix(b, lockMixFilter(b, mode), mx.w, mx.l)
			})
		}
	}
}

// lockMixes are the writer and looker counts measured: one and as many
// writers as processors on the 2-vCPU reference machine, the mixes where
// goroutines outnumber processors, and 64 writers.
var lockMixes = []struct{ w, l int }{
	{1, 0}, {2, 0}, {2, 1}, {2, 2}, {3, 0}, {8, 0}, {64, 0},
}

const (
	lockMixKeys   = 1000 // keys per writer
	lockMixStable = 1 << 19
	blockOps      = 16 // writes per timed block (worst-us)
	writerBit     = 1 << 61
)

var lockMixFilters sync.Map // cuckoo.Mode -> *cuckoo.Filter

// lockMixFilter returns the half-full filter of mode, built once: every run
// of runLockMix leaves it as it found it.
func lockMixFilter(b *testing.B, mode cuckoo.Mode) *cuckoo.Filter {
	if f, ok := lockMixFilters.Load(mode); ok {
		return f.(*cuckoo.Filter)
	}
	f := benchFilter(b, mode, 12, 1<<20, lockMixStable)
	lockMixFilters.Store(mode, f)
	return f
}

// lockMixWorker is one goroutine's tallies, padded so that goroutines do
// not share cache lines.
type lockMixWorker struct {
	_     [linePad]byte
	ops   uint64
	worst time.Duration
	_     [linePad]byte
}

func runLockMix(b *testing.B, f *cuckoo.Filter, writers, lookers int) {
	b.ReportAllocs()
	rounds := (b.N + writers*2*lockMixKeys - 1) / (writers * 2 * lockMixKeys)
	ws := make([]*lockMixWorker, writers+lookers)
	for i := range ws {
		ws[i] = &lockMixWorker{}
	}
	waits0 := f.LockStats().Waits
	var stop atomic.Bool
	var wgW, wgL sync.WaitGroup
	wgW.Add(writers)
	wgL.Add(lookers)
	b.ResetTimer()
	start := time.Now()
	for i := range lookers {
		go func(me *lockMixWorker, i int) {
			defer wgL.Done()
			key := scratch(8)
			k := uint64(i) * 7919
			for !stop.Load() {
				for range 256 {
					if !f.Lookup(putKey(key, k%lockMixStable)) {
						b.Errorf("Lookup(%d) = false; want true (stable key)", k%lockMixStable)
						return
					}
					k++
				}
				me.ops += 256
			}
		}(ws[writers+i], i)
	}
	for w := range writers {
		go func(me *lockMixWorker, w int) {
			defer wgW.Done()
			key := scratch(8)
			base := writerBit | uint64(w)*lockMixKeys
			var worst time.Duration
			for range rounds {
				for _, del := range [2]bool{false, true} {
					for j := 0; j < lockMixKeys; j += blockOps {
						t0 := time.Now()
						for k := j; k < min(j+blockOps, lockMixKeys); k++ {
							if del {
								if !f.Delete(putKey(key, base+uint64(k))) {
									b.Errorf("Delete(%d) = false; want true", base+uint64(k))
									return
								}
							} else if err := f.Insert(putKey(key, base+uint64(k))); err != nil {
								b.Errorf("Insert(%d): %v", base+uint64(k), err)
								return
							}
						}
						worst = max(worst, time.Since(t0))
					}
				}
			}
			me.ops = uint64(rounds) * 2 * lockMixKeys
			me.worst = worst
		}(ws[w], w)
	}
	wgW.Wait()
	elapsed := time.Since(start)
	stop.Store(true)
	wgL.Wait()
	b.StopTimer()
	var wOps, lOps uint64
	var worst time.Duration
	for i, w := range ws {
		if i < writers {
			wOps += w.ops
			worst = max(worst, w.worst)
		} else {
			lOps += w.ops
		}
	}
	b.ReportMetric(float64(wOps)/elapsed.Seconds()/1e6, "wMops/s")
	if lookers > 0 {
		b.ReportMetric(float64(lOps)/elapsed.Seconds()/1e6, "lMops/s")
	}
	b.ReportMetric(float64(worst.Microseconds()), "worst-us")
	if st := f.LockStats(); st.Waits > 0 || f.Mode() == cuckoo.Locked {
		b.ReportMetric(float64(st.Waits-waits0)/float64(wOps), "waits/op")
	}
	runtime.GC()
}
