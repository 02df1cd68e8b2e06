package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// Tests of the growing filter (grow.go, grow_table.go, grow_lane.go): the
// lane arithmetic against a lane-by-lane model, no false negatives under
// concurrent growth, deletes and reinserts, the youngest-match delete
// rule, snapshots and the bound; its format in grow_format_test.go.

var growModes = []Mode{LockFree, Locked}

func newTestGrowing(tb testing.TB, capacity int, opts ...Option) *Growing {
	tb.Helper()
	g, err := NewGrowing(capacity, opts...)
	if err != nil {
		tb.Fatalf("NewGrowing(%d): %v", capacity, err)
	}
	return g
}

func growTestKey(buf []byte, w, i int) []byte {
	return fmt.Appendf(buf[:0], "w%d-k%d", w, i)
}

// slowMatch is matchLanes lane by lane, from the definition: a lane
// matches if it holds an entry whose tag and index bits above its marker
// equal the query's.
func slowMatch(w, q uint64) uint64 {
	var m uint64
	for s := range 4 {
		v := lane(w, s)
		if v&tailMask == 0 {
			continue
		}
		a := bits.TrailingZeros64(v)
		if v>>(a+1) == q>>(a+1) {
			m |= 1 << (s*laneBits + laneBits - 1)
		}
	}
	return m
}

// randomGrowWord returns a word of valid lanes (empty, or an entry of a
// random age) with random counter and frozen bits, and lanes that often
// share the query's bits.
func randomGrowWord(r *rand.Rand, q uint64) uint64 {
	w := r.Uint64() &^ (lanesMask | tagMask)
	for s := range 4 {
		switch r.IntN(4) {
		case 0: // empty
		default:
			v := r.Uint64() & laneMask
			if r.IntN(2) == 0 {
				v = q ^ uint64(r.IntN(4))<<r.IntN(laneBits-1)
			}
			a := uint(r.IntN(tailBits))
			v = v&^(1<<(a+1)-1) | 1<<a
			w = setLane(w, s, v)
		}
	}
	return w
}

// TestGrowLaneArithmetic checks the SWAR lane functions (matchEither on
// pairs of words) against lane-by-lane models on random words.
func TestGrowLaneArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		q := r.Uint64()&(laneMask&^tailMask) | (r.Uint64()&(tailVoid-1))<<1 | 1
		w := randomGrowWord(r, q)
		if got, want := matchLanes(w, q), slowMatch(w, q); got != want {
			t.Fatalf("matchLanes(%#016x, %#04x) = %#016x; want %#016x", w, q, got, want)
		}
		q2 := r.Uint64()&(laneMask&^tailMask) | (r.Uint64()&(tailVoid-1))<<1 | 1
		w2 := randomGrowWord(r, q2)
		if got, want := matchEither(laneDiff(w, q), laneDiff(w2, q2)), slowMatch(w, q)|slowMatch(w2, q2) != 0; got != want {
			t.Fatalf("matchEither(%#016x, %#04x, %#016x, %#04x) = %v; want %v", w, q, w2, q2, got, want)
		}
		occupied := 0
		for s := range 4 {
			if lane(w, s) != 0 {
				occupied++
			}
		}
		if laneCount(w) != occupied {
			t.Fatalf("laneCount(%#016x) = %d; want %d", w, laneCount(w), occupied)
		}
		nw, ok := putLane(w, q)
		if ok != (occupied < 4) || (ok && laneCount(nw) != occupied+1) || nw&^lanesMask != w&^lanesMask {
			t.Fatalf("putLane(%#016x): %#016x, %v", w, nw, ok)
		}
		if s, a, ok := longestMatch(w, q); ok {
			if laneAge(lane(w, s)) != a || slowMatch(w, q)>>(s*laneBits+laneBits-1)&1 == 0 {
				t.Fatalf("longestMatch(%#016x): lane %d, age %d", w, s, a)
			}
			for s2 := range 4 {
				if slowMatch(w, q)>>(s2*laneBits+laneBits-1)&1 != 0 && laneAge(lane(w, s2)) < a {
					t.Fatalf("longestMatch(%#016x) chose age %d; lane %d has age %d", w, a, s2, laneAge(lane(w, s2)))
				}
			}
		}
	}
}

// TestGrowStepsKeepMatches: through every growth step (a copy into the
// next table, as copyChunk maps buckets), an entry written for a key sits
// in the key's pair of the new table and still matches it; moved to its
// other bucket (alt, across levels too) it is in the pair and matches; and
// a move refused (ok false) is a void entry's into a split bucket.
// altBucket, discovery's shortcut, agrees with alt on every move.
func TestGrowStepsKeepMatches(t *testing.T) {
	var bases, maxD [growShards]uint64
	for i := range bases {
		bases[i], maxD[i] = 1000+uint64(i)*37, growMaxDoublings
	}
	st := newGrowState(&bases, &maxD, 77)
	r := rand.New(rand.NewPCG(3, 3))
	var crossed, refused, dropped int
	iters := 20_000
	if raceEnabled { // one goroutine: the detector has nothing to check
		iters = Sized(5_000, 5_000, 20_000)
	}
	for range iters {
		kh := r.Uint64()
		sh := &st.shards[r.IntN(growShards)]
		d0 := uint64(r.IntN(growMaxDoublings))
		x := st.tableShape(sh, d0, uint64(r.Int64N(int64(sh.base<<d0))))
		k := x.place(kh)
		v, b := k.q1, k.b1
		if r.IntN(2) == 0 {
			v, b = k.q2, k.b2
		}
		for x.d < growMaxDoublings {
			// A move to the other bucket and back.
			alt, altv, ok := x.alt(b, v)
			if nb, nok := x.altBucket(b, v); nok != ok || ok && nb != alt {
				t.Fatalf("d=%d p=%d: altBucket(%d, %#04x) = %d, %v; alt gives %d, %v", x.d, x.p, b, v, nb, nok, alt, ok)
			}
			if !ok {
				if v&tailMask != tailVoid || x.split(b) == 1 {
					t.Fatalf("d=%d p=%d: alt refused entry %#04x of bucket %d (split %d)", x.d, x.p, v, b, x.split(b))
				}
				refused++
			} else {
				if alt != k.b1 && alt != k.b2 || (alt == b) != (k.b1 == k.b2) {
					t.Fatalf("d=%d p=%d: alt(%d) = %d; pair %d, %d", x.d, x.p, b, alt, k.b1, k.b2)
				}
				if !matchesIn(k, alt, altv) {
					t.Fatalf("d=%d p=%d: entry %#04x moved to bucket %d as %#04x does not match its key %+v", x.d, x.p, v, alt, altv, k)
				}
				if x.split(alt) != x.split(b) {
					crossed++
				}
				back, backv, ok := x.alt(alt, altv)
				if !ok || back != b || !matchesIn(k, back, backv) {
					t.Fatalf("d=%d p=%d: moving back gives bucket %d, %#04x, %v; want %d", x.d, x.p, back, backv, ok, b)
				}
				if backv != v {
					dropped++
					if x.split(b) != 1 || laneAge(v) != 0 || laneAge(backv) != 1 {
						t.Fatalf("d=%d p=%d: back as %#04x from %#04x", x.d, x.p, backv, v)
					}
				}
				if r.IntN(2) == 0 {
					b, v = alt, altv
				}
			}
			// The next step, mapped as copyChunk maps it.
			nd, np := x.nextStep()
			nx := st.tableShape(sh, nd, np)
			end := np
			if nd > x.d {
				end = x.c << x.d
			}
			nk := nx.place(kh)
			var nb, nv uint64
			switch j := b - x.p; {
			case b < 2*x.p:
				nb, nv = b, v
			case j >= end:
				nb, nv = j+np, v
			default:
				var half uint64
				var both bool
				nv, half, both = splitLane(v)
				nb = 2*j + half
				if both { // a void entry goes to both halves: one is the key's
					if 2*j != nk.b1 && 2*j != nk.b2 && 2*j+1 != nk.b1 && 2*j+1 != nk.b2 {
						t.Fatalf("void entry of bucket %d: neither half is in the pair %d, %d", b, nk.b1, nk.b2)
					}
					if nk.b1 == 2*j || nk.b1 == 2*j+1 {
						nb = nk.b1
					} else {
						nb = nk.b2
					}
				}
			}
			if nb != nk.b1 && nb != nk.b2 {
				t.Fatalf("step to d=%d p=%d: entry went to %d, the key's pair is %d, %d", nd, np, nb, nk.b1, nk.b2)
			}
			if !matchesIn(nk, nb, nv) {
				t.Fatalf("step to d=%d p=%d: entry %#04x in bucket %d no longer matches its key %+v", nd, np, nv, nb, nk)
			}
			x, k, b, v = nx, nk, nb, nv
		}
	}
	if crossed == 0 || refused == 0 || dropped == 0 {
		t.Fatalf("moves across levels %d, refused %d, with a dropped bit %d: want each", crossed, refused, dropped)
	}
	t.Logf("moves across levels %d, refused %d, with a dropped bit %d", crossed, refused, dropped)
}

// matchesIn reports whether entry v, in bucket b, matches the key k: in
// the form the key has in that bucket.
func matchesIn(k growKey, b, v uint64) bool {
	return b == k.b1 && matchLanes(v, k.q1) != 0 || b == k.b2 && matchLanes(v, k.q2) != 0
}

// TestGrowingNoFalseNegativesUnderGrowth runs more writers than Ps, each
// inserting its own keys into a filter that starts at 1,000 keys and
// doubles many times, while every fourth key is deleted and reinserted
// over and over (the insert, delete, reinsert scenario that lost keys in
// stacked filters) and readers look up keys that are present throughout,
// single and batched. Any "absent" for such a key fails the test.
func TestGrowingNoFalseNegativesUnderGrowth(t *testing.T) {
	perWriter := Sized(8_000, 50_000, 200_000)
	if raceEnabled {
		perWriter = Sized(4_000, 4_000, 12_000)
	}
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode))
			writers := 2*runtime.GOMAXPROCS(0) + 2
			readers := 2
			var published = make([]atomic.Int64, writers) // keys below are inserted (stable ones present)
			var wg sync.WaitGroup
			var stop atomic.Bool
			var failures atomic.Int64
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var buf []byte
					r := rand.New(rand.NewPCG(uint64(w), 7))
					for i := range perWriter {
						buf = growTestKey(buf, w, i)
						if err := g.Insert(buf); err != nil {
							t.Errorf("writer %d: Insert(%d): %v", w, i, err)
							failures.Add(1)
							return
						}
						published[w].Store(int64(i + 1))
						// Churn: delete a churned key of this writer and
						// insert it again at once.
						if i >= 4 && i%3 == 0 {
							j := r.IntN(i/4) * 4
							buf = growTestKey(buf, w, j)
							if !g.Delete(buf) {
								t.Errorf("writer %d: Delete(%d) of an inserted key found nothing", w, j)
								failures.Add(1)
								return
							}
							if err := g.Insert(buf); err != nil {
								t.Errorf("writer %d: reinsert(%d): %v", w, j, err)
								failures.Add(1)
								return
							}
						}
					}
				}()
			}
			var rwg sync.WaitGroup
			var checked atomic.Int64
			for rd := range readers {
				rwg.Add(1)
				go func() {
					defer rwg.Done()
					r := rand.New(rand.NewPCG(uint64(rd), 99))
					keys := make([][]byte, 16)
					found := make([]bool, 16)
					for !stop.Load() && failures.Load() == 0 {
						w := r.IntN(writers)
						n := int(published[w].Load())
						if n < 8 {
							continue
						}
						for k := range keys {
							i := r.IntN(n)
							if i%4 == 0 {
								i++ // stable keys only: churned ones are absent between delete and reinsert
							}
							if i >= n {
								i = 1
							}
							keys[k] = growTestKey(keys[k], w, i)
						}
						if !g.Lookup(keys[0]) {
							t.Errorf("Lookup(%s) = false for a key inserted and never deleted", keys[0])
							failures.Add(1)
						}
						g.LookupBatch(keys, found)
						for k, ok := range found {
							if !ok {
								t.Errorf("LookupBatch: %s absent, inserted and never deleted", keys[k])
								failures.Add(1)
							}
						}
						checked.Add(int64(len(keys) + 1))
					}
				}()
			}
			WaitOrFail(t, Done(&wg), StressWatchdog, "growing writers")
			stop.Store(true)
			rwg.Wait()
			var buf []byte
			for w := range writers {
				for i := range perWriter {
					buf = growTestKey(buf, w, i)
					if !g.Lookup(buf) {
						t.Fatalf("after the run: %s absent", buf)
					}
				}
			}
			checkGrowingLen(t, g, writers*perWriter)
			if g.Doublings() < 5 {
				t.Errorf("the filter doubled %d times only; the test wants growth under load", g.Doublings())
			}
			t.Logf("%d writers, %d readers: %d keys, %d doublings, %d lookups checked",
				writers, readers, g.Len(), g.Doublings(), checked.Load())
		})
	}
}

// checkGrowingLen checks Len against the number of keys stored: equal, or
// above by the copies of void entries that doublings made (entries 8 or
// more doublings old), which the table's words count exactly.
func checkGrowingLen(t *testing.T, g *Growing, keys int) {
	t.Helper()
	entries := 0
	for i := range g.st.shards {
		x := g.st.shards[i].searched()
		for i := range x.t.words {
			entries += laneCount(x.t.load(uint64(i)))
		}
	}
	if g.Len() != entries {
		t.Errorf("Len = %d; the tables hold %d entries", g.Len(), entries)
	}
	if d := shardDoublings(g); entries < keys || (d.hi < 8 && entries != keys) || float64(entries) > 1.05*float64(keys) {
		t.Errorf("%d entries for %d keys after %d to %d doublings of the shards", entries, keys, d.lo, d.hi)
	}
}

// shardDoublings returns the fewest and the most doublings of g's shards.
func shardDoublings(g *Growing) (d struct{ lo, hi uint64 }) {
	d.lo = growMaxDoublings
	for i := range g.st.shards {
		x := g.st.shards[i].cur.Load()
		d.lo, d.hi = min(d.lo, x.d), max(d.hi, x.d)
	}
	return d
}

// TestGrowingFrom1000To10M grows a filter that starts at 1,000 keys to
// 10,000,000 (10,000x) under concurrent inserts, with no ErrFull and no
// lost key: in the long suite (CUCKOO_LONG=1); by default to 1,000,000,
// and under the race detector, which slows every access tenfold, to
// 1,000,000 in the long suite and 100,000 by default.
func TestGrowingFrom1000To10M(t *testing.T) {
	total := Sized(100_000, 1_000_000, 10_000_000)
	if raceEnabled {
		total = Sized(50_000, 100_000, 1_000_000)
	}
	g := newTestGrowing(t, 1000)
	workers := 2*runtime.GOMAXPROCS(0) + 1
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var k [8]byte
			for {
				lo := next.Add(1024) - 1024
				if lo >= int64(total) {
					return
				}
				for i := lo; i < min(lo+1024, int64(total)); i++ {
					binary.LittleEndian.PutUint64(k[:], uint64(i))
					if err := g.Insert(k[:]); err != nil {
						t.Errorf("Insert(%d): %v", i, err)
						return
					}
				}
			}
		}()
	}
	WaitOrFail(t, Done(&wg), StressWatchdog, "inserters")
	if t.Failed() {
		return
	}
	var k [8]byte
	for i := range total {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		if !g.Lookup(k[:]) {
			t.Fatalf("key %d lost", i)
		}
	}
	checkGrowingLen(t, g, total)
	t.Logf("%d keys: %d doublings of %d keys, load %.3f", total, g.Doublings(), g.BaseCapacity(), g.LoadFactor())
}

// youngerCollider returns, for the key hash hy (seed 0, so that the keyed
// hash is the hash) in table x of its shard, a hash hx of a different key
// in the same shard with the same buckets and tag in x, whose fresh entry
// shares its first 7 index bits with hy's but not the last one: hx matches
// an entry of hy that is at least one doubling old, hy does not match hx's
// fresh entry. It searches the high halves near hy's (which keep r1 as it
// is unless they cross into the next base bucket) for one whose shard is
// hy's, with the low half chosen so that lo differs from hy's in that last
// bit only (bit ts-1 of lo, bit ts of P = lo<<1, with ts the tail's shift
// at the level of hy's buckets, tShift or tShift-1); ok is false if none
// of 4096 is, if hy's buckets have different levels, or if x has 19
// doublings.
func youngerCollider(g *Growing, x *growTable, hy uint64) (hx uint64, ok bool) {
	sh, ky := g.shardOf(hy), x.place(hy)
	if x.split(ky.b1) != x.split(ky.b2) {
		return 0, false
	}
	ts := x.tShift - uint64(x.split(ky.b1))
	if ts == 0 {
		return 0, false // d = 19: a fresh entry's last bit is 0 for every key
	}
	hi := hy >> 32
	for delta := uint64(1); delta < 4096; delta++ {
		hi2 := (hi + delta) & 0xffffffff
		lo2 := uint64(uint32(hy)^uint32(hi)^uint32(hi2)) ^ 1<<(ts-1)
		hx = hi2<<32 | lo2
		if kx := x.place(hx); g.shardOf(hx) == sh && kx.b1 == ky.b1 && kx.b2 == ky.b2 {
			return hx, true
		}
	}
	return 0, false
}

// TestGrowingDeleteYoungestMatch builds the case that needs Delete to
// remove the youngest matching entry: key y is inserted, the filter
// doubles, and key x, whose fresh entry compares one bit more than y's
// aged one and differs from y there, is inserted into the same buckets.
// x matches both entries, y only its own. Delete(x) must remove x's entry;
// removing y's (the older, shorter match) would lose y. Choosing the
// oldest match in youngestOf makes this test fail.
func TestGrowingDeleteYoungestMatch(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(0))
			r := rand.New(rand.NewPCG(5, 5))
			var ys []uint64
			for range 3000 {
				hy := r.Uint64()
				ys = append(ys, hy)
				if err := g.InsertHash(hy); err != nil {
					t.Fatal(err)
				}
			}
			var k [8]byte
			for i := 0; shardDoublings(g).lo < 2; i++ {
				binary.LittleEndian.PutUint64(k[:], uint64(i))
				if err := g.Insert(k[:]); err != nil {
					t.Fatal(err)
				}
			}
			tested := 0
			for _, hy := range ys {
				x := g.shardOf(hy).cur.Load() // seed 0: the keyed hash is the hash
				hx, ok := youngerCollider(g, x, hy)
				if !ok {
					continue
				}
				tested++
				kx, ky := x.place(hx), x.place(hy)
				if kx.q1>>tagShift != ky.q1>>tagShift || kx.q1^ky.q1 != 1<<1 {
					t.Fatalf("the collider is not one: %+v, %+v", kx, ky)
				}
				if err := g.InsertHash(hx); err != nil {
					t.Fatal(err)
				}
				if !g.DeleteHash(hx) {
					t.Fatal("Delete of an inserted key found nothing")
				}
				if !g.LookupHash(hy) {
					t.Fatalf("deleting a younger colliding key removed the entry of key %#x", hy)
				}
			}
			if tested < 1000 {
				t.Fatalf("only %d colliders tested", tested)
			}
		})
	}
}

// TestGrowingSnapshotUnderLoad takes snapshots while writers grow the
// filter: every key inserted before WriteTo began is found in the filter
// read back.
func TestGrowingSnapshotUnderLoad(t *testing.T) {
	perWriter := Sized(5_000, 20_000, 40_000)
	if raceEnabled {
		perWriter = Sized(2_000, 3_000, 8_000)
	}
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode))
			writers := 2*runtime.GOMAXPROCS(0) + 1
			published := make([]atomic.Int64, writers)
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var buf []byte
					for i := range perWriter {
						buf = growTestKey(buf, w, i)
						if err := g.Insert(buf); err != nil {
							t.Errorf("Insert: %v", err)
							return
						}
						published[w].Store(int64(i + 1))
					}
				}()
			}
			done := Done(&wg)
			snaps := 0
			for running := true; running; {
				select {
				case <-done:
					running = false
				default:
				}
				before := make([]int64, writers)
				for w := range before {
					before[w] = published[w].Load()
				}
				var b bytes.Buffer
				if _, err := g.WriteTo(&b); err != nil {
					t.Fatal(err)
				}
				var h Growing
				if _, err := h.ReadFrom(&b); err != nil {
					t.Fatalf("ReadFrom of a snapshot: %v", err)
				}
				var buf []byte
				for w, n := range before {
					for i := range int(n) {
						buf = growTestKey(buf, w, i)
						if !h.Lookup(buf) {
							t.Fatalf("snapshot %d: %s, inserted before WriteTo began, is absent", snaps, buf)
						}
					}
				}
				snaps++
			}
			t.Logf("%d snapshots checked while the filter doubled %d times", snaps, g.Doublings())
		})
	}
}

// TestGrowingMaxCapacity fills a bounded filter until ErrFull: the bound
// holds, the failed insert loses nothing, and every inserted key is found.
func TestGrowingMaxCapacity(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			base := newTestGrowing(t, 1000).BaseCapacity()
			maxCap := 4*base + base/2 // room for two doublings, not three
			g := newTestGrowing(t, 1000, WithMode(mode), WithMaxCapacity(maxCap))
			var k [8]byte
			n := 0
			for ; ; n++ {
				binary.LittleEndian.PutUint64(k[:], uint64(n))
				err := g.Insert(k[:])
				if errors.Is(err, ErrFull) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if n > 2*maxCap {
					t.Fatalf("%d keys inserted under a maximum of %d", n, maxCap)
				}
			}
			// The bounds: within maxCap, and the smallest shard at its
			// bound could not double without passing it; no shard past its
			// bound.
			smallest, keys := uint64(0), 0
			for i := range g.st.shards {
				sh := &g.st.shards[i]
				if d := sh.cur.Load().d; d > sh.maxD {
					t.Errorf("shard %d: %d doublings; its bound is %d", i, d, sh.maxD)
				}
				if m := sh.base << sh.maxD; smallest == 0 || m < smallest {
					smallest = m
				}
				keys += int(growKeys(sh.base << sh.maxD))
			}
			if keys > maxCap || keys+int(growKeys(smallest)) <= maxCap {
				t.Errorf("the shards at their bounds hold %d keys at 95%% (the smallest %d); the maximum is %d", keys, growKeys(smallest), maxCap)
			}
			if g.Len() != n {
				t.Errorf("Len = %d after %d inserts and one ErrFull; want %d", g.Len(), n, n)
			}
			// Every shard holds a sixteenth of the keys: the first ErrFull
			// comes when the smallest is full.
			if float64(n) < 0.9*float64(growShards*growKeys(smallest)) {
				t.Errorf("ErrFull after %d keys; the smallest shard at its bound holds %d at 95%% (below 90%% of 16 times it)", n, growKeys(smallest))
			}
			t.Logf("ErrFull after %d keys under a maximum of %d (%.2f); Cap %d", n, maxCap, float64(n)/float64(maxCap), g.Cap())
			for i := range n {
				binary.LittleEndian.PutUint64(k[:], uint64(i))
				if !g.Lookup(k[:]) {
					t.Fatalf("key %d lost", i)
				}
			}
		})
	}
}

// TestGrowingOptionsAndZero covers option errors and the zero Growing.
func TestGrowingOptionsAndZero(t *testing.T) {
	if _, err := NewGrowing(0); err == nil {
		t.Error("NewGrowing(0): no error")
	}
	if _, err := NewGrowing(1000, WithMaxCapacity(-1)); err == nil {
		t.Error("WithMaxCapacity(-1): no error")
	}
	if _, err := NewGrowing(100_000, WithMaxCapacity(1000)); err == nil {
		t.Error("a maximum below the first table: no error")
	}
	if _, err := New(1000, WithMaxCapacity(5000)); err == nil {
		t.Error("New with WithMaxCapacity: no error")
	}
	for _, b := range []int{8, 9} {
		if _, err := NewGrowing(1000, WithFingerprintBits(b)); err == nil {
			t.Errorf("NewGrowing with %d-bit fingerprints: no error", b)
		}
	}
	var z Growing
	if z.Insert([]byte("a")) != ErrZeroFilter || z.Lookup([]byte("a")) || z.Delete([]byte("a")) || z.Count([]byte("a")) != 0 ||
		z.Len() != 0 || z.Cap() != 0 || z.LoadFactor() != 0 || z.Doublings() != 0 || z.FalsePositiveRate() != 0 || z.FingerprintBits() != 0 {
		t.Error("zero Growing: an answer other than ErrZeroFilter, false or 0")
	}
	if _, err := z.MarshalBinary(); err != ErrZeroFilter {
		t.Errorf("zero Growing MarshalBinary: %v; want ErrZeroFilter", err)
	}
	z.Reset()
}

// TestGrowingReset shrinks the filter back to its first, empty table, also
// while other goroutines insert: their keys are found afterwards unless the
// Reset removed them (an insert that returned before the Reset began is
// removed; none is half there).
func TestGrowingReset(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithSeed(8), WithMode(mode))
			n := Sized(20_000, 100_000, 100_000)
			if raceEnabled {
				n = Sized(10_000, 20_000, 100_000)
			}
			var k [8]byte
			for i := range n {
				binary.LittleEndian.PutUint64(k[:], uint64(i))
				if err := g.Insert(k[:]); err != nil {
					t.Fatal(err)
				}
			}
			g.Reset()
			if first := newTestGrowing(t, 1000).Cap(); g.Doublings() != 0 || g.Len() != 0 || g.Cap() != first {
				t.Fatalf("after Reset: %d doublings, Len %d, Cap %d; want 0, 0, %d", g.Doublings(), g.Len(), g.Cap(), first)
			}
			found := 0
			for i := range n {
				binary.LittleEndian.PutUint64(k[:], uint64(i))
				if g.Lookup(k[:]) {
					found++
				}
			}
			if found > n/1000 {
				t.Errorf("%d of %d removed keys found in an empty filter", found, n)
			}
			// Resets racing inserters: after the last Reset, every key
			// inserted after it returned is found.
			var wg sync.WaitGroup
			var after atomic.Bool
			var mu sync.Mutex
			var late []int
			for w := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var k [8]byte
					for i := w; i < n*3/5; i += 3 {
						a := after.Load()
						binary.LittleEndian.PutUint64(k[:], uint64(i))
						if err := g.Insert(k[:]); err != nil {
							t.Error(err)
							return
						}
						if a {
							mu.Lock()
							late = append(late, i)
							mu.Unlock()
						}
					}
				}()
			}
			for range 5 {
				g.Reset()
				runtime.Gosched()
			}
			after.Store(true)
			wg.Wait()
			for _, i := range late {
				binary.LittleEndian.PutUint64(k[:], uint64(i))
				if !g.Lookup(k[:]) {
					t.Fatalf("key %d, inserted after the last Reset, is absent", i)
				}
			}
		})
	}
}

// TestGrowingZeroAllocs: Insert (into a table with room), Lookup, Delete,
// Count and the batch forms allocate nothing.
func TestGrowingZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	g := newTestGrowing(t, 1000)
	key := []byte("key")
	batch := [][]byte{key, []byte("other"), key}
	strs := []string{"key", "other", "key"}
	hs := []uint64{1, 2, 3}
	found := make([]bool, 3)
	if a := testing.AllocsPerRun(100, func() {
		_ = g.Insert(key)
		_ = g.Lookup(key)
		_ = g.Count(key)
		_ = g.Delete(key)
		_ = g.LookupString("key")
		_ = g.LookupBatch(batch, found)
		_, _ = g.InsertBatch(batch)
		_, _ = g.InsertBatchString(strs)
		_, _ = g.InsertBatchHash(hs)
		for _, k := range batch {
			_ = g.Delete(k)
		}
		for _, k := range strs {
			_ = g.DeleteString(k)
		}
		for _, h := range hs {
			_ = g.DeleteHash(h)
		}
	}); a != 0 {
		t.Errorf("%.1f allocations per Insert+Lookup+Count+Delete+LookupBatch+InsertBatch (all forms)+Deletes; want 0", a)
	}
}

// TestGrowingLookupBatchAgrees: on a grown filter, LookupBatch answers as
// Lookup does for present and absent keys, in groups of every size, and
// handles found shorter than keys like Filter.LookupBatch.
func TestGrowingLookupBatchAgrees(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(21))
			n := Sized(20_000, 100_000, 100_000)
			if raceEnabled {
				n = Sized(10_000, 20_000, 100_000)
			}
			keys := make([][]byte, 2*n)
			for i := range keys {
				keys[i] = binary.LittleEndian.AppendUint64(nil, uint64(i))
				if i < n {
					if err := g.Insert(keys[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			r := rand.New(rand.NewPCG(3, 4))
			r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			found := make([]bool, len(keys))
			for lo := 0; lo < len(keys); {
				hi := min(len(keys), lo+1+r.IntN(3*batchGroup))
				if got := g.LookupBatch(keys[lo:hi], found[lo:hi]); got != hi-lo {
					t.Fatalf("LookupBatch returned %d; want %d", got, hi-lo)
				}
				lo = hi
			}
			positives := 0
			for i, k := range keys {
				if want := g.Lookup(k); found[i] != want {
					t.Fatalf("key %x: LookupBatch %v, Lookup %v", k, found[i], want)
				}
				if binary.LittleEndian.Uint64(k) < uint64(n) {
					positives++
					if !found[i] {
						t.Fatalf("inserted key %x absent", k)
					}
				}
			}
			short := make([]bool, 5)
			if got := g.LookupBatch(keys[:40], short); got != 5 {
				t.Errorf("LookupBatch into 5 answers returned %d", got)
			}
			t.Logf("%d doublings, %d present keys checked", g.Doublings(), positives)
		})
	}
}

// TestGrowingFalsePositiveRate compares FalsePositiveRate with the rate
// measured on never-inserted keys, and the measured rate with a fixed
// filter's of four 12-bit slots holding 1M keys: at most 2 times it, at
// 1,000 and 3,800 times the capacity the filter started with (right after
// a doubling, where entries are oldest, and near the top of the cycle).
// It measured 1.43x and 1.73x (BENCHMARKS.md, "Growing filter"). Under the race detector, at smaller sizes (the first
// only by default), against a fixed filter of 250,000 keys; under -short at
// the first size only.
func TestGrowingFalsePositiveRate(t *testing.T) {
	g := newTestGrowing(t, 1000, WithSeed(31))
	sizes, probes, fixedKeys := []int{1_000_000, 3_800_000}, 2_000_000, 1_000_000
	if raceEnabled {
		// One goroutine: the detector has nothing to check, and a fixed
		// filter's rate depends on its load, not its size.
		sizes, probes, fixedKeys = []int{250_000, 470_000}, 600_000, 250_000
	}
	if testing.Short() || raceEnabled && !LongTests() {
		sizes = sizes[:1]
	}
	fixed := NewTestFilter(t, fixedKeys, LockFree, 12, 31)
	var k [8]byte
	next := 0
	for i := range fixedKeys {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		if err := fixed.Insert(k[:]); err != nil {
			t.Fatal(err)
		}
	}
	fixedHits := 0
	for i := range probes {
		binary.LittleEndian.PutUint64(k[:], uint64(i)|1<<62)
		if fixed.Lookup(k[:]) {
			fixedHits++
		}
	}
	fixedRate := float64(fixedHits) / float64(probes)
	for _, n := range sizes {
		for ; next < n; next++ {
			binary.LittleEndian.PutUint64(k[:], uint64(next))
			if err := g.Insert(k[:]); err != nil {
				t.Fatal(err)
			}
		}
		hits := 0
		for i := range probes {
			binary.LittleEndian.PutUint64(k[:], uint64(i)|1<<62)
			if g.Lookup(k[:]) {
				hits++
			}
		}
		measured, want := float64(hits)/float64(probes), g.FalsePositiveRate()
		t.Logf("%d keys, %d doublings, load %.3f: measured %.5f, FalsePositiveRate %.5f, fixed filter %.5f (%.2fx)",
			n, g.Doublings(), g.LoadFactor(), measured, want, fixedRate, measured/fixedRate)
		if measured < 0.9*want || measured > 1.1*want {
			t.Errorf("%d keys: measured false-positive rate %.5f; FalsePositiveRate says %.5f (want within 10%%)", n, measured, want)
		}
		if measured > 2*fixedRate {
			t.Errorf("%d keys: false-positive rate %.5f is more than 2 times the fixed filter's %.5f", n, measured, fixedRate)
		}
	}
}

// TestGrowingDuplicatesDoNotGrow: nine copies of one key (one more than
// its buckets hold) in a table far from full do not double it (doubling
// would not help: the copies all go the same way); the ninth returns
// ErrFull with the eight kept, as in a fixed filter.
func TestGrowingDuplicatesDoNotGrow(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(1))
			for i := range 9 {
				err := g.InsertString("popular")
				if want := i == 8; (err != nil) != want || (want && !errors.Is(err, ErrFull)) {
					t.Fatalf("copy %d: %v", i+1, err)
				}
			}
			if g.Doublings() != 0 {
				t.Fatalf("9 copies of one key: %d doublings; want 0", g.Doublings())
			}
			if got := g.Count([]byte("popular")); got != 8 || g.Len() != 8 {
				t.Errorf("Count(popular) = %d, Len %d; want 8, 8", got, g.Len())
			}
		})
	}
}

// TestGrowingCopiesOfManyKeys stores several copies of every key in
// growing filters (both modes, a few seeds) and checks what Insert's doc
// promises for them. Copies of a key share its tag and so its other
// bucket, so full buckets whose entries can move only among themselves
// form far below half load, and the inserts that meet them return ErrFull.
// The test checks that every ErrFull comes from a shard below half load
// (growFullLoad) or at its bound where the deep search finds no path for
// the key (Insert's doc: no path of at most five moves), that it lost nothing (Len counts the
// inserts that succeeded, every key stored is found), and that memory
// stays bounded by what is stored: doubling instead of returning ErrFull
// below half load, for inserts whose buckets held anything but copies of
// the key itself, made six copies of each of 50,000 keys take 565 million
// slots (their entries grew void and split into both halves at each
// doubling) where this takes 0.7 million.
func TestGrowingCopiesOfManyKeys(t *testing.T) {
	keys := Sized(2_000, 10_000, 20_000)
	if raceEnabled {
		keys = Sized(1_000, 1_000, 5_000)
	}
	for _, mode := range growModes {
		for _, copies := range []int{3, 6} {
			for seed := range uint64(2) {
				g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(seed))
				stored, fulls := 0, 0
				kept := make([]bool, keys) // at least one copy stored
				for i := range keys {
					key := fmt.Appendf(nil, "key-%d", i)
					for range copies {
						err := g.Insert(key)
						if err == nil {
							stored++
							kept[i] = true
							continue
						}
						if !errors.Is(err, ErrFull) {
							t.Fatalf("%v seed %d: Insert(%q): %v", mode, seed, key, err)
						}
						fulls++
						kh := g.keyed(xxhash.Sum64(key))
						sh := g.shardOf(kh)
						x := sh.cur.Load()
						if x.d < sh.maxD && sh.loaded(x, growFullLoad) {
							t.Fatalf("%v seed %d: Insert(%q) returned ErrFull in a shard at least half full (%d entries, %d slots) that may double", mode, seed, key, sh.count.sum(), x.m*slotsPerBucket)
						}
						k := x.place(kh)
						if _, depth, ok := x.growDiscoverDeep(k.b1, k.b2); ok {
							t.Fatalf("%v seed %d: Insert(%q) returned ErrFull; the deep search finds a path of %d moves", mode, seed, key, depth)
						}
					}
				}
				if g.Len() != stored {
					t.Fatalf("%v seed %d, %d copies: Len %d; want %d", mode, seed, copies, g.Len(), stored)
				}
				for i := range keys {
					if key := fmt.Appendf(nil, "key-%d", i); kept[i] && !g.Lookup(key) {
						t.Fatalf("%v seed %d: %q not found", mode, seed, key)
					}
				}
				// Measured: 2.6 to 2.9 slots per stored entry (three and
				// six copies, 1M and 300,000 inserts, three seeds).
				if g.Cap() > 4*stored {
					t.Errorf("%v seed %d, %d copies of %d keys: Cap %d for %d entries stored; want at most 4 slots per entry", mode, seed, copies, keys, g.Cap(), stored)
				}
				t.Logf("%v seed %d, %d copies of %d keys: %d ErrFull, load %.3f", mode, seed, copies, keys, fulls, g.LoadFactor())
			}
		}
	}
}

// TestGrowingMaxCapacityCapBound checks WithMaxCapacity's bound on Cap at
// the most doublings it allows, for every maximum from the smallest
// accepted to 25,000 and 2,000 random larger ones: Cap·0.95 <
// maxCapacity+16 (each shard's keys at 95% are rounded down). Cap <=
// maxCapacity/0.95 alone, which the doc said before, fails for 5,512,
// 6,847 and 10,566 among others (an outside test found them). A bound that
// let the shards exceed maxCapacity by 8 keys first breaks it at 18,543.
// Outside the long suite, race builds and -short take every step-th
// maximum of the range, and those four, and fewer random ones.
func TestGrowingMaxCapacityCapBound(t *testing.T) {
	maxima := []int{100_000, 1_000_003, 123_456_789, 5512, 6847, 10_566, 18_543}
	step, random := Sized(97, 1, 1), Sized(100, 2000, 2000)
	if raceEnabled {
		step, random = Sized(97, 13, 1), Sized(100, 200, 2000)
	}
	for m := 5512; m <= 25_000; m += step {
		maxima = append(maxima, m)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range random {
		maxima = append(maxima, 25_000+rng.IntN(10_000_000))
	}
	over := 0
	for _, m := range maxima {
		g, err := NewGrowing(100, WithMaxCapacity(m))
		if err != nil {
			t.Fatalf("WithMaxCapacity(%d): %v", m, err)
		}
		var slots uint64
		for i := range g.st.shards {
			sh := &g.st.shards[i]
			slots += sh.base << sh.maxD * slotsPerBucket
		}
		if slots*targetLoadNum >= (uint64(m)+growShards)*targetLoadDen {
			t.Fatalf("WithMaxCapacity(%d): %d slots at the bound; want fewer than (%d+16)/0.95", m, slots, m)
		}
		if slots*targetLoadNum > uint64(m)*targetLoadDen {
			over++
		}
		if g.Cap() > int(slots) {
			t.Fatalf("WithMaxCapacity(%d): Cap %d above the bound's %d slots", m, g.Cap(), slots)
		}
	}
	t.Logf("%d of %d maxima end a few slots above maxCapacity/0.95", over, len(maxima))
}

// TestGrowingInsertBatchConcurrent: more writers than processors insert
// their own keys in batches of uneven lengths, through all three batch
// forms in turn, from NewGrowing(1000) through many doublings, while
// readers look up the keys the writers have published and a snapshot
// goroutine writes the filter out; every key is found while the writers
// run and at the end, and Len counts them all.
func TestGrowingInsertBatchConcurrent(t *testing.T) {
	perWriter := Sized(2_000, 10_000, 40_000)
	if raceEnabled {
		perWriter = Sized(2_000, 2_000, 3_000)
	}
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode))
			writers := 2*runtime.GOMAXPROCS(0) + 2
			published := make([]atomic.Int64, writers) // keys below are inserted
			var wg, others sync.WaitGroup
			var stop atomic.Bool
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for lo, call := 0, 0; lo < perWriter; call++ {
						hi := min(lo+1+(lo*7+w)%37, perWriter)
						var bs [][]byte
						var strs []string
						var hs []uint64
						for i := lo; i < hi; i++ {
							k := growTestKey(nil, w, i)
							bs, strs, hs = append(bs, k), append(strs, string(k)), append(hs, xxhash.Sum64(k))
						}
						var n int
						var err error
						switch call % 3 {
						case 0:
							n, err = g.InsertBatch(bs)
						case 1:
							n, err = g.InsertBatchString(strs)
						default:
							n, err = g.InsertBatchHash(hs)
						}
						if n != hi-lo || err != nil {
							t.Errorf("writer %d: batch [%d, %d): n=%d, err %v", w, lo, hi, n, err)
							return
						}
						published[w].Store(int64(hi))
						lo = hi
					}
				}()
			}
			var checked atomic.Int64
			others.Add(2)
			go func() { // reader
				defer others.Done()
				r := rand.New(rand.NewPCG(1, 2))
				var buf []byte
				// Until the writers are done and, on a machine too loaded to
				// run it beside them, until it has checked a key (a writer
				// that failed may have published none).
				for !stop.Load() || checked.Load() == 0 && !t.Failed() {
					w := r.IntN(writers)
					if n := published[w].Load(); n > 0 {
						i := r.IntN(int(n))
						if buf = growTestKey(buf, w, i); !g.Lookup(buf) {
							t.Errorf("Lookup(%s) = false for a key whose batch returned", buf)
							return
						}
						checked.Add(1)
					}
				}
			}()
			go func() { // snapshots under load
				defer others.Done()
				for !stop.Load() {
					var b bytes.Buffer
					if _, err := g.WriteTo(&b); err != nil {
						t.Errorf("WriteTo under load: %v", err)
						return
					}
				}
			}()
			wg.Wait()
			stop.Store(true)
			others.Wait()
			if g.Doublings() == 0 {
				t.Fatal("the filter did not grow; the test needs doublings")
			}
			if checked.Load() == 0 {
				t.Error("the reader checked no key")
			}
			if got, want := g.Len(), writers*perWriter; got < want {
				t.Errorf("Len %d after %d inserts", got, want)
			}
			var buf []byte
			for w := range writers {
				for i := range perWriter {
					if buf = growTestKey(buf, w, i); !g.Lookup(buf) {
						t.Fatalf("Lookup(%s) = false after all batches returned", buf)
					}
				}
			}
		})
	}
}

// TestGrowMatchBitsAtTheLastDoubling: a key's fresh entries in a table of
// 19 doublings end in g_26, which is 0 for every key (and mask), so they
// compare 13 bits, not the 14 a fresh entry compares below that; an entry
// one doubling old compares 13 bits at every d.
func TestGrowMatchBitsAtTheLastDoubling(t *testing.T) {
	var bases, maxD [growShards]uint64
	for i := range bases {
		bases[i], maxD[i] = 64, growMaxDoublings
	}
	st := newGrowState(&bases, &maxD, 11)
	r := rand.New(rand.NewPCG(4, 4))
	for _, d := range []uint64{0, 18, 19} {
		x := st.tableShape(&st.shards[0], d, 0)
		for range 1000 {
			k := x.place(r.Uint64())
			fresh := 14
			if d == growMaxDoublings {
				fresh = 13
				if k.q1&2 != 0 || k.q2&2 != 0 {
					t.Fatalf("d=19: fresh entries %#x, %#x: the bit above the marker is not 0", k.q1, k.q2)
				}
			}
			if got := x.matchBits(x.m, k.q1); got != fresh { // x.m: past the split buckets
				t.Fatalf("d=%d: a fresh entry compares %d bits; want %d", d, got, fresh)
			}
			if v, _, both := splitLane(k.q1); !both && x.matchBits(x.m, v) != 13 {
				t.Fatalf("d=%d: an entry one doubling old compares %d bits; want 13", d, x.matchBits(x.m, v))
			}
		}
	}
}

// TestGrowingDeleteYoungestAcrossLevels: youngestOf counts a split
// bucket's index bit. Key y's fresh entry B sits in its first bucket P,
// unsplit (level d), and key x, which differs from y only in the position
// bit a level-(d+1) entry knows last, has its fresh entry A in its second
// bucket Q, split (level d+1). Both have the same age, but A knows one bit
// more: x matches both, y only B. Delete(x) must remove A; comparing ages
// alone (b1 on a tie) removes B and loses y.
func TestGrowingDeleteYoungestAcrossLevels(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			var bases, maxD [growShards]uint64
			for i := range bases {
				bases[i], maxD[i] = 64, growMaxDoublings
			}
			st := newGrowState(&bases, &maxD, 0)
			g := &Growing{}
			g.setup(0, mode, st)
			const d = 3
			sh := &st.shards[0]
			r := rand.New(rand.NewPCG(6, 6))
			tested := 0
			for range 200 {
				x := st.newTable(sh, d, uint64(1+r.IntN(64<<d-1)), mode)
				var hy uint64
				var ky growKey
				for {
					hy = r.Uint64()
					ky = x.place(hy)
					if ky.b1 != ky.b2 && x.split(ky.b1) == 0 && x.split(ky.b2) == 1 {
						break
					}
				}
				// Position d+8 is bit 26-(d+8) of P, bit 17-d of lo, which
				// flipping in the hash's low half changes alone.
				hx := hy ^ 1<<(17-d)
				kx := x.place(hx)
				if kx.b1 != ky.b1 || kx.b2 != ky.b2 || kx.q1 != ky.q1 || kx.q2^ky.q2 != 1<<1 {
					t.Fatalf("x is not y's neighbour: %+v, %+v", kx, ky)
				}
				wp, _ := putLane(0, ky.q1)
				wq, _ := putLane(0, kx.q2)
				x.t.words[ky.b1].Store(wp)
				x.t.words[ky.b2].Store(wq)
				if found, s := g.deleteIn(x, kx); !found || s != growDone {
					t.Fatalf("Delete(x): %v, status %d", found, s)
				}
				if !g.lookupIn(x, ky) {
					t.Fatalf("d=%d p=%d: deleting x removed y's entry (P %#x, Q %#x before)", x.d, x.p, wp, wq)
				}
				tested++
			}
			if tested == 0 {
				t.Fatal("no case built")
			}
		})
	}
}

// TestGrowMoveStaleStep: a relocation step (moveIn, as growRelocate's
// replay calls it) moves the entry it was given only if that entry is
// still in its slot, and never writes a frozen word; either way it changes
// nothing and reports why.
func TestGrowMoveStaleStep(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		g, err := NewGrowing(1000, WithMode(mode), WithSeed(3))
		if err != nil {
			t.Fatal(err)
		}
		x := g.st.shards[0].cur.Load()
		var k growKey
		for h := uint64(1); ; h++ {
			if k = x.place(h * 0x9e3779b97f4a7c15); k.b1 != k.b2 {
				break
			}
		}
		if st := g.addIn(x, k); st != growDone {
			t.Fatalf("%v: insert: status %d", mode, st)
		}
		src, v := k.b1, k.q1
		if matchLanes(x.t.load(src), v) == 0 {
			src, v = k.b2, k.q2
		}
		s := bits.TrailingZeros64(matchLanes(x.t.load(src), v)) / laneBits
		dst, nv, ok := x.alt(src, v)
		if !ok || dst == src {
			t.Fatalf("%v: entry %#x of %d cannot move", mode, v, src)
		}
		var my *descLease
		if mode == LockFree {
			my = leaseDesc()
			defer my.release()
		}
		w := x.t.load(src)
		try := func(ws, to uint64, want int) {
			t.Helper()
			x.t.words[src].Store(ws)
			wd := x.t.load(dst)
			if st := g.moveIn(x, src, s, v, to, nv, &my); st != want {
				t.Fatalf("%v: step on %#x: status %d, want %d", mode, ws, st, want)
			}
			if x.t.load(src) != ws || x.t.load(dst) != wd {
				t.Fatalf("%v: a step that does not apply changed a word", mode)
			}
		}
		try(setLane(w, s, v^1<<tagShift), dst, growStale) // another entry in the slot
		x.next.Store(&growTable{})                        // a copy has begun
		try(w|frozenBit, dst, growFrozen)
		x.next.Store(nil)
		try(w, src, growStale) // from a bucket into itself, which has room
		x.t.words[src].Store(w)
		if st := g.moveIn(x, src, s, v, dst, nv, &my); st != growDone {
			t.Fatalf("%v: the step as replayed: status %d", mode, st)
		}
	}
}
