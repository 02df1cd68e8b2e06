package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// growV4Golden is a version-4 encoding (tables without split pointers)
// written by the package before growth went by steps:
// NewGrowing(1000, WithSeed(42)) holding the 8-byte little-endian keys
// 0..29,999 (47 doublings over the shards). Today's code writes version 5.
const (
	growV4Golden     = "golden-growing-v4-seed42.cuckoo"
	growV4GoldenKeys = 30_000
)

// v4FalsePositiveRate is FalsePositiveRate as the package computed it
// for version 4, from the words of an encoding: an entry whose tail has
// its marker at bit a compares 6 + 8 - a bits (no shard of the file is at
// 19 doublings).
func v4FalsePositiveRate(t *testing.T, data []byte) float64 {
	for i := range growShards {
		if data[growFormatHeaderSize+i*growShardRecordSize+8] == growMaxDoublings {
			t.Fatal("a shard at 19 doublings")
		}
	}
	return fileFalsePositiveRate(t, data, laneBits, func(v uint64) int { return 6 + 8 - laneAge(v) })
}

// TestGrowingReadsVersion4 loads the version-4 golden file in both modes:
// every key it holds is found, Len, Cap and FalsePositiveRate are those of
// the file, it writes version 5 with the same bytes but the version (no
// split pointers: a version-4 table is a version-5 table at the start of
// its level), and it goes on growing, by steps, without losing a key.
func TestGrowingReadsVersion4(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", growV4Golden))
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(data[8:]); v != growFormatVersion4 || data[13] != laneBits {
		t.Fatalf("golden file: version %d, %d-bit lanes; want 4 and 15", v, data[13])
	}
	wantFPR := v4FalsePositiveRate(t, data)
	want5 := bytes.Clone(data)
	binary.LittleEndian.PutUint16(want5[8:], growFormatVersion)
	encReseal(want5)
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode))
			if err := g.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			if g.Len() != growV4GoldenKeys || g.Seed() != 42 || g.Doublings() != 47 {
				t.Fatalf("Len %d, Seed %d, Doublings %d; want %d, 42, 47", g.Len(), g.Seed(), g.Doublings(), growV4GoldenKeys)
			}
			if g.Cap() != goldenSlots(data) {
				t.Fatalf("Cap %d; want %d", g.Cap(), goldenSlots(data))
			}
			for i := range growV4GoldenKeys {
				if !g.Lookup(goldenKey(i)) {
					t.Fatalf("key %d, written in version 4, not found", i)
				}
			}
			if got := g.FalsePositiveRate(); math.Abs(got-wantFPR) > 1e-12 {
				t.Fatalf("FalsePositiveRate %.6f; want %.6f (version 4's)", got, wantFPR)
			}
			v5, err := g.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(v5, want5) {
				t.Fatal("re-encoded, the version-4 filter differs from its file beyond the version")
			}
			grown := 10 * growV4GoldenKeys
			if raceEnabled {
				grown = 3 * growV4GoldenKeys
			}
			checkGrowsFurther(t, g, growV4GoldenKeys, grown)
		})
	}
}

// TestGrowingEncodesSplitPointers: a filter caught between steps (shards
// with some buckets of their level split) writes each shard's split
// pointer, and reads back, in both modes, to a filter with the same
// tables: every key found, the same Cap and FalsePositiveRate, the same
// bytes written again. A reader that ignored the pointer would misplace
// every bucket after the split ones.
func TestGrowingEncodesSplitPointers(t *testing.T) {
	for _, mode := range growModes {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGrowing(t, 1000, WithMode(mode), WithSeed(9))
			const n = 40_000
			var k [8]byte
			key := func(i int) []byte {
				binary.LittleEndian.PutUint64(k[:], uint64(i))
				return k[:]
			}
			for i := range n {
				if err := g.Insert(key(i)); err != nil {
					t.Fatal(err)
				}
			}
			data, err := g.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			split := 0
			for i := range growShards {
				rec := data[growFormatHeaderSize+i*growShardRecordSize:]
				if p := binary.LittleEndian.Uint32(rec[10:]); p != 0 {
					split++
					if p != uint32(g.st.shards[i].cur.Load().p) {
						t.Fatalf("shard %d: split pointer %d written, %d in the table", i, p, g.st.shards[i].cur.Load().p)
					}
				}
			}
			if split == 0 {
				t.Fatal("no shard between steps: the test needs one")
			}
			h := newTestGrowing(t, 1000, WithMode(mode))
			if err := h.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if !h.Lookup(key(i)) {
					t.Fatalf("key %d not found after the round trip", i)
				}
			}
			again, _ := h.MarshalBinary()
			if h.Cap() != g.Cap() || h.Len() != g.Len() || h.FalsePositiveRate() != g.FalsePositiveRate() || !bytes.Equal(again, data) {
				t.Fatalf("read back: Cap %d, Len %d; want %d, %d (or the bytes differ)", h.Cap(), h.Len(), g.Cap(), g.Len())
			}
		})
	}
}

// TestGrowingRejectsBadSplitPointers: a version-5 split pointer at or
// past its level's bucket count, or not 0 at the level bound, and a
// version-4 record with bytes in the pointer's place, are rejected
// (ErrFormat), and the receiver is unchanged.
func TestGrowingRejectsBadSplitPointers(t *testing.T) {
	src := newTestGrowing(t, 1000, WithSeed(4))
	data, err := src.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	target := newTestGrowing(t, 1000, WithSeed(5))
	_ = target.Insert([]byte("keep"))
	check := func(what string, b []byte) {
		t.Helper()
		if err := target.UnmarshalBinary(encReseal(b)); !errors.Is(err, ErrFormat) {
			t.Fatalf("%s: %v; want an error matching ErrFormat", what, err)
		}
		if !target.Lookup([]byte("keep")) || target.Len() != 1 || target.Seed() != 5 {
			t.Fatalf("%s: the failed decode changed the filter", what)
		}
	}
	rec := growFormatHeaderSize + 3*growShardRecordSize
	base := binary.LittleEndian.Uint64(data[rec:])
	b := bytes.Clone(data)
	binary.LittleEndian.PutUint32(b[rec+10:], uint32(base)) // c·2^0: the whole level
	check("split pointer at the end of the level", b)
	b = bytes.Clone(data)
	b[rec+9] = 0 // level bound 0, the level itself
	binary.LittleEndian.PutUint32(b[rec+10:], 1)
	check("split pointer at the level bound", b)
	b = bytes.Clone(data)
	binary.LittleEndian.PutUint16(b[8:], growFormatVersion4)
	binary.LittleEndian.PutUint32(b[rec+10:], 1)
	check("version 4 with a split pointer", b)
}
