package cuckoo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The decoders must never panic, must fail with errors that begin with
// "cuckoo: " and leave the receiver unchanged, and must accept only
// canonical encodings: whatever decodes re-encodes to the same bytes.
//
// Most mutations of a valid encoding break its checksum. So that the fuzzer
// also reaches the checks behind it, each input is decoded twice: as given,
// and with its last eight bytes replaced by the checksum of the rest.

// encFuzzReceiver returns a loaded filter to decode into, with a copy of its
// table.
func encFuzzReceiver(t *testing.T) (*Filter, []uint64) {
	g := NewTestFilter(t, 64, LockFree, 8, 3)
	encFill(t, g, "fz-", 40)
	return g, encWords(g)
}

// encFuzzCheckFailed checks that a failed decode left g as it was.
func encFuzzCheckFailed(t *testing.T, g *Filter, before []uint64, err error) {
	t.Helper()
	if !strings.HasPrefix(err.Error(), "cuckoo: ") {
		t.Fatalf("error %q does not begin with \"cuckoo: \"", err)
	}
	if g.Len() != 40 || g.FingerprintBits() != 8 || g.Seed() != 3 || !equalUint64s(encWords(g), before) {
		t.Fatalf("failed decode (%v) changed the receiver: Len() = %d", err, g.Len())
	}
	encCheckKeys(t, g, "fz-", 40)
}

// encFuzzCheckLoaded checks a successful decode of data into g.
func encFuzzCheckLoaded(t *testing.T, g *Filter, data []byte) {
	t.Helper()
	again, err := g.MarshalBinary()
	if err != nil {
		t.Fatalf("MarshalBinary after a successful decode: %v", err)
	}
	if !bytes.Equal(again, data) {
		t.Fatalf("decoded %d bytes re-encode to %d different bytes", len(data), len(again))
	}
	if g.Len() > g.Cap() {
		t.Fatalf("Len() = %d > Cap() = %d", g.Len(), g.Cap())
	}
}

func FuzzUnmarshalBinary(f *testing.F) {
	for _, seed := range encFuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, encReseal(bytes.Clone(data))} {
			g, before := encFuzzReceiver(t)
			if err := g.UnmarshalBinary(in); err != nil {
				encFuzzCheckFailed(t, g, before, err)
				continue
			}
			encFuzzCheckLoaded(t, g, in)
			// ReadFrom agrees, reading all of it.
			var h Filter
			if n, err := h.ReadFrom(bytes.NewReader(in)); err != nil || n != int64(len(in)) {
				t.Fatalf("UnmarshalBinary accepts what ReadFrom rejects: %d, %v", n, err)
			}
		}
	})
}

func FuzzReadFrom(f *testing.F) {
	for _, seed := range encFuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, encReseal(bytes.Clone(data))} {
			g, before := encFuzzReceiver(t)
			n, err := g.ReadFrom(bytes.NewReader(in))
			if n < 0 || n > int64(len(in)) {
				t.Fatalf("ReadFrom = %d from %d bytes", n, len(in))
			}
			if err != nil {
				encFuzzCheckFailed(t, g, before, err)
				// What ReadFrom rejects, UnmarshalBinary rejects.
				var h Filter
				if h.UnmarshalBinary(in) == nil {
					t.Fatalf("ReadFrom rejects what UnmarshalBinary accepts: %v", err)
				}
				continue
			}
			encFuzzCheckLoaded(t, g, in[:n])
		}
	})
}

// encFuzzSeeds returns the seeds added in code: small valid encodings of
// every layout (8 is the packed layout, version 3; bits8OneWord the
// one-word 8-bit layout of version 1). More seeds (these and malformed
// inputs) are in testdata/fuzz.
func encFuzzSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, c := range []struct{ capacity, keys, bits int }{
		{1, 0, 8}, {1, 3, 12}, {20, 15, 8}, {20, 15, 12}, {40, 0, 12}, {20, 15, 15}, {20, 15, Bits12x5},
		{20, 15, bits8OneWord},
	} {
		g := NewTestFilter(tb, c.capacity, LockFree, c.bits, uint64(c.capacity))
		encFill(tb, g, "s-", c.keys)
		data, err := g.MarshalBinary()
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	return seeds
}

// TestEncodeFuzzCorpus checks that the seed corpus under testdata/fuzz
// exists and, with -update, rewrites it: the in-code seeds, the golden file
// and every malformed input of TestEncodeBadInput.
func TestEncodeFuzzCorpus(t *testing.T) {
	for _, fuzz := range []string{"FuzzUnmarshalBinary", "FuzzReadFrom"} {
		dir := filepath.Join("testdata", "fuzz", fuzz)
		if *updateGolden {
			corpus := map[string][]byte{}
			for i, s := range encFuzzSeeds(t) {
				corpus[fmt.Sprintf("valid-%d", i)] = s
			}
			golden, err := os.ReadFile(filepath.Join("testdata", encGoldenFile))
			if err != nil {
				t.Fatal(err)
			}
			corpus["golden"] = golden
			for _, tc := range encBadInputs(t) {
				corpus["bad-"+strings.NewReplacer(" ", "-", "^", "").Replace(tc.name)] = tc.data
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range corpus {
				entry := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
				if err := os.WriteFile(filepath.Join(dir, name), []byte(entry), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) < 20 {
			t.Fatalf("%s: %d corpus entries (%v); want at least 20: run go test -run TestEncodeFuzzCorpus -update", dir, len(entries), err)
		}
	}
}
