package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Tests of the growing filter (grow.go, grow_encode.go): its
// no-false-negative argument under concurrent growth, deletes and
// reinserts, the deepest-first order, snapshots, the bound and the format.

var growModes = []Mode{LockFree, Locked}

func newTestGrowing(tb testing.TB, capacity int, opts ...Option) *Growing {
	tb.Helper()
	g, err := NewGrowing(capacity, opts...)
	if err != nil {
		tb.Fatalf("NewGrowing(%d): %v", capacity, err)
	}
	return g
}

func growKey(buf []byte, w, i int) []byte {
	return fmt.Appendf(buf[:0], "w%d-k%d", w, i)
}

// TestGrowingNoFalseNegativesUnderGrowth runs more writers than Ps, each
// inserting its own keys into a filter that starts at one node and grows
// many times, while every fourth key is deleted and reinserted over and
// over (the insert, delete, reinsert scenario that lost keys in stacked
// filters) and readers look up keys that are present throughout, single
// and batched. Any "absent" for such a key fails the test.
func TestGrowingNoFalseNegativesUnderGrowth(t *testing.T) {
	perWriter := 60_000
	if raceEnabled {
		perWriter = 24_000
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
						buf = growKey(buf, w, i)
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
							buf = growKey(buf, w, j)
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
							keys[k] = growKey(keys[k], w, i)
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
					buf = growKey(buf, w, i)
					if !g.Lookup(buf) {
						t.Fatalf("after the run: %s absent", buf)
					}
				}
			}
			if got, want := g.Len(), writers*perWriter; got != want {
				t.Errorf("Len = %d; want %d (each key once)", got, want)
			}
			nodes, depth := g.Nodes()
			if nodes < 8 {
				t.Errorf("the filter grew to %d nodes only; the test wants growth under load", nodes)
			}
			t.Logf("%d writers, %d readers: %d keys, %d nodes, depth %d, %d lookups checked",
				writers, readers, g.Len(), nodes, depth, checked.Load())
		})
	}
}

// TestGrowingFrom1000To10M grows a filter that starts at 1,000 keys to
// 10,000,000 (10,000x) under concurrent inserts, with no ErrFull and no
// lost key. Under the race detector, which slows every access tenfold, it
// grows to 1,000,000 (1,000x) instead.
func TestGrowingFrom1000To10M(t *testing.T) {
	total := 10_000_000
	if raceEnabled {
		total = 1_000_000
	}
	if testing.Short() {
		total /= 10
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
	nodes, depth := g.Nodes()
	if got := g.Len(); got != total {
		t.Errorf("Len = %d; want %d", got, total)
	}
	t.Logf("%d keys: %d nodes of %d keys, depth %d, load %.3f", total, nodes, g.NodeCapacity(), depth, g.LoadFactor())
}

// collidingPair returns two key hashes whose keys have the same buckets and
// fingerprint (they collide at every node both paths reach) and whose paths
// part at the root when apart is true, or go to the same child of the root
// when it is false.
func collidingPair(t *testing.T, g *Growing, apart bool) (hx, hy uint64) {
	t.Helper()
	type class struct{ fp, lo uint64 }
	seen := map[class]uint64{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2_000_000 {
		h := r.Uint64()
		p := g.place(h)
		c := class{p.fp, min(p.b1, p.b2)}
		if other, ok := seen[c]; ok {
			q := g.place(other)
			sameFirst := childBit(p.path, 0) == childBit(q.path, 0)
			if apart != sameFirst {
				return other, h
			}
			continue
		}
		seen[c] = h
	}
	t.Fatal("no colliding pair of hashes found")
	return 0, 0
}

// childOf creates the child of n on path p and returns it.
func (g *Growing) childOf(t *testing.T, n *growNode, p uint64) *growNode {
	t.Helper()
	if !g.grow(n, p) {
		t.Fatal("grow refused")
	}
	return n.kids[childBit(p, n.depth)].Load()
}

// TestGrowingDeleteOrder builds the case that makes the deepest-first
// search necessary: y is stored at the root, x (which collides with y at
// the root only: their paths part there) in x's child. Delete(x) must take
// x's own copy from the child; a search that began at the root would take
// y's copy, and y, inserted and never deleted, would be lost (the root is
// the only node on y's path). Reversing the order in grow.go makes this
// test fail.
func TestGrowingDeleteOrder(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(3))
			hx, hy := collidingPair(t, g, true)
			px, py := g.place(hx), g.place(hy)
			root := g.tree.Load().root
			if !root.add(py) {
				t.Fatal("root has no room for y")
			}
			if !g.childOf(t, root, px.path).add(px) {
				t.Fatal("child has no room for x")
			}
			if !g.DeleteHash(hx) {
				t.Fatal("Delete(x) found nothing")
			}
			if !g.LookupHash(hy) {
				t.Fatal("Delete(x) removed y's copy: y, inserted and never deleted, is absent")
			}
			if g.LookupHash(hx) {
				t.Log("x still reported present (through y's colliding copy): a false positive, allowed")
			}
		})
	}
}

// TestGrowingDeleteKeepsCollider is the other order: x at the root, y
// (colliding with x down to depth 1) in their common child. Delete(x)
// takes y's copy (deepest first), and y stays present through x's copy at
// the root, which lies in y's place because the placement of every node is
// the same (claim (N) of grow.go).
func TestGrowingDeleteKeepsCollider(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(4))
			hx, hy := collidingPair(t, g, false)
			px, py := g.place(hx), g.place(hy)
			root := g.tree.Load().root
			if !root.add(px) {
				t.Fatal("root has no room for x")
			}
			if !g.childOf(t, root, py.path).add(py) {
				t.Fatal("child has no room for y")
			}
			if !g.DeleteHash(hx) {
				t.Fatal("Delete(x) found nothing")
			}
			if !g.LookupHash(hy) {
				t.Fatal("y absent after Delete(x)")
			}
			if !g.DeleteHash(hy) {
				t.Fatal("Delete(y) found nothing")
			}
			if g.Len() != 0 {
				t.Fatalf("Len = %d after deleting both; want 0", g.Len())
			}
		})
	}
}

// TestGrowingSnapshotUnderLoad writes snapshots while writers insert (and
// the filter grows): every key confirmed before WriteTo began must be in
// the filter read back.
func TestGrowingSnapshotUnderLoad(t *testing.T) {
	perWriter := 40_000
	if raceEnabled {
		perWriter = 8_000
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
						buf = growKey(buf, w, i)
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
						buf = growKey(buf, w, i)
						if !h.Lookup(buf) {
							t.Fatalf("snapshot %d: %s, inserted before WriteTo began, is absent", snaps, buf)
						}
					}
				}
				snaps++
			}
			nodes, _ := g.Nodes()
			t.Logf("%d snapshots checked while the filter grew to %d nodes", snaps, nodes)
		})
	}
}

// TestGrowingMaxCapacity fills a bounded filter until ErrFull: the bound
// holds, the failed insert loses nothing, and every inserted key is found.
func TestGrowingMaxCapacity(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g0 := newTestGrowing(t, 1000)
			maxCap := 3 * g0.NodeCapacity()
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
			nodes, _ := g.Nodes()
			if nodes != 3 {
				t.Errorf("Nodes = %d at the bound; want 3", nodes)
			}
			if g.Len() != n {
				t.Errorf("Len = %d after %d inserts and one ErrFull; want %d", g.Len(), n, n)
			}
			if float64(n) < 0.9*float64(maxCap) {
				t.Errorf("ErrFull after %d keys under a maximum of %d (below 90%%)", n, maxCap)
			}
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
		t.Error("a maximum below the first node: no error")
	}
	if _, err := New(1000, WithMaxCapacity(5000)); err == nil {
		t.Error("New with WithMaxCapacity: no error")
	}
	if _, err := NewGrowing(1000, WithFingerprintBits(9)); err == nil {
		t.Error("NewGrowing with 9-bit fingerprints: no error")
	}
	var z Growing
	if z.Insert([]byte("a")) != ErrZeroFilter || z.Lookup([]byte("a")) || z.Delete([]byte("a")) || z.Count([]byte("a")) != 0 ||
		z.Len() != 0 || z.Cap() != 0 || z.LoadFactor() != 0 {
		t.Error("zero Growing: an answer other than ErrZeroFilter, false or 0")
	}
	if n, d := z.Nodes(); n != 0 || d != 0 {
		t.Errorf("zero Growing: Nodes = %d, %d", n, d)
	}
	if _, err := z.MarshalBinary(); err != ErrZeroFilter {
		t.Errorf("zero Growing MarshalBinary: %v; want ErrZeroFilter", err)
	}
	z.Reset()
}

// TestGrowingReset shrinks the filter back to one empty node.
func TestGrowingReset(t *testing.T) {
	g := newTestGrowing(t, 1000, WithSeed(8))
	var k [8]byte
	for i := range 100_000 {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		if err := g.Insert(k[:]); err != nil {
			t.Fatal(err)
		}
	}
	g.Reset()
	if n, d := g.Nodes(); n != 1 || d != 0 || g.Len() != 0 {
		t.Fatalf("after Reset: %d nodes, depth %d, Len %d; want 1, 0, 0", n, d, g.Len())
	}
	found := 0
	for i := range 100_000 {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		if g.Lookup(k[:]) {
			found++
		}
	}
	if found != 0 {
		t.Errorf("%d keys found in an empty filter", found)
	}
}

// TestGrowingZeroAllocs: Insert (into a node with room), Lookup, Delete
// and Count allocate nothing.
func TestGrowingZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	g := newTestGrowing(t, 1000)
	key := []byte("key")
	batch := [][]byte{key, []byte("other"), key}
	found := make([]bool, 3)
	if a := testing.AllocsPerRun(100, func() {
		_ = g.Insert(key)
		_ = g.Lookup(key)
		_ = g.Count(key)
		_ = g.Delete(key)
		_ = g.LookupString("key")
		_ = g.LookupBatch(batch, found)
	}); a != 0 {
		t.Errorf("%.1f allocations per Insert+Lookup+Count+Delete+LookupBatch; want 0", a)
	}
}

// growEncoding returns the encoding of a grown filter.
func growEncoding(t *testing.T) ([]byte, *Growing) {
	t.Helper()
	g := newTestGrowing(t, 1000, WithSeed(11))
	var k [8]byte
	for i := range 40_000 {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		if err := g.Insert(k[:]); err != nil {
			t.Fatal(err)
		}
	}
	data, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return data, g
}

// TestGrowingEncodingRoundTrip: decoding gives the same tree, Len and
// answers, and re-encoding gives the same bytes.
func TestGrowingEncodingRoundTrip(t *testing.T) {
	data, g := growEncoding(t)
	var h Growing
	if err := h.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	gn, gd := g.Nodes()
	hn, hd := h.Nodes()
	if gn != hn || gd != hd || g.Len() != h.Len() || h.Seed() != 11 || h.NodeCapacity() != g.NodeCapacity() {
		t.Fatalf("decoded: %d nodes, depth %d, Len %d; want %d, %d, %d", hn, hd, h.Len(), gn, gd, g.Len())
	}
	again, err := h.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Error("re-encoding differs")
	}
	var k [8]byte
	for i := range 40_000 {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		if !h.Lookup(k[:]) {
			t.Fatalf("key %d lost in the round trip", i)
		}
	}
	// Seed 0 writes hash algorithm 1, as the fixed format does.
	z := newTestGrowing(t, 1000, WithSeed(0))
	_ = z.Insert([]byte("a"))
	zd, err := z.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var zz Growing
	if err := zz.UnmarshalBinary(zd); err != nil || !zz.Lookup([]byte("a")) {
		t.Fatalf("seed 0 round trip: %v", err)
	}
}

// TestGrowingDecodeRejects: every truncation and every flipped byte (at a
// sample of positions covering the header, node flags, node headers and
// tables, and the trailer) is rejected with an error of the documented
// classes, and the filter decoded into is left unchanged.
func TestGrowingDecodeRejects(t *testing.T) {
	data, _ := growEncoding(t)
	target := newTestGrowing(t, 1000, WithSeed(5))
	_ = target.Insert([]byte("keep"))
	check := func(what string, b []byte) {
		t.Helper()
		err := target.UnmarshalBinary(b)
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: error %q matches none of ErrTruncated, ErrFormat, ErrCorrupt", what, err)
		}
		if !target.Lookup([]byte("keep")) || target.Len() != 1 || target.Seed() != 5 {
			t.Fatalf("%s: a failed decode changed the filter", what)
		}
	}
	nodeSize := int(encodedSize(growMinNodeBuckets))
	for _, n := range []int{0, 1, 7, 9, 20, 47, 48, 49, 50, 100, 48 + 1 + nodeSize - 1, 48 + 1 + nodeSize, 48 + 1 + nodeSize + 1, len(data) - 9, len(data) - 8, len(data) - 1} {
		check(fmt.Sprintf("truncated to %d bytes", n), data[:n])
		// Past the header, the message gives the length of the whole
		// encoding (from the header), not of the node it ended in.
		err := target.UnmarshalBinary(data[:n])
		if want := fmt.Sprintf("%d of %d bytes", n, len(data)); n >= growFormatHeaderSize && !strings.Contains(err.Error(), want) {
			t.Errorf("truncated to %d bytes: %q; want it to say %q", n, err, want)
		}
	}
	check("trailing byte", append(bytes.Clone(data), 0))
	positions := []int{0, 8, 10, 11, 12, 13, 16, 24, 32, 40, 41, 47, 48, 49, 60, 80, 48 + 1 + nodeSize - 1, 48 + 1 + nodeSize, len(data) / 2, len(data) - 9, len(data) - 1}
	for _, p := range positions {
		for _, x := range []byte{1, 0x80} {
			b := bytes.Clone(data)
			b[p] ^= x
			check(fmt.Sprintf("byte %d ^ %#x", p, x), b)
		}
	}
	// A fixed filter is not a growing one, and the reverse.
	f := NewTestFilter(t, 1000, LockFree, 12, 1)
	fd, _ := f.MarshalBinary()
	check("a fixed filter", fd)
	if err := f.UnmarshalBinary(data); err == nil {
		t.Error("Filter.UnmarshalBinary accepted a growing filter")
	}
}

// TestGrowingLookupBatchAgrees: on a grown filter, LookupBatch answers as
// Lookup does for present and absent keys, in groups of every size, and
// handles found shorter than keys like Filter.LookupBatch.
func TestGrowingLookupBatchAgrees(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(21))
			const n = 100_000
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
				if binary.LittleEndian.Uint64(k) < n {
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
			nodes, depth := g.Nodes()
			t.Logf("%d nodes, depth %d, %d present keys checked", nodes, depth, positives)
		})
	}
}

// tinyGrowing returns a growing filter with nodes of m0 buckets (below what
// NewGrowing allows, so that encodings stay small for the fuzzer), holding
// keys "t-0" .. "t-(n-1)".
func tinyGrowing(tb testing.TB, m0 uint64, n int) *Growing {
	tb.Helper()
	g := &Growing{m0: m0, bits: 8, seed: 3, alg: formatHashXXMul, mode: LockFree, maxDepth: growMaxDepth}
	g.tree.Store(g.newTree())
	for i := range n {
		if err := g.Insert(fmt.Appendf(nil, "t-%d", i)); err != nil {
			tb.Fatal(err)
		}
	}
	return g
}

// FuzzGrowingUnmarshalBinary: the growing decoder never panics, fails with
// "cuckoo: " errors that leave the receiver as it was, and accepts only
// canonical encodings (what decodes re-encodes to the same bytes). Each
// input is also tried with its trailing checksum recomputed, so that
// mutations reach the checks behind it.
func FuzzGrowingUnmarshalBinary(f *testing.F) {
	for _, n := range []int{0, 5, 40, 90} {
		data, err := tinyGrowing(f, 4, n).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recv := tinyGrowing(t, 4, 30)
		for _, in := range [][]byte{data, encReseal(bytes.Clone(data))} {
			err := recv.UnmarshalBinary(in)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "cuckoo: ") {
					t.Fatalf("error %q does not begin with \"cuckoo: \"", err)
				}
				if recv.Len() != 30 || recv.m0 != 4 || recv.Seed() != 3 {
					t.Fatalf("failed decode (%v) changed the receiver", err)
				}
				for i := range 30 {
					if !recv.Lookup(fmt.Appendf(nil, "t-%d", i)) {
						t.Fatalf("failed decode (%v): key %d lost", err, i)
					}
				}
				continue
			}
			again, err := recv.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, in) {
				t.Fatalf("decoded %d bytes re-encode to %d different bytes", len(in), len(again))
			}
			if recv.Len() > recv.Cap() {
				t.Fatalf("Len %d > Cap %d", recv.Len(), recv.Cap())
			}
			recv = tinyGrowing(t, 4, 30)
		}
	})
}

// TestGrowingFalsePositiveRate compares FalsePositiveRate with the rate
// measured on never-inserted keys, at a depth where the levels above the
// deepest are full and just after a new level began. (Under the race
// detector, which slows it tenfold and checks nothing concurrent here, at
// smaller sizes with the same two shapes.)
func TestGrowingFalsePositiveRate(t *testing.T) {
	g := newTestGrowing(t, 1000, WithSeed(31))
	var k [8]byte
	next := 0
	sizes, probes := []int{500_000, 1_100_000}, 2_000_000
	if raceEnabled {
		sizes, probes = []int{110_000, 250_000}, 600_000
	}
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
		nodes, depth := g.Nodes()
		t.Logf("%d keys, %d nodes, depth %d: measured %.5f, FalsePositiveRate %.5f", n, nodes, depth, measured, want)
		if measured < 0.85*want || measured > 1.15*want {
			t.Errorf("%d keys: measured false-positive rate %.5f; FalsePositiveRate says %.5f (want within 15%%)", n, measured, want)
		}
	}
}

// TestGrowingDuplicatesDoNotGrowEarly: nine copies of one key (one more
// than its buckets hold) need a second node, but must not make the root
// look full: the next 10,000 distinct keys go into the root and the child
// that exists, and the tree does not grow further. Marking a node full on
// any refused insert made it grow to 3 nodes here.
func TestGrowingDuplicatesDoNotGrowEarly(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(1))
			for range 9 {
				if err := g.InsertString("popular"); err != nil {
					t.Fatal(err)
				}
			}
			if nodes, _ := g.Nodes(); nodes != 2 {
				t.Fatalf("9 copies of one key: %d nodes; want 2", nodes)
			}
			var k [8]byte
			for i := range 10_000 {
				binary.LittleEndian.PutUint64(k[:], uint64(i))
				if err := g.Insert(k[:]); err != nil {
					t.Fatal(err)
				}
			}
			if nodes, _ := g.Nodes(); nodes != 2 {
				t.Errorf("then 10,000 keys: %d nodes; want 2 (the root is a third full)", nodes)
			}
			if got := g.Count([]byte("popular")); got != 9 {
				t.Errorf("Count(popular) = %d; want 9", got)
			}
		})
	}
}
