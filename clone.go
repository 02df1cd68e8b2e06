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
	n := f.snapshot(nil, words)
	c.adopt(words, f.lay, f.seed, hashAlg(f.seed, f.fmix), f.mode, int64(n))
	return c
}

// Clone returns a copy of g, sharing nothing with it, a snapshot as WriteTo
// takes it. It goes through g's encoding, so it needs memory for the
// encoding besides the copy. Cloning a zero Growing gives a zero Growing.
func (g *Growing) Clone() *Growing {
	if g.st == nil {
		return new(Growing)
	}
	c := &Growing{mode: g.mode}
	if err := c.UnmarshalBinary(appendSum(g.capture())); err != nil {
		panic("cuckoo: Growing.Clone: " + err.Error()) // a bug: g's own encoding always decodes
	}
	return c
}
