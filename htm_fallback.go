//go:build !amd64 || !gc || purego

package cuckoo

// Where RTM cannot exist (other architectures, other compilers, the purego
// build tag) rtmSupported reports false, so useRTM is false and no stripe set
// elides: elideBegin, the only caller of xbegin, is never called. Should it
// be, xbegin reports an abort that is not worth retrying and the section
// takes the MCS locks; xend and xabortLockHeld, reachable only inside a
// started transaction, panic.

// htmAsm reports whether the RTM and CPUID functions are the assembly ones.
const htmAsm = false

// rtmSupported reports false: no RTM on this build.
func rtmSupported() bool { return false }

// cpuid returns zeros: there is no CPUID on this build (a maximum leaf of 0
// means no feature leaves).
func cpuid(eax, ecx uint32) (a, b, c, d uint32) { return 0, 0, 0, 0 }

// xbegin returns 0: an abort with no reason bits, which txRetryable rejects.
func xbegin() uint32 { return 0 }

// xend is never called on this build: no transaction ever starts.
func xend() { panic("unreachable") }

// xabortLockHeld is never called on this build: no transaction ever starts.
func xabortLockHeld() { panic("unreachable") }

// xtest reports false: no transaction ever runs on this build.
func xtest() bool { return false }
