package cuckoo

import "sync/atomic"

// Stats is a snapshot of a filter's size and of the rare events of its
// synchronization, for metrics and capacity planning. Filter.Stats returns
// one.
//
// The event counters count from New (UnmarshalBinary, ReadFrom and Reset
// keep them) and only grow. They are read one shard at a time while other
// goroutines may be adding to them, so a snapshot taken during operations
// is approximate, as are Len and the figures derived from it.
type Stats struct {
	// Mode, FingerprintBits and SlotsPerBucket are the filter's
	// configuration.
	Mode            Mode
	FingerprintBits int
	SlotsPerBucket  int
	// Len and Cap are the filter's Len() and Cap().
	Len, Cap int
	// LoadFactor is Len/Cap (0 for a zero Filter).
	LoadFactor float64
	// BitsPerKey is the table's size in bits (64 per word: one bucket,
	// or two in the packed layout of 8-bit fingerprints)
	// divided by Len: the memory each stored key costs. It is 0 while the
	// filter is empty.
	BitsPerKey float64
	// FalsePositiveRate is the expected false-positive rate of Lookup at
	// the current load: 2·b·LoadFactor/(2^f-1) for b slots per bucket, the
	// expected number of the 2·b slots of an absent key's two buckets that
	// hold its fingerprint.
	FalsePositiveRate float64

	// Relocations counts fingerprints moved from one of their buckets to
	// the other to make room for an insert (each move one K-CAS in
	// LockFree mode, one locked section in Locked mode).
	Relocations uint64
	// Full counts inserts that returned ErrFull (Insert, InsertBatch,
	// InsertUnique and their String and Hash forms).
	Full uint64
	// KCASHelps counts the times an insert, delete or reset found a bucket
	// holding another goroutine's K-CAS in progress (a relocation or an
	// InsertUnique) and completed it before going on (LockFree mode).
	KCASHelps uint64
	// KCASRetries counts, in LockFree mode, the K-CASes of relocations
	// and of InsertUnique that failed because a bucket changed meanwhile
	// and were tried again.
	KCASRetries uint64
	// LookupRetries counts searches (Lookup, Delete, Count and their
	// forms) whose reads could not decide: in LockFree mode searches that
	// read their buckets again because a relocation moved the counter or
	// version they were checked against (their first bucket's) while they
	// read; in Locked mode lookups and counts that took the locks because
	// a relocation went through their first bucket.
	LookupRetries uint64
	// Lock reports Locked mode's lock waits (Lock.Waits: acquisitions that
	// found the stripe held and queued for it) and its RTM elision
	// (commits, aborts, fallbacks to the locks); see LockStats. It is zero
	// in LockFree mode.
	Lock LockStats
}

// Stats returns the filter's size and event counters. It reads a few
// hundred counters and writes nothing, so a metrics scrape every second
// costs the filter's operations nothing. See Stats for what each field
// counts.
func (f *Filter) Stats() Stats {
	s := Stats{
		Mode:            f.mode,
		FingerprintBits: int(f.lay.f),
		SlotsPerBucket:  f.SlotsPerBucket(),
		Len:             f.Len(),
		Cap:             f.Cap(),
		Relocations:     f.stats.sum(statRelocations),
		Full:            f.stats.sum(statFull),
		KCASHelps:       f.stats.sum(statKCASHelps),
		KCASRetries:     f.stats.sum(statKCASRetries),
		LookupRetries:   f.stats.sum(statLookupRetries),
		Lock:            f.LockStats(),
	}
	if s.Cap > 0 {
		s.LoadFactor = float64(s.Len) / float64(s.Cap)
		s.FalsePositiveRate = 2 * float64(f.SlotsPerBucket()) * s.LoadFactor / float64(f.fpRange)
	}
	if s.Len > 0 {
		s.BitsPerKey = float64(64*len(f.t.words)) / float64(s.Len)
	}
	return s
}

// statID names one event counter of statCounters.
type statID int

const (
	statRelocations statID = iota
	statFull
	statKCASHelps
	statKCASRetries
	statLookupRetries
	numStats
)

// statCounters counts rare events (never one per plain Insert or Lookup),
// spread over cache-line-sized shards like shardedCount: each goroutine adds
// to the shard of its stack (shard.go), and only the sums are meaningful.
// Counting an event writes a line that the goroutine most likely owns
// already, so relocating goroutines on two cores do not pass a counter's
// line back and forth.
type statCounters struct {
	shardSet[statShard]
}

type statShard struct {
	n [numStats]atomic.Uint64
	_ [64 - numStats*8]byte
}

func (c *statCounters) add(id statID, d uint64) {
	c.mine().n[id].Add(d)
}

func (c *statCounters) sum(id statID) uint64 {
	var n uint64
	for i := range c.shards {
		n += c.shards[i].n[id].Load()
	}
	return n
}

// helpWord helps the K-CAS whose reference v an insert, delete or reset
// found in a bucket word, and counts it (Stats.KCASHelps).
func (f *Filter) helpWord(v uint64) {
	f.stats.add(statKCASHelps, 1)
	f.t.helpWord(v)
}
