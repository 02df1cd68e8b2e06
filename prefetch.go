package cuckoo

import "sync/atomic"

// Prefetching a batch's words for writing.
//
// An insert reads its two bucket words and then CASes one of them. When
// another core holds that line, the read brings it in shared and the CAS
// must then take it over: a second trip per insert that the batch's
// overlapped reads do not hide. InsertBatch (and the Growing filter's
// insertGroup) therefore first asks for every word of a group with
// PREFETCHW, which brings the lines in owned, all requests in flight at
// once, and then reads them. It runs on amd64 with the gc compiler, not in
// the purego build, and only on processors that list the instruction
// (prefetchW); elsewhere prefetchPairs does nothing. A single Insert does
// not prefetch: the call costs what the prefetch saves (BENCHMARKS.md,
// "Tuning constants").

// prefetchForWrite prefetches for writing the words of buckets b1[j] and
// b2[j], j < n (bucket b in word b>>shift: shift is 1 in the packed layout,
// 0 in the others; every word below len(words)).
func prefetchForWrite(words []atomic.Uint64, b1, b2 *[batchGroup]uint64, n int, shift uint64) {
	if prefetchW && n > 0 {
		prefetchPairs(&words[0], &b1[0], &b2[0], n, shift)
	}
}

// prefetchTwo prefetches words[b1] and words[b2] for writing (both below
// len(words)).
func prefetchTwo(words []atomic.Uint64, b1, b2 uint64) {
	if prefetchW {
		prefetchPairs(&words[0], &b1, &b2, 1, 0)
	}
}
