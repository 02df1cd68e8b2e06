package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestRunPrintsEveryCell(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, "4096,8192", "1,2", 1<<12, 3); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines; want 4 (two sizes, two goroutine counts):\n%s", len(lines), out.String())
	}
	re := regexp.MustCompile(`^bytes=(4096|8192) g=[12]: median [0-9.]+ M CAS/s, runs( [0-9.]+){3}$`)
	for _, l := range lines {
		if !re.MatchString(l) {
			t.Errorf("line %q", l)
		}
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	for _, c := range []struct{ sizes, gs string }{{"0", "1"}, {"4", "1"}, {"4096", "x"}, {"4096", "0"}} {
		if err := run(&bytes.Buffer{}, c.sizes, c.gs, 100, 1); err == nil {
			t.Errorf("-bytes %s -goroutines %s: no error", c.sizes, c.gs)
		}
	}
}
