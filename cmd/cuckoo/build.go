package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

func init() {
	commands["build"] = command{
		synopsis: "-o FILE [-bits N] [-slots 4|5] | [-fpr P] [-capacity N] [-seed N] [-keep-duplicates] [-progress] [INPUT]",
		summary:  "build a filter file from keys, one per line",
		details: keysHelp + " Each distinct key is stored once (-keep-duplicates stores every line). " +
			"Without -capacity the filter is a growing one (cuckoo.Growing), which needs no key count: " +
			"it grows a shard's table by a step whenever a key finds no room. " +
			"-capacity N builds a fixed filter (cuckoo.Filter) that holds N keys.",
		run: runBuild,
	}
}

// progressMinKeys is the number of keys read after which build shows its
// progress on a terminal without being asked: smaller inputs build in a
// moment.
const progressMinKeys = 1_000_000

func runBuild(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("build", stderr)
	out := fs.String("o", "", "write the filter to `FILE` (required; \"-\" writes it to standard output)")
	bits := fs.Int("bits", cuckoo.DefaultFingerprintBits, "fingerprint size in bits: 12 (five per bucket: 13.2 bits per key, 0.24% false positives when full), 15 (four per bucket: 16.8 bits per key, 0.023%) or 8 (two four-slot buckets per word: 8.7 bits per key, 2.9%)")
	slots := fs.Int("slots", 0, "fingerprints per bucket: 5 (12-bit only; the default for 12) or 4 (16.8 bits per key; 0.19% false positives with 12 bits)")
	fpr := fs.Float64("fpr", 0, "choose the bucket layout from the false-positive rate `P` allowed at the -capacity (0.01 for 1%): 8-bit fingerprints in the packed layout (8.7 bits per key) for P >= 0.0289, five 12-bit fingerprints per bucket (13.2 bits per key) down to 0.00237, four 12-bit ones (16.8 bits per key) down to 0.00186, four 15-bit ones down to 0.000232")
	capacity := fs.Int("capacity", 0, "build a fixed filter that holds `N` keys, N > 0 (omit -capacity for a growing filter, which needs no key count)")
	seed := fs.Uint64("seed", 0, "hash seed (default: a random one; give one for reproducible files)")
	showProgress := fs.Bool("progress", false, "show progress on standard error (default: when standard error is a terminal, from the 1,000,000th key on)")
	keepDups := fs.Bool("keep-duplicates", false, "store a key once per line it is on (at most 10 copies of one key fit with five slots per bucket, 8 with four, 6 to 8 with -bits 8; fewer for a key whose two buckets are one), instead of once")
	pos, status, ok := parseFlags(fs, args, 0, 1)
	if !ok {
		return status
	}
	if *out == "" {
		fmt.Fprintln(stderr, "cuckoo build: -o FILE is required")
		fs.Usage()
		return exitUsage
	}
	if *bits != 8 && *bits != 12 && *bits != 15 {
		fmt.Fprintf(stderr, "cuckoo build: -bits must be 8, 12 or 15, got %d\n", *bits)
		return exitUsage
	}
	fixed, bitsSet, slotsSet, fprSet := false, false, false, false // -capacity, -bits, -slots, -fpr given
	fs.Visit(func(fl *flag.Flag) {
		fixed = fixed || fl.Name == "capacity"
		bitsSet = bitsSet || fl.Name == "bits"
		slotsSet = slotsSet || fl.Name == "slots"
		fprSet = fprSet || fl.Name == "fpr"
	})
	if slotsSet {
		if *slots != 4 && *slots != 5 {
			fmt.Fprintf(stderr, "cuckoo build: -slots must be 4 or 5, got %d\n", *slots)
			return exitUsage
		}
		if *slots == 5 && *bits != 12 {
			fmt.Fprintf(stderr, "cuckoo build: -slots 5 needs 12-bit fingerprints, got -bits %d\n", *bits)
			return exitUsage
		}
		if !fixed {
			fmt.Fprintln(stderr, "cuckoo build: -slots needs -capacity: a growing filter (no -capacity) has four slots per bucket")
			return exitUsage
		}
	}
	if fprSet {
		if bitsSet || slotsSet {
			fmt.Fprintln(stderr, "cuckoo build: -fpr chooses the layout: give it without -bits and -slots")
			return exitUsage
		}
		if !fixed {
			fmt.Fprintf(stderr, "cuckoo build: -fpr needs -capacity: a growing filter (no -capacity) has %d-bit fingerprints\n", cuckoo.DefaultFingerprintBits)
			return exitUsage
		}
		if _, err := cuckoo.New(1, cuckoo.WithFalsePositiveRate(*fpr)); err != nil {
			fmt.Fprintf(stderr, "cuckoo build: -fpr %v: %s\n", *fpr, trimPrefix(err))
			return exitUsage
		}
	}
	if fixed && *capacity <= 0 {
		fmt.Fprintf(stderr, "cuckoo build: -capacity must be positive, got %d: omit -capacity for a growing filter\n", *capacity)
		return exitUsage
	}
	if *bits != cuckoo.DefaultFingerprintBits && !fixed {
		fmt.Fprintf(stderr, "cuckoo build: -bits %d needs -capacity: a growing filter (no -capacity) has %d-bit fingerprints\n", *bits, cuckoo.DefaultFingerprintBits)
		return exitUsage
	}

	in, file, err := openInput(arg(pos, 0), stdin)
	if err != nil {
		return fail(stderr, "build", err)
	}
	if file != nil {
		defer file.Close()
	}
	inFile := file // the input, when it is a file (standard input may be one)
	if inFile == nil {
		inFile, _ = stdin.(*os.File)
	}
	toStdout := *out == "-"
	if !toStdout {
		if err := checkNotInput(*out, inFile); err != nil {
			return fail(stderr, "build", err)
		}
	}
	terminal := isTerminal(stderr)
	var seen *keySet // nil with -keep-duplicates
	if !*keepDups {
		seen = newKeySet()
	}

	opts := []cuckoo.Option{cuckoo.WithFingerprintBits(*bits)}
	if slotsSet {
		opts = append(opts, cuckoo.WithSlotsPerBucket(*slots))
	}
	if fprSet {
		opts = []cuckoo.Option{cuckoo.WithFalsePositiveRate(*fpr)}
	}
	if *capacity > 0 {
		// The layout the options choose, from a one-key filter.
		small, err := cuckoo.New(1, opts...)
		if err != nil {
			return fail(stderr, "build", err)
		}
		if err := checkMemory(*capacity, small.FingerprintBits(), small.SlotsPerBucket()); err != nil {
			return fail(stderr, "build", err)
		}
	}
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "seed" {
			opts = append(opts, cuckoo.WithSeed(*seed))
		}
	})
	var f filter
	if *capacity > 0 {
		f, err = cuckoo.New(*capacity, opts...)
	} else {
		f, err = cuckoo.NewGrowing(growStart, opts...)
	}
	if err != nil {
		return fail(stderr, "build", err)
	}
	// The input is read once, with or without -capacity (without it the
	// filter grows as keys arrive: cuckoo.Growing). Keys are never counted
	// ahead: the progress bar's total is the input's size in bytes where it
	// is known (a regular file), and a stream shows a count of keys.
	cr := &byteCounter{r: in}
	var bar *progress
	switch {
	case *showProgress:
		bar = newProgress(stderr, "building", inputSize(inFile), 0)
	case terminal:
		bar = newProgress(stderr, "building", inputSize(inFile), progressMinKeys)
	}
	var lines, keys, dups int64
	err = scanKeys(cr, func(key []byte) error {
		lines++
		bar.set(lines, cr.n)
		if seen != nil && !seen.first(key) {
			dups++
			return nil
		}
		if err := f.Insert(key); err != nil {
			if errors.Is(err, cuckoo.ErrFull) {
				return fullError(f, key, keys, *capacity, seen == nil)
			}
			return err
		}
		keys++
		return nil
	})
	bar.done(lines, cr.n)
	if err != nil {
		return fail(stderr, "build", err)
	}
	if lines == 0 {
		fmt.Fprintln(stderr, "cuckoo build: warning: the input holds no keys (no non-empty lines): the filter is empty")
	}

	name, summary := *out, stdout
	var size int64
	if toStdout {
		// Standard output holds the filter: the summary goes to standard
		// error.
		name, summary = "standard output", stderr
		size, err = encodeFilter(f, stdout)
	} else {
		size, err = writeFilterFile(*out, f)
	}
	if err != nil {
		return fail(stderr, "build", err)
	}
	fmt.Fprintln(summary, buildSummary(name, f, keys, dups, seen != nil, size))
	return exitOK
}

// buildSummary describes the filter build wrote: keys is the number of keys
// inserted (the distinct keys read, or every key line with
// -keep-duplicates), dups the duplicate lines skipped when dedup. A fixed
// filter's Len is the keys; a growing filter's counts entries, which
// splits add copies to (2^20 distinct keys made 96 more entries): it is
// printed as such.
func buildSummary(name string, f filter, keys, dups int64, dedup bool, size int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", name, count(keys, "key", "keys"))
	if dedup {
		fmt.Fprintf(&b, " (%s skipped)", count(dups, "duplicate line", "duplicate lines"))
	}
	fmt.Fprintf(&b, ", %d-bit fingerprints, ", f.FingerprintBits())
	if ff, ok := f.(*cuckoo.Filter); ok {
		fmt.Fprintf(&b, "%d per bucket, ", ff.SlotsPerBucket())
	}
	g, growing := f.(*cuckoo.Growing)
	if growing {
		fmt.Fprintf(&b, "%s in ", count(f.Len(), "entry", "entries"))
	}
	fmt.Fprintf(&b, "%s (load %.1f%%)", count(f.Cap(), "slot", "slots"), 100*f.LoadFactor())
	if growing {
		fmt.Fprintf(&b, " after %s of its %d shards", count(g.Doublings(), "doubling", "doublings"), g.Shards())
	}
	fmt.Fprintf(&b, ", %s", count(size, "byte", "bytes"))
	return b.String()
}

// fullError explains an ErrFull for key after inserted keys. When key's two
// buckets are full of copies of its own fingerprint no capacity helps: it
// says so. It counts the copies by deleting them: f is discarded afterwards.
func fullError(f filter, key []byte, inserted int64, capacity int, keptDups bool) error {
	if _, growing := f.(*cuckoo.Growing); growing {
		// A growing filter refuses a key only at its doubling bound, or
		// when the key's two buckets are full of entries like its own
		// (copies of it, with -keep-duplicates) while the table is less
		// than half full: growing would not separate them.
		return fmt.Errorf("key %q: no room for it after %s: its buckets are full of copies of its fingerprint, or the filter reached its doubling bound", key, count(inserted, "key", "keys"))
	}
	most := 8 // the slots of a key's two buckets
	if ff, ok := f.(*cuckoo.Filter); ok {
		most = 2 * ff.SlotsPerBucket()
	}
	copies := 0
	for copies < most && f.Delete(key) {
		copies++
	}
	if copies == most {
		if keptDups {
			return fmt.Errorf("key %q is on more than %d lines: a key fits at most %d times (the %d slots of its two buckets), whatever the capacity; without -keep-duplicates each key is stored once", key, most, most, most)
		}
		return fmt.Errorf("key %q: its two buckets are full of %d other keys that share its fingerprint and its buckets: another -seed or a larger -capacity places them differently", key, most)
	}
	return fmt.Errorf("the filter is full after %s (it was sized for %d): use a larger -capacity", count(inserted, "key", "keys"), capacity)
}

// inputSize returns the number of bytes left to read in f, or -1 if f is
// nil or not a regular file (a pipe, a terminal: a stream of unknown
// length).
func inputSize(f *os.File) int64 {
	if f == nil {
		return -1
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return -1
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1
	}
	return max(st.Size()-off, 0)
}

// byteCounter counts the bytes read through it.
type byteCounter struct {
	r io.Reader
	n int64
}

func (c *byteCounter) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

// progress shows how far a pass over the input is. When the input's size
// is known it draws a bar over its bytes, redrawn on every 1% of them (the
// bytes the scanner has read: ahead of the keys done by at most its
// buffer, 64 KiB unless a line is longer); otherwise a count of keys, redrawn every 100,000 keys.
// Both show the keys read so far. Nothing is drawn before quiet keys are
// read. A nil *progress draws nothing.
type progress struct {
	w     io.Writer
	what  string
	size  int64 // bytes of input, or -1 when unknown
	step  int64 // redraw every step bytes (known size) or keys (unknown)
	next  int64 // the bytes or keys at which to redraw next
	quiet int64 // keys read before anything is drawn
	start time.Time
	drawn bool
}

func newProgress(w io.Writer, what string, size, quiet int64) *progress {
	p := &progress{w: w, what: what, size: size, step: 100_000, quiet: quiet, start: time.Now()}
	if size >= 0 {
		p.step = max(size/100, 1)
	}
	p.set(0, 0)
	return p
}

// set reports that keys keys, in n bytes of input, are done.
func (p *progress) set(keys, n int64) {
	if p == nil || keys < p.quiet {
		return
	}
	at := keys
	if p.size >= 0 {
		at = n
	}
	if at < p.next {
		return
	}
	p.draw(keys, n)
	p.next = (at/p.step + 1) * p.step
}

// done draws the final state and ends the line, if anything was drawn.
func (p *progress) done(keys, n int64) {
	if p == nil || !p.drawn {
		return
	}
	p.draw(keys, n)
	fmt.Fprintf(p.w, " %.1fs\n", time.Since(p.start).Seconds())
}

func (p *progress) draw(keys, n int64) {
	p.drawn = true
	if p.size < 0 {
		fmt.Fprintf(p.w, "\r%s: %s", p.what, count(keys, "key", "keys"))
		return
	}
	const width = 40
	done := min(n, p.size)
	pct, filled := int64(100), int64(width)
	if p.size > 0 {
		pct, filled = 100*done/p.size, width*done/p.size
	}
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = ' '
		if int64(i) < filled {
			bar[i] = '='
		}
	}
	fmt.Fprintf(p.w, "\r%s [%s] %3d%% %s", p.what, bar, pct, count(keys, "key", "keys"))
}

// growStart is the capacity a growing build starts with; NewGrowing rounds
// it up to its smallest first tables (5,512 keys in sixteen shards), and
// the shards grow from there.
const growStart = 1000
