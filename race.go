//go:build race

package cuckoo

// raceEnabled reports whether the race detector is on. Hardware transactions
// are invisible to it, so RTM elision is off in race builds.
const raceEnabled = true
