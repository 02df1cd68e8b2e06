//go:build !race

package cuckoo

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
