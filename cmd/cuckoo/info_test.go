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
	// 264 buckets, 1056 slots, 500 items: load 0.4735, 64·264/500 = 33.79
	// bits per key, 8·0.4735/4096 = 0.09248%.
	for _, want := range []string{
		"(2160 bytes)",
		"fingerprint bits:     12\n",
		"format:               fixed\n",
		"buckets:              264 (4 slots each, 1056 slots)\n",
		"seed:                 42\n",
		"items:                500\n",
		"load factor:          0.4735\n",
		"bits per key:         33.79\n",
		"false-positive rate:  0.09248% (8·α/2^12)\n",
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
		!strings.Contains(stdout, "false-positive rate:  0% (8·α/2^8)\n") || !strings.Contains(stdout, "fingerprint bits:     8\n") {
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
	nodes, depth := g.Nodes()
	if nodes < 7 || depth < 2 {
		t.Fatalf("100,000 keys in %d nodes, depth %d; want at least 7 nodes, depth 2", nodes, depth)
	}
	// Every node has 4096 buckets: 16,384 slots, 15,564 keys at 95%.
	if g.Cap() != nodes*16384 {
		t.Fatalf("Cap() = %d; want %d nodes of 16384 slots", g.Cap(), nodes)
	}
	for _, want := range []string{
		"format:               growing (",
		fmt.Sprintf("nodes:                %d\n", nodes),
		fmt.Sprintf("depth:                %d (a lookup searches at most %d nodes, one per depth)\n", depth, depth+1),
		"node capacity:        15564 keys (at 95% load; 16384 slots)\n",
		fmt.Sprintf("slots:                %d (%d buckets of 4 slots)\n", g.Cap(), g.Cap()/4),
		"items:                100000\n",
		// 64 bits per bucket of 4 slots, over all nodes' slots.
		fmt.Sprintf("bits per key:         %.2f\n", float64(16*nodes*16384)/100_000),
		fmt.Sprintf("false-positive rate:  ≤ %.4g%% (an upper estimate: 8·α/(2^12-1) for each node on a key's path, α the node's load, summed over the depths)\n", 100*g.FalsePositiveRate()),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("info output lacks %q:\n%s", want, stdout)
		}
	}
	// The rate of a path deeper than one node is above one full node's.
	if one := 8 * 0.95 / 4095; g.FalsePositiveRate() <= one {
		t.Errorf("FalsePositiveRate() = %g at depth %d; want more than one full node's %g", g.FalsePositiveRate(), depth, one)
	}
}
