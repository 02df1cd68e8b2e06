package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

// TestBuildDuplicates checks that build stores each distinct key once,
// reports the duplicate lines it skipped, and, given -capacity, sizes the
// filter for it, from a file and from standard input.
func TestBuildDuplicates(t *testing.T) {
	// 11,000 lines, 10,000 distinct keys: 1,000 of them on two lines, and
	// one key on 12 lines.
	var b strings.Builder
	b.WriteString(keyLines("key-", 10000))
	b.WriteString(keyLines("key-", 989))
	for range 11 {
		b.WriteString("key-9999\n")
	}
	input := b.String()
	want, err := cuckoo.New(12000) // the -capacity of the fixed cases
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "keys.txt", input)
	for _, tc := range []struct {
		name, stdin string
		args        []string
	}{
		{"file", "", []string{file}},
		{"stdin", input, nil},
		{"file/capacity", "", []string{"-capacity", "12000", file}},
		{"stdin/capacity", input, []string{"-capacity", "12000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "f.cuckoo")
			status, stdout, stderr := runCmd(t, tc.stdin, append([]string{"build", "-o", out}, tc.args...)...)
			if status != exitOK || !strings.Contains(stdout, "10000 keys (1000 duplicate lines skipped)") {
				t.Fatalf("status %d, stdout %q, stderr %q; want 0 and 10000 keys, 1000 duplicates", status, stdout, stderr)
			}
			f := loadFile(t, out)
			if f.Len() != 10000 {
				t.Fatalf("Len() = %d; want 10000", f.Len())
			}
			if len(tc.args) > 1 && f.Cap() != want.Cap() {
				t.Fatalf("Cap() = %d; want %d, the size for -capacity 12000", f.Cap(), want.Cap())
			}
			for i := range 10000 {
				if !f.Lookup(fmt.Appendf(nil, "key-%d", i)) {
					t.Fatalf("key-%d not found", i)
				}
			}
		})
	}
}

// TestBuildKeepDuplicates checks -keep-duplicates: copies are stored, and
// a key on more than 10 lines (8 with -slots 4) gets an error that names
// it and says that no capacity helps, not the advice to raise the
// capacity.
func TestBuildKeepDuplicates(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.cuckoo")
	input := keyLines("k", 100) + strings.Repeat("k7\n", 7)
	status, stdout, stderr := runCmd(t, input, "build", "-keep-duplicates", "-seed", "0", "-o", out)
	if status != exitOK || !strings.Contains(stdout, "107 keys,") {
		t.Fatalf("status %d, stdout %q, stderr %q; want 0 and 107 keys", status, stdout, stderr)
	}
	f := loadFile(t, out)
	deleted := 0
	for f.Delete([]byte("k7")) {
		deleted++
	}
	if deleted != 8 {
		t.Fatalf("k7 stored %d times; want 8", deleted)
	}
	status, _, stderr = runCmd(t, keyLines("k", 100)+strings.Repeat("k7\n", 10), "build", "-keep-duplicates", "-capacity", "1000000", "-seed", "0", "-o", out)
	if status != exitError || !strings.Contains(stderr, `key "k7" is on more than 10 lines`) || strings.Contains(stderr, "larger -capacity") {
		t.Fatalf("-capacity 1000000, k7 on 11 lines: status %d, stderr %q; want %d and the key named", status, stderr, exitError)
	}
	status, _, stderr = runCmd(t, keyLines("k", 100)+strings.Repeat("k7\n", 8), "build", "-keep-duplicates", "-capacity", "1000000", "-slots", "4", "-seed", "0", "-o", out)
	if status != exitError || !strings.Contains(stderr, `key "k7" is on more than 8 lines`) {
		t.Fatalf("-capacity 1000000 -slots 4, k7 on 9 lines: status %d, stderr %q; want %d and the key named", status, stderr, exitError)
	}
	// A growing filter does not double for the ninth copy (its copies
	// would all go the same way): it refuses it as a fixed one does.
	status, _, stderr = runCmd(t, keyLines("k", 100)+strings.Repeat("k7\n", 8), "build", "-keep-duplicates", "-seed", "0", "-o", out)
	if status != exitError || !strings.Contains(stderr, `key "k7"`) {
		t.Fatalf("growing, k7 on 9 lines: status %d, stderr %q; want %d and the key named", status, stderr, exitError)
	}
}

// TestBuildFullOfCollisions checks the message for a key whose buckets are
// full of other keys with its fingerprint: 9 distinct keys that collide
// with each other in a two-bucket filter.
func TestBuildFullOfCollisions(t *testing.T) {
	// A base key with two distinct buckets: 8 copies of it fit.
	var probe *cuckoo.Filter
	var base string
	for i := 0; base == ""; i++ {
		f, err := cuckoo.New(7, cuckoo.WithFingerprintBits(8), cuckoo.WithSeed(0)) // 2 buckets
		if err != nil {
			t.Fatal(err)
		}
		k := fmt.Sprint("base", i)
		fits := 0
		for fits < 8 && f.Insert([]byte(k)) == nil {
			fits++
		}
		if fits == 8 {
			probe, base = f, k
		}
	}
	// Keys that probe (full of base) reports present share the
	// fingerprint of base, and with two buckets in all, its buckets.
	colliders := []string{base}
	for i := 0; len(colliders) < 9; i++ {
		if k := fmt.Sprint("c", i); probe.Lookup([]byte(k)) {
			colliders = append(colliders, k)
		}
	}
	out := filepath.Join(t.TempDir(), "f.cuckoo")
	status, _, stderr := runCmd(t, strings.Join(colliders, "\n")+"\n", "build", "-bits", "8", "-capacity", "7", "-seed", "0", "-o", out)
	if status != exitError || !strings.Contains(stderr, "share its fingerprint") {
		t.Fatalf("status %d, stderr %q; want %d and the collision explained", status, stderr, exitError)
	}
}

// TestBuildEmptyInputWarns checks that an input without keys still builds
// an empty filter but warns.
func TestBuildEmptyInputWarns(t *testing.T) {
	for _, input := range []string{"", "\n\n\r\n"} {
		out := filepath.Join(t.TempDir(), "f.cuckoo")
		status, _, stderr := runCmd(t, input, "build", "-o", out)
		if status != exitOK || !strings.Contains(stderr, "warning: the input holds no keys") {
			t.Fatalf("input %q: status %d, stderr %q; want 0 and a warning", input, status, stderr)
		}
		if f := loadFile(t, out); f.Len() != 0 {
			t.Fatalf("Len() = %d; want 0", f.Len())
		}
	}
	status, _, stderr := runCmd(t, "k\n", "build", "-o", filepath.Join(t.TempDir(), "f.cuckoo"))
	if status != exitOK || stderr != "" {
		t.Fatalf("one key: status %d, stderr %q; want 0 and no warning", status, stderr)
	}
}

// TestBuildMemoryCheck checks that a filter larger than the available
// memory is refused with a message, before anything is allocated.
func TestBuildMemoryCheck(t *testing.T) {
	meminfo := writeFile(t, "meminfo", "MemTotal:       4000 kB\nMemFree:        1000 kB\nMemAvailable:    1024 kB\n")
	defer func(old string) { memInfoPath = old }(memInfoPath)
	memInfoPath = meminfo
	out := filepath.Join(t.TempDir(), "f.cuckoo")
	// 10M keys: 2,061,856 five-slot buckets, 16,494,848 bytes.
	status, stdout, stderr := runCmd(t, "k\n", "build", "-capacity", "10000000", "-o", out)
	want := "a filter for 10000000 keys needs 15.7 MiB of memory, but only 1.0 MiB is available"
	if status != exitError || stdout != "" || !strings.Contains(stderr, want) || strings.Contains(stderr, "goroutine") {
		t.Fatalf("status %d, stderr %q; want %d and %q", status, stderr, exitError, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused build wrote its output")
	}
	// Within the available memory, and without /proc/meminfo, it builds.
	if status, _, stderr := runCmd(t, "k\n", "build", "-capacity", "100000", "-o", out); status != exitOK {
		t.Fatalf("100000 keys in 1 MiB: status %d, %s", status, stderr)
	}
	memInfoPath = filepath.Join(t.TempDir(), "none")
	if status, _, stderr := runCmd(t, "k\n", "build", "-capacity", "10000000", "-o", out); status != exitOK {
		t.Fatalf("no meminfo: status %d, %s", status, stderr)
	}
	for _, lay := range []struct{ bits, slots, perWord int }{{12, 5, 5}, {12, 4, 4}, {15, 4, 4}, {8, 4, 8}} {
		f, err := cuckoo.New(10000000, cuckoo.WithFingerprintBits(lay.bits), cuckoo.WithSlotsPerBucket(lay.slots))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := uint64(f.Cap()/lay.perWord)*8, tableBytes(10000000, lay.bits, lay.slots); got != want {
			t.Fatalf("tableBytes(10M, %d, %d) = %d; the filter has %d bytes of table", lay.bits, lay.slots, want, got)
		}
	}
}

// TestVersionAndHelp checks --version and -h.
func TestVersionAndHelp(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		status, stdout, stderr := runCmd(t, "", arg)
		if status != exitOK || stderr != "" || !strings.HasPrefix(stdout, "cuckoo "+version()+" go") {
			t.Fatalf("%s: status %d, stdout %q, stderr %q", arg, status, stdout, stderr)
		}
	}
	if v := version(); v != "(devel)" && !strings.HasPrefix(v, "v") {
		t.Fatalf("version() = %q; want (devel) or a module version", v)
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		status, stdout, _ := runCmd(t, "", args...)
		if status != exitOK || !strings.Contains(stdout, "Usage:") {
			t.Fatalf("%v: status %d, stdout %q; want 0 and the usage", args, status, stdout)
		}
	}
	for _, name := range []string{"build", "query", "info"} {
		status, _, stderr := runCmd(t, "", name, "-h")
		if status != exitOK || !strings.Contains(stderr, "usage: cuckoo "+name) {
			t.Fatalf("%s -h: status %d, stderr %q; want 0 and the usage", name, status, stderr)
		}
	}
}
