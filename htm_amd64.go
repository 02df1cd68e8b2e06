//go:build amd64 && gc && !purego

package cuckoo

// RTM and CPUID, in htm_amd64.s. XBEGIN, XEND, XABORT and XTEST raise #UD
// without RTM, so they run only where rtmSupported (through useRTM); tests
// check them structurally (asmdecl, the assembled bytes) everywhere.

// xbegin starts a transaction and returns txStarted; on an abort, execution
// resumes inside xbegin with the transaction's writes discarded, and it
// returns the abort status (EAX), like C's _xbegin. xend commits the
// innermost transaction (outside one it faults, #GP); xabortLockHeld aborts
// with code txLockHeld (outside one it does nothing).
func xbegin() uint32
func xend()
func xabortLockHeld()

// cpuid executes CPUID with EAX=eax, ECX=ecx and returns EAX, EBX, ECX, EDX.
func cpuid(eax, ecx uint32) (a, b, c, d uint32)

// rtmSupported reports whether the processor runs RTM transactions: RTM set
// and RTM_ALWAYS_ABORT (microcode that disables TSX) clear in CPUID leaf 7.
func rtmSupported() bool {
	if maxLeaf, _, _, _ := cpuid(0, 0); maxLeaf < 7 {
		return false
	}
	_, ebx, _, edx := cpuid(7, 0)
	return ebx&(1<<11) != 0 && edx&(1<<11) == 0
}
