package cuckoo

import (
	"math/rand/v2"
	"testing"
	"time"
)

// Tests of growRelocate (relocate.go.tmpl, lanes codec) against a copy in
// progress: discovery ignores frozen bits, so the write that follows must
// catch a frozen word and report growFrozen, never growStale (which would
// rediscover the same path for ever) nor growFull (ErrFull during a copy).

// finishes runs f and fails the test if it does not return within a
// generous bound: a relocation that rediscovers a frozen path loops.
func finishes(t *testing.T, what string, f func() int) int {
	t.Helper()
	done := make(chan int, 1)
	go func() { done <- f() }()
	select {
	case st := <-done:
		return st
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: did not return (a relocation looping on a frozen path?)", what)
		return -1
	}
}

// fillUntil inserts random keys into shard 0's table of g until stop
// reports true for a key about to be inserted (returned), or an insert finds
// no path (growFull, returned with the key).
func fillUntil(t *testing.T, g *Growing, r *rand.Rand, stop func(x *growTable, k growKey) bool) (*growTable, growKey, int) {
	t.Helper()
	x := g.st.shards[0].cur.Load()
	for range 100000 {
		k := x.place(r.Uint64())
		if stop(x, k) {
			return x, k, growDone
		}
		if st := g.addIn(x, k); st == growFull {
			return x, k, st
		} else if st != growDone {
			t.Fatalf("fill: status %d", st)
		}
	}
	t.Fatal("fill: never stopped")
	return nil, growKey{}, 0
}

// fullGrowTable fills shard 0's first table of a tiny-step filter to its
// first failed insert, searching deep (the shard at its bound, maxD = 0, which
// it is left at), and returns the table and its entries, which the shard's
// count does not hold (fillUntil's adds do not count), with the generator.
func fullGrowTable(t *testing.T) (g *Growing, r *rand.Rand, sh *growShard, x *growTable, entries int) {
	g = tinyStepGrowing(LockFree, 1024)
	r = rand.New(rand.NewPCG(11, 12))
	sh = &g.st.shards[0]
	x = sh.cur.Load()
	sh.maxD = x.d
	fillUntil(t, g, r, func(*growTable, growKey) bool { return false })
	for i := range x.t.words {
		entries += laneCount(x.t.words[i].Load())
	}
	return g, r, sh, x, entries
}

// TestGrowDiscoverStopsShortWhileTheTableGrows: discovery stops at the short
// queue exactly where the insert would grow the table instead (canGrow: below
// its shard's bound, at least half full); at the bound, or below half full,
// where it would return ErrFull, it goes deep. On a table filled to its first
// failed insert, every path found is the deep search's; where the table cannot
// grow every one is found, where it can some are missed.
func TestGrowDiscoverStopsShortWhileTheTableGrows(t *testing.T) {
	_, r, sh, x, entries := fullGrowTable(t)
	cases := []struct {
		name    string
		maxD    uint64
		entries int
		grows   bool
	}{
		{"at the bound", x.d, entries, false},
		{"below half full", growMaxDoublings, 0, false},
		{"growable", growMaxDoublings, entries, true},
	}
	missed, keys := 0, 20_000
	if testing.Short() || raceEnabled {
		keys = 3_000
	}
	for range keys {
		k := x.place(r.Uint64())
		deepPath, deepDepth, deepOK := x.growDiscoverDeep(k.b1, k.b2)
		for _, c := range cases {
			sh.maxD = c.maxD
			sh.count.add(int64(c.entries) - sh.count.sum())
			if x.canGrow() != c.grows {
				t.Fatalf("%s: canGrow %v", c.name, !c.grows)
			}
			path, depth, ok := x.growDiscover(k.b1, k.b2)
			switch {
			case ok && (!deepOK || path != deepPath || depth != deepDepth):
				t.Fatalf("%s: path %#x of %d moves; the deep search's: %#x of %d (ok %v)", c.name, path, depth, deepPath, deepDepth, deepOK)
			case !ok && deepOK && !c.grows:
				t.Fatalf("%s: no path; the deep search finds one of %d moves", c.name, deepDepth)
			case !ok && deepOK:
				missed++
			}
		}
	}
	if missed == 0 {
		t.Fatal("in a table that can grow, discovery never stopped short of a path")
	}
	t.Logf("in a table that can grow, %d of %d keys' paths were past the short queue", missed, keys)
}

// TestGrowingErrFullAfterTheLoadFalls: an insert whose search stopped short
// in a shard that could grow, and whose expand then finds the shard below half
// full (deletes elsewhere meanwhile, here the count lowered at stall point 4),
// searches again, deep, before it returns ErrFull: Insert's doc allows ErrFull
// below half load only when no path of five moves exists. Without the second
// round the insert returns ErrFull with such a path.
func TestGrowingErrFullAfterTheLoadFalls(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	g, r, sh, x, entries := fullGrowTable(t)
	sh.maxD = growMaxDoublings
	sh.count.add(int64(entries))
	// A key of shard 0 (seed 0: the keyed hash is the hash) whose short search
	// fails where the deep one finds a path.
	var h uint64
	for {
		h = r.Uint64()
		if k := x.place(h); g.shardOf(h) == sh && g.putIn(x, k) == growFull {
			if _, _, short := x.growDiscover(k.b1, k.b2); !short {
				if _, _, deep := x.growDiscoverDeep(k.b1, k.b2); deep {
					break
				}
			}
		}
	}
	stalls := 0
	stall := func(sx *growTable, _ uint64, stage int) {
		if sx == x && stage == 4 && stalls == 0 {
			stalls++
			sh.count.add(-int64(entries / 2)) // now below half full
		}
	}
	growSearchStalls.Store(&stall)
	defer growSearchStalls.Store(nil)
	if err := g.InsertHash(h); err != nil {
		t.Fatalf("Insert: %v after the load fell below half (stall reached: %v)", err, stalls > 0)
	}
	if stalls == 0 || sh.cur.Load() != x || !g.LookupHash(h) {
		t.Fatalf("stall reached %v, table kept %v, key found %v", stalls > 0, sh.cur.Load() == x, g.LookupHash(h))
	}
}

// TestGrowRelocateDuringCopy: with a copy begun, a relocation whose path
// meets a frozen word, or that finds no path, reports growFrozen (the
// insert then moves on to the next table); with none begun, no path is
// growFull. A frozen key bucket with room is caught by the add.
func TestGrowRelocateDuringCopy(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		r := rand.New(rand.NewPCG(7, uint64(mode)))
		// A key whose buckets are both full and which has a path.
		g := tinyStepGrowing(mode, 16)
		x, k, st := fillUntil(t, g, r, func(x *growTable, k growKey) bool {
			if laneCount(x.t.load(k.b1)) < slotsPerBucket || laneCount(x.t.load(k.b2)) < slotsPerBucket {
				return false
			}
			_, depth, ok := x.growDiscover(k.b1, k.b2)
			return ok && depth >= 1
		})
		if st != growDone {
			t.Fatalf("%v: the table filled before a key needed a path", mode)
		}
		path, depth, _ := x.growDiscover(k.b1, k.b2)
		end := k.b1 // the path's bucket with room, replayed as growRelocate does
		if path&1 != 0 {
			end = k.b2
		}
		for d := range depth {
			s := int(path >> (1 + bfsSlotBits*d) & (1<<bfsSlotBits - 1))
			end, _, _ = x.alt(end, lane(x.t.load(end), s))
		}
		before := make([]uint64, len(x.t.words))
		for i := range before {
			before[i] = x.t.load(uint64(i))
		}
		unchanged := func(what string, frozen func(i int) bool) {
			t.Helper()
			for i, w := range before {
				want := w
				if frozen(i) {
					want |= frozenBit
				}
				if got := x.t.load(uint64(i)); got != want {
					t.Fatalf("%v, %s: word %d is %#x, was %#x", mode, what, i, got, want)
				}
			}
		}
		x.next.Store(&growTable{}) // a copy has begun
		// Only the path's last bucket frozen: its move is refused.
		x.t.words[end].Store(before[end] | frozenBit)
		if st := finishes(t, "frozen end", func() int { return g.growRelocate(x, k.b1, k.b2) }); st != growFrozen {
			t.Fatalf("%v: path into a frozen bucket: status %d, want growFrozen", mode, st)
		}
		unchanged("frozen end", func(i int) bool { return uint64(i) == end })
		// Every word frozen, as the copy leaves the table.
		for i, w := range before {
			x.t.words[i].Store(w | frozenBit)
		}
		if st := finishes(t, "all frozen", func() int { return g.addIn(x, k) }); st != growFrozen {
			t.Fatalf("%v: insert into a frozen table: status %d, want growFrozen", mode, st)
		}
		unchanged("all frozen", func(int) bool { return true })
		// A key bucket with room, frozen: discovery reports room (depth 0),
		// the add that follows sees the frozen word.
		for i, w := range before {
			x.t.words[i].Store(w)
		}
		w1 := setLane(before[k.b1], 0, 0)
		x.t.words[k.b1].Store(w1 | frozenBit)
		if st := finishes(t, "frozen room", func() int { return g.addIn(x, k) }); st != growFrozen {
			t.Fatalf("%v: frozen bucket with room: status %d, want growFrozen", mode, st)
		}
		x.t.words[k.b1].Store(before[k.b1])
		x.next.Store(nil)

		// A key with no path: growFull before a copy, growFrozen after one began.
		g = tinyStepGrowing(mode, 16)
		x, k, st = fillUntil(t, g, r, func(*growTable, growKey) bool { return false })
		if st != growFull {
			t.Fatalf("%v: fill ended with status %d", mode, st)
		}
		if st := finishes(t, "no path", func() int { return g.growRelocate(x, k.b1, k.b2) }); st != growFull {
			t.Fatalf("%v: no path, no copy: status %d, want growFull", mode, st)
		}
		x.next.Store(&growTable{})
		if st := finishes(t, "no path, copy", func() int { return g.growRelocate(x, k.b1, k.b2) }); st != growFrozen {
			t.Fatalf("%v: no path during a copy: status %d, want growFrozen", mode, st)
		}
		x.next.Store(nil)
	}
}

// TestGrowRelocateAgainstAChangedSlot: growRelocate's claim (every move
// takes an entry to the bucket and value alt gives it from the entry
// itself, however stale the path), run through the scheduling hooks: the
// entry in the path's first slot is replaced by another key's (a Delete
// and an Insert meanwhile) before the replay reads it, or after the
// replay read it and before its move; the other key's entry may have its
// own bucket as alt (a key with b1 = b2). Afterwards every key present owns
// a matching entry of its own and the table holds one entry per key.
func TestGrowRelocateAgainstAChangedSlot(t *testing.T) {
	if !testHooks {
		t.Skip("needs the scheduling hooks (hooks.go): go test -race, or -tags cuckoohooks")
	}
	cases := 0
	for _, mode := range []Mode{LockFree, Locked} {
		for _, at := range []int{1, 2} { // the hooked read the change precedes: the replay's of b0, of its successor
			for _, self := range []bool{false, true} {
				for seed := uint64(0); seed < 40; seed++ {
					if changedSlotCase(t, mode, at, self, seed) {
						cases++
						break
					}
				}
			}
		}
	}
	if cases != 8 {
		t.Fatalf("built %d of 8 cases", cases)
	}
}

// changedSlotCase runs one case of TestGrowRelocateAgainstAChangedSlot and
// reports whether seed gave a table to run it on.
func changedSlotCase(t *testing.T, mode Mode, at int, self bool, seed uint64) bool {
	r := rand.New(rand.NewPCG(seed, 11))
	g := tinyStepGrowing(mode, 32)
	x := g.st.shards[0].cur.Load()
	var keys []uint64
	var k growKey
	var path uint64
	var depth int
	for {
		kh := r.Uint64()
		k = x.place(kh)
		if laneCount(x.t.load(k.b1)) == slotsPerBucket && laneCount(x.t.load(k.b2)) == slotsPerBucket {
			var ok bool
			if path, depth, ok = x.growDiscover(k.b1, k.b2); !ok {
				return false
			} else if depth >= 2 {
				break
			}
		}
		if st := g.addIn(x, k); st != growDone {
			return false
		}
		keys = append(keys, kh)
	}
	b0 := k.b1
	if path&1 != 0 {
		b0 = k.b2
	}
	s0 := int(path >> 1 & (1<<bfsSlotBits - 1))
	w0 := x.t.load(b0)
	va := lane(w0, s0)
	nb, _, _ := x.alt(b0, va)
	// A: a key whose entry is va, without which every other key still owns
	// a match; B: a new key with an entry vb in b0 that moves elsewhere
	// (or, self, nowhere: b1 = b2 = b0).
	x.t.words[b0].Store(setLane(w0, s0, 0))
	a := -1
	for i, kh := range keys {
		rest := append(append([]uint64(nil), keys[:i]...), keys[i+1:]...)
		if kp := x.place(kh); (kp.b1 == b0 || kp.b2 == b0) && func() bool { ok, _ := everyKeyOwnsAMatch(x, rest); return ok }() {
			a = i
			break
		}
	}
	x.t.words[b0].Store(w0)
	if a < 0 {
		return false
	}
	var bh, vb uint64
	for range 1 << 20 {
		bh = r.Uint64()
		kb := x.place(bh)
		switch {
		case self && kb.b1 == b0 && kb.b2 == b0:
			vb = kb.q1
		case !self && kb.b1 == b0 && kb.b2 != b0:
			vb = kb.q1
		case !self && kb.b2 == b0 && kb.b1 != b0:
			vb = kb.q2
		default:
			continue
		}
		if bb, _, ok := x.alt(b0, vb); vb != va && (self || ok && bb != nb) {
			break
		}
		vb = 0
	}
	if vb == 0 {
		return false
	}
	model := append(append(append([]uint64(nil), keys[:a]...), keys[a+1:]...), bh)

	reads, fired := 0, false
	h := func(ws wordStep) {
		if ws.t != &x.t || ws.write || fired {
			return
		}
		if reads++; reads == at {
			fired = true
			w := x.t.words[b0].Load()
			if lane(w, s0) != va {
				t.Errorf("%v: slot %d of %d changed before the hook", mode, s0, b0)
			}
			x.t.words[b0].Store(setLane(w, s0, vb))
		}
	}
	stepHook.Store(&h)
	defer stepHook.Store(nil)
	st := finishes(t, "changed slot", func() int { return g.growRelocate(x, k.b1, k.b2) })
	if !fired {
		t.Fatalf("%v, read %d: the hook never fired", mode, at)
	}
	if st != growDone {
		t.Fatalf("%v, read %d, self %v: status %d", mode, at, self, st)
	}
	if ok, i := everyKeyOwnsAMatch(x, model); !ok {
		t.Fatalf("%v, read %d, self %v: key %d of %d owns no match after the relocation", mode, at, self, i, len(model))
	}
	n := 0
	for i := range x.t.words {
		n += laneCount(x.t.load(uint64(i)))
	}
	if n != len(model) {
		t.Fatalf("%v, read %d, self %v: %d entries for %d keys", mode, at, self, n, len(model))
	}
	return true
}
