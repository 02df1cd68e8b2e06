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
	// 64·214/500 = 27.39 bits per key, 10·0.4673/4095 = 0.1141%.
	for _, want := range []string{
		"(1760 bytes)",
		"fingerprint bits:     12\n",
		"format:               fixed, version 2\n",
		"buckets:              214 (5 slots each, 1070 slots)\n",
		"seed:                 42\n",
		"items:                500\n",
		"load factor:          0.4673\n",
		"bits per key:         27.39\n",
		"false-positive rate:  0.1141% (10·α/(2^12-1))\n",
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
		!strings.Contains(stdout, "false-positive rate:  0% (8·α/(2^8-1))\n") || !strings.Contains(stdout, "fingerprint bits:     8\n") ||
		!strings.Contains(stdout, "format:               fixed, version 3\n") ||
		!strings.Contains(stdout, "buckets:              16 (4 slots each, two per 64-bit word, 64 slots)\n") {
		t.Fatalf("status %d, output:\n%s", status, stdout)
	}
}

// TestInfoFalsePositiveRateIsStats checks that info reports the library's
// expected false-positive rate, Stats().FalsePositiveRate (2·b·α/(2^f-1)),
// for a fixed filter of each layout, and FalsePositiveRate() for a growing
// one. 299 keys in 1,000 of capacity make each layout's figure print
// differently from 2·b·α/2^f, which fingerprint 0 (empty) makes too low.
func TestInfoFalsePositiveRateIsStats(t *testing.T) {
	for _, lay := range []struct {
		name  string
		flags []string
		bits  int
		slots int
	}{
		{"packed 8-bit", []string{"-bits", "8"}, 8, 4},
		{"12x5", nil, 12, 5},
		{"12x4", []string{"-slots", "4"}, 12, 4},
		{"15x4", []string{"-bits", "15"}, 15, 4},
	} {
		t.Run(lay.name, func(t *testing.T) {
			file := buildFilter(t, keyLines("key-", 299), append(lay.flags, "-capacity", "1000", "-seed", "7")...)
			f, ok := loadFile(t, file).(*cuckoo.Filter)
			if !ok {
				t.Fatal("build -capacity did not write a fixed filter")
			}
			st := f.Stats()
			if st.FingerprintBits != lay.bits || st.SlotsPerBucket != lay.slots || st.Len != 299 {
				t.Fatalf("Stats: %d-bit fingerprints, %d slots per bucket, %d keys; want %d, %d, 299", st.FingerprintBits, st.SlotsPerBucket, st.Len, lay.bits, lay.slots)
			}
			if want := 2 * float64(lay.slots) * st.LoadFactor / float64(int(1)<<lay.bits-1); st.FalsePositiveRate != want {
				t.Fatalf("Stats().FalsePositiveRate = %g; want 2·%d·α/(2^%d-1) = %g", st.FalsePositiveRate, lay.slots, lay.bits, want)
			}
			if got := falsePositiveRate(f); got != st.FalsePositiveRate {
				t.Errorf("falsePositiveRate: got %g; want Stats().FalsePositiveRate %g", got, st.FalsePositiveRate)
			}
			status, stdout, stderr := runCmd(t, "", "info", file)
			if status != exitOK || stderr != "" {
				t.Fatalf("status %d, stderr %q", status, stderr)
			}
			want := fmt.Sprintf("false-positive rate:  %.4g%% (%d·α/(2^%d-1))\n", 100*st.FalsePositiveRate, 2*lay.slots, lay.bits)
			if !strings.Contains(stdout, want) {
				t.Errorf("info output lacks %q:\n%s", want, stdout)
			}
			// The test tells the two apart: 2^f in place of 2^f-1 prints
			// another figure for these filters.
			if old := fmt.Sprintf("%.4g", 100*2*float64(lay.slots)*st.LoadFactor/float64(int(1)<<lay.bits)); strings.Contains(want, " "+old+"%") {
				t.Errorf("2·b·α/2^f prints %s%% too: the test does not tell it from Stats()'s figure", old)
			}
		})
	}
	t.Run("growing", func(t *testing.T) {
		file := buildFilter(t, keyLines("key-", 20_000), "-seed", "7")
		g, ok := loadFile(t, file).(*cuckoo.Growing)
		if !ok {
			t.Fatal("build without -capacity did not write a growing filter")
		}
		if got, want := falsePositiveRate(g), g.FalsePositiveRate(); got != want || want <= 0 {
			t.Errorf("falsePositiveRate: got %g; want FalsePositiveRate() %g, above 0", got, want)
		}
		_, stdout, _ := runCmd(t, "", "info", file)
		if want := fmt.Sprintf("false-positive rate:  %.4g%% (from the entries stored", 100*g.FalsePositiveRate()); !strings.Contains(stdout, want) {
			t.Errorf("info output lacks %q:\n%s", want, stdout)
		}
	})
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
	// The first tables hold 5,512 keys (growStart, rounded up): 100,000
	// keys need more than 16 times their 5,808 slots, and each of the
	// sixteen shards doubled at least three times (eight times the slots
	// hold 44,096 keys at 95%), most of them partway into their fourth
	// doubling (62 doublings measured).
	d := g.Doublings()
	if d < 3*16 || g.BaseCapacity() != 5512 || g.Cap() < 16*5808 {
		t.Fatalf("100,000 keys after %d doublings from %d keys, %d slots; want at least 48 from 5512, and at least 16 times the first 5808 slots", d, g.BaseCapacity(), g.Cap())
	}
	for _, want := range []string{
		"format:               growing (16 shards, each a table that grows by steps)\n",
		fmt.Sprintf("doublings:            %d (over the 16 shards; the first tables held 5512 keys at 95%% load)\n", d),
		fmt.Sprintf("slots:                %d (%d buckets of 4 slots)\n", g.Cap(), g.Cap()/4),
		// A growing filter's Len counts entries: splits may add copies.
		fmt.Sprintf("entries:              %d\n", g.Len()),
		// 64 bits per bucket of 4 slots.
		fmt.Sprintf("bits per entry:       %.2f\n", float64(16*g.Cap())/float64(g.Len())),
		fmt.Sprintf("false-positive rate:  %.4g%% (from the entries stored: 2^-k for each entry that compares k bits, over a key's two buckets)\n", 100*g.FalsePositiveRate()),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("info output lacks %q:\n%s", want, stdout)
		}
	}
	// Entries that lived through splits compare fewer bits: the rate
	// is above that of the same slots holding only fresh 13-bit entries.
	if fresh := 2 * float64(g.Len()) / float64(g.Cap()/4) / 8192; g.FalsePositiveRate() <= fresh {
		t.Errorf("FalsePositiveRate() = %g after %d doublings; want more than fresh entries' %g", g.FalsePositiveRate(), d, fresh)
	}
}
