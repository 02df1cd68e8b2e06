package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestQuery(t *testing.T) {
	for _, format := range []struct {
		name  string
		flags []string
	}{
		// A fixed seed: with a random one "absent-key" is a false positive
		// now and then (about 0.2% at the fixed filter's 95% load).
		{"format=fixed", []string{"-capacity", "2000", "-seed", "1"}},
		{"format=growing", []string{"-seed", "1"}},
	} {
		t.Run(format.name, func(t *testing.T) {
			filter := buildFilter(t, keyLines("key-", 2000), format.flags...)
			probes := "key-0\nkey-1999\r\n\nabsent-key\n"
			want := "key-0\ttrue\nkey-1999\ttrue\nabsent-key\tfalse\n"
			wantStderr := "3 keys: 2 maybe present, 1 absent\n"
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
					if status != queryMatched || stderr != wantStderr || stdout != want {
						t.Fatalf("status %d, stderr %q, stdout:\n%s\nwant 0, %q and:\n%s", status, stderr, stdout, wantStderr, want)
					}
				})
			}
		})
	}
}

// TestQueryCounts looks up all inserted keys and many absent ones.
func TestQueryCounts(t *testing.T) {
	filter := buildFilter(t, keyLines("key-", 10000))
	status, stdout, stderr := runCmd(t, keyLines("key-", 10000), "query", filter)
	if status != queryMatched || stderr != "10000 keys: 10000 maybe present, 0 absent\n" || strings.Contains(stdout, "\tfalse\n") {
		t.Fatalf("inserted keys: status %d, summary %q", status, stderr)
	}
	status, stdout, stderr = runCmd(t, keyLines("other-", 10000), "query", filter)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	positives := strings.Count(stdout, "\ttrue\n")
	if want := queryMatched; positives == 0 {
		want = queryNoneFound
		if status != want {
			t.Fatalf("absent keys, no false positive: status %d; want %d", status, want)
		}
	}
	if len(lines) != 10000 {
		t.Fatalf("absent keys: %d lines; want 10000", len(lines))
	}
	// About 0.24% false positives at 97% load with five 12-bit slots: a few dozen at most.
	if !strings.HasPrefix(stderr, "10000 keys: ") || positives > 60 {
		t.Fatalf("absent keys: %s with %d true", stderr, positives)
	}
}

// TestQueryErrors checks query's errors for files of both formats.
func TestQueryErrors(t *testing.T) {
	for _, format := range []struct {
		name  string
		flags []string
	}{
		{"format=fixed", []string{"-capacity", "100"}},
		{"format=growing", nil},
	} {
		t.Run(format.name, func(t *testing.T) {
			filter := buildFilter(t, keyLines("key-", 100), format.flags...)
			data, _ := os.ReadFile(filter)
			// Flip a bit of the checksum's last byte (setting it to a
			// fixed value left it unchanged when it held that value).
			corrupt := writeFile(t, "corrupt.cuckoo", string(data[:len(data)-1])+string([]byte{data[len(data)-1] ^ 1}))
			truncated := writeFile(t, "truncated.cuckoo", string(data[:100]))
			for _, tc := range []struct {
				name string
				args []string
				want string
			}{
				{"missing filter", []string{writeFile(t, "x", "") + ".nope"}, "no such file"},
				{"not a filter", []string{writeFile(t, "keys.txt", "a\nb\n")}, `wrong magic "a\nb\n": not a filter file`},
				{"corrupt", []string{corrupt}, "checksum mismatch"},
				{"truncated", []string{truncated}, "truncated data"},
				{"trailing data", []string{writeFile(t, "trailing.cuckoo", string(data)+"extra")}, fmt.Sprintf("5 bytes of trailing data after the %d-byte filter", len(data))},
				{"two filters", []string{writeFile(t, "two.cuckoo", string(data)+string(data))}, fmt.Sprintf("%d bytes of trailing data", len(data))},
				{"missing input", []string{filter, filter + ".nope"}, "no such file"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					status, stdout, stderr := runCmd(t, "k\n", append([]string{"query"}, tc.args...)...)
					if status != queryError || stdout != "" || !strings.HasPrefix(stderr, "cuckoo query: ") || !strings.Contains(stderr, tc.want) {
						t.Fatalf("status %d, stdout %q, stderr %q; want %d and %q", status, stdout, stderr, queryError, tc.want)
					}
					if strings.Contains(stderr, ": cuckoo: ") {
						t.Fatalf("stderr %q repeats the library's prefix", stderr)
					}
				})
			}
		})
	}
}

// TestQueryExitStatus checks that query exits like grep: 0 when some key
// may be present, 1 when none is (also for an empty input), 2 on errors, and
// that standard output then holds only the results.
func TestQueryExitStatus(t *testing.T) {
	// A fixed seed: with a random one the absent keys below are false
	// positives now and then (about 0.2% each), which changes the status.
	filter := buildFilter(t, keyLines("key-", 100), "-seed", "1")
	for _, tc := range []struct {
		name, stdin string
		want        int
	}{
		{"all present", "key-1\nkey-2\n", queryMatched},
		{"some present", "nope-1\nkey-2\n", queryMatched},
		{"none present", "nope-1\nnope-2\n", queryNoneFound},
		{"no keys", "", queryNoneFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, stdout, stderr := runCmd(t, tc.stdin, "query", filter)
			if status != tc.want {
				t.Fatalf("status %d; want %d (stderr %q)", status, tc.want, stderr)
			}
			for _, line := range strings.SplitAfter(stdout, "\n") {
				if line != "" && !strings.HasSuffix(line, "\ttrue\n") && !strings.HasSuffix(line, "\tfalse\n") {
					t.Fatalf("stdout line %q is not a result", line)
				}
			}
			if !strings.HasSuffix(stderr, " absent\n") {
				t.Fatalf("stderr %q; want the counts", stderr)
			}
		})
	}
	if status, _, _ := runCmd(t, "", "query", filter+".nope"); status != queryError {
		t.Fatalf("missing filter: status %d; want %d", status, queryError)
	}
}
