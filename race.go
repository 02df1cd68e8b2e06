//go:build race

package cuckoo

// raceEnabled reports whether the race detector is on (RTM elision is off then).
const raceEnabled = true
