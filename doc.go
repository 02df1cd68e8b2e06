// Package cuckoo is a concurrent cuckoo filter: an approximate set of byte
// strings that any number of goroutines may Insert into, Lookup and Delete
// from at once.
//
// # Guarantees
//
// No false negatives: a Lookup (and LookupBatch, Count, and the search in Delete)
// finds a key if at least one Insert of it that returned before the call began is
// not undone by a Delete of it that takes effect before the call returns,
// whatever other goroutines do meanwhile (colliding keys and relocations
// included), in both modes, however long the call is delayed. The one case this
// leaves out: during one Lookup the key is inserted again and its last older copy
// deleted; the Lookup may then miss it, as if it ran between the two. Insert,
// Delete, InsertUnique, Count and each key of InsertBatch are linearizable, also
// against relocations in flight, and so is Lookup except in that case.
//
// Insert returns ErrFull when it finds no path of at most five relocations
// (six in the packed layout) to a free slot; the filter then holds every
// fingerprint it held and Len is exact. Inserting a key k times stores k
// copies (up to the slots of its two buckets) and each Delete removes one;
// InsertUnique stores a key only if it looks absent. Deleting a key never
// inserted can remove a colliding key's fingerprint, a false negative for
// that key: delete only what you inserted. A Growing filter (NewGrowing)
// grows instead of returning ErrFull and keeps these guarantees meanwhile.
//
// A key never inserted is reported with probability about 2·b·α/(2^f−1) for b
// slots of f bits per bucket at load α (README.md, "Choosing a layout").
//
// # Concurrency
//
// Every method is safe for concurrent use, except that ReadFrom and
// UnmarshalBinary, which replace a filter's contents, must not run concurrently
// with other methods of that filter. Reset removes every fingerprint stored
// before it began; operations that overlap it may or may not survive it.
//
// In LockFree mode (the default) lookups, deletes and inserts into a free slot
// never wait. Inserts that relocate fingerprints wait for Reset and for
// snapshots (WriteTo, MarshalBinary, Clone) while these sweep or copy the table
// at memory speed, never for a snapshot's io.Writer; back-to-back snapshots
// cannot shut them out. A Growing filter's deletes wait for snapshots too, and
// its inserts and deletes for their shard's growth step. In Locked mode every
// change takes striped queue locks, elided with Intel RTM where the processor
// has it (RTMActive); lookups lock only when a relocation overlaps.
//
// # Map of the code
//
// ARCHITECTURE.md maps the code and each claim's tests. Sources: the lock-free
// cuckoo filter of Journal of Software (软件学报) 2025 36(7), Harris, Fraser and
// Pratt's multi-word CAS with Arbel-Raviv and Brown's descriptor reuse, Fan et
// al.'s cuckoo filter (CoNEXT 2014), Mellor-Crummey and Scott's queue lock.
package cuckoo
