// Package cuckoo is a concurrent cuckoo filter: an approximate set of byte
// strings that any number of goroutines may Insert into, Lookup and Delete
// from at once.
//
// # Guarantees
//
// No false negatives: a Lookup (and LookupBatch, Count, and the search in
// Delete) finds a key if at least one Insert of it that returned before
// the call began is not undone by a Delete of it that takes effect before
// the call returns, whatever other goroutines do meanwhile (inserts,
// deletes and relocations of any key, colliding ones included), in both
// modes, however long the call is delayed. The one case this leaves out:
// during one Lookup the key is inserted again and its last older copy
// deleted; the Lookup may then miss it, as if it ran between the two.
//
// Insert, Delete, InsertUnique, Count and each key of InsertBatch are
// linearizable, also against relocations in flight, and so is Lookup
// except in the case above. A Filter's Insert returns ErrFull when it
// finds no path of at most five relocations (six in the packed layout) to
// a free slot; the filter then holds every fingerprint it held and Len is
// exact. Inserting a key k times stores k copies (up to the slots of its
// two buckets), and each Delete removes one; InsertUnique stores a key
// only if it looks absent. Deleting a key
// that was never inserted can remove a colliding key's fingerprint and so
// make that key a false negative: delete only what you inserted.
//
// False positives: Lookup reports a key that was never inserted with
// probability about 2·b·α/(2^f−1), for b slots per bucket of f-bit
// fingerprints at load α. New(n) gives five 12-bit fingerprints per
// 64-bit bucket word; WithFalsePositiveRate picks the layout with the
// least memory for a rate, and WithFingerprintBits and WithSlotsPerBucket
// name one. The README's table "Choosing a layout" gives each layout's
// bits per key, rate and cost.
//
// # Concurrency
//
// Every method of Filter and Growing may be called from any number of
// goroutines at once, except UnmarshalBinary and ReadFrom, which replace
// the filter's contents and must not run concurrently with any other
// method of that filter. Reset removes every fingerprint stored before it
// began; operations that overlap it may or may not survive it. Len is
// exact when no operation is in flight, and always within [0, Cap()].
//
// In LockFree mode (the default) lookups, deletes and inserts into a free
// slot never wait for another goroutine. Inserts that must relocate
// fingerprints wait while Reset sweeps the table or a snapshot (WriteTo,
// MarshalBinary, Clone) copies it, at memory speed; a snapshot in turn
// waits for a relocation that starved behind snapshots coming back to
// back (snapshot.go). A Growing filter's deletes wait for snapshots too,
// and its inserts and deletes for their shard's growth step; its lookups
// never wait. In Locked mode every change takes striped MCS queue locks
// (elided with Intel RTM where the processor supports it; RTMActive);
// lookups read without locks and lock only when a relocation through their
// first bucket overlaps them.
//
// # Growing filters
//
// NewGrowing makes a filter that grows instead of returning ErrFull:
// sixteen shards, each one table that splits a sixteenth of its buckets
// at a step. It keeps the guarantees above while it grows, at a cost in
// memory, false-positive rate and insert time (the README's table); start
// it near the expected count, and use New when the count is known.
//
// # Map of the code
//
// One algorithm (two-phase search, insert into a free slot, breadth-first
// path search, reverse-order migration, Delete, InsertUnique, Count,
// snapshot) varies along three axes:
//
//   - Word codec, where fingerprints, counters and tags sit in a 64-bit
//     word: bucket.go (one bucket per word: five 12-bit, four 12-bit or
//     four 15-bit slots and a migration counter), packed.go (two four-slot
//     8-bit buckets per word, versions beside the table), grow_lane.go
//     (the growing filter's four 15-bit lanes).
//   - Synchronization: LockFree in lockfree.go (CAS), kcas.go (multi-word
//     CAS), twophase.go (the search and its proof), migrate.go and
//     packed_migrate.go (path search and moves), snapshot.go (the gate
//     between moves and snapshots); Locked in locked.go, packed_locked.go,
//     mcs.go (queue locks) and htm_* (RTM elision).
//   - Table shape: filter.go (a fixed table) against grow.go,
//     grow_table.go and grow_unique.go (a growing one); shard.go spreads
//     counters over cache lines.
//
// Beside them: batch.go (batches), unique.go (InsertUnique, Count),
// keys.go and grow_keys.go (the String and Hash forms), encode.go and
// grow_encode.go (the format of FORMAT.md), stats.go, precision.go.
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
//	InsertUnique, Count: one instant (decidePair)  unique.go         TestInsertUniqueAgainstMove, TestGrowingInsertUniqueAgainstMove, TestCountAgainstDeleteThenInsert (race builds)
//	Locked: Count under both stripes' locks        unique.go         TestUniqueOwnersAgainstRelocation
//	Locked: destination stored before source       locked.go         TestLockedMoveDestinationFirst; checkRelocation (race builds)
//	path code, shortest path, short-queue fallback migrate.go        TestBFSNodeEncoding, TestDiscoverAndMakeRoom
//	migration keeps every fingerprint; stale path  migrate.go        TestDiscoverAndMakeRoom, TestMakeRoomRediscoversStalePath, TestMoveStaleStep
//	failed insert changes nothing, Len exact       filter.go         TestFailedInsertChangesNothing, TestErrFull
//	K-CAS atomicity, helping, descriptor reuse     kcas.go           TestKCASSequential, TestKCASTransfers, TestKCASMixedWithCAS, TestDescPoolLeases
//	MCS exclusion, bounded bypass, no lost wake-up mcs.go           TestMCSMutualExclusion, TestMCSStateMachine, TestMCSFIFO, TestStripeNoDeadlock, TestLockBucketsShapes; checkStripeOrder (race builds)
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
//	Growing: lanes, splits, youngest-match delete  grow_lane.go, grow_table.go  TestGrowLaneArithmetic, TestGrowStepsKeepMatches, TestGrowingDeleteYoungestMatch
//	Growing: snapshots, format, the bound          grow_encode.go    TestGrowingSnapshotUnderLoad, TestGrowingDecodeRejects, TestGrowingEncodingRoundTrip, TestGrowingMaxCapacity
//	snapshots keep keys against colliding deletes  encode.go, grow_table.go  TestSnapshotAgainstCollidingKeys, TestGrowingSnapshotAgainstCollidingDeletes (race builds: stall points)
