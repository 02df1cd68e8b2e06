package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

// buildFilter builds a filter file from keys (with default flags) and
// returns its path.
func buildFilter(t *testing.T, keys string, flags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "f.cuckoo")
	args := append([]string{"build", "-o", out}, flags...)
	status, _, stderr := runCmd(t, keys, args...)
	if status != exitOK {
		t.Fatalf("build %v: status %d: %s", flags, status, stderr)
	}
	return out
}

// loadFile loads a filter file of either format, as the commands do.
func loadFile(t *testing.T, path string) filter {
	t.Helper()
	f, _, err := loadFilter(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fileMagic returns the first 8 bytes of the file at path.
func fileMagic(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 8 {
		t.Fatalf("%s: %d bytes, %v", path, len(data), err)
	}
	return string(data[:8])
}

func TestBuild(t *testing.T) {
	const n = 5000
	keys := keyLines("key-", n)
	input := writeFile(t, "keys.txt", keys)
	for _, tc := range []struct {
		name     string
		stdin    string
		args     []string
		wantBits int
		wantCap  int // 0: at least n
	}{
		{"file/count", "", []string{input}, 12, 0},
		{"stdin/buffer", keys, nil, 12, 0},
		{"stdin/dash", keys, []string{"-"}, 12, 0},
		{"stdin/capacity", keys, []string{"-capacity", "20000"}, 12, 20655},
		{"stdin/capacity/slots 4", keys, []string{"-capacity", "20000", "-slots", "4"}, 12, 21088},
		{"file/capacity/bits=8", "", []string{"-capacity", "8000", "-bits", "8", input}, 8, 8744},
		{"flags after input", "", []string{input, "-bits", "12", "-seed", "9"}, 12, 0},
		{"crlf and blank lines", strings.ReplaceAll(keys, "\n", "\r\n\n"), nil, 12, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "f.cuckoo")
			status, stdout, stderr := runCmd(t, tc.stdin, append([]string{"build", "-o", out}, tc.args...)...)
			if status != exitOK || stderr != "" {
				t.Fatalf("status %d, stderr %q; want 0 and nothing", status, stderr)
			}
			if !strings.Contains(stdout, "5000 keys") {
				t.Fatalf("stdout %q; want a summary with 5000 keys", stdout)
			}
			// Without -capacity the filter grows (the growing format);
			// with it, it is a fixed filter of that size.
			if magic, want := fileMagic(t, out), map[bool]string{true: "CUCKOOFL", false: "CUCKOOGR"}[tc.wantCap != 0]; magic != want {
				t.Fatalf("file starts with %q; want %q", magic, want)
			}
			f := loadFile(t, out)
			if f.Len() != n || f.FingerprintBits() != tc.wantBits {
				t.Fatalf("Len() = %d, bits %d; want %d, %d", f.Len(), f.FingerprintBits(), n, tc.wantBits)
			}
			if tc.wantCap != 0 && f.Cap() != tc.wantCap || f.Cap() < n {
				t.Fatalf("Cap() = %d; want %d (at least %d)", f.Cap(), tc.wantCap, n)
			}
			for i := 0; i < n; i += 7 {
				key := "key-" + strconv.Itoa(i)
				if !f.Lookup([]byte(key)) {
					t.Fatalf("Lookup(%q) = false", key)
				}
			}
		})
	}
}

func TestBuildSeed(t *testing.T) {
	keys := keyLines("k", 100)
	a := buildFilter(t, keys, "-seed", "7")
	if f := loadFile(t, a); f.Seed() != 7 {
		t.Fatalf("Seed() = %d; want 7", f.Seed())
	}
	b := buildFilter(t, keys, "-seed", "7")
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Fatal("two builds of the same keys and seed differ")
	}
}

// TestBuildRandomSeed checks that builds without -seed draw different
// seeds, and that -seed 0 is kept as given.
func TestBuildRandomSeed(t *testing.T) {
	keys := keyLines("k", 100)
	a, b := loadFile(t, buildFilter(t, keys)), loadFile(t, buildFilter(t, keys))
	if a.Seed() == b.Seed() {
		t.Fatalf("Seed() of two builds without -seed: got %d twice; want different random seeds", a.Seed())
	}
	if f := loadFile(t, buildFilter(t, keys, "-seed", "0")); f.Seed() != 0 {
		t.Fatalf("Seed() with -seed 0: got %d; want 0", f.Seed())
	}
}

func TestBuildEmptyInput(t *testing.T) {
	out := buildFilter(t, "")
	f := loadFile(t, out)
	g, ok := f.(*cuckoo.Growing)
	if !ok || f.Len() != 0 {
		t.Fatalf("empty input: %T with Len() = %d; want an empty *cuckoo.Growing", f, f.Len())
	}
	if d := g.Doublings(); d != 0 {
		t.Fatalf("empty input: %d doublings; want 0", d)
	}
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"full", keyLines("k", 1000), []string{"-capacity", "10"}, "the filter is full after"},
		{"missing input", "", []string{filepath.Join(dir, "nope.txt")}, "no such file"},
		{"unwritable output", "k\n", []string{"-o", filepath.Join(dir, "no", "such", "dir")}, "no such file"},
		{"long line", strings.Repeat("x", maxKeyLen+1), nil, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".cuckoo")
			status, stdout, stderr := runCmd(t, tc.stdin, append([]string{"build", "-o", out}, tc.args...)...)
			if status != exitError || stdout != "" || !strings.HasPrefix(stderr, "cuckoo build: ") || !strings.Contains(stderr, tc.want) {
				t.Fatalf("status %d, stdout %q, stderr %q; want %d and %q", status, stdout, stderr, exitError, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatal("a failed build left its output file")
			}
		})
	}
}

func TestBuildProgress(t *testing.T) {
	keys := keyLines("k", 1000)
	input := writeFile(t, "keys.txt", keys)
	out := filepath.Join(t.TempDir(), "f.cuckoo")
	// Standard input that is a regular file has a size too, from where it
	// is read.
	stdinFile := func(t *testing.T) io.Reader {
		f, err := os.Open(input)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if _, err := f.Seek(int64(len("k0\nk1\n")), io.SeekStart); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name  string
		stdin func(*testing.T) io.Reader
		args  []string
		want  string
	}{
		// A file's size is the total: its keys are not counted first.
		{"file", nil, []string{input}, "] 100% 1000 keys"},
		{"file/capacity", nil, []string{"-capacity", "2000", input}, "] 100% 1000 keys"},
		{"stdin", func(*testing.T) io.Reader { return strings.NewReader(keys) }, nil, "building: 1000 keys"},
		{"stdin/capacity", func(*testing.T) io.Reader { return strings.NewReader(keys) }, []string{"-capacity", "2000"}, "building: 1000 keys"},
		{"stdin is a file", stdinFile, nil, "] 100% 998 keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdin io.Reader = strings.NewReader("")
			if tc.stdin != nil {
				stdin = tc.stdin(t)
			}
			var stdout, stderr bytes.Buffer
			status := run(append([]string{"build", "-progress", "-o", out}, tc.args...), stdin, &stdout, &stderr)
			if status != exitOK || !strings.Contains(stderr.String(), tc.want) || !strings.HasSuffix(stderr.String(), "s\n") {
				t.Fatalf("status %d, stderr %q; want 0 and %q", status, stderr.String(), tc.want)
			}
		})
	}
	// Without -progress, stderr (not a terminal here) stays quiet.
	status, _, stderr := runCmd(t, "", "build", "-o", out, input)
	if status != exitOK || stderr != "" {
		t.Fatalf("without -progress: status %d, stderr %q; want 0 and nothing", status, stderr)
	}
}

// TestProgressSteps checks that a bar over 2 MB of input redraws once per
// percent of it, and that a count of keys stays quiet until its threshold.
func TestProgressSteps(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "building", 2_000_000, 0)
	for n := int64(1); n <= 2_000_000; n++ {
		p.set(n/10, n) // 10 bytes a key
	}
	p.done(200_000, 2_000_000)
	if got := strings.Count(buf.String(), "\r"); got != 102 {
		t.Fatalf("%d redraws; want 102 (0%%, each percent, and the final one)", got)
	}
	if want := "] 100% 200000 keys"; !strings.Contains(buf.String(), want) {
		t.Fatalf("final state %q; want %q", buf.String()[strings.LastIndex(buf.String(), "\r"):], want)
	}
	// Quiet until a threshold, for small inputs on a terminal, with or
	// without a known size; then a count every 100,000 keys.
	for _, size := range []int64{-1, 1 << 30} {
		buf.Reset()
		p = newProgress(&buf, "building", size, 1_000_000)
		for n := int64(1); n <= 999_999; n++ {
			p.set(n, 10*n)
		}
		p.done(999_999, 9_999_990)
		if buf.Len() != 0 {
			t.Fatalf("size %d: drew %q before the threshold", size, buf.String())
		}
	}
	buf.Reset()
	p = newProgress(&buf, "building", -1, 1_000_000)
	for n := int64(1); n <= 1_500_000; n++ {
		p.set(n, 10*n)
	}
	if got, want := buf.String(), "\rbuilding: 1000000 keys\rbuilding: 1100000 keys\rbuilding: 1200000 keys\rbuilding: 1300000 keys\rbuilding: 1400000 keys\rbuilding: 1500000 keys"; got != want {
		t.Fatalf("count past the threshold: %q; want %q", got, want)
	}
	var nilBar *progress
	nilBar.set(5, 50)
	nilBar.done(5, 50)
}

// TestBuildPrecision checks -bits 15 and -fpr: the size -fpr chooses is in
// the file, and -fpr with -bits, without -capacity, or with a rate no size
// gives is a usage error that says why.
func TestBuildPrecision(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args        []string
		bits, slots int
	}{
		{[]string{"-bits", "15"}, 15, 4},
		{[]string{"-fpr", "0.03"}, 8, 4},
		{[]string{"-fpr", "0.028"}, 12, 5},
		{[]string{"-fpr", "0.0025"}, 12, 5},
		{[]string{"-fpr", "0.002"}, 12, 4},
		{[]string{"-fpr", "0.00025"}, 15, 4},
	} {
		out := filepath.Join(dir, "f.cf")
		args := append([]string{"build", "-capacity", "1000", "-o", out}, tc.args...)
		if status, _, stderr := runCmd(t, keyLines("k", 500), args...); status != 0 {
			t.Fatalf("%v: status %d, %s", tc.args, status, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var f cuckoo.Filter
		if err := f.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		if f.FingerprintBits() != tc.bits || f.SlotsPerBucket() != tc.slots || f.Len() != 500 {
			t.Errorf("%v: %d-bit fingerprints, %d slots, %d keys; want %d-bit, %d slots, 500", tc.args, f.FingerprintBits(), f.SlotsPerBucket(), f.Len(), tc.bits, tc.slots)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-capacity", "1000", "-fpr", "0.01", "-bits", "12"}, "without -bits and -slots"},
		{[]string{"-capacity", "1000", "-fpr", "0.01", "-slots", "4"}, "without -bits and -slots"},
		{[]string{"-capacity", "1000", "-slots", "3"}, "-slots must be 4 or 5"},
		{[]string{"-capacity", "1000", "-slots", "5", "-bits", "8"}, "-slots 5 needs 12-bit"},
		{[]string{"-slots", "4"}, "-slots needs -capacity"},
		{[]string{"-fpr", "0.01"}, "-fpr needs -capacity"},
		{[]string{"-capacity", "1000", "-fpr", "0.0001"}, "no fingerprint size"},
		{[]string{"-capacity", "1000", "-fpr", "2"}, "between 0 and 1"},
		{[]string{"-capacity", "1000", "-bits", "16"}, "8, 12 or 15"},
	} {
		args := append([]string{"build", "-o", filepath.Join(dir, "g.cf")}, tc.args...)
		status, _, stderr := runCmd(t, "k\n", args...)
		if status != 2 || !strings.HasPrefix(stderr, "cuckoo build: ") || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and a message with %q", tc.args, status, stderr, tc.want)
		}
	}
}
