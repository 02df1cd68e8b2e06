package cuckoo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// Stress tests of what operations see of relocations, with real
// goroutines (far more than GOMAXPROCS) under -race: owners of keys that
// insert-if-absent, count and delete their own keys while other goroutines
// keep a small table full enough that most inserts relocate; and, after
// churn, the table physically holding exactly Len fingerprints.

// physicalCount returns the number of fingerprints in the table's words
// (logical values, so it is exact only at quiescence, when no word holds a
// K-CAS reference; it fails the test if one does).
func physicalCount(t *testing.T, f *Filter) int {
	t.Helper()
	n := 0
	for i := range f.t.words {
		w := f.t.words[i].Load()
		if w&tagMask != 0 {
			t.Fatalf("word %d holds a K-CAS reference %#x at quiescence", i, w)
		}
		n += f.lay.occupied(w) // the packed layout's lay sees a word's eight slots
	}
	return n
}

// whereIs describes key k in f for a failure message: its fingerprint and
// buckets, what Lookup and Count say, and every bucket whose slots hold
// its fingerprint. Call it only at quiescence.
func whereIs(f *Filter, k []byte) string {
	b1, fp, b2 := f.hash(k)
	var in []string
	for b := uint64(0); b < f.m; b++ {
		for s, x := range bucketFps(f, b) {
			if x == fp {
				in = append(in, fmt.Sprintf("%d/%d", b, s))
			}
		}
	}
	return fmt.Sprintf("fingerprint %d, buckets %d and %d; Lookup %v, Count %d; the fingerprint is in bucket/slot %v",
		fp, b1, b2, f.Lookup(k), f.Count(k), in)
}

// key8 is an 8-byte key.
func key8(prefix byte, i int) []byte {
	k := make([]byte, 9)
	k[0] = prefix
	binary.LittleEndian.PutUint64(k[1:], uint64(i))
	return k
}

// relocate runs relocation steps until stop is closed, as migrate does
// them (under the snapshot gate): pick(i) names a bucket, and the first
// fingerprint found there moves to its other bucket. It hammers the
// moves that other operations must never see half done.
func relocate(f *Filter, stop <-chan struct{}, pick func(i int) uint64) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		b := pick(i)
		for s, fp := range bucketFps(f, b) {
			if fp != 0 {
				m := f.gate.enterMove()
				f.testMove(b, s, fp, f.alt(b, fp))
				f.gate.exitMove(m)
				break
			}
		}
	}
}

// TestUniqueOwnersAgainstRelocation: owners loop InsertUnique(k), Count(k),
// Delete(k), Count(k) on keys of their own, which share fingerprint and
// buckets with no other key of the test, while churners insert and delete
// their own keys in a table kept at 90-97% load, where inserts relocate
// fingerprints all the time, and relocators move the owners' copies back
// and forth between their two buckets without pause. Every answer
// is then determined: InsertUnique must add the key (it is absent, and
// nobody else can put its fingerprint there) or fail with ErrFull, Count
// must be 1 after it and 0 after the Delete, and the Delete must find the
// copy. A relocation that other operations could see half done (one copy
// more or less in the pair for a moment) breaks one of these.
func TestUniqueOwnersAgainstRelocation(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{8, 12, 15, Bits12x5} {
			t.Run(fmt.Sprintf("mode=%v/bits=%d", mode, bits), func(t *testing.T) {
				testUniqueOwners(t, mode, bits)
			})
		}
	}
}

func testUniqueOwners(t *testing.T, mode Mode, bits int) {
	const (
		capacity   = 2048
		owners     = 16
		churners   = 16
		relocators = 16
	)
	rounds, ownerLoop := RaceScaled(Sized(30, 100, 300), 3), RaceScaled(Sized(2000, 5000, 20000), 3)
	f := NewTestFilter(t, capacity, mode, bits, 7)
	cp := f.Cap()
	// Stable keys to 90% of the slots, churn keys for the next 7% (in
	// proportion, 87% and 6.8%, for the packed layout sized for 92%).
	scale := min(1, LayoutLoad(bits)/0.95)
	var stable, churn [][]byte
	taken := map[[3]uint64]bool{} // pairOf (api_test.go)
	for i := 0; len(stable) < int(float64(cp)*0.90*scale); i++ {
		k := key8('s', i)
		if err := f.Insert(k); err != nil {
			t.Fatalf("filling: %v", err)
		}
		stable = append(stable, k)
		taken[pairOf(f, k)] = true
	}
	for i := 0; len(churn) < int(float64(cp)*0.07*scale); i++ {
		k := key8('c', i)
		churn = append(churn, k)
		taken[pairOf(f, k)] = true
	}
	var own [][]byte
	for i := 0; len(own) < owners; i++ {
		k := key8('o', i)
		if p := pairOf(f, k); !taken[p] {
			taken[p] = true
			own = append(own, k)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, owners+churners)
	stop := make(chan struct{})
	var churnWG sync.WaitGroup
	for g := 0; g < churners; g++ {
		churnWG.Add(1)
		go func() {
			defer churnWG.Done()
			var mine [][]byte
			for i := g; i < len(churn); i += churners {
				mine = append(mine, churn[i])
			}
			for r := 0; r < rounds; r++ {
				select {
				case <-stop:
					return
				default:
				}
				var in [][]byte
				for _, k := range mine {
					if err := f.Insert(k); err == nil {
						in = append(in, k)
					} else if !errors.Is(err, ErrFull) {
						errs <- err
						return
					}
				}
				for _, k := range in {
					if !f.Delete(k) {
						errs <- fmt.Errorf("churner: Delete of an inserted key returned false")
						return
					}
				}
			}
		}()
	}
	for g := 0; g < relocators; g++ {
		churnWG.Add(1)
		go func() {
			defer churnWG.Done()
			relocate(f, stop, func(i int) uint64 {
				b1, _, b2 := f.hash(own[(g+i/2)%len(own)])
				if i%2 == 0 {
					return b1
				}
				return b2
			})
		}()
	}
	for _, k := range own {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < ownerLoop; i++ {
				added, err := f.InsertUnique(k)
				if errors.Is(err, ErrFull) {
					continue
				}
				if err != nil || !added {
					errs <- fmt.Errorf("iteration %d: InsertUnique of an absent key = %v, %v; want true, nil", i, added, err)
					return
				}
				if n := f.Count(k); n != 1 {
					errs <- fmt.Errorf("iteration %d: Count after InsertUnique = %d; want 1", i, n)
					return
				}
				if !f.Lookup(k) {
					errs <- fmt.Errorf("iteration %d: Lookup after InsertUnique = false", i)
					return
				}
				if !f.Delete(k) {
					errs <- fmt.Errorf("iteration %d: Delete after InsertUnique = false", i)
					return
				}
				if n := f.Count(k); n != 0 {
					errs <- fmt.Errorf("iteration %d: Count after Delete = %d; want 0", i, n)
					return
				}
			}
		}()
	}
	WaitOrFail(t, Done(&wg), StressWatchdog, "owners")
	close(stop)
	WaitOrFail(t, Done(&churnWG), StressWatchdog, "churners")
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, want := f.Len(), len(stable); got != want {
		t.Errorf("Len at the end = %d; want %d (the stable keys)", got, want)
	}
	if got, want := physicalCount(t, f), f.Len(); got != want {
		t.Errorf("the table holds %d fingerprints at the end; Len = %d", got, want)
	}
	for _, k := range stable {
		if !f.Lookup(k) {
			t.Fatalf("stable key %x not found at the end", k)
		}
	}
	if f.stats.sum(statRelocations) == 0 {
		t.Errorf("no relocation happened: the test did not exercise what it is for")
	}
}

// TestQuiescentCopiesEqualLen: after churn by many goroutines (batches of
// their own keys inserted with InsertBatch and deleted one by one, in a
// table held nearly full by stable keys), the table holds exactly Len
// fingerprints: no copy leaked, none lost, while relocators move random
// fingerprints between their buckets without pause. Tiny and large
// tables, both modes, both fingerprint sizes.
func TestQuiescentCopiesEqualLen(t *testing.T) {
	large := 100_000
	if raceEnabled {
		large = Sized(25_000, 25_000, 100_000)
	}
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{8, 12, 15, Bits12x5} {
			for _, size := range []struct {
				capacity, churners, rounds int
				stableShare                float64
			}{
				{64, 10, 60000, 0.6},
				{large, 12, 20, 0.9},
			} {
				t.Run(fmt.Sprintf("mode=%v/bits=%d/capacity=%d", mode, bits, size.capacity), func(t *testing.T) {
					rounds := Sized(size.rounds/20, size.rounds/4, size.rounds)
					testQuiescent(t, mode, bits, size.capacity, size.churners, RaceScaled(rounds, 3), size.stableShare)
				})
			}
		}
	}
}

func testQuiescent(t *testing.T, mode Mode, bits, capacity, churners, rounds int, stableShare float64) {
	if mode == Locked {
		// Locked mode queues on the stripe locks of the tiny table,
		// twenty times slower per round under -race than LockFree.
		rounds = max(rounds/20, 1)
	}
	f := NewTestFilter(t, capacity, mode, bits, 99)
	cp := f.Cap()
	nStable := int(float64(cp) * stableShare)
	var stable [][]byte
	for i := 0; len(stable) < nStable; i++ {
		k := key8('s', i)
		if err := f.Insert(k); err != nil {
			t.Fatalf("filling: %v", err)
		}
		stable = append(stable, k)
	}
	// Each churner's batch: its share of the slots left, and a little
	// more, so that some inserts fail with ErrFull.
	batch := max((cp-nStable)*105/100/churners, 2)
	var wg sync.WaitGroup
	errs := make(chan error, churners)
	lost := make(chan []byte, churners)
	for g := 0; g < churners; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := make([][]byte, batch)
			for r := 0; r < rounds; r++ {
				for i := range keys {
					keys[i] = key8(byte('a'+g), r*batch+i)
				}
				n, err := f.InsertBatch(keys)
				if err != nil && !errors.Is(err, ErrFull) {
					errs <- err
					return
				}
				for _, k := range keys[:n] {
					if !f.Delete(k) {
						errs <- fmt.Errorf("Delete of a key InsertBatch inserted returned false: key %x", k)
						lost <- k
						return
					}
				}
			}
		}()
	}
	stop := make(chan struct{})
	var relocWG sync.WaitGroup
	for g := 0; g < churners/2; g++ {
		relocWG.Add(1)
		go func() {
			defer relocWG.Done()
			x := uint64(g)*0x9e3779b97f4a7c15 + 1
			relocate(f, stop, func(int) uint64 {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				return x % f.m
			})
		}()
	}
	WaitOrFail(t, Done(&wg), StressWatchdog, "churners")
	close(stop)
	WaitOrFail(t, Done(&relocWG), StressWatchdog, "relocators")
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	close(lost)
	for k := range lost {
		t.Errorf("at quiescence, the key whose Delete failed: %s", whereIs(f, k))
	}
	if got, want := physicalCount(t, f), f.Len(); got != want {
		t.Errorf("the table holds %d fingerprints at quiescence; Len = %d", got, want)
	}
	if got, want := f.Len(), len(stable); got != want {
		t.Errorf("Len = %d; want %d (the stable keys)", got, want)
	}
	for _, k := range stable {
		if !f.Lookup(k) {
			t.Fatalf("stable key %x not found at the end", k)
		}
	}
}
