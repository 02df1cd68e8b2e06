package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

// TestRun checks each filter and workload: present keys are all found,
// absent ones rarely, and bad arguments are refused.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		impl, fill, workload string
		n                    int
		lo, hi               int // bounds on the keys found
	}{
		{"cuckoo", "insert", "pos", 10_000, 10_000, 10_000},
		{"cuckoo", "batch", "pos", 10_000, 10_000, 10_000},
		{"cuckoo8", "batch", "pos", 10_000, 10_000, 10_000},
		{"cuckoo8-locked", "insert", "pos", 10_000, 10_000, 10_000},
		{"cuckoo-locked", "batch", "neg", 10_000, 0, 100},
		{"growing-locked", "insert", "pos", 10_000, 10_000, 10_000},
		{"cuckoo15", "insert", "neg", 10_000, 0, 20},
		{"cuckoo", "insert", "neg", 10_000, 0, 100},
		{"cuckoo", "insert", "batch", 6400, 3200, 3300},
		{"growing", "insert", "pos", 10_000, 10_000, 10_000},
		{"growing", "batch", "pos", 10_000, 10_000, 10_000},
		{"growing", "insert", "neg", 10_000, 0, 300},
		{"seiflotfy", "insert", "neg", 0, size, size},
	} {
		var out bytes.Buffer
		impl, bits, mode := tc.impl, 12, cuckoo.LockFree
		if name, ok := strings.CutSuffix(impl, "-locked"); ok {
			impl, mode = name, cuckoo.Locked
		}
		switch impl {
		case "cuckoo15":
			impl, bits = "cuckoo", 15
		case "cuckoo8":
			impl, bits = "cuckoo", 8
		}
		if err := run(impl, tc.fill, tc.workload, tc.n, bits, mode, &out); err != nil {
			t.Fatalf("%s %s %s: %v", tc.impl, tc.fill, tc.workload, err)
		}
		got, err := strconv.Atoi(strings.TrimSpace(out.String()))
		if err != nil || got < tc.lo || got > tc.hi {
			t.Errorf("%s %s %s %d: found %q; want %d to %d", tc.impl, tc.fill, tc.workload, tc.n, out.String(), tc.lo, tc.hi)
		}
	}
	for _, bad := range [][3]string{{"nope", "insert", "pos"}, {"cuckoo", "insert", "nope"}, {"cuckoo", "nope", "pos"}, {"seiflotfy", "batch", "neg"}} {
		if err := run(bad[0], bad[1], bad[2], 0, 12, cuckoo.LockFree, &bytes.Buffer{}); err == nil {
			t.Errorf("run(%q, %q, %q): no error", bad[0], bad[1], bad[2])
		}
	}
	if err := run("seiflotfy", "insert", "pos", 1, 12, cuckoo.LockFree, &bytes.Buffer{}); err == nil {
		t.Error("seiflotfy with lookups: no error")
	}
}
