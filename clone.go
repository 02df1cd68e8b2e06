package cuckoo

import "sync/atomic"

// Clone returns a copy of f, sharing nothing with it: a new filter with f's
// mode, layout, seed and capacity, holding f's fingerprints, a snapshot as
// WriteTo takes it. Cloning a zero Filter gives a zero Filter.
func (f *Filter) Clone() *Filter {
	c := new(Filter)
	if f.m == 0 {
		return c
	}
	words := make([]atomic.Uint64, len(f.t.words))
	n := f.copyTable(words)
	c.adopt(words, f.lay, f.seed, hashAlg(f.seed, f.fmix), f.mode, int64(n))
	return c
}

// copyTable is appendTable into words (len(f.t.words) of them), with its
// claim.
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

// Clone returns a copy of g, sharing nothing with it, a snapshot as WriteTo
// takes it. It goes through g's encoding, so it needs memory for the
// encoding besides the copy. Cloning a zero Growing gives a zero Growing.
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
		panic("cuckoo: Growing.Clone: " + err.Error()) // a bug: g's own encoding always decodes
	}
	return c
}
