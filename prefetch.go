package cuckoo

import "sync/atomic"

// An insert reads its two words, then CASes one: if another core holds the
// line, the read brings it in shared and the CAS must take it over, a second
// trip that a batch's overlapped reads do not hide. So InsertBatch (and the
// growing filter's insertBatch) first issues PREFETCHW for all of a group's
// words at once; a single Insert does not, as the call costs what it saves
// (BENCHMARKS.md, "Tuning constants"). Without PREFETCHW, prefetchForWrite
// reads the words instead (their misses still overlap), prefetchTwo nothing.

// prefetchForWrite prefetches words b1[j]>>shift and b2[j]>>shift, j < n
// (shift 1 in the packed layout, else 0; all below len(words)).
func prefetchForWrite(words []atomic.Uint64, b1, b2 *[batchGroup]uint64, n int, shift uint64) {
	if prefetchW && n > 0 {
		prefetchPairs(&words[0], &b1[0], &b2[0], n, shift)
		return
	}
	for j := range min(n, batchGroup) {
		words[b1[j]>>shift].Load()
		words[b2[j]>>shift].Load()
	}
}

// prefetchTwo prefetches words[b1] and words[b2] (both below len(words)).
func prefetchTwo(words []atomic.Uint64, b1, b2 uint64) {
	if prefetchW {
		prefetchPairs(&words[0], &b1, &b2, 1, 0)
	}
}
