//go:build amd64 && gc && !purego

package cuckoo

import "sync/atomic"

// prefetchAsm reports whether prefetchPairs is the assembly one.
const prefetchAsm = true

// prefetchW reports whether the processor has PREFETCHW (CPUID leaf
// 0x80000001, ECX bit 8, "3dnowprefetch" in Linux's flags). Most amd64
// processors treat the instruction as a no-op when they do not list it,
// but some early 64-bit ones raise #UD, so prefetchPairs runs only where
// this is true.
var prefetchW = prefetchWSupported()

func prefetchWSupported() bool {
	if maxExt, _, _, _ := cpuid(0x80000000, 0); maxExt < 0x80000001 {
		return false
	}
	_, _, ecx, _ := cpuid(0x80000001, 0)
	return ecx&(1<<8) != 0
}

// prefetchPairs issues PREFETCHW for base[b1[i]>>shift] and
// base[b2[i]>>shift], i < n: it asks the processor to bring each word's
// cache line in owned, ready to be written, without waiting for it. A
// hint: it changes no memory and never faults on any address. Call it
// only where prefetchW is true.
//
//go:noescape
func prefetchPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64)
