package main

// Tests of the conventions every subcommand follows: "-" for standard
// input, grep's exit statuses, the "cuckoo SUBCOMMAND: " prefix of error
// messages, what the help says, and counts in words ("1 key", "2 keys").

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

// TestFilterFromStdin checks that "-" as the FILE of query and info reads
// the filter from standard input, as build -o - writes it, and that query
// refuses to read both the filter and its keys from standard input.
func TestFilterFromStdin(t *testing.T) {
	// A fixed seed: nope-1 is then absent (TestQueryExitStatus uses the
	// same filter).
	status, filterData, stderr := runCmd(t, keyLines("key-", 100), "build", "-seed", "1", "-o", "-")
	if status != 0 {
		t.Fatalf("build -o -: status %d, stderr %q", status, stderr)
	}
	probes := writeFile(t, "probes.txt", "key-1\nnope-1\n")
	status, stdout, stderr := runCmd(t, filterData, "query", "-", probes)
	if status != 0 || stdout != "key-1\ttrue\nnope-1\tfalse\n" || stderr != "2 keys: 1 maybe present, 1 absent\n" {
		t.Fatalf("query - PROBES: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	status, stdout, stderr = runCmd(t, filterData, "info", "-")
	if want := fmt.Sprintf("file:                 standard input (%d bytes)\n", len(filterData)); status != 0 || stderr != "" || !strings.Contains(stdout, want) ||
		!strings.Contains(stdout, "format:               growing") {
		t.Fatalf("info -: status %d, stderr %q, stdout:\n%s\nwant 0 and %q", status, stderr, stdout, want)
	}
	// Errors name standard input, and trailing data is found there too.
	status, stdout, stderr = runCmd(t, filterData+"x", "info", "-")
	if status != 2 || stdout != "" || !strings.HasPrefix(stderr, "cuckoo info: standard input: ") || !strings.Contains(stderr, "trailing data") {
		t.Fatalf("info - with trailing data: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	status, stdout, stderr = runCmd(t, "not a filter", "query", "-", probes)
	if status != 2 || stdout != "" || !strings.HasPrefix(stderr, "cuckoo query: standard input: wrong magic") {
		t.Fatalf("query - with a text file: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	for _, args := range [][]string{{"-"}, {"-", "-"}} {
		status, stdout, stderr = runCmd(t, filterData, append([]string{"query"}, args...)...)
		if status != 2 || stdout != "" || !strings.HasPrefix(stderr, "cuckoo query: ") ||
			!strings.Contains(stderr, "cannot both be read from standard input") {
			t.Fatalf("query %v: status %d, stdout %q, stderr %q; want 2 and a refusal", args, status, stdout, stderr)
		}
	}
}

// TestExitStatuses checks grep's convention in every subcommand: 0 for
// success (query: some key may be present), 1 when query finds no key, 2
// for errors of any kind, bad usage included.
func TestExitStatuses(t *testing.T) {
	filter := buildFilter(t, keyLines("key-", 100), "-seed", "1")
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope")
	text := writeFile(t, "keys.txt", "a\nb\n")
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        int
	}{
		{"build", "k\n", []string{"build", "-o", filepath.Join(dir, "f.cuckoo")}, 0},
		{"build missing input", "", []string{"build", "-o", filepath.Join(dir, "g.cuckoo"), missing}, 2},
		{"build full", keyLines("k", 100), []string{"build", "-capacity", "10", "-o", filepath.Join(dir, "h.cuckoo")}, 2},
		{"build bad flag", "", []string{"build", "-bits", "16", "-o", filepath.Join(dir, "i.cuckoo")}, 2},
		{"query found", "key-1\n", []string{"query", filter}, 0},
		{"query none found", "nope-1\n", []string{"query", filter}, 1},
		{"query missing filter", "key-1\n", []string{"query", missing}, 2},
		{"info", "", []string{"info", filter}, 0},
		{"info missing file", "", []string{"info", missing}, 2},
		{"info not a filter", "", []string{"info", text}, 2},
		{"bench unwritable json", "", []string{"bench", "-json", filepath.Join(missing, "r.json")}, 2},
		{"bench bad flag", "", []string{"bench", "-reps", "0"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, _, stderr := runCmd(t, tc.stdin, tc.args...); status != tc.want {
				t.Fatalf("%v: status %d; want %d (stderr %q)", tc.args, status, tc.want, stderr)
			}
		})
	}
}

// TestErrorPrefix checks that every error message of a subcommand, those
// of flag parsing included, starts with "cuckoo SUBCOMMAND: ".
func TestErrorPrefix(t *testing.T) {
	filter := buildFilter(t, keyLines("key-", 10))
	out := filepath.Join(t.TempDir(), "f.cuckoo")
	for _, args := range [][]string{
		{"build", "-nosuchflag"},
		{"build", "-o", out, "-capacity", "many"},
		{"build", "-o", out, "-seed", "-1"},
		{"build", "-o"},
		{"build", "-o", out, "a", "b"},
		{"build"},
		{"query", "-x", filter},
		{"query"},
		{"info", "-x", filter},
		{"info", filter, filter},
		{"bench", "-duration", "soon"},
		{"bench", "-nosuchflag"},
		{"bench", "-sizes", "0"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			status, _, stderr := runCmd(t, "", args...)
			prefix := "cuckoo " + args[0] + ": "
			if status != 2 || !strings.HasPrefix(stderr, prefix) {
				t.Fatalf("status %d, stderr %q; want 2 and a first line that starts with %q", status, stderr, prefix)
			}
		})
	}
}

// TestBuildCapacityZero checks that an explicit -capacity 0 (or a negative
// one) is refused, not taken for a growing filter, and that the help says
// how to get a growing one.
func TestBuildCapacityZero(t *testing.T) {
	for _, c := range []string{"0", "-1", "-1000"} {
		out := filepath.Join(t.TempDir(), "f.cuckoo")
		status, stdout, stderr := runCmd(t, "k\n", "build", "-capacity", c, "-o", out)
		if status != 2 || stdout != "" || !strings.HasPrefix(stderr, "cuckoo build: -capacity must be positive, got "+c) ||
			!strings.Contains(stderr, "omit -capacity") {
			t.Fatalf("-capacity %s: status %d, stdout %q, stderr %q; want 2 and a refusal", c, status, stdout, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("-capacity %s wrote the output", c)
		}
	}
	_, stdout, _ := runCmd(t, "", "help", "build")
	if !strings.Contains(stdout, "omit -capacity for a growing filter") {
		t.Fatalf("help build does not say that omitting -capacity gives a growing filter:\n%s", stdout)
	}
}

// TestBuildOutputDirError checks that an output that cannot be written for
// want of its directory is reported by its own name (the -o path), not by
// the name of the hidden temporary file build writes first.
func TestBuildOutputDirError(t *testing.T) {
	out := filepath.Join(t.TempDir(), "no-such-dir", "f.cuckoo")
	status, _, stderr := runCmd(t, "k\n", "build", "-o", out)
	if status != 2 || !strings.HasPrefix(stderr, "cuckoo build: "+out+": ") || !strings.Contains(stderr, "no such file or directory") ||
		strings.Contains(stderr, ".tmp-") {
		t.Fatalf("status %d, stderr %q; want 2 and %q, without the temporary file's name", status, stderr, out)
	}
}

// TestBuildOutputCreateError checks the message when the temporary file
// cannot be created (a read-only directory, which root writes into anyway:
// the failure is simulated), and that the old output stays as it was.
func TestBuildOutputCreateError(t *testing.T) {
	defer func(old func(string, string) (*os.File, error)) { createTemp = old }(createTemp)
	createTemp = func(dir, pattern string) (*os.File, error) {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(dir, strings.Replace(pattern, "*", "123", 1)), Err: syscall.EACCES}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "f.cuckoo")
	if err := os.WriteFile(out, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, stderr := runCmd(t, "k\n", "build", "-o", out)
	want := "cuckoo build: " + out + ": cannot create a file in its directory " + dir + ": permission denied (the file was not changed)\n"
	if status != 2 || stderr != want {
		t.Fatalf("status %d, stderr %q; want 2 and %q", status, stderr, want)
	}
	if data, err := os.ReadFile(out); err != nil || string(data) != "precious" {
		t.Fatalf("output after the failed build: %q, %v; want it unchanged", data, err)
	}
}

// TestBenchOutputError checks that bench names an output file it cannot
// create by its own name, not by its temporary file's.
func TestBenchOutputError(t *testing.T) {
	for _, flag := range []string{"-json", "-svg"} {
		path := filepath.Join(t.TempDir(), "no-such-dir", "r.out")
		status, stdout, stderr := runCmd(t, "", "bench", flag, path)
		if want := "cuckoo bench: " + path + ": no such file or directory\n"; status != 2 || stdout != "" || stderr != want {
			t.Errorf("bench %s: status %d, stdout %q, stderr %q; want 2 and %q", flag, status, stdout, stderr, want)
		}
	}
}

// TestBuildOutputDirReadOnly checks the same for a directory without write
// permission, where an existing output stays as it was.
func TestBuildOutputDirReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "f.cuckoo")
	if err := os.WriteFile(out, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	status, _, stderr := runCmd(t, "k\n", "build", "-o", out)
	if status != 2 || !strings.HasPrefix(stderr, "cuckoo build: "+out+": ") || !strings.Contains(stderr, "permission denied") ||
		strings.Contains(stderr, ".tmp-") {
		t.Fatalf("status %d, stderr %q; want 2 and %q, without the temporary file's name", status, stderr, out)
	}
	if data, err := os.ReadFile(out); err != nil || string(data) != "precious" {
		t.Fatalf("output after the failed build: %q, %v; want it unchanged", data, err)
	}
}

// TestLongLineNumber checks that a line over the limit is reported with its
// line number, by build and by query.
func TestLongLineNumber(t *testing.T) {
	filter := buildFilter(t, "k\n")
	input := "a\r\n\nb\n" + strings.Repeat("x", maxKeyLen+1) + "\n"
	for _, args := range [][]string{
		{"build", "-o", filepath.Join(t.TempDir(), "f.cuckoo")},
		{"query", filter},
	} {
		status, _, stderr := runCmd(t, input, args...)
		if want := fmt.Sprintf("cuckoo %s: line 4 is longer than %d bytes", args[0], maxKeyLen); status != 2 || !strings.HasPrefix(stderr, want) {
			t.Errorf("%s: status %d, stderr %q; want 2 and %q", args[0], status, stderr, want)
		}
	}
}

// TestHelpText checks that the help says what the other tests check: how
// keys are read (CRLF, empty lines), "-" for the filter file, the exit
// statuses.
func TestHelpText(t *testing.T) {
	_, usage, _ := runCmd(t, "", "help")
	for _, want := range []string{
		`a trailing "\r" is removed (CRLF line endings) and empty lines are skipped`,
		`FILE "-" reads the filter from standard input`,
		"Exit status, as grep's: 0 on success (query: some key may be present), 1 if query finds no key, 2 on errors and bad usage.",
	} {
		if !strings.Contains(strings.Join(strings.Fields(usage), " "), want) {
			t.Errorf("help lacks %q:\n%s", want, usage)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"build", `a trailing "\r" is removed (CRLF line endings) and empty lines are skipped`},
		{"query", `a trailing "\r" is removed (CRLF line endings) and empty lines are skipped`},
		{"query", `FILE "-" reads the filter from standard input`},
		{"info", `FILE "-" reads the filter from standard input`},
	} {
		_, help, _ := runCmd(t, "", "help", tc.name)
		if !strings.Contains(strings.Join(strings.Fields(help), " "), tc.want) {
			t.Errorf("help %s lacks %q:\n%s", tc.name, tc.want, help)
		}
	}
	if status, stdout, stderr := runCmd(t, "", "help", "frobnicate"); status != 2 || stdout != "" || !strings.HasPrefix(stderr, `cuckoo help: unknown command "frobnicate"`) {
		t.Errorf("help frobnicate: status %d, stdout %q, stderr %q; want 2 and an error", status, stdout, stderr)
	}
}

// TestCountsInWords checks "1 key" against "2 keys" wherever a count is
// printed, and that a growing filter's Len is called entries.
func TestCountsInWords(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "f.cuckoo")
	status, stdout, _ := runCmd(t, "k\nk\n", "build", "-o", out)
	if want := out + ": 1 key (1 duplicate line skipped), 12-bit fingerprints, 1 entry in "; status != 0 || !strings.HasPrefix(stdout, want) {
		t.Errorf("build of one key: status %d, stdout %q; want it to start with %q", status, stdout, want)
	}
	status, stdout, _ = runCmd(t, "k\nk\nl\n", "build", "-capacity", "10", "-o", out)
	if want := out + ": 2 keys (1 duplicate line skipped), 12-bit fingerprints, 5 per bucket, 50 slots"; status != 0 || !strings.HasPrefix(stdout, want) {
		t.Errorf("build of two keys: status %d, stdout %q; want it to start with %q", status, stdout, want)
	}
	status, _, stderr := runCmd(t, "k\n", "query", out)
	if status != 0 || stderr != "1 key: 1 maybe present, 0 absent\n" {
		t.Errorf("query of one key: status %d, stderr %q", status, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	status, _, stderr = runCmd(t, "", "info", writeFile(t, "t.cuckoo", string(data)+"x"))
	if want := fmt.Sprintf("1 byte of trailing data after the %d-byte filter", len(data)); status != 2 || !strings.Contains(stderr, want) {
		t.Errorf("info with 1 extra byte: status %d, stderr %q; want %q", status, stderr, want)
	}
	status, _, stderr = runCmd(t, "k\n", "build", "-progress", "-o", out)
	if status != 0 || !strings.Contains(stderr, "building: 1 key ") {
		t.Errorf("build -progress of one key: status %d, stderr %q", status, stderr)
	}
	// A growing filter's Len counts entries (doublings add copies of some):
	// info calls them so.
	growing := buildFilter(t, keyLines("k", 1000))
	status, stdout, _ = runCmd(t, "", "info", growing)
	if status != 0 || !strings.Contains(stdout, "entries:              1000\n") || !strings.Contains(stdout, "bits per entry:") ||
		strings.Contains(stdout, "items:") {
		t.Errorf("info of a growing filter: status %d, stdout:\n%s\nwant entries, not items", status, stdout)
	}
}

// TestBuildSummary checks build's summary of a growing filter whose Len (its
// entries) differs from the keys read, as after many doublings, which add
// copies of some entries: the keys are the count build read, the entries
// the filter's Len.
func TestBuildSummary(t *testing.T) {
	g, err := cuckoo.NewGrowing(1000, cuckoo.WithSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if err := g.Insert([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	got := buildSummary("f.cuckoo", g, 3, 1, true, 100)
	want := "f.cuckoo: 3 keys (1 duplicate line skipped), 12-bit fingerprints, 5 entries in 5808 slots (load 0.1%) after 0 doublings of its 16 shards, 100 bytes"
	if got != want {
		t.Fatalf("buildSummary:\n%s\nwant\n%s", got, want)
	}
	f, err := cuckoo.New(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Insert([]byte("a")); err != nil {
		t.Fatal(err)
	}
	got = buildSummary("f.cuckoo", f, 1, 0, false, 1)
	want = fmt.Sprintf("f.cuckoo: 1 key, 12-bit fingerprints, %d per bucket, %d slots (load %.1f%%), 1 byte", f.SlotsPerBucket(), f.Cap(), 100*f.LoadFactor())
	if got != want {
		t.Fatalf("buildSummary:\n%s\nwant\n%s", got, want)
	}
}
