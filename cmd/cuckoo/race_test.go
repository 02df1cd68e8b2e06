//go:build race

package main

// raceEnabled reports whether the race detector is on. Race builds of the
// cuckoo package allocate a K-CAS descriptor lease per relocation (its
// sync.Pool cache is skipped), so a fill is not allocation-free there.
const raceEnabled = true
