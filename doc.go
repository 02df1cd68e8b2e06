// Package cuckoo is a concurrent cuckoo filter: an approximate set of byte
// strings that many goroutines may Insert into, Lookup and Delete from at
// once.
//
// # Guarantees
//
// False negatives are impossible: Lookup reports true for every key that was
// inserted and has not been deleted, including while other goroutines insert,
// delete and relocate fingerprints, however long the Lookup is delayed
// between its reads. Precisely, a Lookup finds a key if at least one
// Insert of it that returned before the call began is not undone by a
// Delete of it that takes effect before the call returns, whatever other
// keys (colliding ones included) do meanwhile (see "Duplicates" below).
//
// False positives happen at a rate of about 2·b·α/(2^f-1) for b slots per
// bucket, fingerprint size f and load factor α: Lookup may report true for
// a key that was never inserted. New(n) gives five 12-bit fingerprints per
// 64-bit bucket word, sized for 97% load: 13.2 bits per key and 0.237% at
// capacity. WithFalsePositiveRate chooses the bucket layout from the rate
// a filter may have when it holds its capacity: the packed layout of 8-bit
// fingerprints (8.8 bits per key, 2.89% at 92% load) for rates of 2.89%
// and more, New's default for 0.237% and more, four 12-bit fingerprints
// (16.8 bits per key, 0.186% at 95% load) down to 0.186%, four 15-bit ones
// (16.8 bits per key, 0.023%) below. WithFingerprintBits and
// WithSlotsPerBucket name a layout directly.
//
// The packed layout, WithFingerprintBits(8), puts two buckets of four 8-bit
// slots in one 64-bit word. The word's top slot (slot 3 of each odd bucket)
// takes only fingerprints 1 to 63, so the word's two high bits stay free
// for the K-CAS tags; a query matches every slot with probability 1/255 all
// the same, so this costs placement freedom, not precision. The word has
// no migration counter: relocations are counted in striped 64-bit version
// words outside the table (a power of two: 64 for tables of 512 to 16,383
// words, one per 8 to 15 words in smaller ones (one in all below 16
// words), one per 128 to 255 words in larger ones, 8 KiB at 1M keys, at
// most 16,384): a move adds one to its destination bucket's version, in
// the same K-CAS as the move in LockFree mode and, in Locked mode, between
// the move's store of the destination and its store of the source. They
// never wrap, so this
// layout needs no epoch; a lookup reads its first bucket's version, both
// words and the version again, and equal versions prove absence (packed.go,
// packed_locked.go).
//
// Insert returns ErrFull when it finds no room; the filter is then unchanged
// apart from fingerprints it relocated between their two buckets: nothing is
// lost. New(n) sizes the table for n keys at 97% load with five-slot
// buckets, 95% with four, 92% in the packed layout. In the tests, filters
// for 2,000 keys or more always took at least n keys before the first
// ErrFull (typically 96-97.5% of Cap() with four slots, 98.3-99.1% with
// five; packed tables 95.3-96.7% at 2,000 keys, 93.48-94.04% at 1M, 93.30%
// at 32M with fixed seeds; 92.92% the lowest of 80 random seeds at 1M).
// Smaller ones, whose few buckets leave relocation little room, get New's
// spare slots (32 or more): with them, 4 of 7.2 million tables
// for 1 to 1,000 keys took fewer than n keys (100,000 random seeds per
// layout at 18 sizes), against 0.6-1.6% of seeds at 100 to 300 keys
// without them.
//
// Duplicates: inserting a key k times stores k copies (at most 10 fit, 8
// with four-slot buckets: the slots of its two buckets; in the packed
// layout 8, or 6 or 7 when the fingerprint is 64 or more and a bucket is
// odd, whose top slot cannot take it; one bucket's slots, 3 to 5, for a
// key whose two buckets are one bucket, about one key in as many as the
// table has buckets); each Delete removes one. Deleting a
// key that was never inserted can remove the fingerprint of a different key
// that collides with it, creating a false negative for that key: only
// delete keys you inserted, after their Insert returned. A Lookup that overlaps both an Insert of a key
// and the Delete of the key's last older copy may miss it, as if it ran
// after the Delete and before the Insert.
//
// # Quick tour
//
//	f, err := cuckoo.New(1_000_000) // a random seed: placement nobody can aim at
//	err = f.Insert(key)             // ErrFull when no room could be made
//	ok := f.Lookup(key)             // never false for a key inserted and not deleted
//	ok = f.Delete(key)              // removes one copy
//
//	added, err := f.InsertUnique(key) // insert if absent, atomically (CF.ADDNX)
//	n := f.Count(key)                 // copies stored, never fewer than inserted (CF.COUNT)
//
//	err = f.InsertString(s)           // string keys, not copied: every method has a String form
//	ok = f.LookupHash(xxhash.Sum64(key)) // pre-hashed keys: every method has a Hash form
//	k, err := f.InsertBatch(keys)     // batches overlap cache misses (also String and Hash)
//
//	st := f.Stats() // size, load, expected false-positive rate, event counters (CF.INFO)
//
// InsertUnique adds a key only if its fingerprint is in neither of its
// buckets, linearizably in both modes, so goroutines racing on one key leave
// one copy. Like Lookup it can be fooled by a false positive: it may refuse
// a key because another key with the same fingerprint and buckets is stored.
// Count returns the copies of a key's fingerprint in its buckets, including
// those of colliding keys. The Hash forms take the key's 64-bit hash (for
// the same placement as the []byte forms, xxhash.Sum64 of the key); see
// InsertHash for what they assume of it. Stats counts only rare events
// (relocations, ErrFull results, K-CAS helps and retries, search retries,
// lock waits, RTM transactions) in per-goroutine shards, so it adds no
// shared write to Insert and Lookup.
//
// # Growing filters
//
// When the number of keys is not known up front, NewGrowing makes a filter
// that grows instead of returning ErrFull:
//
//	g, err := cuckoo.NewGrowing(10_000)  // the first table's capacity
//	err = g.Insert(key)                  // grows the key's table when it is full
//	ok := g.Lookup(key)                  // never false for a key inserted and not deleted
//
// It is sixteen shards (a key's hash picks one), each one table of
// four-slot buckets that grows by steps: each step splits the next
// sixteenth of the buckets of the table's level in two, so a shard stays
// between about 85% and 90% full. Each entry keeps, beside a 6-bit tag,
// the next bits of its key's bucket index, and a split moves each entry
// of a bucket to the half one of those bits names, so no key is needed
// and a lookup reads two buckets at every size. Inserts and deletes that
// arrive during a step help copy the table and wait for it, and deletes
// wait while a snapshot copies the tables; lookups never wait (they read
// the old table until the copy is done), and deletes and reinserts stay
// safe while it grows (grow.go and grow_table.go have the argument). What
// it costs: an entry compares one bit fewer for each split of its bucket
// it lived through (14 bits fresh, at least 6), so the false-positive
// rate was 1.16 times New(n)'s five-slot default's after a thousandfold
// growth and 1.41 times after 3,800-fold (FalsePositiveRate reports it
// from the entries stored); memory was 1.37 times New(n)'s (18.2 against
// 13.3 heap bits per key at 1M keys, at most 1.41 times up to 2M); and
// since its shards stay near full, a fill costs about 2.6 times the
// instructions of one that doubled its tables (figures in
// BENCHMARKS.md). Give the first capacity near the expected count; use a
// fixed Filter when the count is known.
//
// New draws a random seed for each filter, so that nobody can choose keys
// that all fall into one pair of buckets and make inserts fail; WithSeed
// sets one for reproducible placement. Seed() and the encoding reveal it.
//
// # Concurrency
//
// Every method may be called from any number of goroutines at once. In the
// default LockFree mode Insert, Lookup and Delete are lock-free and
// linearizable with the exception above. In Locked mode every change takes
// striped queue locks (elided with Intel RTM where the processor supports
// it); a Lookup reads without locks and takes them only when a relocation
// through its buckets overlaps it; all three are linearizable. Len and
// LoadFactor are exact when no operation is in flight, and always within
// [0, Cap()] and [0, 1]. Reset empties the filter: every fingerprint stored
// before it began is gone when it returns; operations overlapping it may or
// may not survive it. In LockFree mode the only waiting is for work at
// memory speed: while Reset sweeps the table or a snapshot copies it,
// inserts that need to relocate fingerprints wait for it (see Mode); a
// Growing filter's deletes wait for snapshots too, and its writes for
// growth steps (see Growing). Snapshots and Reset, for their part, wait for
// the relocations in progress, and when relocations starve behind
// snapshots that come back to back, for one of them to get in.
//
// # Design
//
// The table is an array of 64-bit words, one per bucket of five (or four)
// fingerprint slots, with a per-bucket migration counter in the spare bits
// (bucket.go), or in the packed layout two buckets of four 8-bit slots per
// word, with the counters in version words beside the table (packed.go).
// A key hashes (xxhash) to a fingerprint and a bucket; its other bucket is
// derived from the fingerprint, so fingerprints can be relocated without the
// key. Insert puts the fingerprint into an empty slot with one CAS; when both
// buckets are full it searches breadth-first for a path to an empty slot and
// relocates fingerprints backwards along it, each move one multi-word CAS
// of the two bucket words (migrate.go, kcas.go), so that no operation ever
// sees a fingerprint half moved (twophase.go). A Lookup that
// misses reads its buckets again and uses the migration counters to tell a
// miss from a fingerprint in flight (twophase.go). LookupBatch and
// InsertBatch do the same for many keys with their cache misses overlapped
// (batch.go, packed.go).
//
// # Persistence
//
// MarshalBinary, UnmarshalBinary, WriteTo and ReadFrom use the versioned,
// checksummed format of FORMAT.md. WriteTo writes a snapshot of a live
// filter, copied to memory first so that relocations never wait for the
// writer; see its documentation for what a concurrent snapshot guarantees.
//
// The algorithms follow the lock-free concurrent cuckoo filter of the paper
// in Journal of Software (软件学报) 2025 36(7) (two-phase lookup, migration
// counters, K-CAS relocation, BFS path discovery), Harris, Fraser and Pratt's
// multi-word CAS with Arbel-Raviv and Brown's descriptor reuse, Fan et al.'s
// cuckoo filter (CoNEXT 2014), and Mellor-Crummey and Scott's queue lock.
package cuckoo

// Proof obligations and their tests (for maintainers; not package
// documentation). Each guarantee of the design brief and each claim argued
// in a comment beside the code, with the tests that would fail if it broke.
// Stress tests run under -race with more goroutines than processors; under
// -race the checks of invariants.go also run on every relocation step.
//
//	guarantee or claim                             where argued      tests
//	no false negatives under concurrent churn      doc.go            TestNoFalseNegativesUnderChurn, TestLookupBatchNoFalseNegatives, TestInsertBatchConcurrent
//	two-phase retry decision (d1 >= 2, wrap)       twophase.go       TestPhase2Decision, TestTwoPhaseInterleavings
//	a wrap counted in its bucket's stripe's epoch  twophase.go, locked.go  TestMoveCountsWrapInItsStripe, TestLookupSurvivesCounterWrap
//	every search reads its first bucket's epoch    twophase.go       TestSearchesReadTheirFirstBucketsEpoch (race builds: stall points)
//	no search miss against colliding keys' churn  twophase.go, grow_table.go  TestSearchAgainstCollidingKeys, TestGrowingSearchAgainstCollidingDeletes (race builds: stall points)
//	counter +1 mod 2^c per step, wraps             bucket.go         TestBumpCounterWraps, TestDiscoverAndMakeRoom, TestMoveStaleStep; checkRelocation (race builds)
//	LockFree: a move is one K-CAS; every operation linearizable against moves; copies invariant  twophase.go, unique.go  TestRelocationModel (every interleaving; fails on the two-CAS move and on threshold 3), TestUniqueOwnersAgainstRelocation, TestQuiescentCopiesEqualLen, TestCountUnderRelocation
//	Locked: Count under both stripes' locks        unique.go         TestUniqueOwnersAgainstRelocation
//	Locked: destination stored before source       locked.go         TestLockedMoveDestinationFirst; checkRelocation (race builds)
//	path code, shortest path, short-queue fallback migrate.go        TestBFSNodeEncoding, TestDiscoverAndMakeRoom
//	migration keeps every fingerprint; stale path  migrate.go        TestDiscoverAndMakeRoom, TestMakeRoomRediscoversStalePath, TestMoveStaleStep
//	failed insert changes nothing, Len exact       filter.go         TestFailedInsertChangesNothing, TestErrFull
//	K-CAS atomicity, helping, descriptor reuse     kcas.go           TestKCASSequential, TestKCASTransfers, TestKCASMixedWithCAS, TestDescPoolLeases
//	MCS exclusion, FIFO, ascending stripe order    mcs.go            TestMCSMutualExclusion, TestMCSFIFO, TestStripeNoDeadlock, TestLockBucketsShapes; checkStripeOrder (race builds)
//	RTM elision policy and encoding                htm_amd64.go      TestRTMForcedOff, TestRTMForcedOn, TestRTMTxRetryable, TestHTMCPUID, TestHTMEncoding
//	snapshot gate: no move overlaps a snapshot     snapshot.go       TestSnapshotGateExcludes, TestSnapshotGateStress, TestEncodeSnapshotUnderLoad
//	snapshot gate: moves get in between snapshots  snapshot.go       TestMoverGetsInBetweenOverlappingSnapshots, TestRelocationsGetInBetweenOverlappingSnapshots, TestGrowingDeletesGetInBetweenOverlappingSnapshots
//	false-positive rate within 10% of 2bα/(2^f-1)  doc.go            TestFalsePositiveRate, TestFalsePositiveRateClasses
//	n keys fit New(n); target load from 1,000 keys doc.go            TestLoadFactorAtFirstErrFull, TestSmallCapacityHolds
//	New(n) is the standard class (5 x 12 bits)     filter.go         TestDefaultLayout
//	Insert, Lookup, Delete allocate nothing        doc.go            TestAllocs, TestKCASAllocs, TestLockAllocs
//	bad input: a clear error, never a panic        filter.go, encode.go  TestNewBadArguments, TestEncodeBadInput, FuzzUnmarshalBinary, FuzzReadFrom
//	no miss however long a search stalls (epoch)   twophase.go, locked.go  TestLookupSurvivesCounterWrap
//	Reset removes every older fingerprint          lockfree.go       TestResetRemovesEveryOldFingerprint
//	relocations never wait for a snapshot's writer encode.go         TestWriteToSlowWriterDoesNotBlockInserts, TestWriteToWriterInsertsIntoFilter
//	one pool: chunks, free lists, ABA tag          pool.go           TestPoolChunkOf, TestDescPoolLeases, TestMCSPoolConserved, TestKCASTransfers
//	InsertUnique linearizable, one copy per key    unique.go         TestInsertUniqueRace
//	Count never undercounts                        unique.go         TestCountNeverUndercounts, TestCountUnderRelocation
//	hash algorithm 2 placement                     filter.go, FORMAT.md  TestEncodeHashAlgorithm2, TestCraftedCollisionsDoNotTransfer
//	Growing: no false negatives while it grows     grow.go           TestGrowingNoFalseNegativesUnderGrowth, TestGrowingFrom1000To10M, TestGrowingLookupBatchAgrees
//	Growing: lanes, splits, youngest-match delete  grow_lane.go, grow_table.go  TestGrowLaneArithmetic, TestGrowSplitKeepsMatches, TestGrowingDeleteYoungestMatch
//	Growing: snapshots, format, the bound          grow_encode.go    TestGrowingSnapshotUnderLoad, TestGrowingDecodeRejects, TestGrowingEncodingRoundTrip, TestGrowingMaxCapacity
//	snapshots keep keys against colliding deletes  encode.go, grow_table.go  TestSnapshotAgainstCollidingKeys, TestGrowingSnapshotAgainstCollidingDeletes (race builds: stall points)
