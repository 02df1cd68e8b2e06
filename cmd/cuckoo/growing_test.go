package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

// TestBuildGrowingQuery builds a filter from 100,000 keys without
// -capacity: the file must be in the growing format, the filter must have
// grown past 6 nodes (the first holds 15,564 keys), query must find every
// key, and the rate of false positives on absent keys must stay below
// info's upper estimate (with room for sampling noise).
func TestBuildGrowingQuery(t *testing.T) {
	const n = 100_000
	keys := keyLines("key-", n)
	for _, tc := range []struct {
		name, stdin string
		args        []string
	}{
		{"file", "", []string{writeFile(t, "keys.txt", keys)}},
		{"stdin", keys, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "f.cuckoo")
			status, stdout, stderr := runCmd(t, tc.stdin, append([]string{"build", "-seed", "42", "-o", out}, tc.args...)...)
			if status != exitOK || stderr != "" || !strings.HasPrefix(stdout, out+": 100000 keys (0 duplicate lines skipped)") {
				t.Fatalf("build: status %d, stdout %q, stderr %q", status, stdout, stderr)
			}
			if magic := fileMagic(t, out); magic != "CUCKOOGR" {
				t.Fatalf("file starts with %q; want the growing format's \"CUCKOOGR\"", magic)
			}
			g, ok := loadFile(t, out).(*cuckoo.Growing)
			if !ok {
				t.Fatalf("loadFilter returned %T; want *cuckoo.Growing", loadFile(t, out))
			}
			d := g.Doublings()
			if d < 4 || g.Len() != n {
				t.Fatalf("%d doublings, Len() %d; want at least 4 doublings and %d keys", d, g.Len(), n)
			}
			if want := fmt.Sprintf(" after %d doublings of its 16 shards, ", d); !strings.Contains(stdout, want) {
				t.Fatalf("build summary %q lacks %q", stdout, want)
			}

			status, stdout, stderr = runCmd(t, keys, "query", out)
			if status != queryMatched || stderr != "100000 keys: 100000 maybe present, 0 absent\n" {
				t.Fatalf("query of the inserted keys: status %d, stderr %q", status, stderr)
			}
			if lines := strings.Count(stdout, "\ttrue\n"); lines != n || strings.Contains(stdout, "\tfalse\n") {
				t.Fatalf("query of the inserted keys: %d lines true of %d", lines, n)
			}

			status, stdout, stderr = runCmd(t, keyLines("absent-", n), "query", out)
			positives := strings.Count(stdout, "\ttrue\n")
			if status != queryMatched || positives+strings.Count(stdout, "\tfalse\n") != n ||
				stderr != fmt.Sprintf("100000 keys: %d maybe present, %d absent\n", positives, n-positives) {
				t.Fatalf("query of absent keys: status %d, stderr %q, %d true", status, stderr, positives)
			}
			estimate := infoFPR(t, out)
			measured := float64(positives) / n
			t.Logf("false positives: %d of %d (%.4f%%); info's estimate %.4f%%", positives, n, 100*measured, 100*estimate)
			// About 300 positives are expected: 20% is over 3 standard
			// deviations.
			if measured > 1.2*estimate || measured < estimate/1.2 {
				t.Fatalf("measured false-positive rate %.4f%%; info says %.4f%%", 100*measured, 100*estimate)
			}
		})
	}
}

// infoFPR runs info on the file at path and returns the false-positive rate
// it prints, as a fraction.
func infoFPR(t *testing.T, path string) float64 {
	t.Helper()
	status, stdout, stderr := runCmd(t, "", "info", path)
	if status != exitOK {
		t.Fatalf("info: status %d, stderr %q", status, stderr)
	}
	m := regexp.MustCompile(`false-positive rate: +([0-9.e+-]+)% \(from the entries stored`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("info prints no false-positive rate from the entries stored:\n%s", stdout)
	}
	pct, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return pct / 100
}

// TestBuildCapacityStaysFixed checks that build -capacity N still writes
// the fixed format, whatever the input size, and that query and info read
// it as a fixed filter.
func TestBuildCapacityStaysFixed(t *testing.T) {
	keys := keyLines("key-", 20_000) // more than a growing filter's first node
	out := buildFilter(t, keys, "-capacity", "20000", "-seed", "7")
	if magic := fileMagic(t, out); magic != "CUCKOOFL" {
		t.Fatalf("file starts with %q; want the fixed format's \"CUCKOOFL\"", magic)
	}
	f, ok := loadFile(t, out).(*cuckoo.Filter)
	if !ok || f.Len() != 20_000 {
		t.Fatalf("loadFilter returned %T; want a *cuckoo.Filter of 20000 keys", loadFile(t, out))
	}
	if status, _, stderr := runCmd(t, keys, "query", out); status != queryMatched || stderr != "20000 keys: 20000 maybe present, 0 absent\n" {
		t.Fatalf("query: status %d, stderr %q", status, stderr)
	}
	status, stdout, _ := runCmd(t, "", "info", out)
	if status != exitOK || !strings.Contains(stdout, "format:               fixed, version 2\n") || strings.Contains(stdout, "nodes:") {
		t.Fatalf("info: status %d, output:\n%s", status, stdout)
	}
}

// TestGrowingFileDamaged checks that info and query reject a damaged
// growing filter file with the decoder's reason after the file's name (and
// not the library's "cuckoo: " prefix a second time), exit 2, and print
// nothing on standard output.
func TestGrowingFileDamaged(t *testing.T) {
	// 40,000 keys: sixteen shards, the first of 64 buckets doubled twice
	// or more.
	good := buildFilter(t, keyLines("key-", 40_000), "-seed", "3")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	const hdr = 48 + 16*16 // header and shard records
	words := (len(data) - hdr - 8) / 8
	if shards, base, d := data[14], binary.LittleEndian.Uint64(data[48:]), data[56]; shards != 16 || base != 64 || d < 2 || words < 16*64*4 {
		t.Fatalf("%d shards, the first of %d buckets doubled %d times, %d words in all; want 16, 64, at least 2, at least %d", shards, base, d, words, 16*64*4)
	}
	edit := func(f func(b []byte) []byte) string {
		b := f(append([]byte(nil), data...))
		return string(b)
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"flipped bit in the table", edit(func(b []byte) []byte {
			b[hdr+8*words/2+3] ^= 4
			return b
		}), "checksum mismatch"},
		{"flipped bit in the last checksum", edit(func(b []byte) []byte {
			b[len(b)-1] ^= 1
			return b
		}), "checksum mismatch"},
		{"doublings", edit(func(b []byte) []byte {
			b[56] = 30
			return b
		}), "impossible parameters: shard 0: 30 doublings"},
		{"base buckets", edit(func(b []byte) []byte {
			b[48], b[49] = 0, 0
			return b
		}), "impossible parameters: shard 0: 0 base buckets"},
		{"version", edit(func(b []byte) []byte {
			b[8] = 9
			return b
		}), "unknown growing format version 9"},
		{"truncated in the table", string(data[:hdr+500]), "truncated data"},
		{"truncated in the checksum", string(data[:len(data)-3]), "truncated data"},
		{"truncated in the magic", string(data[:7]), "truncated data"},
		{"trailing data", string(data) + "x", "1 byte of trailing data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "bad.cuckoo", tc.data)
			for _, c := range []struct {
				cmd  string
				exit int
			}{{"info", exitError}, {"query", queryError}} {
				status, stdout, stderr := runCmd(t, "key-1\n", c.cmd, path)
				prefix := "cuckoo " + c.cmd + ": " + path + ": "
				if status != c.exit || stdout != "" || !strings.HasPrefix(stderr, prefix) || !strings.Contains(stderr, tc.want) ||
					strings.Contains(stderr, ": cuckoo: ") || strings.Count(stderr, "\n") != 1 {
					t.Errorf("%s: status %d, stdout %q, stderr %q; want %d and %q after %q", c.cmd, status, stdout, stderr, c.exit, tc.want, prefix)
				}
			}
		})
	}
}
