package cuckoo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

var apiModes = []Mode{LockFree, Locked}

// apiKey returns key i of a key set named by class (distinct classes never
// share keys).
func apiKey(class byte, i int) []byte {
	var k [9]byte
	k[0] = class
	binary.LittleEndian.PutUint64(k[1:], uint64(i))
	return k[:]
}

// pairOf returns the unordered bucket pair and fingerprint of key in f: two
// keys with the same pairOf are the same to the filter.
func pairOf(f *Filter, key []byte) [3]uint64 {
	b1, fp, _ := f.hash(key)
	b2 := f.alt(b1, fp)
	return [3]uint64{min(b1, b2), max(b1, b2), fp}
}

// TestKeyFormsAgree runs one random sequence of operations on three filters
// with the same seed: one through the []byte forms, one through the String
// forms, one through the Hash forms with h = xxhash.Sum64(key). Every answer
// and in the end every bucket word must be the same.
func TestKeyFormsAgree(t *testing.T) {
	for _, mode := range apiModes {
		for _, seed := range []uint64{0, 0x5eed} {
			t.Run(fmt.Sprintf("mode=%v/seed=%d", mode, seed), func(t *testing.T) {
				var fs [3]*Filter
				for i := range fs {
					f, err := New(600, WithMode(mode), WithSeed(seed), WithFingerprintBits(8))
					if err != nil {
						t.Fatal(err)
					}
					fs[i] = f
				}
				b, s, h := fs[0], fs[1], fs[2]
				r := rand.New(rand.NewPCG(seed, 3))
				key := func() []byte { return fmt.Appendf(nil, "key-%d", r.IntN(700)) }
				steps := Sized(5000, 20000, 20000)
				if raceEnabled {
					steps = Sized(1250, 2000, 5000)
				}
				for step := 0; step < steps; step++ {
					k := key()
					ks, kh := string(k), xxhash.Sum64(k)
					var got [3]string
					switch op := r.IntN(7); op {
					case 0:
						got = [3]string{fmt.Sprint(b.Insert(k)), fmt.Sprint(s.InsertString(ks)), fmt.Sprint(h.InsertHash(kh))}
					case 1:
						got = [3]string{fmt.Sprint(b.Lookup(k)), fmt.Sprint(s.LookupString(ks)), fmt.Sprint(h.LookupHash(kh))}
					case 2:
						got = [3]string{fmt.Sprint(b.Delete(k)), fmt.Sprint(s.DeleteString(ks)), fmt.Sprint(h.DeleteHash(kh))}
					case 3:
						got = [3]string{fmt.Sprint(b.InsertUnique(k)), fmt.Sprint(s.InsertUniqueString(ks)), fmt.Sprint(h.InsertUniqueHash(kh))}
					case 4:
						got = [3]string{fmt.Sprint(b.Count(k)), fmt.Sprint(s.CountString(ks)), fmt.Sprint(h.CountHash(kh))}
					case 5, 6:
						n := r.IntN(40)
						kb, kss, khs := make([][]byte, n), make([]string, n), make([]uint64, n)
						for i := range kb {
							kb[i] = key()
							kss[i], khs[i] = string(kb[i]), xxhash.Sum64(kb[i])
						}
						if op == 5 {
							// found is sometimes shorter than the keys: each form
							// must answer and count the same prefix.
							fl := n
							if n > 0 && r.IntN(4) == 0 {
								fl = r.IntN(n)
							}
							var f [3][]bool
							for i := range f {
								f[i] = make([]bool, fl)
							}
							nb := b.LookupBatch(kb, f[0])
							ns := s.LookupBatchString(kss, f[1])
							nh := h.LookupBatchHash(khs, f[2])
							if nb != fl {
								t.Fatalf("step %d: LookupBatch of %d keys into %d answers returned %d", step, n, fl, nb)
							}
							got = [3]string{fmt.Sprint(nb, f[0]), fmt.Sprint(ns, f[1]), fmt.Sprint(nh, f[2])}
						} else {
							got = [3]string{fmt.Sprint(b.InsertBatch(kb)), fmt.Sprint(s.InsertBatchString(kss)), fmt.Sprint(h.InsertBatchHash(khs))}
						}
					}
					if got[0] != got[1] || got[0] != got[2] {
						t.Fatalf("step %d: []byte, String, Hash forms answered %q, %q, %q; want the same", step, got[0], got[1], got[2])
					}
				}
				for i := range b.t.words {
					if w := b.t.words[i].Load(); w != s.t.words[i].Load() || w != h.t.words[i].Load() {
						t.Fatalf("bucket %d: words %#x, %#x, %#x; want equal", i, w, s.t.words[i].Load(), h.t.words[i].Load())
					}
				}
				if b.Len() != s.Len() || b.Len() != h.Len() {
					t.Fatalf("Len: got %d, %d, %d; want equal", b.Len(), s.Len(), h.Len())
				}
				t.Logf("final load %.3f", b.LoadFactor())
			})
		}
	}
	// The zero Filter answers every form without panicking.
	var z Filter
	found := []bool{true}
	if n := z.LookupBatchString([]string{"a"}, found); n != 1 || found[0] {
		t.Errorf("zero Filter: LookupBatchString = %d, found %v; want 1, [false]", n, found)
	}
	found[0] = true
	if n := z.LookupBatchHash([]uint64{1}, found[:1]); n != 1 || found[0] {
		t.Errorf("zero Filter: LookupBatchHash = %d, found %v; want 1, [false]", n, found)
	}
	if z.InsertString("a") != ErrZeroFilter || z.InsertHash(1) != ErrZeroFilter || z.LookupString("a") || z.LookupHash(1) ||
		z.DeleteString("a") || z.DeleteHash(1) || z.CountString("a") != 0 || z.CountHash(1) != 0 || found[0] {
		t.Error("zero Filter: got an answer other than ErrZeroFilter, false or 0")
	}
	if n, err := z.InsertBatchString([]string{"a"}); n != 0 || err != ErrZeroFilter {
		t.Errorf("zero Filter InsertBatchString: got %d, %v; want 0, ErrZeroFilter", n, err)
	}
	if n, err := z.InsertBatchHash([]uint64{1}); n != 0 || err != ErrZeroFilter {
		t.Errorf("zero Filter InsertBatchHash: got %d, %v; want 0, ErrZeroFilter", n, err)
	}
}

// TestAPIZeroAllocs pins zero allocations per call for every form added
// beside Insert, Lookup and Delete, and for Stats.
func TestAPIZeroAllocs(t *testing.T) {
	for _, mode := range apiModes {
		t.Run("mode="+mode.String(), func(t *testing.T) {
			f, err := New(100000, WithMode(mode))
			if err != nil {
				t.Fatal(err)
			}
			keys := make([]string, 64)
			hs := make([]uint64, 64)
			for i := range keys {
				keys[i] = fmt.Sprintf("key-%d", i)
				hs[i] = xxhash.Sum64String(keys[i])
			}
			found := make([]bool, 64)
			runs := Sized(50, 200, 200)
			if raceEnabled {
				runs = Sized(20, 50, 200)
			}
			var i int
			next := func() int { i = (i + 1) % len(keys); return i }
			for name, fn := range map[string]func(){
				"InsertString":       func() { _ = f.InsertString(keys[next()]) },
				"LookupString":       func() { f.LookupString(keys[next()]) },
				"DeleteString":       func() { f.DeleteString(keys[next()]) },
				"InsertUniqueString": func() { _, _ = f.InsertUniqueString(keys[next()]) },
				"CountString":        func() { f.CountString(keys[next()]) },
				"InsertUnique":       func() { _, _ = f.InsertUnique([]byte(keys[next()])) },
				"Count":              func() { f.Count([]byte(keys[next()])) },
				"InsertHash":         func() { _ = f.InsertHash(hs[next()]) },
				"LookupHash":         func() { f.LookupHash(hs[next()]) },
				"DeleteHash":         func() { f.DeleteHash(hs[next()]) },
				"InsertUniqueHash":   func() { _, _ = f.InsertUniqueHash(hs[next()]) },
				"CountHash":          func() { f.CountHash(hs[next()]) },
				"LookupBatchString":  func() { f.LookupBatchString(keys, found) },
				"InsertBatchString":  func() { _, _ = f.InsertBatchString(keys[:20]); f.Reset() },
				"LookupBatchHash":    func() { f.LookupBatchHash(hs, found) },
				"InsertBatchHash":    func() { _, _ = f.InsertBatchHash(hs[:20]); f.Reset() },
				"Stats":              func() { _ = f.Stats() },
			} {
				if a := testing.AllocsPerRun(runs, fn); a != 0 {
					t.Errorf("%s: got %v allocations per call; want 0", name, a)
				}
			}
		})
	}
}

// TestDuplicateCopiesBounded inserts each of 300 keys (100 by default in
// race builds, 100 or 50 under -short) 12 times into an
// empty filter (Reset between keys, so that no other key's copies fill one
// of its buckets): a key's two buckets hold at most 2b copies (b slots per
// bucket; b for the rare key whose two buckets are one; in the packed
// layout one fewer per odd bucket when the fingerprint is 64 or more, which
// that bucket's top slot cannot take), so each key keeps exactly that many,
// its other inserts return ErrFull, and Len counts only the copies stored.
func TestDuplicateCopiesBounded(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{8, bits8OneWord, 12, 15, Bits12x5} {
			f := NewTestFilter(t, 10_000, mode, bits, 3)
			const inserts = 12
			keys := Sized(100, 300, 300)
			if raceEnabled {
				keys = Sized(50, 100, 300)
			}
			restricted := 0 // keys with fewer than 2b slots (packed layout)
			fulls, wantFulls := 0, 0
			for k := range keys {
				key := fmt.Appendf(nil, "dup %d", k)
				f.Reset()
				for range inserts {
					if err := f.Insert(key); errors.Is(err, ErrFull) {
						fulls++
					} else if err != nil {
						t.Fatal(err)
					}
				}
				b1, fp, b2 := f.hash(key)
				want := maxCopies(f, b1, b2, fp)
				if b1 != b2 && want < 2*f.SlotsPerBucket() {
					restricted++
				}
				if n := f.Count(key); n != want {
					t.Fatalf("%v, layout %s: key %d has %d copies; want %d", mode, layoutName(bits), k, n, want)
				}
				wantFulls += inserts - want
				if f.Len() != want {
					t.Fatalf("%v, layout %s: key %d: Len %d; want %d", mode, layoutName(bits), k, f.Len(), want)
				}
			}
			if fulls != wantFulls {
				t.Errorf("%v, layout %s: %d ErrFull; want %d", mode, layoutName(bits), fulls, wantFulls)
			}
			if f.lay.packed && restricted == 0 {
				t.Errorf("%v, packed layout: no key had an odd bucket and a fingerprint of 64 or more: the restricted top slot went untested", mode)
			}
		}
	}
}

// TestHash8 checks Insert's own hash of 8-byte keys against xxhash.Sum64,
// which every other path uses: a difference would place a key where no
// lookup looks.
func TestHash8(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var k [8]byte
	for i := range 100000 {
		x := rng.Uint64()
		if i < 256 {
			x = uint64(i) // small keys, as counters make them
		}
		binary.LittleEndian.PutUint64(k[:], x)
		if got, want := hash8(k[:]), xxhash.Sum64(k[:]); got != want {
			t.Fatalf("hash8(%#x) = %#x; xxhash.Sum64 = %#x", x, got, want)
		}
	}
}
