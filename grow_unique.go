package cuckoo

import "github.com/cespare/xxhash/v2"

// InsertUnique adds key to the growing filter unless an entry matching it
// is already in one of its buckets, and reports whether it added it. It
// returns ErrFull (and inserted=false) only where Insert would, with
// nothing changed.
//
// InsertUnique is linearizable in both modes, also against Insert, Delete,
// relocations and growth steps: it takes effect at one instant at which it
// either finds a matching entry or finds none and adds its own. Any number
// of goroutines calling InsertUnique with one key leave exactly one entry
// for it, unless another key's entry matches it. A refusal can also mean
// that another key's entry matches this key, with Lookup's false-positive
// rate (FalsePositiveRate).
func (g *Growing) InsertUnique(key []byte) (inserted bool, err error) {
	return g.InsertUniqueHash(xxhash.Sum64(key))
}

// InsertUniqueString is InsertUnique for a string key, without copying it.
func (g *Growing) InsertUniqueString(key string) (inserted bool, err error) {
	return g.InsertUnique(bytesOf(key))
}

// InsertUniqueHash is InsertUnique for a key given by its 64-bit hash.
func (g *Growing) InsertUniqueHash(h uint64) (inserted bool, err error) {
	return g.insertHash(h, true)
}

// uniqueIn puts k's entry into the emptier of its buckets in x unless an
// entry matching k is in either (unique.go.tmpl): present=true with
// growDone, growDone alone when it added, or growFull (both full, no
// match) or growFrozen with nothing changed.
//
// Claim: present, added and growFull each hold at one instant in the call.
// Proof. Every entry matching k in x lies in b1 or b2 (entries move only
// within their pairs, grow_table.go), and x is the table writes go to
// (writable): once a step's copy is done the shard's entries are in x
// only, and a copy in progress freezes a word before copying it, which the
// frozen check sees (growFrozen says nothing of the key: the caller starts
// over). The rest is unique.go.tmpl's argument, the words unfrozen at the
// instant (a freeze fails the decidePair; Locked, freezing takes the lock);
// when b1 = b2 the word is read once and tested for both entry forms. □
func (g *Growing) uniqueIn(x *growTable, k growKey) (present bool, st int) {
	if g.mode == Locked {
		return x.growAddUniqueLocked(k.b1, k.b2, k.q1, k.q2)
	}
	return x.growAddUnique(k.b1, k.b2, k.q1, k.q2)
}
