package cuckoo

import "github.com/cespare/xxhash/v2"

// InsertUnique adds key to the growing filter unless an entry matching it
// is already in one of its buckets, and reports whether it added it. It
// returns ErrFull (and inserted=false) only where Insert would (at the
// bound, or in a shard less than half full whose buckets around the key
// are full), with nothing changed.
//
// InsertUnique is linearizable in both modes, also against Insert, Delete,
// relocations and growth steps: it takes effect at one instant at which it
// either finds a matching entry or finds none and adds its own, in one
// atomic step over both of its buckets. Any number of goroutines calling InsertUnique with one key
// leave exactly one entry for it, unless another key's entry matches it.
//
// A refusal can also mean that another key's entry matches this key: the
// probability is Lookup's false-positive rate for a key never inserted,
// which grows as entries live through splits of their buckets
// (FalsePositiveRate).
func (g *Growing) InsertUnique(key []byte) (inserted bool, err error) {
	return g.InsertUniqueHash(xxhash.Sum64(key))
}

// InsertUniqueString is InsertUnique for a string key, without copying it.
func (g *Growing) InsertUniqueString(key string) (inserted bool, err error) {
	return g.InsertUnique(bytesOf(key))
}

// InsertUniqueHash is InsertUnique for a key given by its 64-bit hash.
func (g *Growing) InsertUniqueHash(h uint64) (inserted bool, err error) {
	if g.st == nil {
		return false, ErrZeroFilter
	}
	kh := g.keyed(h)
	sh := g.shardOf(kh)
	for {
		x := g.writable(sh)
		k := x.place(kh)
		present, st := g.uniqueIn(x, k)
		switch st {
		case growDone:
			if present {
				return false, nil
			}
			sh.count.add(1)
			return true, nil
		case growFull:
			if sh.eager(x) || g.makeRoomIn(x, k.b1, k.b2) == growFull {
				if !g.expand(sh, x) {
					return false, ErrFull
				}
			}
		}
		// growFrozen, room made, or a new table: start over on the table
		// writable gives now.
	}
}

// uniqueIn puts k's entry into the emptier of its buckets in x unless an
// entry matching k is in either of them. It returns present=true with
// growDone when it found one, growDone alone when it added k's entry, or
// growFull (both buckets full, nothing found) or growFrozen (x is being
// copied into its successor) with nothing changed.
//
// Claim: present, added and growFull each hold at one instant in the call.
// Proof. Every entry that matches k in x lies in b1 or b2 (an entry only
// moves between its two buckets, grow_table.go). LockFree: the words are
// read as logical values; a read that shows a match is one instant. Else
// one decidePair (unique.go) over both words decides: k's entry added to
// the emptier, or both words unchanged when both are full. At its instant
// both words hold what was read, neither frozen, so "no match, k's entry
// added" or "no match, both full" holds then. A relocation through either
// bucket, an insert, a delete or a freeze in between changes a word, fails
// it, and the attempt starts over. When b1 == b2 the word is read once
// and tested for both of the key's entry forms. Locked mode: the reads and
// the store happen under both buckets' stripe locks, which every write to
// either bucket (freezing included) holds. And x is the table writes go to
// (writable): entries of the shard are in x and nowhere else once a growth
// step's copy is done, and a copy in progress freezes a word before
// copying it, which the check sees. growFrozen reports nothing about the
// key: the caller starts over on the next table.
func (g *Growing) uniqueIn(x *growTable, k growKey) (present bool, st int) {
	t := &x.t
	match := func(w1, w2 uint64) bool {
		return matchLanes(w1, k.q1)|matchLanes(w2, k.q2) != 0
	}
	if g.mode == Locked {
		gd := x.locks.lockBuckets(k.b1, k.b2)
		defer x.locks.unlockBuckets(gd)
		w1, w2 := t.words[k.b1].Load(), t.words[k.b2].Load()
		if (w1|w2)&frozenBit != 0 {
			return false, growFrozen
		}
		if match(w1, w2) {
			return true, growDone
		}
		b, _, nw, st := placeEntry(k, w1, w2)
		if st == growDone {
			t.words[b].Store(nw)
		}
		return false, st
	}
	for {
		w1 := t.load(k.b1)
		if raceEnabled {
			growSearchStalled(x, k.b1, 1) // the tests' stall point (grow_table.go)
		}
		w2 := w1
		if k.b2 != k.b1 {
			w2 = t.load(k.b2)
		}
		if (w1|w2)&frozenBit != 0 {
			return false, growFrozen
		}
		if match(w1, w2) {
			return true, growDone
		}
		b, _, nw, st := placeEntry(k, w1, w2)
		n1, n2 := w1, w2
		if st == growDone {
			if b == k.b1 {
				n1 = nw
			} else {
				n2 = nw
			}
			if k.b1 == k.b2 {
				n1, n2 = nw, nw
			}
		}
		if t.decidePair(k.b1, w1, n1, k.b2, w2, n2) {
			return false, st
		}
	}
}
