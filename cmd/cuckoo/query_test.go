package main

import (
	"os"
	"strings"
	"testing"
)

func TestQuery(t *testing.T) {
	filter := buildFilter(t, keyLines("key-", 2000))
	probes := "key-0\nkey-1999\r\n\nabsent-key\n"
	want := "key-0\ttrue\nkey-1999\ttrue\nabsent-key\tfalse\n3 keys: 2 maybe present, 1 absent\n"
	for _, tc := range []struct {
		name, stdin string
		args        []string
	}{
		{"stdin", probes, []string{filter}},
		{"dash", probes, []string{filter, "-"}},
		{"file", "", []string{filter, writeFile(t, "probes.txt", probes)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, stdout, stderr := runCmd(t, tc.stdin, append([]string{"query"}, tc.args...)...)
			if status != exitOK || stderr != "" || stdout != want {
				t.Fatalf("status %d, stderr %q, stdout:\n%s\nwant 0 and:\n%s", status, stderr, stdout, want)
			}
		})
	}
}

// TestQueryCounts looks up all inserted keys and many absent ones.
func TestQueryCounts(t *testing.T) {
	filter := buildFilter(t, keyLines("key-", 10000))
	status, stdout, _ := runCmd(t, keyLines("key-", 10000), "query", filter)
	if status != exitOK || !strings.HasSuffix(stdout, "\n10000 keys: 10000 maybe present, 0 absent\n") || strings.Contains(stdout, "\tfalse\n") {
		t.Fatalf("inserted keys: status %d, summary %q", status, stdout[strings.LastIndex(stdout[:len(stdout)-1], "\n")+1:])
	}
	status, stdout, _ = runCmd(t, keyLines("other-", 10000), "query", filter)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if status != exitOK || len(lines) != 10001 {
		t.Fatalf("absent keys: status %d, %d lines; want 0, 10001", status, len(lines))
	}
	// About 0.19% false positives at 95% load and f=12: a few dozen at most.
	if !strings.HasPrefix(lines[10000], "10000 keys: ") || strings.Count(stdout, "\ttrue\n") > 60 {
		t.Fatalf("absent keys: %s with %d true", lines[10000], strings.Count(stdout, "\ttrue\n"))
	}
}

func TestQueryErrors(t *testing.T) {
	filter := buildFilter(t, keyLines("key-", 100))
	data, _ := os.ReadFile(filter)
	corrupt := writeFile(t, "corrupt.cuckoo", string(data[:len(data)-1])+"x")
	truncated := writeFile(t, "truncated.cuckoo", string(data[:100]))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing filter", []string{writeFile(t, "x", "") + ".nope"}, "no such file"},
		{"not a filter", []string{writeFile(t, "keys.txt", "a\nb\n")}, "wrong magic"},
		{"corrupt", []string{corrupt}, "checksum mismatch"},
		{"truncated", []string{truncated}, "truncated data"},
		{"missing input", []string{filter, filter + ".nope"}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, stdout, stderr := runCmd(t, "k\n", append([]string{"query"}, tc.args...)...)
			if status != exitError || stdout != "" || !strings.HasPrefix(stderr, "cuckoo query: ") || !strings.Contains(stderr, tc.want) {
				t.Fatalf("status %d, stdout %q, stderr %q; want %d and %q", status, stdout, stderr, exitError, tc.want)
			}
			if strings.Contains(stderr, ": cuckoo: ") {
				t.Fatalf("stderr %q repeats the library's prefix", stderr)
			}
		})
	}
}
