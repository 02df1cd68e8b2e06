package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestRun checks each filter and workload: present keys are all found,
// absent ones rarely, and bad arguments are refused.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		impl, workload string
		n              int
		lo, hi         int // bounds on the keys found
	}{
		{"cuckoo", "pos", 10_000, 10_000, 10_000},
		{"cuckoo15", "neg", 10_000, 0, 20},
		{"cuckoo", "neg", 10_000, 0, 100},
		{"cuckoo", "batch", 6400, 3200, 3300},
		{"growing", "pos", 10_000, 10_000, 10_000},
		{"growing", "neg", 10_000, 0, 300},
		{"seiflotfy", "neg", 0, size, size},
	} {
		var out bytes.Buffer
		impl, bits := tc.impl, 12
		if impl == "cuckoo15" {
			impl, bits = "cuckoo", 15
		}
		if err := run(impl, tc.workload, tc.n, bits, &out); err != nil {
			t.Fatalf("%s %s: %v", tc.impl, tc.workload, err)
		}
		got, err := strconv.Atoi(strings.TrimSpace(out.String()))
		if err != nil || got < tc.lo || got > tc.hi {
			t.Errorf("%s %s %d: found %q; want %d to %d", tc.impl, tc.workload, tc.n, out.String(), tc.lo, tc.hi)
		}
	}
	for _, bad := range [][2]string{{"nope", "pos"}, {"cuckoo", "nope"}} {
		if err := run(bad[0], bad[1], 1, 12, &bytes.Buffer{}); err == nil {
			t.Errorf("run(%q, %q): no error", bad[0], bad[1])
		}
	}
	if err := run("seiflotfy", "pos", 1, 12, &bytes.Buffer{}); err == nil {
		t.Error("seiflotfy with lookups: no error")
	}
}
