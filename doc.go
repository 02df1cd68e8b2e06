// Package cuckoo is a concurrent cuckoo filter: an approximate set of byte
// strings that many goroutines may Insert into, Lookup and Delete from at
// once.
//
// # Guarantees
//
// False negatives are impossible: Lookup reports true for every key that was
// inserted and has not been deleted, including while other goroutines insert,
// delete and relocate fingerprints. Precisely, a Lookup finds a key if some
// copy of the key's fingerprint stays in the filter for the whole call (see
// "Duplicates" below for the one corner this excludes).
//
// False positives happen at a rate of about 8·α/2^f for fingerprint size f
// and load factor α (0.19% at f=12 and 95% load, 3% at f=8): Lookup may
// report true for a key that was never inserted.
//
// Insert returns ErrFull when it finds no room; the filter is then unchanged
// apart from fingerprints it relocated between their two buckets: nothing is
// lost. New(n) sizes the table for n keys at 95% load. In the tests, filters
// for 2,000 keys or more always took at least n keys before the first
// ErrFull (typically 96-97.5% of Cap()); smaller ones, whose few buckets
// leave relocation little room, can fill earlier (New(16) took 14 keys with
// one seed, New(1768) at f=8 took 1753).
//
// Duplicates: inserting a key k times stores k copies (at most 8 fit, the
// slots of its two buckets); each Delete removes one. Deleting a key that was
// never inserted can remove the fingerprint of a different key that
// collides with it, creating a false negative for that key: only delete keys
// you inserted. If a Lookup overlaps both an Insert of a new copy and the
// Delete of the last older copy of the same fingerprint, it may miss.
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
// [0, Cap()] and [0, 1].
// Reset empties the filter; operations overlapping it may or may not survive
// it.
//
// # Design
//
// The table is an array of 64-bit words, one per bucket of four fingerprint
// slots, with a per-bucket migration counter in the spare bits (bucket.go).
// A key hashes (xxhash) to a fingerprint and a bucket; its other bucket is
// derived from the fingerprint, so fingerprints can be relocated without the
// key. Insert puts the fingerprint into an empty slot with one CAS; when both
// buckets are full it searches breadth-first for a path to an empty slot and
// relocates fingerprints backwards along it, each move a multi-word CAS of
// two buckets (migrate.go, kcas.go). A Lookup that misses reads its buckets
// again and uses the migration counters to tell a miss from a fingerprint in
// flight (twophase.go). LookupBatch and InsertBatch do the same for many
// keys with their cache misses overlapped (batch.go).
//
// # Persistence
//
// MarshalBinary, UnmarshalBinary, WriteTo and ReadFrom use the versioned,
// checksummed format of FORMAT.md. WriteTo streams a snapshot of a live
// filter; see its documentation for what a concurrent snapshot guarantees.
//
// The algorithms follow the lock-free concurrent cuckoo filter of the paper
// in Journal of Software (软件学报) 2025 36(7) (two-phase lookup, migration
// counters, K-CAS relocation, BFS path discovery), Harris, Fraser and Pratt's
// multi-word CAS with Arbel-Raviv and Brown's descriptor reuse, Fan et al.'s
// cuckoo filter (CoNEXT 2014), and Mellor-Crummey and Scott's queue lock.
package cuckoo
