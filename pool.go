package cuckoo

import (
	"math/bits"
	"runtime"
	"sync/atomic"
)

// slotPool is a table of items of type T that are leased and returned by
// index, never freed: the K-CAS descriptors (kcas.go) and the MCS queue
// nodes (mcs.go) both live in one. Items are named by v = index+1 (0 is
// "none"), so that words and links that refer to them are plain integers
// the garbage collector need not see, and an item's memory stays valid for
// anyone who still holds a stale v.
//
// Chunks. Chunk k holds poolChunk0<<k items and starts at index
// poolChunk0*(2^k-1), so a fixed array of poolMaxChunks chunk pointers
// covers every index below 2^31 and an item is found from its index with a
// bit length and a subtraction. Chunks are added one at a time, each twice
// the last, and never removed.
//
// Free lists. Free items sit on Treiber stacks, one per shard, each head a
// word aba<<32 | v whose ABA tag changes on every successful push or pop. A
// pop reads the head, then the top item's link, then CASes the head from
// what it read to (tag+1, link). Had the top been popped and pushed back in
// between, with a different link, the tag would differ and the CAS fail; it
// could succeed wrongly only if exactly 2^32 pushes and pops on that shard
// fell between the pop's load and its CAS. The links live beside the items,
// in the chunk, and are meaningful only while an item is free. A caller
// leases from the shard it names (its home), then from the others, and only
// when all are empty adds a chunk, so the table grows only when more items
// are in use at once than ever before, and steady state allocates nothing.
type slotPool[T any] struct {
	limit    uint32        // most items the pool may hold; read-only
	newChunk func(c []T)   // prepares the items of a new chunk, or nil; read-only
	heads    []poolHead    // free lists, one per shard
	nchunks  atomic.Uint32 // chunks published; grown by one at a time
	chunks   [poolMaxChunks]atomic.Pointer[poolChunk[T]]
}

const (
	// The first chunk holds four items: a Locked filter's first waiter
	// allocates the first chunk of its node pool (each node 128 bytes and
	// a channel), so a larger first chunk is a fixed cost of every Locked
	// filter that ever waits. The K-CAS descriptor pool grows from the
	// same size.
	poolChunk0Log = 2
	poolChunk0    = 1 << poolChunk0Log
	// poolMaxChunks chunks cover every index below 4*(2^29-1), about 2^31.
	poolMaxChunks = 29
	// poolLine pads each free-list head: two 64-byte lines, since Intel's
	// spatial prefetcher pulls lines in pairs.
	poolLine = 128
)

type poolChunk[T any] struct {
	items []T
	links []atomic.Uint32 // free-list links: v of the next free item, 0 = end
}

type poolHead struct {
	v atomic.Uint64 // aba<<32 | v of the top item, 0 = empty
	_ [poolLine - 8]byte
}

// init sets up an empty pool with the given number of shards (at least
// one) and a limit on its items. It must not run concurrently with other
// methods.
func (p *slotPool[T]) init(shards int, limit uint32, newChunk func([]T)) {
	p.heads = make([]poolHead, max(shards, 1))
	p.limit = limit
	p.newChunk = newChunk
}

// poolChunkOf returns the chunk holding index i and i's offset in it.
func poolChunkOf(i uint32) (k, off uint32) {
	j := i + poolChunk0
	k = uint32(bits.Len32(j)) - poolChunk0Log - 1
	return k, j - poolChunk0<<k
}

// item returns item v (index+1). Its chunk must be published, which holds
// for every v that was ever leased.
func (p *slotPool[T]) item(v uint32) *T {
	k, off := poolChunkOf(v - 1)
	return &p.chunks[k].Load().items[off]
}

// link returns the free-list link of item v.
func (p *slotPool[T]) link(v uint32) *atomic.Uint32 {
	k, off := poolChunkOf(v - 1)
	return &p.chunks[k].Load().links[off]
}

// capacity returns the number of items in published chunks.
func (p *slotPool[T]) capacity() uint32 {
	return min(poolChunk0*(1<<p.nchunks.Load()-1), p.limit)
}

// lease takes a free item, preferring shard home (taken modulo the shards),
// then the other shards, then a new chunk, and returns its v. If the pool
// is at its limit it waits, yielding, for an item to come back.
func (p *slotPool[T]) lease(home uint) uint32 {
	h := home % uint(len(p.heads))
	for {
		if v := p.pop(&p.heads[h]); v != 0 {
			return v
		}
		for j := range p.heads {
			if v := p.pop(&p.heads[j]); v != 0 {
				return v
			}
		}
		if v, ok := p.grow(&p.heads[h]); ok {
			return v
		}
	}
}

// release returns item v to shard home's free list.
func (p *slotPool[T]) release(home uint, v uint32) {
	p.pushChain(&p.heads[home%uint(len(p.heads))], v, v)
}

// pop removes the top item of a free list and returns its v, or 0 if the
// list is empty.
func (p *slotPool[T]) pop(h *poolHead) uint32 {
	for {
		x := h.v.Load()
		v := uint32(x)
		if v == 0 {
			return 0
		}
		rest := p.link(v).Load()
		if h.v.CompareAndSwap(x, (x>>32+1)<<32|uint64(rest)) {
			return v
		}
	}
}

// pushChain pushes the chain of free items first..last (linked from first
// to last) onto a free list.
func (p *slotPool[T]) pushChain(h *poolHead, first, last uint32) {
	l := p.link(last)
	for {
		x := h.v.Load()
		l.Store(uint32(x))
		if h.v.CompareAndSwap(x, (x>>32+1)<<32|uint64(first)) {
			return
		}
	}
}

// grow adds the next chunk, keeps its first item for the caller and pushes
// the rest onto h. It returns the kept item's v, or false if another
// goroutine is adding the chunk or the pool is at its limit (the caller
// then looks at the free lists again).
func (p *slotPool[T]) grow(h *poolHead) (uint32, bool) {
	k := p.nchunks.Load()
	size := uint32(poolChunk0) << k
	base := uint32(poolChunk0) * (1<<k - 1) // index of the chunk's first item
	if k == poolMaxChunks || base >= p.limit || p.chunks[k].Load() != nil {
		// At the limit, or another goroutine is between installing chunk
		// k and publishing it: wait for items to come back.
		runtime.Gosched()
		return 0, false
	}
	size = min(size, p.limit-base)
	c := &poolChunk[T]{items: make([]T, size), links: make([]atomic.Uint32, size)}
	if p.newChunk != nil {
		p.newChunk(c.items)
	}
	for i := uint32(1); i+1 < size; i++ {
		c.links[i].Store(base + i + 2) // item base+i links to base+i+1
	}
	if !p.chunks[k].CompareAndSwap(nil, c) {
		return 0, false
	}
	if size > 1 {
		p.pushChain(h, base+2, base+size)
	}
	p.nchunks.Store(k + 1)
	return base + 1, true
}
