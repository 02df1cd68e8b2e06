//go:build amd64 && gc && !purego

package cuckoo

// Intel RTM (Restricted Transactional Memory) and CPUID, in htm_amd64.s.
// XBEGIN, XEND, XABORT and XTEST raise #UD on processors without RTM, so
// they run only when rtmSupported reports true (through useRTM); the tests
// check them structurally (go vet's asmdecl, and the bytes of the assembled
// functions) and run them only on such processors.

// htmAsm reports whether the RTM and CPUID functions are the assembly ones.
const htmAsm = true

// xbegin starts a transaction and returns txStarted. If the transaction
// aborts, execution resumes inside xbegin with every memory write since the
// start discarded and the registers as they were, and xbegin returns the
// abort status (EAX): txAbortExplicit, txAbortRetry, txAbortConflict,
// txAbortCapacity, ... and, after XABORT, its code in bits 31:24. It behaves
// like the _xbegin intrinsic of C compilers.
func xbegin() uint32

// xend commits the innermost transaction. Outside a transaction it faults
// (#GP).
func xend()

// xabortLockHeld aborts the current transaction with code txLockHeld; it does
// not return (execution resumes in xbegin). Outside a transaction it does
// nothing.
func xabortLockHeld()

// xtest reports whether the processor is executing a transaction.
func xtest() bool

// cpuid executes CPUID with EAX=eax and ECX=ecx and returns EAX, EBX, ECX
// and EDX.
func cpuid(eax, ecx uint32) (a, b, c, d uint32)

// rtmSupported reports whether the processor can run RTM transactions:
// CPUID's maximum basic leaf is at least 7, CPUID.(EAX=7,ECX=0):EBX bit 11
// (RTM) is set and EDX bit 11 (RTM_ALWAYS_ABORT, set by microcode that
// disables TSX while keeping the instructions) is clear. golang.org/x/sys/cpu
// has no RTM flag. Processors whose TSX was switched off (TSX_CTRL) clear
// the RTM bit.
func rtmSupported() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, ebx, _, edx := cpuid(7, 0)
	return ebx&(1<<11) != 0 && edx&(1<<11) == 0
}
