//go:build !amd64 || !gc || purego

package cuckoo

func xtest() bool { return false }

// htmAsm reports whether this build has the RTM and CPUID instructions of
// htm_amd64.s.
const htmAsm = false
