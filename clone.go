package cuckoo

import "sync/atomic"

// Clone returns a copy of f: a new filter with f's mode, layout, seed and
// capacity, holding f's fingerprints. It may run while other goroutines
// use f, with the guarantee of a snapshot (WriteTo): every key inserted
// before Clone began and not deleted until it returned is in the copy;
// inserts and deletes that overlap it may or may not be. Relocations wait
// while the table is copied (at memory speed); lookups, deletes and
// inserts into free slots go on. The copy shares nothing with f. Cloning a
// zero Filter gives a zero Filter.
func (f *Filter) Clone() *Filter {
	c := new(Filter)
	if f.m == 0 {
		return c
	}
	words := make([]atomic.Uint64, len(f.t.words))
	n := f.copyTable(words)
	c.adopt(words, f.lay, f.seed, f.hashAlg(), f.mode, int64(n))
	return c
}

// copyTable copies f's fingerprints into words (as many as f has), without the
// runtime state of the words (migration counters, K-CAS references,
// resolved to their logical values), and returns how many it copied. It
// holds the snapshot gate and reads the words in ascending order, as
// appendTable does, with appendTable's claim.
func (f *Filter) copyTable(words []atomic.Uint64) uint64 {
	f.gate.beginSnapshot()
	defer f.gate.endSnapshot()
	l := &f.lay
	var count uint64
	for i := range words {
		w := f.t.words[i].Load()
		if w&tagMask != 0 {
			w = f.t.load(uint64(i))
		}
		w &= l.fpMask
		count += uint64(l.occupied(w))
		words[i].Store(w)
		if raceEnabled {
			snapshotStalled(f, uint64(i)) // the tests' stall point (snapshot.go)
		}
	}
	return count
}

// Clone returns a copy of g: a new growing filter with g's mode, seed,
// shard sizes and bound, holding g's entries, with the guarantee of a
// snapshot (WriteTo) while other goroutines use g. It goes through g's
// encoding, so it needs memory for the encoding besides the copy. Cloning
// a zero Growing gives a zero Growing.
func (g *Growing) Clone() *Growing {
	c := &Growing{mode: g.mode}
	if g.st == nil {
		return new(Growing)
	}
	data, err := g.MarshalBinary()
	if err == nil {
		err = c.UnmarshalBinary(data)
	}
	if err != nil {
		// g's own encoding always decodes: failing here is a bug in
		// this package, not bad input.
		panic("cuckoo: Growing.Clone: " + err.Error())
	}
	return c
}
