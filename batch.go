package cuckoo

// batchGroup is how many keys LookupBatch hashes before it reads any bucket.
// The bucket loads of a group are independent, so the processor keeps many
// cache misses in flight at once instead of one lookup's two.
const batchGroup = 16

// LookupBatch looks up keys[i] for every i and stores the answer in
// found[i], with the same guarantees as Lookup for each key. It processes
// min(len(keys), len(found)) keys. It is faster than calling Lookup in a loop
// when the table does not fit in the processor's caches, because it hashes a
// group of keys first and then issues all of their bucket loads together.
func (f *Filter) LookupBatch(keys [][]byte, found []bool) {
	n := min(len(keys), len(found))
	if f.m == 0 {
		clear(found[:n])
		return
	}
	if f.mode == Locked {
		for i := 0; i < n; i++ {
			b1, fp := f.hash(keys[i])
			found[i] = f.lookupLocked(b1, f.alt(b1, fp), fp)
		}
		return
	}
	var b1s, b2s, fps, w1s, w2s [batchGroup]uint64
	for base := 0; base < n; base += batchGroup {
		keys := keys[base:min(base+batchGroup, n)]
		found := found[base : base+len(keys)]
		for j, k := range keys {
			b1, fp := f.hash(k)
			b1s[j], fps[j], b2s[j] = b1, fp, f.alt(b1, fp)
		}
		for j := range keys {
			w1s[j] = f.t.words[b1s[j]].Load()
			w2s[j] = f.t.words[b2s[j]].Load()
		}
		for j := range keys {
			b1, w1, w2 := b1s[j], w1s[j], w2s[j]
			if (w1|w2)&tagMask == 0 {
				// As in Lookup: found, or absent with b1 unchanged.
				if f.lay.containsEither(w1, w2, fps[j]) {
					found[j] = true
					continue
				}
				if b1 == b2s[j] || f.t.words[b1].Load() == w1 {
					found[j] = false
					continue
				}
			}
			found[j] = f.findAfter(b1, b2s[j], fps[j], w1, w2)
		}
	}
}
