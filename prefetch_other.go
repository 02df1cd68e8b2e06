//go:build !amd64 || !gc || purego

package cuckoo

import "sync/atomic"

// prefetchAsm reports whether prefetchPairs is the assembly one.
const prefetchAsm = false

// prefetchW is false: there is no PREFETCHW on this build.
const prefetchW = false

// prefetchPairs does nothing on this build: a prefetch is only a hint.
func prefetchPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64) {}
