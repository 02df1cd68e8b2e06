package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestRun prints a small space table and checks its rows: every filter is
// there, and this filter's rows take about 16.8 bits per key (one 64-bit
// word per four slots at 95% load, plus its fixed structures).
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, 1<<16, 1<<18); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, name := range []string{"cuckoo lockfree, 8-bit", "cuckoo locked, 15-bit", "cuckoo growing", "bloom at the 12-bit rate", "xor8", "binary fuse8", "binary fuse16", "seiflotfy"} {
		if !strings.Contains(text, "| "+name) {
			t.Errorf("no row for %q in\n%s", name, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| cuckoo lockfree") {
			continue
		}
		cols := strings.Split(line, "|")
		bpk, err := strconv.ParseFloat(strings.TrimSpace(cols[3]), 64)
		if err != nil || bpk < 16.5 || bpk > 18 {
			t.Errorf("%s: bits per key %q; want about 16.8", line, cols[3])
		}
	}
	t.Log("\n" + text)
}
