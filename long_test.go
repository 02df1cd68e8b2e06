package cuckoo

import (
	"os"
	"testing"
)

// The test suite has three sizes. The default, go test -race ./... (the
// README's test command), runs every test at a size that keeps the whole
// module within a few minutes on two cores. The long suite, with the
// environment variable CUCKOO_LONG=1 (CI sets it), runs the model checker
// on every configuration and the stress tests at full size. -short runs
// every test at its smallest size, skipping none for time alone.

// LongTests reports whether the long suite runs: CUCKOO_LONG=1.
func LongTests() bool { return os.Getenv("CUCKOO_LONG") == "1" }

// Sized returns short under -short (which wins over CUCKOO_LONG), long in
// the long suite and normal otherwise: a test's iteration counts and
// table sizes.
func Sized(short, normal, long int) int {
	switch {
	case testing.Short():
		return short
	case LongTests():
		return long
	}
	return normal
}
