package cuckoo

import (
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
// goroutine's stack. bits must be in [1, 63].
func stackShard(bits uint) uint {
	var local byte
	return uint(uint64(uintptr(unsafe.Pointer(&local))>>11) * 0x9e3779b97f4a7c15 >> (64 - bits))
}

// shardedCount is the number of stored fingerprints, spread over padded
// shards so that goroutines on different cores rarely update the same cache
// line: each goroutine adds to the shard of its stack (shard.go). Only the
// sum is meaningful. With the shard chosen by bucket instead, two goroutines
// filling one filter shared every shard, and the lines moved between the
// cores on almost every insert.
type shardedCount struct {
	shards [1 << countShardBits]struct {
		n atomic.Int64
		_ [56]byte
	}
}

const countShardBits = 6

func (c *shardedCount) add(d int64) { c.shards[stackShard(countShardBits)].n.Add(d) }

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
