package cuckoo

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestBatchKeyingSeedZeroAlg1: a filter made WithSeed(0) is encoded (and
// cloned) under hash algorithm 1 (hashAlg), so its copy has fmix set and seed
// 0, where keyed hashing is the identity. Every insert path must place a key
// where every lookup path finds it.
func TestBatchKeyingSeedZeroAlg1(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, lay := range [][2]int{{8, 4}, {12, 4}, {12, 5}, {15, 4}} {
			bits := lay[0]
			src, err := New(4096, WithSeed(0), WithMode(mode), WithFingerprintBits(bits), WithSlotsPerBucket(lay[1]))
			if err != nil {
				t.Fatal(err)
			}
			keys := make([][]byte, 1000)
			for i := range keys {
				keys[i] = binary.LittleEndian.AppendUint64(nil, uint64(i)*0x9e3779b97f4a7c15+1)
			}
			for _, k := range keys[:500] {
				if err := src.Insert(k); err != nil {
					t.Fatal(err)
				}
			}
			data, err := src.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var dec Filter
			if err := dec.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			for name, f := range map[string]*Filter{"clone": src.Clone(), "decoded": &dec} {
				if _, err := f.InsertBatch(keys[500:]); err != nil {
					t.Fatal(err)
				}
				found := make([]bool, len(keys))
				f.LookupBatch(keys, found)
				miss, missB := 0, 0
				for i, k := range keys {
					if !f.Lookup(k) {
						miss++
					}
					if !found[i] {
						missB++
					}
				}
				if miss+missB != 0 {
					t.Errorf("mode %v layout %v %s: Lookup missed %d, LookupBatch missed %d of %d inserted keys", mode, lay, name, miss, missB, len(keys))
				}
			}
		}
	}
}

// TestBatchKeyingAlg1Golden: the golden encoding (hash algorithm 1, seed 42)
// finds its keys by LookupBatch as by Lookup, and keys added by Insert and
// InsertBatch (8-, 16- and other lengths) are found by both.
func TestBatchKeyingAlg1Golden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", encGoldenFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{LockFree, Locked} {
		g := &Filter{}
		g.init(8, newLayout(12, 4), 1, mode) // any filter: UnmarshalBinary keeps its mode
		if err := g.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		if !g.fmix || g.seed != 42 || g.Mode() != mode {
			t.Fatalf("golden filter: fmix %v seed %d mode %v", g.fmix, g.seed, g.Mode())
		}
		var keys [][]byte
		for i := range encGoldenKeys {
			keys = append(keys, encKey(nil, "key-", i))
		}
		var extra [][]byte
		for i := range 120 {
			k := binary.LittleEndian.AppendUint64(nil, uint64(i)*0x9e3779b97f4a7c15)
			if i%3 == 1 {
				k = binary.LittleEndian.AppendUint64(k, uint64(i)) // 16 bytes
			} else if i%3 == 2 {
				k = append(k, "xyz"...)
			}
			extra = append(extra, k)
		}
		for _, k := range extra[:60] {
			if err := g.Insert(k); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := g.InsertBatch(extra[60:]); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, extra...)
		found := make([]bool, len(keys))
		g.LookupBatch(keys, found)
		for i, k := range keys {
			if !found[i] || !g.Lookup(k) {
				t.Fatalf("mode %v: key %d %q: LookupBatch %v, Lookup %v", mode, i, k, found[i], g.Lookup(k))
			}
		}
	}
}
