package cuckoo

// The String and Hash forms of the Growing filter's methods (keys.go has
// Filter's): a string key is used without copying it, a hash with
// Filter.InsertHash's assumptions.

// CountString is Count for a string key, without copying it.
func (g *Growing) CountString(key string) int { return g.Count(bytesOf(key)) }

// CountHash is Count for a key given by its 64-bit hash.
func (g *Growing) CountHash(h uint64) int {
	if g.st == nil {
		return 0
	}
	kh := g.keyed(h)
	x := g.shardOf(kh).searched()
	return g.countIn(x, x.place(kh))
}

// InsertBatchString is InsertBatch for string keys, without copying them.
func (g *Growing) InsertBatchString(keys []string) (n int, err error) {
	var views [batchGroup][]byte
	for base := 0; base < len(keys); base += batchGroup {
		ks := keys[base:min(base+batchGroup, len(keys))]
		for j, k := range ks {
			views[j] = bytesOf(k)
		}
		if j, err := g.InsertBatch(views[:len(ks)]); err != nil {
			return base + j, err
		}
	}
	return len(keys), nil
}

// InsertBatchHash is InsertBatch for keys given by their 64-bit hashes.
func (g *Growing) InsertBatchHash(hs []uint64) (n int, err error) {
	for base := 0; base < len(hs); base += batchGroup {
		if j, err := g.insertGroup(hs[base:min(base+batchGroup, len(hs))]); err != nil {
			return base + j, err
		}
	}
	return len(hs), nil
}

// LookupBatchString is LookupBatch for string keys, without copying them.
func (g *Growing) LookupBatchString(keys []string, found []bool) (n int) {
	n = min(len(keys), len(found))
	var views [batchGroup][]byte
	for base := 0; base < n; base += batchGroup {
		ks := keys[base:min(base+batchGroup, n)]
		for j, k := range ks {
			views[j] = bytesOf(k)
		}
		g.LookupBatch(views[:len(ks)], found[base:base+len(ks)])
	}
	return n
}

// LookupBatchHash is LookupBatch for keys given by their 64-bit hashes.
func (g *Growing) LookupBatchHash(hs []uint64, found []bool) (n int) {
	n = min(len(hs), len(found))
	for base := 0; base < n; base += batchGroup {
		end := min(base+batchGroup, n)
		g.lookupGroup(hs[base:end], found[base:end])
	}
	return n
}
