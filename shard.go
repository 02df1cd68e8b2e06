package cuckoo

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Goroutine-affine sharding.
//
// A counter that every insert and delete updates must not live in one cache
// line: with two cores the line would travel between them on every
// operation. Spreading it over shards only helps if each goroutine keeps to
// its own shard, and Go gives a goroutine no identity to choose one by. Its
// stack does: every goroutine runs on its own stack, stacks are disjoint and
// at least 2 KiB, and a local variable's address lies inside the running
// goroutine's stack. So the address of a local, shifted by 11 bits and mixed,
// picks a shard that is the same on every call from one goroutine (until its
// stack grows and moves, which only changes the shard) and usually differs
// between goroutines. Nothing depends on the choice for correctness: the
// shards' sum is the value, whichever shard an update lands in.

// stackShard returns a shard index in [0, 1<<bits) chosen by the calling
// goroutine's stack: the top bits bits of the mixed address. bits must be
// in [0, 63]. The shift is written as >>1 >> ((63-bits)&63), the same
// value as >> (64-bits) for those bits (0 for bits = 0), so that a
// variable bits needs no test for a shift of 64 or more (every insert
// pays for that test otherwise).
func stackShard(bits uint) uint {
	var local byte
	return uint(uint64(uintptr(unsafe.Pointer(&local))>>11) * 0x9e3779b97f4a7c15 >> 1 >> ((63 - bits) & 63))
}

// shardSet is a set of cache-line-sized shards of type T (each T pads
// itself to 64 bytes), one of which a goroutine picks by its stack. A
// filter sizes its shard sets by the processors and its table
// (shardBitsFor): as many as there are goroutines that can run at once,
// twice over, so that two running goroutines rarely share a line, but no
// more than a small table needs, so that a process can hold many small
// filters.
type shardSet[T any] struct {
	shards []T
	bits   uint
}

func (s *shardSet[T]) init(bits uint) {
	s.shards = make([]T, 1<<bits)
	s.bits = bits
}

// mine returns the calling goroutine's shard. The set must have been
// initialized.
func (s *shardSet[T]) mine() *T { return &s.shards[stackShard(s.bits)] }

// maxShardBits bounds every shard set at 64 shards.
const maxShardBits = 6

// shardBitsFor returns the shard bits for a filter of m words: enough for
// two shards per P (runtime.GOMAXPROCS at creation), at most 64, at most
// one shard per 16 words, and above 4 shards at most one per
// wordsPerShard words. The last bound keeps each shard set within 1/2048
// of the table whatever GOMAXPROCS is (a 1M-key filter, 2^17 to 2^18
// words, gets 8 or 16 shards at most), so a class's bits per key hold on
// any machine.
func shardBitsFor(m uint64) uint { return shardBitsPer(m, wordsPerShard) }

// countShardBitsFor is shardBitsFor for the count of stored fingerprints,
// which every Insert and Delete writes (the other shard sets are written
// by relocations, retries and rarer events), with up to one shard per
// wordsPerCountShard words: 1/256 of the table, so that a 1M-key filter
// gets the 64 shards that 32 processors want instead of 8 or 16: with too
// few shards, cores take turns with each shard's cache line on every
// insert (BENCHMARKS.md, "Tuning constants").
func countShardBitsFor(m uint64) uint { return shardBitsPer(m, wordsPerCountShard) }

// shardBitsPer is shardBitsFor with at most one shard per wordsPer words
// above 1<<minCappedShardBits shards.
func shardBitsPer(m, wordsPer uint64) uint {
	bits := uint(0)
	for 1<<bits < 2*runtime.GOMAXPROCS(0) && bits < maxShardBits && 16<<(bits+1) <= m &&
		(bits < minCappedShardBits || wordsPer<<(bits+1) <= m) {
		bits++
	}
	return bits
}

// Shard sets above 1<<minCappedShardBits shards have at most one shard
// (64 bytes) per wordsPerShard table words (8 bytes each): 1/2048 of the
// table; the count, one per wordsPerCountShard words: 1/256.
const (
	minCappedShardBits = 2
	wordsPerShard      = 16384
	wordsPerCountShard = 2048
)

// shardedCount is the number of stored fingerprints, spread over padded
// shards so that goroutines on different cores rarely update the same cache
// line: each goroutine adds to the shard of its stack. Only the sum is
// meaningful. (A shard chosen by bucket would be shared by every
// goroutine filling one filter.)
type shardedCount struct {
	shardSet[countShard]
}

type countShard struct {
	n atomic.Int64
	_ [56]byte
}

func (c *shardedCount) add(d int64) { c.mine().n.Add(d) }

func (c *shardedCount) sum() int64 {
	var n int64
	for i := range c.shards {
		n += c.shards[i].n.Load()
	}
	return n
}

func (c *shardedCount) reset() {
	for i := range c.shards {
		c.shards[i].n.Store(0)
	}
}
