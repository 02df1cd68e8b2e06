package cuckoo

// Stats is a snapshot of a filter's size and rare synchronization events.
// The event counters count from New (loads and Reset keep them); read while
// other goroutines work, a Stats is approximate, as Len is.
type Stats struct {
	// The filter's Mode(), FingerprintBits(), SlotsPerBucket(), Len(), Cap().
	Mode              Mode
	FingerprintBits   int
	SlotsPerBucket    int
	Len, Cap          int
	LoadFactor        float64 // Len/Cap; 0 for a zero Filter
	BitsPerKey        float64 // the table's bits per stored key; 0 when empty
	FalsePositiveRate float64 // 2·b·LoadFactor/(2^f-1), the package doc's rate at this load
	Relocations       uint64  // fingerprints moved to make room for an insert
	Full              uint64  // inserts (of every form) that returned ErrFull
	// KCASHelps (LockFree): K-CASes of other goroutines (relocations,
	// InsertUnique) that an insert, delete or reset found and completed.
	KCASHelps uint64
	// KCASRetries (LockFree): K-CASes of relocations and InsertUnique tried
	// again because a bucket changed meanwhile.
	KCASRetries uint64
	// LookupRetries: searches left undecided by a relocation through their
	// first bucket; LockFree ones read again, Locked ones take the locks.
	LookupRetries uint64
	Lock          LockStats // Locked mode's LockStats; zero in LockFree mode
}

// Stats returns the filter's size and event counters, writing nothing.
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

type statID int

const (
	statRelocations statID = iota
	statFull
	statKCASHelps
	statKCASRetries
	statLookupRetries
	numStats
)

// statCounters counts rare events (shard.go).
type statCounters struct{ counters }

// resize gives c 1<<bits shards, keeping its sums.
func (c *statCounters) resize(bits uint) {
	old := c.counters
	c.init(bits)
	for id := range statID(numStats) {
		c.shards[0].n[id].Store(old.sum(id))
	}
}

// helpWord helps the K-CAS whose reference v was found in a word, counted.
func (f *Filter) helpWord(v uint64) {
	f.stats.add(statKCASHelps, 1)
	f.t.helpWord(v)
}
