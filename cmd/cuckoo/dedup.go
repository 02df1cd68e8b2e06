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
	// counted is set once the set holds every key of the input (a first
	// pass): first then takes keys out instead of putting them in.
	counted bool
}

func newKeySet() *keySet {
	return &keySet{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), set: map[[2]uint64]struct{}{}}
}

func (k *keySet) hash(key []byte) [2]uint64 {
	return [2]uint64{maphash.Bytes(k.s1, key), maphash.Bytes(k.s2, key)}
}

// add puts key into the set (a counting pass).
func (k *keySet) add(key []byte) { k.set[k.hash(key)] = struct{}{} }

// len returns the number of distinct keys in the set.
func (k *keySet) len() int { return len(k.set) }

// first reports whether this is the first time the inserting pass sees key.
// After a counting pass it removes key from the set (later copies are then
// absent); otherwise it adds it.
func (k *keySet) first(key []byte) bool {
	h := k.hash(key)
	_, in := k.set[h]
	if k.counted {
		delete(k.set, h)
		return in
	}
	k.set[h] = struct{}{}
	return !in
}
