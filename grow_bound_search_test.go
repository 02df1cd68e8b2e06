package cuckoo

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// checkGrows fails unless every shard's current table of g knows its shard,
// whose bound and load decide canGrow (where discovery stops short).
func checkGrows(t *testing.T, what string, g *Growing) {
	t.Helper()
	for i := range g.st.shards {
		sh := &g.st.shards[i]
		if x := sh.cur.Load(); x.sh != sh {
			t.Fatalf("%s: shard %d's table (level %d of bound %d) names another shard", what, i, x.d, sh.maxD)
		}
	}
}

// TestGrowingSearchesDeepAtItsBound: every way a table is made (NewGrowing,
// expand, Reset, ReadFrom and Clone) gives it its own shard, and in a filter
// at its WithMaxCapacity bound an insert returns ErrFull only when the deep
// search finds no path for the key. canGrow true at the bound too (d <=
// maxD) fails the second part.
func TestGrowingSearchesDeepAtItsBound(t *testing.T) {
	for _, mode := range growModes {
		g := newTestGrowing(t, 1000, WithMode(mode), WithMaxCapacity(20_000), WithSeed(4))
		checkGrows(t, "NewGrowing", g)
		r := rand.New(rand.NewPCG(4, uint64(mode)))
		fulls := 0
		for i := 0; fulls < 200 && i < 200_000; i++ {
			h := r.Uint64()
			err := g.InsertHash(h)
			if err == nil {
				continue
			}
			if !errors.Is(err, ErrFull) {
				t.Fatal(err)
			}
			fulls++
			kh := g.keyed(h)
			sh := g.shardOf(kh)
			x := sh.cur.Load()
			if x.d != sh.maxD {
				t.Fatalf("%v: ErrFull from a shard at level %d below its bound %d", mode, x.d, sh.maxD)
			}
			k := x.place(kh)
			if _, depth, ok := x.growDiscoverDeep(k.b1, k.b2); ok {
				t.Fatalf("%v: ErrFull at the bound (load %.3f), yet the deep search finds a path of %d moves", mode, float64(sh.count.sum())/float64(x.m*slotsPerBucket), depth)
			}
		}
		if fulls == 0 {
			t.Fatalf("%v: no ErrFull at the bound", mode)
		}
		checkGrows(t, "expand", g)
		var buf bytes.Buffer
		if _, err := g.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		var d Growing
		d.mode = mode
		if _, err := d.ReadFrom(&buf); err != nil {
			t.Fatal(err)
		}
		checkGrows(t, "ReadFrom", &d)
		checkGrows(t, "Clone", g.Clone())
		g.Reset()
		checkGrows(t, "Reset", g)
	}
}
