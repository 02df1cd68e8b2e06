//go:build amd64 && gc && !purego

package cuckoo

// xtest (htm_amd64.s) reports whether the processor is in a transaction.
func xtest() bool

// htmAsm reports whether this build has the RTM and CPUID instructions of
// htm_amd64.s.
const htmAsm = true
