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
// Claim: with growDone the call is linearizable: there is an instant in
// the call at which b1 and b2 held exactly the words it decided on. Proof.
// Every entry that matches k in x lies in b1 or b2 (an entry only moves
// between its two buckets, grow_table.go). LockFree: the words are read as
// logical values and the answer is taken by one K-CAS over both words
// that expects exactly those values (the word not written is compared and
// written back unchanged, as countIn does): at its decision point both
// words hold what was read, neither frozen, so "a match is present" or "no
// match is present, and k's entry is added" holds at that instant. A
// relocation through either bucket, an insert, a delete or a freeze in
// between changes a word, fails the K-CAS, and the attempt starts over.
// Locked mode: the reads and the store happen under both buckets' stripe
// locks, which every write to either bucket (freezing included) holds.
// And x is the table writes go to (writable): entries of the shard are in
// x and nowhere else once a growth step's copy is done, and a copy in
// progress freezes a word before copying it, which the check sees.
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
	var my *descLease
	defer func() {
		if my != nil {
			my.release()
		}
	}()
	for {
		w1, w2 := t.load(k.b1), t.load(k.b2)
		if (w1|w2)&frozenBit != 0 {
			return false, growFrozen
		}
		found := match(w1, w2)
		var b, nw uint64
		if !found {
			var st int
			if b, _, nw, st = placeEntry(k, w1, w2); st != growDone {
				return false, st
			}
		}
		if k.b1 == k.b2 {
			if found {
				return true, growDone
			}
			if t.cas(b, w1, nw) {
				return false, growDone
			}
			if v := t.words[b].Load(); v&tagMask != 0 {
				t.helpWord(v)
			}
			continue
		}
		n1, n2 := w1, w2
		if !found {
			if b == k.b1 {
				n1 = nw
			} else {
				n2 = nw
			}
		}
		if my == nil {
			my = leaseDesc()
		}
		var op kcasOp
		op.add(k.b1, w1, n1)
		op.add(k.b2, w2, n2)
		if t.kcasWith(&op, my.slot) {
			return found, growDone
		}
	}
}
