package cuckoo

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// stackShard returns a shard in [0, 1<<bits), bits in [0, 63], chosen by the
// calling goroutine's stack: stacks are disjoint and at least 2 KiB, so a
// local's address >> 11, mixed, is the same on every call from one goroutine
// (until its stack moves) and usually differs between goroutines. The two
// final shifts are >> (64-bits) (0 for bits = 0) without a test for 64.
func stackShard(bits uint) uint {
	var local byte
	return uint(uint64(uintptr(unsafe.Pointer(&local))>>11) * 0x9e3779b97f4a7c15 >> 1 >> ((63 - bits) & 63))
}

// shardSet is a set of shards of T, each padded to a cache line: a counter
// every insert updates is spread over shards, lest its line travel between
// cores on every operation, its value the shards' sum.
type shardSet[T any] struct {
	shards     []T
	bits       uint
	mul, shift uint64 // mine's stackShard: mul 0 for one shard
}

func (s *shardSet[T]) init(bits uint) {
	s.shards, s.bits, s.mul, s.shift = make([]T, 1<<bits), bits, 0x9e3779b97f4a7c15*uint64(min(bits, 1)), uint64(64-bits)&63
}

// mine is shards[stackShard(bits)] by mul and shift: in bounds, unchecked.
func (s *shardSet[T]) mine() *T {
	var local byte
	i := uintptr(uint64(uintptr(unsafe.Pointer(&local))>>11) * s.mul >> (s.shift & 63))
	return (*T)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s.shards)), i*unsafe.Sizeof(*new(T))))
}

// A filter of m words gets two shards per P (GOMAXPROCS at creation), so
// that running goroutines rarely share one, but at most 1<<maxShardBits,
// one per 16 words, and past 1<<minCappedShardBits one (64 bytes) per
// wordsPerShard words (1/2048 of the table): bits per key hold on any
// machine, and small filters stay small. The count, written by every insert
// and delete, may have one per wordsPerCountShard words: with fewer, cores
// take turns with each shard's line (BENCHMARKS.md, "Tuning constants").
const (
	maxShardBits       = 6
	minCappedShardBits = 2
	wordsPerShard      = 16384
	wordsPerCountShard = 2048
)

func shardBitsFor(m uint64) uint      { return shardBitsPer(m, wordsPerShard) }
func countShardBitsFor(m uint64) uint { return shardBitsPer(m, wordsPerCountShard) }

func shardBitsPer(m, wordsPer uint64) uint {
	bits := uint(0)
	for 1<<bits < 2*runtime.GOMAXPROCS(0) && bits < maxShardBits && 16<<(bits+1) <= m &&
		(bits < minCappedShardBits || wordsPer<<(bits+1) <= m) {
		bits++
	}
	return bits
}

// counters is a set of counters indexed by statID (the count uses 0), each
// the sum of its shards; a delta may be negative, mod 2^64.
type counters struct{ shardSet[counterShard] }

type counterShard struct {
	n [numStats]atomic.Uint64
	_ [64 - numStats*8]byte // a cache line
}

func (c *counters) add(id statID, d uint64) { c.mine().n[id].Add(d) }

func (c *counters) sum(id statID) uint64 {
	var n uint64
	for i := range c.shards {
		n += c.shards[i].n[id].Load()
	}
	return n
}

// shardedCount is the number of stored fingerprints (shards chosen by
// bucket would be shared by every goroutine filling a filter).
type shardedCount struct{ counters }

func (c *shardedCount) add(d int64) { c.mine().n[0].Add(uint64(d)) }
func (c *shardedCount) sum() int64  { return int64(c.counters.sum(0)) }

// kept takes back the count of an insert that failed: an insert counts its
// key before it reads the table, so that the count's locked add waits on no
// miss of the insert's (BENCHMARKS.md, "Tuning constants").
func (f *Filter) kept(added bool) error {
	if !added {
		f.count.add(-1)
		return ErrFull
	}
	return nil
}
