package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/seed25b00da8/cuckoo"
)

func TestInfo(t *testing.T) {
	filter := buildFilter(t, keyLines("key-", 500), "-capacity", "1000", "-seed", "42")
	status, stdout, stderr := runCmd(t, "", "info", filter)
	if status != exitOK || stderr != "" {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	// 214 buckets (207 and 7 spare), 1070 slots, 500 items: load 0.4673,
	// 64·214/500 = 27.39 bits per key, 10·0.4673/4096 = 0.1141%.
	for _, want := range []string{
		"(1760 bytes)",
		"fingerprint bits:     12\n",
		"format:               fixed, version 2\n",
		"buckets:              214 (5 slots each, 1070 slots)\n",
		"seed:                 42\n",
		"items:                500\n",
		"load factor:          0.4673\n",
		"bits per key:         27.39\n",
		"false-positive rate:  0.1141% (10·α/2^12)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("info output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestInfoEmptyAndBits8(t *testing.T) {
	filter := buildFilter(t, "", "-bits", "8", "-capacity", "10")
	status, stdout, _ := runCmd(t, "", "info", filter)
	if status != exitOK || !strings.Contains(stdout, "bits per key:         - (empty)\n") ||
		!strings.Contains(stdout, "false-positive rate:  0% (8·α/2^8)\n") || !strings.Contains(stdout, "fingerprint bits:     8\n") ||
		!strings.Contains(stdout, "format:               fixed, version 3\n") ||
		!strings.Contains(stdout, "buckets:              16 (4 slots each, two per 64-bit word, 64 slots)\n") {
		t.Fatalf("status %d, output:\n%s", status, stdout)
	}
}

func TestInfoErrors(t *testing.T) {
	filter := buildFilter(t, keyLines("key-", 100))
	data, _ := os.ReadFile(filter)
	data[10] = 16 // fingerprint bits
	bad := writeFile(t, "bad.cuckoo", string(data))
	status, stdout, stderr := runCmd(t, "", "info", bad)
	if status != exitError || stdout != "" || !strings.Contains(stderr, "cuckoo info: "+bad+": impossible parameters: fingerprint bits 16") {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
}

// TestInfoGrowing checks info on a growing filter: its nodes, depth, node
// capacity, bits per key over all its slots, and a false-positive rate
// summed over a key's path, said to be an upper estimate.
func TestInfoGrowing(t *testing.T) {
	filter := buildFilter(t, keyLines("key-", 100_000), "-seed", "42")
	status, stdout, stderr := runCmd(t, "", "info", filter)
	if status != exitOK || stderr != "" {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	g, ok := loadFile(t, filter).(*cuckoo.Growing)
	if !ok {
		t.Fatal("build without -capacity did not write a growing filter")
	}
	// The first tables hold 5,512 keys (growStart, rounded up): each of
	// the sixteen shards doubled at least four times for 100,000 keys.
	d := g.Doublings()
	if d < 4*16 || g.BaseCapacity() != 5512 || g.Cap() < 16*5808 {
		t.Fatalf("100,000 keys after %d doublings from %d keys, %d slots; want at least 64 from 5512, and at least 16 times the first 5808 slots", d, g.BaseCapacity(), g.Cap())
	}
	for _, want := range []string{
		"format:               growing (16 shards, each a table that doubles in place)\n",
		fmt.Sprintf("doublings:            %d (over the 16 shards; the first tables held 5512 keys at 95%% load)\n", d),
		fmt.Sprintf("slots:                %d (%d buckets of 4 slots)\n", g.Cap(), g.Cap()/4),
		// A growing filter's Len counts entries: doublings may add copies.
		fmt.Sprintf("entries:              %d\n", g.Len()),
		// 64 bits per bucket of 4 slots.
		fmt.Sprintf("bits per entry:       %.2f\n", float64(16*g.Cap())/float64(g.Len())),
		fmt.Sprintf("false-positive rate:  %.4g%% (from the entries stored: 2^-k for each entry that compares k bits, over a key's two buckets)\n", 100*g.FalsePositiveRate()),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("info output lacks %q:\n%s", want, stdout)
		}
	}
	// Entries that lived through doublings compare fewer bits: the rate
	// is above that of the same slots holding only fresh 13-bit entries.
	if fresh := 2 * float64(g.Len()) / float64(g.Cap()/4) / 8192; g.FalsePositiveRate() <= fresh {
		t.Errorf("FalsePositiveRate() = %g after %d doublings; want more than fresh entries' %g", g.FalsePositiveRate(), d, fresh)
	}
}
