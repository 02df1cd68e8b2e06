package main

import "hash/maphash"

// keySet remembers keys by a 128-bit hash: two 64-bit maphash values under
// independent random seeds. It is exact in practice: among a billion
// distinct keys the chance that any two share both hashes is about 10^-21,
// and the seeds are chosen afresh by every run, so no input can be crafted
// to collide. It costs about 40 bytes per distinct key (a map of 16-byte
// entries), whatever the keys' length.
type keySet struct {
	s1, s2 maphash.Seed
	set    map[[2]uint64]struct{}
}

func newKeySet() *keySet {
	return &keySet{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), set: map[[2]uint64]struct{}{}}
}

func (k *keySet) hash(key []byte) [2]uint64 {
	return [2]uint64{maphash.Bytes(k.s1, key), maphash.Bytes(k.s2, key)}
}

// first reports whether this is the first time it is asked about key.
func (k *keySet) first(key []byte) bool {
	h := k.hash(key)
	_, in := k.set[h]
	k.set[h] = struct{}{}
	return !in
}
