package cuckoo

import "unsafe"

// String and pre-hashed keys. The String forms answer exactly as the
// []byte forms do for []byte(s), without copying s: the filter only hashes
// the bytes and never writes or keeps them. The Hash forms take a key's
// 64-bit hash instead of the key (see InsertHash for what the hash must
// be).

// bytesOf returns the bytes of s without copying them. The result must not
// be written: the methods below only hash it.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// InsertString is Insert for a string key, without copying it.
func (f *Filter) InsertString(key string) error { return f.Insert(bytesOf(key)) }

// LookupString is Lookup for a string key, without copying it.
func (f *Filter) LookupString(key string) bool { return f.Lookup(bytesOf(key)) }

// DeleteString is Delete for a string key, without copying it.
func (f *Filter) DeleteString(key string) bool { return f.Delete(bytesOf(key)) }

// InsertUniqueString is InsertUnique for a string key, without copying it.
func (f *Filter) InsertUniqueString(key string) (inserted bool, err error) {
	return f.InsertUnique(bytesOf(key))
}

// CountString is Count for a string key, without copying it.
func (f *Filter) CountString(key string) int { return f.Count(bytesOf(key)) }

// LookupBatchString is LookupBatch for string keys, without copying them:
// it answers the first n = min(len(keys), len(found)) keys and returns n.
func (f *Filter) LookupBatchString(keys []string, found []bool) (n int) {
	n = min(len(keys), len(found))
	var views [batchGroup][]byte
	for base := 0; base < n; base += batchGroup {
		g := keys[base:min(base+batchGroup, n)]
		for j, k := range g {
			views[j] = bytesOf(k)
		}
		f.LookupBatch(views[:len(g)], found[base:base+len(g)])
	}
	return n
}

// InsertBatchString is InsertBatch for string keys, without copying them.
func (f *Filter) InsertBatchString(keys []string) (n int, err error) {
	var views [batchGroup][]byte
	for base := 0; base < len(keys); base += batchGroup {
		g := keys[base:min(base+batchGroup, len(keys))]
		for j, k := range g {
			views[j] = bytesOf(k)
		}
		k, err := f.InsertBatch(views[:len(g)])
		if err != nil {
			return base + k, err
		}
	}
	return len(keys), nil
}

// InsertHash is Insert for a key given by its 64-bit hash h. A key's
// placement depends only on its hash: Insert(key) is InsertHash with h =
// xxhash.Sum64(key) (XXH64, seed 0), so the forms can be mixed on one
// filter when h is computed that way. Any other 64-bit hash works if every
// call gets the same hash for the same key and the hash is uniform: all 64
// bits equally likely and independent across keys. The filter mixes h with
// its seed (for a seed other than 0), then takes the bucket from the high
// 32 bits and the fingerprint from the low 32; a hash with weak or constant
// bits (a counter, the identity on small integers) crowds buckets and
// raises the false-positive rate. Keys with equal hashes are one key to the
// filter.
func (f *Filter) InsertHash(h uint64) error {
	if f.m == 0 {
		return ErrZeroFilter
	}
	b1, fp, b2 := f.placeHash(h)
	if f.lay.packed {
		return f.pkInsertKey(b1, b2, fp)
	}
	return f.insertKey(b1, b2, fp)
}

// LookupHash is Lookup for a key given by its 64-bit hash h.
func (f *Filter) LookupHash(h uint64) bool {
	if f.m == 0 {
		return false
	}
	b1, fp, b2 := f.placeHash(h)
	b1, b2 = searchPair(b1, b2)
	if f.pkDirect {
		return f.pkLookup(b1, b2, fp)
	}
	if f.inline {
		return f.lookup(b1, b2, fp)
	}
	return f.lookupOther(b1, b2, fp)
}

// DeleteHash is Delete for a key given by its 64-bit hash h.
func (f *Filter) DeleteHash(h uint64) bool {
	if f.m == 0 {
		return false
	}
	b1, fp, b2 := f.placeHash(h)
	return f.deleteFp(b1, b2, fp)
}

// InsertUniqueHash is InsertUnique for a key given by its 64-bit hash h.
func (f *Filter) InsertUniqueHash(h uint64) (inserted bool, err error) {
	if f.m == 0 {
		return false, ErrZeroFilter
	}
	b1, fp, b2 := f.placeHash(h)
	return f.insertUnique(b1, b2, fp)
}

// CountHash is Count for a key given by its 64-bit hash h.
func (f *Filter) CountHash(h uint64) int {
	if f.m == 0 {
		return 0
	}
	b1, fp, b2 := f.placeHash(h)
	return f.countCopies(b1, b2, fp)
}

// readHashed is hashAndRead for keys given by their hashes (at most
// batchGroup of them).
func (f *Filter) readHashed(g *group, hs []uint64) {
	copy(g.b1[:], hs)
	f.placeAndRead(g, len(hs))
}

// LookupBatchHash is LookupBatch for keys given by their 64-bit hashes: it
// stores in found[i] whether the key with hash hs[i] may be in the filter,
// for the first min(len(hs), len(found)) keys, overlapping the cache
// misses of a group of keys as LookupBatch does, and returns that number n.
func (f *Filter) LookupBatchHash(hs []uint64, found []bool) (n int) {
	n = min(len(hs), len(found))
	if f.m == 0 {
		clear(found[:n])
		return n
	}
	if f.lay.packed {
		var g pkGroup
		for base := 0; base < n; base += batchGroup {
			hs := hs[base:min(base+batchGroup, n)]
			copy(g.b1[:], hs)
			f.pkReadGroup(&g, len(hs))
			f.pkLookupGroup(&g, found[base:base+len(hs)])
		}
		return n
	}
	var g group
	for base := 0; base < n; base += batchGroup {
		hs := hs[base:min(base+batchGroup, n)]
		f.readHashed(&g, hs)
		f.lookupGroup(&g, found[base:base+len(hs)])
	}
	return n
}

// InsertBatchHash is InsertBatch for keys given by their 64-bit hashes: it
// inserts them in order and returns how many it inserted; if that is less
// than len(hs), the key with hash hs[n] did not fit, err is ErrFull, and
// hs[n:] were not inserted.
func (f *Filter) InsertBatchHash(hs []uint64) (n int, err error) {
	if f.m == 0 {
		if len(hs) == 0 {
			return 0, nil
		}
		return 0, ErrZeroFilter
	}
	if f.lay.packed {
		var g pkGroup
		for base := 0; base < len(hs); base += batchGroup {
			hs := hs[base:min(base+batchGroup, len(hs))]
			copy(g.b1[:], hs)
			f.readForInsert(&g.b1, &g.fp, &g.b2, &g.w1, &g.w2, len(hs), 1)
			if j, ok := f.pkInsertGroup(&g, len(hs)); !ok {
				return base + j, ErrFull
			}
		}
		return len(hs), nil
	}
	var g group
	for base := 0; base < len(hs); base += batchGroup {
		hs := hs[base:min(base+batchGroup, len(hs))]
		copy(g.b1[:], hs)
		f.readForInsert(&g.b1, &g.fp, &g.b2, &g.w1, &g.w2, len(hs), 0)
		if j, ok := f.insertGroup(&g, len(hs)); !ok {
			return base + j, ErrFull
		}
	}
	return len(hs), nil
}
