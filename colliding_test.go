package cuckoo

import (
	"fmt"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// Searches against keys that collide with the searched one. Keys that
// share a fingerprint and a bucket pair have interchangeable copies, and
// may have the pair in either order (one key's first bucket is the
// other's second). Inserts and deletes change no migration counter or
// version, so a search that reads the pair's buckets one after another
// can see a colliding key's copy arrive in the bucket it already read
// while a Delete takes the searched key's copy out of the bucket it has
// yet to read. These tests stall a search between its reads (the stall
// points of twophase.go, race builds) and run such a schedule; the key
// searched for is inserted before and never deleted, so every answer must
// be "present" (and a Delete must find a copy).

// collidingKeys returns two keys a and c with one fingerprint and one
// bucket pair p < q, a's first bucket p and c's first bucket q; for the
// packed layout the two buckets are in different words and the
// fingerprint is 64 or more (any slot takes it).
func collidingKeys(t *testing.T, f *Filter) (a, c []byte, p, q, fp uint64) {
	t.Helper()
	type class struct{ fp, p, q uint64 }
	first := map[class][]byte{} // a key of each class whose first bucket is p
	for i := 0; i < 1<<22; i++ {
		k := key8('c', i)
		b1, kfp, b2 := f.hash(k)
		if b1 == b2 || f.lay.packed && (b1>>1 == b2>>1 || kfp < pkTopLimit) {
			continue
		}
		cl := class{kfp, min(b1, b2), max(b1, b2)}
		if b1 < b2 {
			if first[cl] == nil {
				first[cl] = k
			}
			continue
		}
		if o := first[cl]; o != nil {
			return o, k, cl.p, cl.q, kfp
		}
	}
	t.Fatal("no two keys collide with their buckets in opposite orders")
	return
}

// collision is a filter holding key a, whose only copy is in q, and a key c
// that collides with it in the opposite bucket order (collidingKeys).
type collision struct {
	t        *testing.T
	f        *Filter
	a, c     []byte
	p, q, fp uint64
}

// newCollision inserts a into f and moves its copy to q if it landed in p.
func newCollision(t *testing.T, f *Filter) *collision {
	t.Helper()
	x := &collision{t: t, f: f}
	x.a, x.c, x.p, x.q, x.fp = collidingKeys(t, f)
	if err := f.Insert(x.a); err != nil {
		t.Fatal(err)
	}
	if slotOf(f, x.p, x.fp) >= 0 {
		x.move(x.p, x.q)
	}
	return x
}

// move relocates one copy of the fingerprint from src to dst, as a
// relocation step does (holding the snapshot gate).
func (x *collision) move(src, dst uint64) {
	m := x.f.gate.enterMove()
	defer x.f.gate.exitMove(m)
	if s := slotOf(x.f, src, x.fp); s < 0 || !x.f.testMove(src, s, x.fp, dst) {
		x.t.Fatalf("could not move %d from bucket %d to %d", x.fp, src, dst)
	}
}

// churn inserts c, checks that its copy landed in bucket want, and
// deletes c.
func (x *collision) churn(want uint64) {
	if err := x.f.Insert(x.c); err != nil {
		x.t.Fatal(err)
	}
	if slotOf(x.f, want, x.fp) < 0 {
		x.t.Fatalf("the colliding key did not land in bucket %d", want)
	}
	if !x.f.Delete(x.c) {
		x.t.Fatal("Delete of the colliding key returned false")
	}
}

// slotOf returns the slot of bucket b holding fp, or -1.
func slotOf(f *Filter, b, fp uint64) int {
	for s, x := range bucketFps(f, b) {
		if x == fp {
			return s
		}
	}
	return -1
}

func TestSearchAgainstCollidingKeys(t *testing.T) {
	if !raceEnabled {
		t.Skip("the stall points exist in race builds only (CI runs this package under -race)")
	}
	type search struct {
		name     string
		lockFree bool // Locked mode's version takes both locks: no stall point
		found    func(f *Filter, k []byte) bool
	}
	searches := []search{
		{"Lookup", false, func(f *Filter, k []byte) bool { return f.Lookup(k) }},
		{"LookupHash", false, func(f *Filter, k []byte) bool { return f.LookupHash(xxhash.Sum64(k)) }},
		{"LookupBatch", false, func(f *Filter, k []byte) bool {
			found := make([]bool, 1)
			f.LookupBatch([][]byte{k}, found)
			return found[0]
		}},
		{"Delete", false, func(f *Filter, k []byte) bool { return f.Delete(k) }},
		{"Count", true, func(f *Filter, k []byte) bool { return f.Count(k) > 0 }},
	}
	for _, sc := range []string{"opposite", "moved"} {
		for _, bits := range []int{8, 12, 15, Bits12x5} {
			for _, mode := range []Mode{LockFree, Locked} {
				for _, s := range searches {
					if s.lockFree && mode == Locked {
						continue // under both locks: no stall point
					}
					t.Run(fmt.Sprintf("%s/bits=%d/mode=%v/%s", sc, bits, mode, s.name), func(t *testing.T) {
						testSearchAgainstColliding(t, sc, bits, mode, s.found)
					})
				}
			}
		}
	}
}

// testSearchAgainstColliding runs one schedule. Key a's copy starts in q,
// the bucket searches read second.
//
//   - opposite: stalled after reading p, the search sees key c (first
//     bucket q) inserted, landing in p (the emptier bucket), and deleted.
//     If c's Delete looked in q first, it would take a's copy, and the
//     search would find p empty (read before the insert) and q empty.
//   - moved: stalled after reading p, the search sees a's copy moved from
//     q to p (one move through p); stalled after reading q, it sees c
//     inserted, landing in q (the emptier now), and deleted, which takes
//     the copy in p (p is read first). A search that let one move through
//     p pass (the paper's rule, counter difference below 2) would read p
//     empty again with its counter moved once, and answer absent.
func testSearchAgainstColliding(t *testing.T, sc string, bits int, mode Mode, found func(*Filter, []byte) bool) {
	f := NewTestFilter(t, 64, mode, bits, 99)
	x := newCollision(t, f)
	a, p, q := x.a, x.p, x.q
	move, churn := x.move, x.churn
	var done [3]bool
	stall := func(sf *Filter, sb1 uint64, stage int) {
		if sf != f || sb1 != p || stage > 2 || done[stage] || stage == 2 && !done[1] { // stage 3 (the re-reads) plays no part here
			return
		}
		done[stage] = true
		switch {
		case sc == "opposite" && stage == 1:
			churn(p)
		case sc == "moved" && stage == 1:
			move(q, p)
		case sc == "moved" && stage == 2:
			churn(q)
		}
	}
	searchStalls.Store(&stall)
	defer searchStalls.Store(nil)
	if !found(f, a) {
		t.Errorf("a key inserted before the search and never deleted was not found (p %d: %v, q %d: %v)",
			p, bucketFps(f, p), q, bucketFps(f, q))
	}
	if !done[1] || sc == "moved" && !done[2] {
		t.Fatalf("the search did not reach its stall points (stage 1: %v, stage 2: %v)", done[1], done[2])
	}
}
