package cuckoo

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// growBatchLens are the batch lengths around the group (16) and two-group edges.
var growBatchLens = []int{0, 1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 100, 257}

// growBatchKey returns key i of a set of distinct keys of 3 to 40 bytes
// (each of hashKey's cases: 8, 16, below 32, 32 and more).
func growBatchKey(seed uint64, i int) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	k := []byte{byte(i), byte(i >> 8), byte(i >> 16)}
	for len(k) < 3+(i*7)%38 {
		k = append(k, byte(r.Uint32()))
	}
	return k
}

// TestGrowingLookupBatchMatchesLookup (TestGrowingLookupBatchAgrees for
// every form, keys of 3 to 40 bytes, and the prefetch): on a quiet filter,
// at several growth levels, each batch form answers every key as its
// single-key form does, at every length around the group edges,
// prefetching or not, with found shorter or longer than the keys (what
// lies past n untouched).
func TestGrowingLookupBatchMatchesLookup(t *testing.T) {
	for _, pre := range []bool{false, true} {
		for _, mode := range growModes {
			t.Run(fmt.Sprintf("prefetch=%v/mode=%v", pre, mode), func(t *testing.T) {
				if pre {
					PrefetchEveryBatch(t)
				}
				g := newTestGrowing(t, 100, WithMode(mode), WithSeed(3))
				inserted := 0
				for level := 0; level < 4; level++ {
					for ; inserted < 3000<<level; inserted++ {
						if err := g.Insert(growBatchKey(1, inserted)); err != nil {
							t.Fatal(err)
						}
					}
					// Half the probe keys inserted, half not.
					var keys [][]byte
					var strs []string
					var hs []uint64
					for i := 0; i < 600; i++ {
						k := growBatchKey(1+uint64(i%2), i*5+level)
						keys, strs, hs = append(keys, k), append(strs, string(k)), append(hs, hashKey(k))
					}
					for _, n := range growBatchLens {
						for _, extra := range []int{-1, 0, 3} {
							fl := n + extra
							if fl < 0 {
								continue
							}
							off := (n * 13) % 200
							check := func(form string, got int, found []bool, want func(i int) bool) {
								t.Helper()
								m := min(n, fl)
								if got != m {
									t.Fatalf("level %d %s n=%d len(found)=%d: returned %d", level, form, n, fl, got)
								}
								for i := range found {
									if i >= m {
										if !found[i] {
											t.Fatalf("%s: found[%d] past n overwritten", form, i)
										}
										continue
									}
									if found[i] != want(i) {
										t.Fatalf("level %d %s n=%d: found[%d] = %v, single lookup %v", level, form, n, i, found[i], want(i))
									}
								}
							}
							fill := func() []bool {
								f := make([]bool, fl)
								for i := range f {
									f[i] = true
								}
								return f
							}
							f := fill()
							check("LookupBatch", g.LookupBatch(keys[off:off+n], f), f, func(i int) bool { return g.Lookup(keys[off+i]) })
							f = fill()
							check("LookupBatchString", g.LookupBatchString(strs[off:off+n], f), f, func(i int) bool { return g.LookupString(strs[off+i]) })
							f = fill()
							check("LookupBatchHash", g.LookupBatchHash(hs[off:off+n], f), f, func(i int) bool { return g.LookupHash(hs[off+i]) })
						}
					}
					// Every inserted key is found by the batch.
					all := make([][]byte, inserted)
					for i := range all {
						all[i] = growBatchKey(1, i)
					}
					found := make([]bool, len(all))
					g.LookupBatch(all, found)
					for i, f := range found {
						if !f {
							t.Fatalf("level %d: inserted key %d not found by LookupBatch", level, i)
						}
					}
				}
				if g.Doublings() == 0 {
					t.Fatal("the filter never grew")
				}
			})
		}
	}
}

// TestGrowingLookupBatchZero: a zero Growing clears found[:n] and
// returns n, leaving the rest, for every length.
func TestGrowingLookupBatchZero(t *testing.T) {
	PrefetchEveryBatch(t)
	var g Growing
	for _, n := range growBatchLens {
		hs := make([]uint64, n)
		found := make([]bool, n+2)
		for i := range found {
			found[i] = true
		}
		if got := g.LookupBatchHash(hs, found); got != n {
			t.Fatalf("n=%d: returned %d", n, got)
		}
		for i, f := range found {
			if f != (i >= n) {
				t.Fatalf("n=%d: found[%d] = %v", n, i, f)
			}
		}
	}
}
