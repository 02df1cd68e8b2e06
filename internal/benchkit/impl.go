package benchkit

import (
	"errors"
	"slices"
)

// Filter is the interface every measured structure is adapted to. Keys are
// KeySize bytes long. Adapters of static structures return ErrUnsupported
// from Insert; structures without deletion set Impl.NoDelete so that the
// runner skips their deletes.
type Filter interface {
	// Insert adds key; it returns an error if the structure is full.
	Insert(key []byte) error
	// Lookup reports whether key may be in the set.
	Lookup(key []byte) bool
	// Delete removes one copy of key and reports whether it found one.
	Delete(key []byte) bool
}

// BatchFilter is implemented by structures that look up and insert several
// keys in one call; an Impl with Batch set must return one. InsertBatch
// inserts keys in order and returns how many it inserted; it stops at the
// first key that does not fit, with a non-nil error.
type BatchFilter interface {
	Filter
	LookupBatch(keys [][]byte, found []bool) int
	InsertBatch(keys [][]byte) (int, error)
}

// TableSizer is implemented by structures whose table size follows from
// their parameters; the others are reported by their heap growth only.
type TableSizer interface {
	TableBytes() int64
}

// Loader is implemented by structures with a load factor (Len over Cap),
// reported after every cell.
type Loader interface {
	Len() int
	Cap() int
}

// ErrUnsupported is returned by adapters for operations their structure
// does not have (Insert on a static filter).
var ErrUnsupported = errors.New("benchkit: operation not supported")

// Impl describes one measured implementation.
type Impl struct {
	Name string // short name used in tables, flags and benchmark names
	Desc string // one line: library, parameters, synchronization

	// Static structures are built once from all keys by New and support
	// only lookups; the fill workload then times New itself.
	Static bool
	// Serial structures are not safe for concurrent use; they run with one
	// goroutine only.
	Serial bool
	// NoDelete structures cannot delete; the mixed workload skips its
	// deletes and counts them as Skipped.
	NoDelete bool
	// Probe marks a baseline that is not a filter: lookups are not checked
	// and no false-positive rate is reported.
	Probe bool
	// Batch runs the fills through InsertBatch and the lookups through
	// LookupBatch, BatchLen keys a call (New must return a BatchFilter);
	// such an impl has no mixed cells.
	Batch bool
	// Only, when not empty, lists the workloads this impl runs; it skips
	// the others (a row that exists for one column of a summary).
	Only []Workload

	// New returns an empty structure for n keys. Static structures are
	// built from keys instead; others are given nil.
	New func(n int, keys *Keys) (Filter, error)
}

// Workload names one measured operation mix.
type Workload string

// The workloads, in the order they run and print.
const (
	// Fill inserts keys 0..n-1 into an empty structure sized for n keys
	// (97% of a five-slot cuckoo filter's slots, 95% of a four-slot
	// one's), each goroutine its own
	// contiguous slice. For static structures it times the build.
	Fill Workload = "fill"
	// LookupPos looks up inserted keys.
	LookupPos Workload = "lookup-pos"
	// LookupNeg looks up keys that were never inserted; the hits are
	// false positives.
	LookupNeg Workload = "lookup-neg"
	// Mixed runs 90% lookups of inserted keys, 5% deletes and 5% inserts
	// on a structure holding MixedFill(n) keys: every delete removes a key
	// of the goroutine's own slice and the insert 10 operations later puts
	// it back, so the load stays put.
	Mixed Workload = "mixed"
)

// Workloads lists every workload in run order.
var Workloads = []Workload{Fill, LookupPos, LookupNeg, Mixed}

// MixedFill returns the number of keys held during the mixed workload:
// 18/19 of n, 90% of the slots of a four-slot cuckoo filter sized for n
// keys (95% load), 92% of a five-slot one's (97%).
func MixedFill(n int) int { return int(int64(n) * 18 / 19) }

// Supports reports whether impl runs workload w with g goroutines, and if
// not, why.
func Supports(impl Impl, w Workload, g int) (bool, string) {
	switch {
	case len(impl.Only) > 0 && !slices.Contains(impl.Only, w):
		return false, "not asked of this row"
	case impl.Serial && g != 1:
		return false, "single goroutine only"
	case impl.Static && w == Fill && g != 1:
		return false, "build is single-threaded"
	case impl.Static && w == Mixed:
		return false, "static"
	case impl.Batch && w == Mixed:
		return false, "no batch form"
	}
	return true, ""
}
