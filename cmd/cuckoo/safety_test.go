package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

// dirEntries returns the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// failingWriter accepts limit bytes, then fails.
type failingWriter struct {
	w     io.Writer
	limit int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n, _ := f.w.Write(p[:f.limit])
		f.limit = 0
		return n, errors.New("no space left on device (test)")
	}
	f.limit -= len(p)
	return f.w.Write(p)
}

// TestBuildKeepsExistingOutput checks that a build that fails, before or
// while writing, leaves an existing output file as it was and no temporary
// file behind, and that a build that succeeds replaces it, keeping its
// permissions.
func TestBuildKeepsExistingOutput(t *testing.T) {
	keys := keyLines("k", 3000)
	for _, tc := range []struct {
		name  string
		args  []string
		limit int // the writer fails after limit bytes; -1: it does not
		want  string
	}{
		{"full", []string{"-capacity", "10"}, -1, "the filter is full"},
		{"write fails in the header", nil, 10, "no space left"},
		{"write fails in the table", nil, 4000, "no space left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "f.cuckoo")
			if err := os.WriteFile(out, []byte("precious"), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.limit >= 0 {
				defer func(old func(filter, io.Writer) (int64, error)) { encodeFilter = old }(encodeFilter)
				encodeFilter = func(f filter, w io.Writer) (int64, error) {
					return f.WriteTo(&failingWriter{w: w, limit: tc.limit})
				}
			}
			status, _, stderr := runCmd(t, keys, append([]string{"build", "-o", out}, tc.args...)...)
			if status != exitError || !strings.Contains(stderr, tc.want) {
				t.Fatalf("status %d, stderr %q; want %d and %q", status, stderr, exitError, tc.want)
			}
			if data, err := os.ReadFile(out); err != nil || string(data) != "precious" {
				t.Fatalf("output file after a failed build: %q, %v; want it unchanged", data, err)
			}
			if names := dirEntries(t, dir); len(names) != 1 {
				t.Fatalf("directory holds %q after a failed build; want only f.cuckoo", names)
			}
		})
	}
	t.Run("success", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "f.cuckoo")
		if err := os.WriteFile(out, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link.cuckoo")
		if err := os.Symlink("f.cuckoo", link); err != nil {
			t.Fatal(err)
		}
		if status, _, stderr := runCmd(t, keys, "build", "-o", link); status != exitOK {
			t.Fatalf("status %d: %s", status, stderr)
		}
		if f := loadFile(t, out); f.Len() != 3000 {
			t.Fatalf("Len() = %d; want 3000", f.Len())
		}
		st, err := os.Lstat(link)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the symbolic link was replaced (%v)", err)
		}
		if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("output permissions %v (%v); want 0600 kept", st.Mode().Perm(), err)
		}
		if names := dirEntries(t, dir); len(names) != 2 {
			t.Fatalf("directory holds %q; want f.cuckoo and link.cuckoo", names)
		}
	})
	t.Run("device", func(t *testing.T) {
		if status, stdout, stderr := runCmd(t, keys, "build", "-o", os.DevNull); status != exitOK || !strings.Contains(stdout, "3000 keys") {
			t.Fatalf("-o %s: status %d, stdout %q, stderr %q", os.DevNull, status, stdout, stderr)
		}
		if st, err := os.Stat(os.DevNull); err != nil || st.Mode().IsRegular() {
			t.Fatalf("%s is no longer a device: %v", os.DevNull, err)
		}
	})
}

// TestBuildRefusesInputAsOutput checks that build will not write the filter
// over its own key list, named directly, through a link, or as standard
// input.
func TestBuildRefusesInputAsOutput(t *testing.T) {
	keys := keyLines("k", 100)
	dir := t.TempDir()
	input := filepath.Join(dir, "keys.txt")
	if err := os.WriteFile(input, []byte(keys), 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.txt")
	if err := os.Link(input, hard); err != nil {
		t.Fatal(err)
	}
	soft := filepath.Join(dir, "soft.txt")
	if err := os.Symlink("keys.txt", soft); err != nil {
		t.Fatal(err)
	}
	check := func(name string, status int, stderr string) {
		t.Helper()
		if status != exitError || !strings.Contains(stderr, "names the input file") {
			t.Errorf("%s: status %d, stderr %q; want %d and a refusal", name, status, stderr, exitError)
		}
		if data, err := os.ReadFile(input); err != nil || string(data) != keys {
			t.Fatalf("%s: the key list was changed (%v)", name, err)
		}
	}
	for _, out := range []string{input, hard, soft, filepath.Join(dir, ".", "keys.txt")} {
		status, _, stderr := runCmd(t, "", "build", "-o", out, input)
		check("-o "+out, status, stderr)
	}
	in, err := os.Open(input)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var stdout, stderr bytes.Buffer
	status := run([]string{"build", "-o", input}, in, &stdout, &stderr)
	check("standard input", status, stderr.String())
}

// TestBuildToStdout checks that -o - writes the filter to standard output
// and the summary to standard error, and creates no file named "-".
func TestBuildToStdout(t *testing.T) {
	t.Chdir(t.TempDir())
	status, stdout, stderr := runCmd(t, keyLines("k", 500), "build", "-o", "-")
	if status != exitOK || !strings.HasPrefix(stderr, "standard output: 500 keys") {
		t.Fatalf("status %d, stderr %q; want 0 and the summary", status, stderr)
	}
	var f cuckoo.Growing // without -capacity the filter grows
	if err := f.UnmarshalBinary([]byte(stdout)); err != nil || f.Len() != 500 {
		t.Fatalf("standard output is not the filter: %v (Len %d)", err, f.Len())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Fatal("build -o - created a file named -")
	}
}

// TestLoadTrailingData checks that query and info reject a filter file with
// bytes after the filter.
func TestLoadTrailingData(t *testing.T) {
	filter := buildFilter(t, keyLines("key-", 100))
	data, err := os.ReadFile(filter)
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{"\n", "garbage", string(data)} {
		path := writeFile(t, "f.cuckoo", string(data)+extra)
		want := fmt.Sprintf("%d bytes of trailing data after the %d-byte filter", len(extra), len(data))
		if len(extra) == 1 {
			want = fmt.Sprintf("1 byte of trailing data after the %d-byte filter", len(data))
		}
		status, stdout, stderr := runCmd(t, "", "info", path)
		if status != exitError || stdout != "" || !strings.Contains(stderr, want) {
			t.Errorf("info with %d extra bytes: status %d, stdout %q, stderr %q; want %d and %q", len(extra), status, stdout, stderr, exitError, want)
		}
		status, stdout, stderr = runCmd(t, "key-1\n", "query", path)
		if status != queryError || stdout != "" || !strings.Contains(stderr, want) {
			t.Errorf("query with %d extra bytes: status %d, stdout %q, stderr %q; want %d and %q", len(extra), status, stdout, stderr, queryError, want)
		}
	}
}
