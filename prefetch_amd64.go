//go:build amd64 && gc && !purego

package cuckoo

import "sync/atomic"

// prefetchAsm reports whether prefetchPairs is the assembly one.
const prefetchAsm = true

// prefetchPairs issues PREFETCHW for base[b1[i]>>shift] and
// base[b2[i]>>shift], i < n: it asks the processor to bring each word's
// cache line in owned, ready to be written, without waiting for it. A
// hint: it changes no memory and never faults, and processors without the
// instruction execute it as a no-op.
//
//go:noescape
func prefetchPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64)
