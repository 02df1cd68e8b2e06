package cuckoo

import (
	"encoding/binary"
	"testing"
)

// TestInsertInlineMatchesInsertKey: Insert (its inline first try in
// LockFree one-word layouts) leaves the same words and results as InsertHash
// (placeHash, then insertKey or pkInsertKey), key by key, past full.
func TestInsertInlineMatchesInsertKey(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, lay := range [][2]int{{8, 4}, {12, 4}, {12, 5}, {15, 4}} {
			for _, seed := range []uint64{0, 7} {
				opts := []Option{WithSeed(seed), WithMode(mode), WithFingerprintBits(lay[0]), WithSlotsPerBucket(lay[1])}
				a, _ := New(3000, opts...)
				b, _ := New(3000, opts...)
				full := 0
				for i := range 4000 {
					k := binary.LittleEndian.AppendUint64(nil, uint64(i))
					if i%2 == 1 {
						k = binary.LittleEndian.AppendUint64(k, uint64(i)<<7) // 16 bytes
					}
					ea, eb := a.Insert(k), b.InsertHash(hashKey(k))
					if ea != eb {
						t.Fatalf("mode %v layout %v seed %d key %d: Insert %v, InsertHash %v", mode, lay, seed, i, ea, eb)
					}
					if ea != nil {
						full++
					}
					if i%97 == 0 || ea != nil {
						for j := range a.t.words {
							if a.t.words[j].Load() != b.t.words[j].Load() {
								t.Fatalf("mode %v layout %v seed %d after key %d: word %d differs", mode, lay, seed, i, j)
							}
						}
					}
				}
				if full == 0 || a.Len() != b.Len() {
					t.Fatalf("mode %v layout %v: %d ErrFull, Len %d and %d", mode, lay, full, a.Len(), b.Len())
				}
			}
		}
	}
}
