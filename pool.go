package cuckoo

import (
	"math/bits"
	"runtime"
	"sync/atomic"
)

// slotPool is a table of items leased and returned by index and never freed
// (the K-CAS descriptors, the MCS nodes). Item v is index+1 (0 is none), so
// words and links that name items are plain integers the garbage collector
// need not see, and an item stays valid for anyone holding a stale v.
//
// Chunk k holds poolChunk0<<k items from index poolChunk0*(2^k-1), so
// poolMaxChunks pointers cover every index below 2^31 and an item is found
// with a bit length and a subtraction; chunks are only added, one at a time.
//
// Free lists are Treiber stacks, one per shard, with heads aba<<32 | v.
// Claim: a pop's CAS from the head it read to (aba+1, link) succeeds only if
// no push or pop changed that head in between (or a multiple of 2^32 did).
// Proof: every successful push and pop adds one to aba. Links sit in the
// chunk beside the items and mean something only while an item is free.
type slotPool[T any] struct {
	limit    uint32        // most items; read-only
	newChunk func(c []T)   // prepares a new chunk's items, or nil; read-only
	heads    []poolHead    // free lists, one per shard, a power of two
	nchunks  atomic.Uint32 // chunks published
	chunks   [poolMaxChunks]atomic.Pointer[poolChunk[T]]
}

const (
	// A Locked filter's first waiter allocates its node pool's first chunk
	// (128 bytes and a channel per node): four items.
	poolChunk0Log = 2
	poolChunk0    = 1 << poolChunk0Log
	poolMaxChunks = 29  // indices below 4*(2^29-1)
	poolLine      = 128 // a head's padding: the spatial prefetcher pulls line pairs
)

type poolChunk[T any] struct {
	items []T
	links []atomic.Uint32 // v of the next free item, 0 = end
}

type poolHead struct {
	v atomic.Uint64 // aba<<32 | v of the top item, 0 = empty
	_ [poolLine - 8]byte
}

// poolChunkOf returns the chunk holding index i and i's offset in it.
func poolChunkOf(i uint32) (k, off uint32) {
	j := i + poolChunk0
	k = uint32(bits.Len32(j)) - poolChunk0Log - 1
	return k, j - poolChunk0<<k
}

// item returns item v, which must have been leased at least once.
func (p *slotPool[T]) item(v uint32) *T {
	k, off := poolChunkOf(v - 1)
	return &p.chunks[k].Load().items[off]
}

func (p *slotPool[T]) link(v uint32) *atomic.Uint32 {
	k, off := poolChunkOf(v - 1)
	return &p.chunks[k].Load().links[off]
}

// lease takes a free item, from shard home first, then the others, and only
// then from a new chunk (so steady state allocates nothing); it returns its
// v. At the limit it waits, yielding, for an item to come back.
func (p *slotPool[T]) lease(home uint) uint32 {
	m := uint(len(p.heads)) - 1
	for {
		for j := range m + 1 { // home first, then every other shard
			if v := p.pop(&p.heads[(home^j)&m]); v != 0 {
				return v
			}
		}
		if v, ok := p.grow(&p.heads[home&m]); ok {
			return v
		}
	}
}

func (p *slotPool[T]) release(home uint, v uint32) {
	p.pushChain(&p.heads[home&uint(len(p.heads)-1)], v, v)
}

// pop removes and returns the top item of h, or 0 if h is empty.
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

// pushChain pushes the free items first..last, linked from first to last.
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

// grow adds the next chunk, keeps its first item for the caller and pushes the
// rest onto h. False if another goroutine adds the chunk or the pool is full.
func (p *slotPool[T]) grow(h *poolHead) (uint32, bool) {
	k := p.nchunks.Load()
	base := uint32(poolChunk0) * (1<<k - 1) // index of the chunk's first item
	if k == poolMaxChunks || base >= p.limit || p.chunks[k].Load() != nil {
		runtime.Gosched() // wait for items to come back, or for chunk k
		return 0, false
	}
	size := min(uint32(poolChunk0)<<k, p.limit-base)
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
