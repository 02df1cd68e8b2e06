package cuckoo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// Tests of path discovery and migration (migrate.go): the path code and its
// replay, shortest paths against a reference search, the short queue's
// fallback to the full one, a stale path discovered anew, relocation
// steps that no longer apply, and the bounds after which an insert gives
// up (room rounds, stale paths).

// TestBFSNodeEncoding checks that a queue node keeps its bucket, depth and
// path code apart for every depth and path a search can produce, and that
// the queue bounds hold what the comments beside them say.
func TestBFSNodeEncoding(t *testing.T) {
	for _, b := range []uint64{0, 1, 12345, maxBuckets - 1} {
		for d := 0; d <= maxPathLen; d++ {
			bitsUsed := 1 + bfsSlotBits*d
			for _, p := range []uint64{0, 1, 1<<bitsUsed - 1, 0x5555 & (1<<bitsUsed - 1), 0xaaaa & (1<<bitsUsed - 1)} {
				x := bfsNode(b, 0, d, p)
				gb, gd, gp := x>>32, int(x>>16&0xf), x&0xffff
				if gb != b || gd != d || gp != p {
					t.Errorf("bfsNode(%d, %d, %#x) decodes to (%d, %d, %#x)", b, d, p, gb, gd, gp)
				}
			}
		}
	}
	if 1+bfsSlotBits*maxPathLen > 16 {
		t.Errorf("a path of %d moves needs %d bits; the node has 16", maxPathLen, 1+bfsSlotBits*maxPathLen)
	}
	if 1<<bfsSlotBits < maxSlots {
		t.Errorf("%d bits per move cannot name %d slots", bfsSlotBits, maxSlots)
	}
	// Both roots and maxSlots children per node down to depth maxPathLen-1.
	want := 0
	for d, n := 0, 2; d < maxPathLen; d, n = d+1, n*maxSlots {
		want += n
	}
	if bfsQueueLen != want {
		t.Errorf("bfsQueueLen = %d; want %d", bfsQueueLen, want)
	}
	if within2 := 2 + 2*slotsPerBucket; bfsShortQueue < within2 || bfsShortQueue >= bfsQueueLen {
		t.Errorf("bfsShortQueue = %d; want at least %d (every path of two moves in a growing table) and below %d", bfsShortQueue, within2, bfsQueueLen)
	}
	if within1 := 2 + 2*maxSlots; discoverShortQueue < within1 || discoverShortQueue >= bfsQueueLen {
		t.Errorf("discoverShortQueue = %d; want at least %d (every bucket within one move: a search ending within two never restarts) and below %d", discoverShortQueue, within1, bfsQueueLen)
	}
}

// refDepth is the reference for discover: the fewest moves that free a slot
// in b1 or b2, by a plain level-by-level search, or -1 if more than
// maxPathLen are needed.
func refDepth(f *Filter, b1, b2 uint64) int {
	l := &f.lay
	level := []uint64{b1}
	if b2 != b1 {
		level = append(level, b2)
	}
	for d := 0; d <= maxPathLen; d++ {
		var next []uint64
		for _, b := range level {
			w := f.t.load(b)
			if l.emptySlot(w) >= 0 {
				return d
			}
			for s := 0; s < int(f.lay.b); s++ {
				if c := f.alt(b, l.slot(w, s)); c != b {
					next = append(next, c)
				}
			}
		}
		level = next
	}
	return -1
}

// replayPath follows the path code from b1 or b2 and returns the buckets it
// visits (depth+1 of them), failing the test if a step names an empty slot
// or the code has bits beyond its length.
func replayPath(t *testing.T, f *Filter, b1, b2, path uint64, depth int) []uint64 {
	t.Helper()
	if path>>(1+bfsSlotBits*depth) != 0 {
		t.Fatalf("path %#x of %d moves has bits beyond its length", path, depth)
	}
	b := b1
	if path&1 != 0 {
		b = b2
	}
	buckets := []uint64{b}
	for k := 0; k < depth; k++ {
		fp := f.lay.slot(f.t.load(b), int(path>>(1+bfsSlotBits*k)&(1<<bfsSlotBits-1)))
		if fp == 0 {
			t.Fatalf("path %#x step %d names an empty slot of bucket %d", path, k, b)
		}
		b = f.alt(b, fp)
		buckets = append(buckets, b)
	}
	return buckets
}

// fpCensus counts the fingerprints stored in buckets bs by fingerprint and
// bucket pair, what a relocation along bs must preserve, and adds up their
// migration counters.
func fpCensus(f *Filter, bs []uint64) (census map[uint64]int, counters uint64) {
	census = make(map[uint64]int)
	seen := make(map[uint64]bool)
	for _, b := range bs {
		if seen[b] {
			continue
		}
		seen[b] = true
		w := f.t.load(b)
		counters += f.lay.counter(w)
		for s := 0; s < int(f.lay.b); s++ {
			if fp := f.lay.slot(w, s); fp != 0 {
				census[fp<<32|min(b, f.alt(b, fp))]++
			}
		}
	}
	return census, counters
}

func sameCensus(a, b map[uint64]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	return true
}

// allBuckets returns 0..m-1.
func allBuckets(f *Filter) []uint64 {
	bs := make([]uint64, f.m)
	for i := range bs {
		bs[i] = uint64(i)
	}
	return bs
}

// fullFilter returns a filter filled by Insert to load factor lf, or until
// the first ErrFull.
func fullFilter(t *testing.T, mode Mode, bits, capacity int, lf float64) *Filter {
	t.Helper()
	f := NewTestFilter(t, capacity, mode, bits, 7)
	fillTo(f, "fill-", lf)
	return f
}

// fillUntilFull inserts keys until the first ErrFull.
func fillUntilFull(t *testing.T, f *Filter) {
	t.Helper()
	fillTo(f, "more-", 1)
}

func fillTo(f *Filter, prefix string, lf float64) {
	var buf []byte
	for i := 0; f.LoadFactor() < lf; i++ {
		buf = fmt.Appendf(buf[:0], "%s%d", prefix, i)
		if f.Insert(buf) != nil {
			return
		}
	}
}

// TestDiscoverAndMakeRoom compares discover with refDepth on a full filter
// for random bucket pairs, replays every path it returns, and then lets
// makeRoom run it: the path must end at a free slot, pass only full buckets
// before it, and makeRoom must free a slot in b1 or b2 with every
// fingerprint kept and exactly two counter increments per move. It also
// checks the short queue's fallback: whenever the 128-node queue overflows
// without a path, discover must answer what the full queue answers, and
// some pairs (paths of 4 or 5 moves) must need it.
//
// discover and the counters the moves add to are the one-bucket-per-word
// layouts' code, so 8-bit fingerprints run in that layout (bits8OneWord);
// the packed layout's search (pkDiscover, packed_migrate.go) is left to
// packed_test.go.
func TestDiscoverAndMakeRoom(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{bits8OneWord, 12, 15, Bits12x5} {
			t.Run(fmt.Sprintf("mode=%v/bits=%s", mode, layoutName(bits)), func(t *testing.T) {
				f := fullFilter(t, mode, bits, 4000, 0.955)
				l := &f.lay
				rng := rand.New(rand.NewPCG(uint64(bits), 3))
				trials := 1500
				if testing.Short() {
					trials = 500
				}
				depths := make([]int, maxPathLen+2) // by depth; the last counts "no path"
				fallbacks, fallbackFound := 0, 0
				var q [bfsShortQueue]uint64
				for i := 0; i < trials; i++ {
					b1 := rng.Uint64N(f.m)
					fp := 1 + rng.Uint64N(f.fpRange)
					b2 := f.alt(b1, fp)

					if i == trials/2 {
						// The second half at the first ErrFull, where
						// paths are long or missing.
						fillUntilFull(t, f)
					}
					path, depth, ok := f.discover(b1, b2)
					want := refDepth(f, b1, b2)
					var bs []uint64
					if !ok {
						if want >= 0 {
							t.Fatalf("discover(%d, %d): no path; the reference finds one of %d moves", b1, b2, want)
						}
						depths[maxPathLen+1]++
					} else {
						if depth != want {
							t.Fatalf("discover(%d, %d): %d moves; the shortest has %d", b1, b2, depth, want)
						}
						depths[depth]++
						bs = replayPath(t, f, b1, b2, path, depth)
						for k, b := range bs {
							free := l.emptySlot(f.t.load(b)) >= 0
							if last := k == len(bs)-1; free != last {
								t.Fatalf("path %#x: bucket %d of %d has a free slot: %v; want %v", path, k, depth, free, last)
							}
						}
					}

					_, _, sok, truncated := f.search(q[:], b1, b2)
					if truncated && !sok {
						fallbacks++
						dp, dd, dok := f.discoverDeep(b1, b2)
						if dp != path || dd != depth || dok != ok {
							t.Fatalf("discover = (%#x, %d, %v); the full queue gives (%#x, %d, %v)", path, depth, ok, dp, dd, dok)
						}
						if ok {
							fallbackFound++
						}
					}

					if !ok || depth == 0 {
						continue
					}
					before, sum := fpCensus(f, bs)
					n := f.Len()
					if !f.makeRoom(b1, b2, 1) { // any fingerprint fits any free slot here
						t.Fatalf("makeRoom(%d, %d) = false after discover found a path", b1, b2)
					}
					if l.emptySlot(f.t.load(b1)) < 0 && l.emptySlot(f.t.load(b2)) < 0 {
						t.Fatalf("makeRoom(%d, %d) = true, but both buckets are full", b1, b2)
					}
					after, sum2 := fpCensus(f, bs)
					if !sameCensus(before, after) || f.Len() != n {
						t.Fatalf("makeRoom(%d, %d) lost, added or misplaced a fingerprint", b1, b2)
					}
					// Modulo the counter width: 2-bit counters (f=15) wrap
					// often, and a wrap takes 2^c from the sum.
					if got, want := (sum2-sum)&l.ctrMask, uint64(2*depth)&l.ctrMask; got != want {
						t.Fatalf("makeRoom over %d moves added %d to the counters modulo 2^c; want %d", depth, got, want)
					}
				}
				t.Logf("paths by length 0..%d, then none: %v; short queue overflowed %d times, %d of them with a longer path", maxPathLen, depths, fallbacks, fallbackFound)
				if depths[3]+depths[4]+depths[5] == 0 {
					t.Error("no path of 3 or more moves: the filter was not full enough to test discovery")
				}
				if fallbackFound == 0 {
					t.Error("no search needed the full queue: its fallback went untested")
				}
			})
		}
	}
}

// TestMakeRoomRediscoversStalePath makes a discovered path stale before its
// first move: Locked mode, where the move waits for its stripes' locks. The
// test holds the stripe of the path's free bucket, lets makeRoom discover
// the path and queue for that stripe, fills the free bucket meanwhile and
// releases it. The move must see that the destination has no room, change
// nothing, and makeRoom must discover a new path and free a slot.
func TestMakeRoomRediscoversStalePath(t *testing.T) {
	withPin(t, false) // holds a section while it blocks
	withRTM(t, false)
	f := fullFilter(t, Locked, 12, 20000, 1)
	l := &f.lay
	rng := rand.New(rand.NewPCG(5, 5))
	for attempt := 0; ; attempt++ {
		if attempt == 10000 {
			t.Fatal("found no bucket pair with a path of 2 moves or more and another path once it is blocked")
		}
		b1 := rng.Uint64N(f.m)
		b2 := f.alt(b1, 1+rng.Uint64N(f.fpRange))
		path, depth, ok := f.discover(b1, b2)
		if !ok || depth < 2 {
			continue
		}
		bs := replayPath(t, f, b1, b2, path, depth)
		dst := bs[depth]
		// Only a pair that still has a path with dst full tests
		// rediscovery rather than ErrFull.
		old := f.t.load(dst)
		w := old
		var added []uint64
		for e := l.emptySlot(w); e >= 0; e = l.emptySlot(w) {
			w = l.setSlot(w, e, 1)
			added = append(added, 1)
		}
		f.t.words[dst].Store(w)
		_, _, alt := f.discover(b1, b2)
		f.t.words[dst].Store(old)
		if !alt {
			continue
		}

		st := &f.locks.stripes[uint32(dst)&f.locks.mask]
		g := f.locks.lockBuckets(dst, dst)
		tail := st.tail.Load()
		result := make(chan bool, 1)
		go func() { result <- f.makeRoom(b1, b2, 1) }()
		deadline := time.Now().Add(time.Minute)
		for st.tail.Load() == tail {
			if time.Now().After(deadline) {
				f.locks.unlockBuckets(g)
				t.Fatal("makeRoom never queued for the stripe of its path's free bucket")
			}
			runtime.Gosched()
		}
		// makeRoom has discovered the path and waits to make its last
		// move into dst: fill dst under its lock.
		f.t.words[dst].Store(w)
		before, _ := fpCensus(f, allBuckets(f))
		f.locks.unlockBuckets(g)

		var got bool
		select {
		case got = <-result:
		case <-time.After(StressWatchdog):
			t.Fatal("makeRoom did not return")
		}
		if !got {
			t.Fatalf("makeRoom(%d, %d) = false; another path existed", b1, b2)
		}
		if l.emptySlot(f.t.load(b1)) < 0 && l.emptySlot(f.t.load(b2)) < 0 {
			t.Fatalf("makeRoom(%d, %d) = true, but both buckets are full", b1, b2)
		}
		if after, _ := fpCensus(f, allBuckets(f)); !sameCensus(before, after) {
			t.Fatal("makeRoom lost, added or misplaced a fingerprint")
		}
		t.Logf("attempt %d: path of %d moves made stale at bucket %d (%d slots filled); makeRoom found another", attempt, depth, dst, len(added))
		return
	}
}

// movePair returns an empty filter, a bucket src, a fingerprint fp whose
// other bucket from src is dst, and dst.
func movePair(t *testing.T, mode Mode) (f *Filter, src, fp, dst uint64) {
	f = NewTestFilter(t, 1000, mode, 12, 1)
	src, fp = 3, 1
	for f.alt(src, fp) == src {
		fp++
	}
	return f, src, fp, f.alt(src, fp)
}

// TestMoveStaleStep checks that a relocation step that no longer applies
// (the fingerprint left its slot, or the destination filled up) reports
// false and changes no word, in both modes.
func TestMoveStaleStep(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run(fmt.Sprintf("mode=%v", mode), func(t *testing.T) {
			f, src, fp, dst := movePair(t, mode)
			l := &f.lay
			f.t.words[src].Store(l.setSlot(0, 2, fp))
			words := func() [2]uint64 { return [2]uint64{f.t.load(src), f.t.load(dst)} }

			before := words()
			if f.testMove(src, 1, fp, dst) {
				t.Error("move from a slot that does not hold fp: got true; want false")
			}
			if f.testMove(src, 2, fp+1, dst) {
				t.Error("move of a fingerprint that is not in the slot: got true; want false")
			}
			if got := words(); got != before {
				t.Errorf("stale steps changed the words: got %#x; want %#x", got, before)
			}

			full := tpWord(l, 0, 9, 9, 9, 9)
			f.t.words[dst].Store(full)
			before = words()
			if f.testMove(src, 2, fp, dst) {
				t.Error("move into a full bucket: got true; want false")
			}
			if got := words(); got != before {
				t.Errorf("a step into a full bucket changed the words: got %#x; want %#x", got, before)
			}

			f.t.words[dst].Store(0)
			if !f.testMove(src, 2, fp, dst) {
				t.Fatal("move that applies: got false; want true")
			}
			if ws, wd := f.t.load(src), f.t.load(dst); l.slot(ws, 2) != 0 || !l.contains(wd, fp) || l.counter(ws) != 1 || l.counter(wd) != 1 {
				t.Errorf("after the move: src %#x, dst %#x; want fp moved and both counters 1", ws, wd)
			}
		})
	}
}

// TestInsertGivesUpAfterRoomRounds plays the concurrent writer that takes
// every slot an insert frees: after each makeRoom it fills the key's two
// buckets and empties the other bucket of one entry of the first, so the
// next search finds room again and the insert never fits. Insert and InsertUnique must return
// ErrFull after maxRoomRounds rounds instead of looping for ever (with the
// bound removed this test fails: the thief counts past it).
func TestInsertGivesUpAfterRoomRounds(t *testing.T) {
	if !raceEnabled {
		t.Skip("roomMadeHook is called in race builds only")
	}
	defer func() { roomMadeHook = nil }()
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{8, 12, 15} {
			for _, unique := range []bool{false, true} {
				name := fmt.Sprintf("%v/bits=%d/unique=%v", mode, bits, unique)
				f, key, fp := nearFullWithKey(t, mode, bits)
				rounds := 0
				roomMadeHook = func(f *Filter, b1, b2 uint64) {
					rounds++
					if rounds > maxRoomRounds+1 {
						t.Fatalf("%s: %d rounds and the insert still runs", name, rounds)
					}
					fillBucket(f, b1, uint64(rounds), fp)
					fillBucket(f, b2, uint64(rounds)+3, fp)
					// Empty the word of the other bucket of one of b1's
					// entries: the next search finds a path of one move.
					for slot := range f.SlotsPerBucket() {
						v := wordOf(f, f.alt(b1, f.slotAt(b1, slot)))
						if v != wordOf(f, b1) && v != wordOf(f, b2) {
							f.t.words[v].Store(0)
							break
						}
					}
				}
				var err error
				if unique {
					_, err = f.InsertUniqueString(key)
				} else {
					err = f.InsertString(key)
				}
				roomMadeHook = nil
				if !errors.Is(err, ErrFull) {
					t.Errorf("%s: insert returned %v after %d rounds, want ErrFull", name, err, rounds)
				}
				if rounds != maxRoomRounds {
					t.Errorf("%s: the thief ran %d rounds, want %d (the bound, not a failed search, must end the insert)", name, rounds, maxRoomRounds)
				}
			}
		}
	}
}

// fillBucket puts a fingerprint into every empty slot of bucket b by plain
// stores (the test is the only goroutine): 1 in the packed layout, which
// which every slot takes, as in the others.
func fillBucket(f *Filter, b, seq, avoid uint64) {
	v := 1 + seq*5%63
	next := func() uint64 {
		v = v%63 + 1
		if v == avoid {
			v = v%63 + 1
		}
		return v
	}
	w := f.t.words[wordOf(f, b)].Load()
	if f.lay.packed {
		for s := range packedSlots {
			sh := pkShift(b) + uint64(s)*8
			if w>>sh&0xff == 0 {
				w |= next() << sh
			}
		}
	} else {
		for s := range int(f.lay.b) {
			if f.lay.slot(w, s) == 0 {
				w = f.lay.setSlot(w, s, next())
			}
		}
	}
	f.t.words[wordOf(f, b)].Store(w)
}

// TestMakeRoomGivesUpOnStalePaths plays the concurrent writer that changes
// every path makeRoom finds before its moves apply: it replaces the
// fingerprint the first move takes. makeRoom must give up after
// maxRoomRounds stale paths, and the insert return ErrFull, instead of
// searching for ever (with its bound removed this test fails: the thief
// counts past it).
func TestMakeRoomGivesUpOnStalePaths(t *testing.T) {
	if !raceEnabled {
		t.Skip("pathReplayedHook is called in race builds only")
	}
	defer func() { pathReplayedHook = nil }()
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{8, 12, 15} {
			name := fmt.Sprintf("%v/bits=%d", mode, bits)
			f, key, fp := nearFullWithKey(t, mode, bits)
			paths := 0
			pathReplayedHook = func(f *Filter, b uint64, s int, old uint64) {
				paths++
				if paths > maxRoomRounds+1 {
					t.Fatalf("%s: %d stale paths and makeRoom still searches", name, paths)
				}
				v := uint64(1)
				for v == old || v == fp {
					v++
				}
				setSlotOf(f, b, s, v)
			}
			err := f.InsertString(key)
			pathReplayedHook = nil
			if !errors.Is(err, ErrFull) {
				t.Errorf("%s: insert returned %v after %d paths, want ErrFull", name, err, paths)
			}
			if paths < maxRoomRounds {
				t.Errorf("%s: the thief changed %d paths, want at least %d (the bound, not a failed search, must end the insert)", name, paths, maxRoomRounds)
			}
		}
	}
}

// nearFullWithKey returns a filter for 2,000 keys filled to 90% of Cap, a
// key it does not hold whose two buckets are full (so that its insert goes
// to makeRoom), and the key's fingerprint.
func nearFullWithKey(t *testing.T, mode Mode, bits int) (*Filter, string, uint64) {
	t.Helper()
	f, err := New(2000, WithFingerprintBits(bits), WithMode(mode), WithSeed(11))
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Cap() * 9 / 10 {
		if err := f.InsertString(fmt.Sprint("fill", i)); err != nil {
			t.Fatal(err)
		}
	}
	key := "absent"
	for j := 0; f.LookupString(key); j++ {
		key = fmt.Sprint("absent", j)
	}
	b1, fp, b2 := f.hash([]byte(key))
	fillBucket(f, b1, 1, fp)
	fillBucket(f, b2, 2, fp)
	return f, key, fp
}

// slotAt returns the fingerprint in slot s of bucket b (logical; 0 if empty).
func (f *Filter) slotAt(b uint64, s int) uint64 {
	if f.lay.packed {
		return f.t.loadWord(b>>1) >> (pkShift(b) + uint64(s)*8) & 0xff
	}
	return f.lay.slot(f.t.loadWord(b), s)
}

// TestMoveDispatchesByModeAndLayout: move dispatches to the step of the filter's mode and
// layout. A LockFree step leases a descriptor; a Locked one does not. A
// step of the wrong layout would not move the fingerprint intact.
func TestMoveDispatchesByModeAndLayout(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{bits8OneWord, 8, 12, 15, Bits12x5} {
			f := NewTestFilter(t, 1000, mode, bits, 3)
			fillTo(f, "dispatch-", 0.5)
			r := rand.New(rand.NewPCG(1, uint64(bits)))
			moved := 0
			for range 20000 {
				src := r.Uint64N(f.m)
				fps := bucketFps(f, src)
				s := r.IntN(f.SlotsPerBucket())
				fp := fps[s]
				if fp == 0 {
					continue
				}
				dst := f.alt(src, fp)
				if dst == src || !hasRoom(f, dst, fp) {
					continue
				}
				before := f.Len()
				var my *descLease
				ok := f.move(src, s, fp, dst, &my)
				if !ok {
					t.Fatalf("%v/%s: move refused", mode, layoutName(bits))
				}
				if (my != nil) != (mode == LockFree) {
					t.Fatalf("%v/%s: lease %v after a move", mode, layoutName(bits), my != nil)
				}
				if my != nil {
					my.release()
				}
				if bucketFps(f, src)[s] != 0 {
					t.Fatalf("%v/%s: source slot not cleared", mode, layoutName(bits))
				}
				n := 0
				for _, x := range bucketFps(f, dst) {
					if x == fp {
						n++
					}
				}
				if n == 0 || f.Len() != before {
					t.Fatalf("%v/%s: fp %#x not in dst", mode, layoutName(bits), fp)
				}
				moved++
			}
			if moved < 100 {
				t.Fatalf("%v/%s: only %d moves", mode, layoutName(bits), moved)
			}
		}
	}
}
