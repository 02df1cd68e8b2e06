package cuckoo

import (
	"errors"
	"fmt"
	"testing"
)

// TestInsertGivesUpAfterRoomRounds plays the concurrent writer that takes
// every slot an insert frees: after each makeRoom it fills the key's two
// buckets and empties the other bucket of one entry of the first, so the
// next search finds room again and the insert never fits. Insert and InsertUnique must return
// ErrFull after maxRoomRounds rounds instead of looping for ever (with the
// bound removed this test fails: the thief counts past it).
func TestInsertGivesUpAfterRoomRounds(t *testing.T) {
	if !raceEnabled {
		t.Skip("roomMadeHook is called in race builds only")
	}
	defer func() { roomMadeHook = nil }()
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{8, 12, 15} {
			for _, unique := range []bool{false, true} {
				name := fmt.Sprintf("%v/bits=%d/unique=%v", mode, bits, unique)
				f, key, fp := nearFullWithKey(t, mode, bits)
				rounds := 0
				roomMadeHook = func(f *Filter, b1, b2 uint64) {
					rounds++
					if rounds > maxRoomRounds+1 {
						t.Fatalf("%s: %d rounds and the insert still runs", name, rounds)
					}
					fillBucket(f, b1, uint64(rounds), fp)
					fillBucket(f, b2, uint64(rounds)+3, fp)
					// Empty the word of the other bucket of one of b1's
					// entries: the next search finds a path of one move.
					for slot := range f.SlotsPerBucket() {
						v := wordOf(f, f.alt(b1, f.slotAt(b1, slot)))
						if v != wordOf(f, b1) && v != wordOf(f, b2) {
							f.t.words[v].Store(0)
							break
						}
					}
				}
				var err error
				if unique {
					_, err = f.InsertUniqueString(key)
				} else {
					err = f.InsertString(key)
				}
				roomMadeHook = nil
				if !errors.Is(err, ErrFull) {
					t.Errorf("%s: insert returned %v after %d rounds, want ErrFull", name, err, rounds)
				}
				if rounds != maxRoomRounds {
					t.Errorf("%s: the thief ran %d rounds, want %d (the bound, not a failed search, must end the insert)", name, rounds, maxRoomRounds)
				}
			}
		}
	}
}

// fillBucket puts a fingerprint into every empty slot of bucket b by plain
// stores (the test is the only goroutine): 1 in the packed layout, which
// which every slot takes, as in the others.
func fillBucket(f *Filter, b, seq, avoid uint64) {
	v := 1 + seq*5%63
	next := func() uint64 {
		v = v%63 + 1
		if v == avoid {
			v = v%63 + 1
		}
		return v
	}
	w := f.t.words[wordOf(f, b)].Load()
	if f.lay.packed {
		for s := range packedSlots {
			sh := pkShift(b) + uint64(s)*8
			if w>>sh&0xff == 0 {
				w |= next() << sh
			}
		}
	} else {
		for s := range int(f.lay.b) {
			if f.lay.slot(w, s) == 0 {
				w = f.lay.setSlot(w, s, next())
			}
		}
	}
	f.t.words[wordOf(f, b)].Store(w)
}

// TestMakeRoomGivesUpOnStalePaths plays the concurrent writer that changes
// every path makeRoom finds before its moves apply: it replaces the
// fingerprint the first move takes. makeRoom must give up after
// maxRoomRounds stale paths, and the insert return ErrFull, instead of
// searching for ever (with its bound removed this test fails: the thief
// counts past it).
func TestMakeRoomGivesUpOnStalePaths(t *testing.T) {
	if !raceEnabled {
		t.Skip("pathReplayedHook is called in race builds only")
	}
	defer func() { pathReplayedHook = nil }()
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{8, 12, 15} {
			name := fmt.Sprintf("%v/bits=%d", mode, bits)
			f, key, fp := nearFullWithKey(t, mode, bits)
			paths := 0
			pathReplayedHook = func(f *Filter, b uint64, s int, old uint64) {
				paths++
				if paths > maxRoomRounds+1 {
					t.Fatalf("%s: %d stale paths and makeRoom still searches", name, paths)
				}
				v := uint64(1)
				for v == old || v == fp {
					v++
				}
				setSlotOf(f, b, s, v)
			}
			err := f.InsertString(key)
			pathReplayedHook = nil
			if !errors.Is(err, ErrFull) {
				t.Errorf("%s: insert returned %v after %d paths, want ErrFull", name, err, paths)
			}
			if paths < maxRoomRounds {
				t.Errorf("%s: the thief changed %d paths, want at least %d (the bound, not a failed search, must end the insert)", name, paths, maxRoomRounds)
			}
		}
	}
}

// nearFullWithKey returns a filter for 2,000 keys filled to 90% of Cap, a
// key it does not hold whose two buckets are full (so that its insert goes
// to makeRoom), and the key's fingerprint.
func nearFullWithKey(t *testing.T, mode Mode, bits int) (*Filter, string, uint64) {
	t.Helper()
	f, err := New(2000, WithFingerprintBits(bits), WithMode(mode), WithSeed(11))
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Cap() * 9 / 10 {
		if err := f.InsertString(fmt.Sprint("fill", i)); err != nil {
			t.Fatal(err)
		}
	}
	key := "absent"
	for j := 0; f.LookupString(key); j++ {
		key = fmt.Sprint("absent", j)
	}
	b1, fp, b2 := f.hash([]byte(key))
	fillBucket(f, b1, 1, fp)
	fillBucket(f, b2, 2, fp)
	return f, key, fp
}
