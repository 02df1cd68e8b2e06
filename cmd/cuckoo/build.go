package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

func init() {
	commands["build"] = command{
		synopsis: "-o FILE [-bits N] [-capacity N] [-seed N] [-keep-duplicates] [-progress] [INPUT]",
		summary:  "build a filter file from keys, one per line",
		run:      runBuild,
	}
}

// progressMinKeys is the input size from which build shows progress on a
// terminal without being asked.
const progressMinKeys = 1_000_000

func runBuild(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("build", stderr)
	out := fs.String("o", "", "write the filter to `FILE` (required; \"-\" writes it to standard output)")
	bits := fs.Int("bits", cuckoo.DefaultFingerprintBits, "fingerprint size in bits: 8 or 12")
	capacity := fs.Int("capacity", 0, "number of keys the filter must hold: a fixed filter of that size (default: a filter that grows as keys arrive, read in one pass)")
	seed := fs.Uint64("seed", 0, "hash seed (default: a random one; give one for reproducible files)")
	showProgress := fs.Bool("progress", false, "show progress on standard error (default: only for inputs over 1M keys when standard error is a terminal)")
	keepDups := fs.Bool("keep-duplicates", false, "store a key once per line it is on (at most 8 copies of one key fit), instead of once")
	pos, status, ok := parseFlags(fs, args, 0, 1)
	if !ok {
		return status
	}
	if *out == "" {
		fmt.Fprintln(stderr, "cuckoo build: -o FILE is required")
		fs.Usage()
		return exitUsage
	}
	if *bits != 8 && *bits != 12 {
		fmt.Fprintf(stderr, "cuckoo build: -bits must be 8 or 12, got %d\n", *bits)
		return exitUsage
	}
	if *capacity < 0 {
		fmt.Fprintf(stderr, "cuckoo build: -capacity must not be negative, got %d\n", *capacity)
		return exitUsage
	}

	in, file, err := openInput(arg(pos, 0), stdin)
	if err != nil {
		return fail(stderr, "build", err)
	}
	if file != nil {
		defer file.Close()
	}
	toStdout := *out == "-"
	if !toStdout {
		inFile := file
		if inFile == nil {
			inFile, _ = stdin.(*os.File)
		}
		if err := checkNotInput(*out, inFile); err != nil {
			return fail(stderr, "build", err)
		}
	}
	terminal := isTerminal(stderr)
	var seen *keySet // nil with -keep-duplicates
	if !*keepDups {
		seen = newKeySet()
	}

	// Without -capacity the filter grows as keys arrive (cuckoo.Growing),
	// so the input is read once. A regular file's keys are counted first
	// only for a progress bar.
	total := -1
	if file != nil && isRegular(file) && (*showProgress || terminal) {
		if total, err = countKeys(file); err == nil {
			_, err = file.Seek(0, io.SeekStart)
		}
		if err != nil {
			return fail(stderr, "build", err)
		}
	}
	if *capacity > 0 {
		if err := checkMemory(*capacity); err != nil {
			return fail(stderr, "build", err)
		}
	}

	opts := []cuckoo.Option{cuckoo.WithFingerprintBits(*bits)}
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
	var bar *progress
	switch {
	case *showProgress:
		bar = newProgress(stderr, "building", int64(total), 0)
	case terminal && total > progressMinKeys:
		bar = newProgress(stderr, "building", int64(total), 0)
	case terminal && total < 0:
		// A stream of unknown length: show a count once it is large.
		bar = newProgress(stderr, "building", -1, progressMinKeys)
	}
	var lines, keys, dups int64
	err = scanKeys(in, func(key []byte) error {
		lines++
		bar.set(lines)
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
	bar.done(lines)
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
	fmt.Fprintf(summary, "%s: %d keys", name, f.Len())
	if seen != nil {
		fmt.Fprintf(summary, " (%d duplicate lines skipped)", dups)
	}
	fmt.Fprintf(summary, ", %d-bit fingerprints, %d slots (load %.1f%%)", f.FingerprintBits(), f.Cap(), 100*f.LoadFactor())
	if g, ok := f.(*cuckoo.Growing); ok {
		nodes, depth := g.Nodes()
		fmt.Fprintf(summary, " in %d nodes (depth %d)", nodes, depth)
	}
	fmt.Fprintf(summary, ", %d bytes\n", size)
	return exitOK
}

// fullError explains an ErrFull for key after inserted keys. When key's two
// buckets are full of copies of its own fingerprint no capacity helps: it
// says so. It counts the copies by deleting them: f is discarded afterwards.
func fullError(f filter, key []byte, inserted int64, capacity int, keptDups bool) error {
	if _, growing := f.(*cuckoo.Growing); growing {
		// Only the depth bound stops a growing filter: 41 nodes on the
		// key's path, each full of keys that share its fingerprint and
		// buckets (copies of the key itself, with -keep-duplicates).
		return fmt.Errorf("key %q: no room for it after %d keys: every node on its path (the depth bound) is full of copies of its fingerprint in its buckets", key, inserted)
	}
	copies := 0
	for copies < 8 && f.Delete(key) {
		copies++
	}
	if copies == 8 {
		if keptDups {
			return fmt.Errorf("key %q is on more than 8 lines: a key fits at most 8 times (the 8 slots of its two buckets), whatever the capacity; without -keep-duplicates each key is stored once", key)
		}
		return fmt.Errorf("key %q: its two buckets are full of 8 other keys that share its fingerprint and its buckets: another -seed or a larger -capacity places them differently", key)
	}
	return fmt.Errorf("the filter is full after %d keys (it was sized for %d): use a larger -capacity", inserted, capacity)
}

func isRegular(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

// countKeys returns the number of keys scanKeys finds in r.
func countKeys(r io.Reader) (int, error) {
	n := 0
	err := scanKeys(r, func([]byte) error {
		n++
		return nil
	})
	return n, err
}

// progress draws a progress bar, redrawn on every 1% of total, or a count
// of keys redrawn every 100,000 keys when the total is unknown (total < 0).
// Nothing is drawn before quiet keys are done. A nil *progress draws nothing.
type progress struct {
	w     io.Writer
	what  string
	total int64
	step  int64
	next  int64
	start time.Time
	drawn bool
}

func newProgress(w io.Writer, what string, total, quiet int64) *progress {
	p := &progress{w: w, what: what, total: total, step: 100_000, start: time.Now()}
	if total >= 0 {
		p.step = max(total/100, 1)
	}
	p.next = quiet
	p.set(0)
	return p
}

// set reports that n keys are done.
func (p *progress) set(n int64) {
	if p == nil || n < p.next {
		return
	}
	p.draw(n)
	p.next = (n/p.step + 1) * p.step
}

// done draws the final state and ends the line.
func (p *progress) done(n int64) {
	if p == nil || !p.drawn {
		return
	}
	p.draw(n)
	fmt.Fprintf(p.w, " %.1fs\n", time.Since(p.start).Seconds())
}

func (p *progress) draw(n int64) {
	p.drawn = true
	if p.total < 0 {
		fmt.Fprintf(p.w, "\r%s: %d keys", p.what, n)
		return
	}
	const width = 40
	done := min(n, p.total)
	pct, filled := int64(100), int64(width)
	if p.total > 0 {
		pct, filled = 100*done/p.total, width*done/p.total
	}
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = ' '
		if int64(i) < filled {
			bar[i] = '='
		}
	}
	fmt.Fprintf(p.w, "\r%s [%s] %3d%% %d/%d keys", p.what, bar, pct, n, p.total)
}

// growStart is the capacity a growing build starts with; NewGrowing rounds
// it up to its smallest node (15,564 keys), and the filter grows from there.
const growStart = 1000
