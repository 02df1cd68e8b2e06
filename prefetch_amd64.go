//go:build amd64 && gc && !purego

package cuckoo

import "sync/atomic"

const prefetchAsm = true

// prefetchW reports whether the processor lists PREFETCHW (CPUID
// 0x80000001 ECX bit 8, "3dnowprefetch"); some early amd64 processors
// raise #UD on it.
var prefetchW = prefetchWSupported()

func prefetchWSupported() bool {
	if maxExt, _, _, _ := cpuid(0x80000000, 0); maxExt < 0x80000001 {
		return false
	}
	_, _, ecx, _ := cpuid(0x80000001, 0)
	return ecx&(1<<8) != 0
}

// prefetchPairs issues PREFETCHW for base[b1[i]>>shift] and
// base[b2[i]>>shift], i < n: a hint that changes no memory and never
// faults. Call it only where prefetchW.
//
//go:noescape
func prefetchPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64)
