package cuckoo

import "sync/atomic"

// Prefetching a batch's words for writing.
//
// An insert reads its two bucket words and then CASes one of them. When
// another core holds that line, the read brings it in shared, and the CAS
// must then take it over: a second trip to the other core, one per insert,
// which the batch's overlapped reads do not hide (the likely cause of the
// gain below; these VMs expose no cache counters to confirm it).
// InsertBatch therefore first asks for every word of a group with
// PREFETCHW, which brings the lines in owned, all requests in flight at
// once, and then reads them. It runs on amd64 with the gc compiler, not in
// the purego build, and only on processors that list the instruction
// (prefetchW); elsewhere prefetchPairs does nothing.
//
// Measured on the 2-vCPU Xeon (BENCHMARKS.md, "The packed layout:
// speed"), batch fills of 1M keys with two goroutines ran 1.17x (packed
// layout) and 1.09x (five-slot default) as fast with it in eight
// alternating runs (earlier, shorter sets: 1.01x to 1.13x packed, 0.92x
// and 1.04x five-slot), at 9.7 more
// instructions per insert in the default layout (4.4 fewer in the packed
// one, whose group no longer reads the version words). A single Insert
// that prefetched its two words the same way ran at 0.95x to 1.02x of the
// build without it (20 paired runs, both layouts, one and two
// goroutines): the call and the line it does not write cost what the
// prefetch saves, so Insert does not prefetch. The Growing filter's batch
// inserts prefetch the same way (insertGroup): 1.34x and 1.21x the rate
// of a loop of Inserts with one and two goroutines when the keys come from
// a large slice in memory, within the noise (1.05x to 1.11x) when they are
// made on the fly (BENCHMARKS.md, "Growing filter").

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
