//go:build amd64 && gc && !purego

package cuckoo

import "sync/atomic"

// prefetchW reports whether the processor lists PREFETCHW (CPUID 0x80000001 ECX
// bit 8, "3dnowprefetch"); some early amd64 processors raise #UD on it.
var prefetchW = func() bool {
	maxExt, _, _, _ := cpuid(0x80000000, 0)
	_, _, ecx, _ := cpuid(0x80000001, 0) // a leaf past maxExt reads as another, never faults
	return maxExt >= 0x80000001 && ecx&(1<<8) != 0
}()

// prefetchPairs issues PREFETCHW for base[b1[i]>>shift] and
// base[b2[i]>>shift], i < n: a hint that changes no memory and never
// faults. Call it only where prefetchW.
//
//go:noescape
func prefetchPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64)

// prefetchReadPairs is prefetchPairs with PREFETCHT0, which every amd64 has.
//
//go:noescape
func prefetchReadPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64)
