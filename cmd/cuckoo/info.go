package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/seed25b00da8/cuckoo"
)

func init() {
	commands["info"] = command{
		synopsis: "FILE",
		summary:  "print a filter file's parameters, load, bits per key, expected false-positive rate and, for a growing filter, its doublings",
		details:  "FILE \"-\" reads the filter from standard input (cuckoo build -o - KEYS | cuckoo info -).",
		run:      runInfo,
	}
}

func runInfo(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("info", stderr)
	pos, status, ok := parseFlags(fs, args, 1, 1)
	if !ok {
		return status
	}
	path := arg(pos, 0)
	f, file, err := loadFilter(path, stdin)
	if err != nil {
		return fail(stderr, "info", err)
	}
	bits := f.FingerprintBits()
	slots, items := f.Cap(), f.Len()
	load := f.LoadFactor()
	// Each bucket (of four slots, or five in a fixed filter's five-slot
	// layout) is one 64-bit word in memory, in either format (a growing
	// filter's slots are those of all its shards), except in the packed
	// layout (format version 3), whose words hold two four-slot buckets.
	per := 4
	if ff, ok := f.(*cuckoo.Filter); ok {
		per = ff.SlotsPerBucket()
	}
	_, isGrowing := f.(*cuckoo.Growing)
	packed := !isGrowing && file.version == 3 // a growing filter's format has its own versions
	perWord := per
	if packed {
		perWord = 2 * per
	}
	bitsPerItem := "- (empty)"
	if items > 0 {
		bitsPerItem = fmt.Sprintf("%.2f", 64/float64(perWord)*float64(slots)/float64(items))
	}
	// A lookup compares the key's fingerprint with the 2b slots of its two
	// buckets; each occupied slot matches with probability 1/(2^f-1).
	fpr := fmt.Sprintf("%.4g%% (%d·α/(2^%d-1))", 100*falsePositiveRate(f), 2*per, bits)
	g, growing := f.(*cuckoo.Growing)
	if growing {
		// Entries compare 14 bits when fresh and one fewer per split of
		// their bucket they lived through: the rate comes from the
		// entries stored.
		fpr = fmt.Sprintf("%.4g%% (from the entries stored: 2^-k for each entry that compares k bits, over a key's two buckets)",
			100*falsePositiveRate(f))
	}

	name := path
	if path == "-" {
		name = "standard input"
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "file:\t%s (%s)\n", name, count(file.size, "byte", "bytes"))
	fmt.Fprintf(tw, "fingerprint bits:\t%d\n", bits)
	if growing {
		fmt.Fprintf(tw, "format:\tgrowing (%d shards, each a table that grows by steps)\n", g.Shards())
		fmt.Fprintf(tw, "doublings:\t%d (over the %d shards; the first tables held %s at 95%% load)\n", g.Doublings(), g.Shards(), count(g.BaseCapacity(), "key", "keys"))
		fmt.Fprintf(tw, "slots:\t%d (%d buckets of 4 slots)\n", slots, slots/4)
	} else {
		// Version 2 (the layouts of FORMAT.md other than four slots of
		// 8 or 12 bits, New's default included) is what readers before
		// 2026-11-24 reject.
		fmt.Fprintf(tw, "format:\tfixed, version %d\n", file.version)
		if packed {
			fmt.Fprintf(tw, "buckets:\t%d (%d slots each, two per 64-bit word, %d slots)\n", slots/per, per, slots)
		} else {
			fmt.Fprintf(tw, "buckets:\t%d (%d slots each, %d slots)\n", slots/per, per, slots)
		}
	}
	fmt.Fprintf(tw, "seed:\t%d\n", f.Seed())
	if growing {
		// A growing filter's Len counts entries: one per key inserted,
		// and a split adds copies of some (96 for 2^20 keys). Its bits
		// are per entry, not per distinct key.
		fmt.Fprintf(tw, "entries:\t%d\n", items)
		fmt.Fprintf(tw, "load factor:\t%.4f\n", load)
		fmt.Fprintf(tw, "bits per entry:\t%s\n", bitsPerItem)
	} else {
		fmt.Fprintf(tw, "items:\t%d\n", items)
		fmt.Fprintf(tw, "load factor:\t%.4f\n", load)
		fmt.Fprintf(tw, "bits per key:\t%s\n", bitsPerItem)
	}
	fmt.Fprintf(tw, "false-positive rate:\t%s\n", fpr)
	if err := tw.Flush(); err != nil {
		return fail(stderr, "info", err)
	}
	return exitOK
}

// falsePositiveRate returns the expected false-positive rate info reports,
// the library's own figure: Stats().FalsePositiveRate of a fixed filter,
// 2·b·α/(2^f-1) (fingerprint 0 means empty, so a slot holds one of 2^f-1
// values), and FalsePositiveRate() of a growing one, from the entries
// stored.
func falsePositiveRate(f filter) float64 {
	switch f := f.(type) {
	case *cuckoo.Filter:
		return f.Stats().FalsePositiveRate
	case *cuckoo.Growing:
		return f.FalsePositiveRate()
	}
	return 0
}
