package cuckoo

// Making room in a packed table (packed.go): makeRoom (migrate.go) with
// the packed variants of its search and step (pkDiscover and
// pkMoveLockFree, pkMoveLocked, generated from search.go.tmpl and
// move.go.tmpl into zz_search_packed.go and zz_move_packed.go): a
// breadth-first search over the buckets finds a shortest path to a slot
// that may take the fingerprint moving into it, and migrate applies the
// moves backwards, each one atomic. The only difference is the restricted
// top slot: a node remembers the fingerprint that would move into it, and
// a path never frees slot 3 of an odd bucket for a fingerprint of 64 or
// more, nor ends in it.

const (
	// pkMaxPathLen is the most fingerprints one insert relocates in a
	// packed table.
	pkMaxPathLen = 6
	// pkQueueLen bounds the nodes of a search: both roots and four
	// children per node down to depth pkMaxPathLen-1.
	pkQueueLen = 2 * (1<<(2*pkMaxPathLen) - 1) / 3
	// pkShortQueue is the queue pkDiscover tries first
	// (discoverShortQueue is discover's): 48 nodes hold every bucket
	// within two moves (2 + 8 + 32). A search at the packed layout's load
	// expands about three nodes, so zeroing a longer queue costs more
	// than the few searches that outgrow 48 and run again with the full
	// queue (BENCHMARKS.md, "Tuning constants").
	pkShortQueue = 48
)
