package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestRun prints a small space table and checks its rows: every filter is
// there, and this filter's four-slot rows take about 16.8 bits per key
// (one 64-bit word per four slots at 95% load, plus its fixed structures),
// its five-slot rows about 13.2 (five slots at 97%), its packed rows about
// 8.7 (eight 8-bit slots per word at 92%).
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, 1<<18, 1<<18); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, name := range []string{"cuckoo lockfree, 8-bit packed", "cuckoo locked, 15-bit x 4", "cuckoo lockfree, 12-bit x 5", "cuckoo growing", "bloom at the 12-bit x 4 rate", "xor8", "binary fuse8", "binary fuse16", "seiflotfy"} {
		if !strings.Contains(text, "| "+name) {
			t.Errorf("no row for %q in\n%s", name, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| cuckoo lockfree") {
			continue
		}
		want := 16.8
		if strings.Contains(line, "x 5") {
			want = 13.2
		}
		if strings.Contains(line, "packed") {
			want = 8.7
		}
		cols := strings.Split(line, "|")
		bpk, err := strconv.ParseFloat(strings.TrimSpace(cols[3]), 64)
		if err != nil || bpk < want-0.3 || bpk > want+1.2 {
			t.Errorf("%s: bits per key %q; want about %.1f", line, cols[3], want)
		}
	}
	t.Log("\n" + text)
}
