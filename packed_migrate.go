package cuckoo

// Making room in a packed table: makeRoom (migrate.go) with pkDiscover and
// pkMoveLockFree/pkMoveLocked (search.go.tmpl, move.go.tmpl). A node
// carries the fingerprint that would move into it, and a path never frees
// slot 3 of an odd bucket for a fingerprint of 64 or more, nor ends there.

const (
	// pkMaxPathLen is the most fingerprints one insert relocates.
	pkMaxPathLen = 6
	// pkQueueLen bounds a search's nodes: both roots and four children
	// per node down to depth pkMaxPathLen-1.
	pkQueueLen = 2 * (1<<(2*pkMaxPathLen) - 1) / 3
	// pkShortQueue is pkDiscover's first queue (migrate.go says why two):
	// every bucket within two moves (2+8+32); a search at the packed load
	// expands about three nodes (BENCHMARKS.md, "Tuning constants").
	pkShortQueue = 48
)
