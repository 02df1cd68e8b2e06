package cuckoo

import "unsafe"

// The String forms answer as the []byte forms do for []byte(s), without
// copying s; the Hash forms take a key's 64-bit hash (see InsertHash).

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) } // only hashed

// InsertString is Insert for a string key.
func (f *Filter) InsertString(key string) error { return f.Insert(bytesOf(key)) }

// LookupString is Lookup for a string key.
func (f *Filter) LookupString(key string) bool { return f.Lookup(bytesOf(key)) }

// DeleteString is Delete for a string key.
func (f *Filter) DeleteString(key string) bool { return f.Delete(bytesOf(key)) }

// InsertUniqueString is InsertUnique for a string key.
func (f *Filter) InsertUniqueString(key string) (bool, error) { return f.InsertUnique(bytesOf(key)) }

// CountString is Count for a string key.
func (f *Filter) CountString(key string) int { return f.Count(bytesOf(key)) }

// LookupBatchString is LookupBatch for string keys.
func (f *Filter) LookupBatchString(keys []string, found []bool) (n int) {
	return f.lookupBatch(&batchKeys{strs: keys}, found[:min(len(keys), len(found))])
}

// InsertBatchString is InsertBatch for string keys.
func (f *Filter) InsertBatchString(keys []string) (n int, err error) {
	return f.insertBatch(&batchKeys{strs: keys}, len(keys))
}

// InsertHash is Insert for a key given by its 64-bit hash h: Insert(key) is
// InsertHash(xxhash.Sum64(key)). Another hash works if it is the same for
// the same key and its 64 bits are uniform and independent across keys:
// the bucket comes from the high 32, the fingerprint from the low 32, and
// weak bits (a counter, the identity on small integers) crowd buckets and
// raise the false-positive rate. Keys with equal hashes are one key.
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

// LookupBatchHash is LookupBatch for keys given by their 64-bit hashes.
func (f *Filter) LookupBatchHash(hs []uint64, found []bool) (n int) {
	return f.lookupBatch(&batchKeys{hs: hs}, found[:min(len(hs), len(found))])
}

// InsertBatchHash is InsertBatch for keys given by their 64-bit hashes.
func (f *Filter) InsertBatchHash(hs []uint64) (n int, err error) {
	return f.insertBatch(&batchKeys{hs: hs}, len(hs))
}
