//go:build !amd64 || !gc || purego

package cuckoo

// No RTM on this build: useRTM is false, so elideBegin never calls xbegin
// (were it to, the abort is not retryable and the section takes the locks).

func rtmSupported() bool                        { return false }
func cpuid(eax, ecx uint32) (a, b, c, d uint32) { return 0, 0, 0, 0 }
func xbegin() uint32                            { return 0 }
func xend()                                     { panic("unreachable") }
func xabortLockHeld()                           { panic("unreachable") }
