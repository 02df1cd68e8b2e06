package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/seed25b00da8/cuckoo"
)

// memInfoPath is where checkMemory learns the available memory (Linux).
// Tests point it at a file of their own.
var memInfoPath = "/proc/meminfo"

// tableBytes returns the size of the table of a filter for capacity keys
// with bits-bit fingerprints in buckets of b slots (what cuckoo.New sizes):
// one 8-byte word per bucket, for capacity/0.97 slots in five-slot buckets
// and capacity/0.95 in four-slot ones; with 8-bit fingerprints (the packed
// layout) one word per eight slots, for capacity/0.92 slots; plus the
// spare slots New adds in whole words (32, or 48 in the packed layout).
func tableBytes(capacity, bits, b int) uint64 {
	num, den, perWord, spare := uint64(19), uint64(20), uint64(b), uint64(32)
	switch {
	case bits == 8:
		num, den, perWord, spare = 92, 100, 8, 48
	case b == 5:
		num, den = 97, 100
	}
	slots := (uint64(capacity)*den + num - 1) / num
	return 8 * ((slots+perWord-1)/perWord + (spare+perWord-1)/perWord)
}

// checkMemory returns an error if the table of a filter for capacity keys
// with bits-bit fingerprints in buckets of slotsPerBucket slots would not
// fit in the memory available now, so that build says so instead
// of dying in the Go runtime with "out of memory" or being killed by the
// operating system. Where the available memory cannot be learned (no
// /proc/meminfo) it accepts.
func checkMemory(capacity, bits, slotsPerBucket int) error {
	if capacity <= 0 || uint64(capacity) > cuckoo.MaxCapacity {
		return nil // New rejects it without allocating
	}
	need := tableBytes(capacity, bits, slotsPerBucket)
	avail, ok := memAvailable()
	if !ok || need <= avail {
		return nil
	}
	return fmt.Errorf("a filter for %s needs %s of memory, but only %s is available (MemAvailable in %s): use a smaller -capacity",
		count(capacity, "key", "keys"), byteSize(need), byteSize(avail), memInfoPath)
}

// memAvailable returns MemAvailable from memInfoPath in bytes.
func memAvailable() (uint64, bool) {
	data, err := os.ReadFile(memInfoPath)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) >= 2 && string(fields[0]) == "MemAvailable:" {
			kb, err := strconv.ParseUint(string(fields[1]), 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}

// byteSize formats n bytes with a binary unit: "16.0 GiB".
func byteSize(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
