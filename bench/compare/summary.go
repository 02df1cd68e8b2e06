package compare

import (
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strings"

	"github.com/seed25b00da8/cuckoo"
	"github.com/seed25b00da8/cuckoo/internal/benchimpl"
	"github.com/seed25b00da8/cuckoo/internal/benchkit"
)

// The summary: this filter's default layout (New(n): five 12-bit slots) in
// both modes against xor8, binary fuse8, seiflotfy/cuckoofilter unguarded
// and under a lock, and the Bloom filter under a lock, at equal load
// (equalload.go), as one markdown table of our rates and ratios.

// summaryOurs are this filter's rows: LockFree and Locked.
var summaryOurs = []struct{ mode, name, batch string }{
	{"LockFree", "cuckoo-lockfree-f12", "cuckoo-lockfree-f12-batch"},
	{"Locked", "cuckoo-locked-f12", "cuckoo-locked-f12-batch"},
}

// summaryTheirs are the ratio columns: impl name and heading.
var summaryTheirs = []struct{ name, head string }{
	{"xor8", "xor8"},
	{"binfuse8", "binary fuse8"},
	{"seiflotfy", "seiflotfy"},
	{"seiflotfy-mutex", "seiflotfy + Mutex"},
	{"seiflotfy-rwmutex", "seiflotfy + RWMutex"},
	{"bloom-rwmutex", "bloom + RWMutex"},
}

// The summary's workload rows: name, the workload of our cell, whether our
// cell is the batch row's, and the workload of theirs.
var summaryRows = []struct {
	name   string
	ours   Workload
	batch  bool
	theirs Workload
}{
	{"fill", Fill, false, Fill},
	{"present", LookupPos, false, LookupPos},
	{"absent", LookupNeg, false, LookupNeg},
	{"batch", LookupPos, true, LookupPos},
	{"mixed", Mixed, false, Mixed},
}

// SummaryImpls returns the summary's impls, made for equal-load classes:
// this filter's New(n) layout in both modes (and each one's LookupBatch
// row, which runs only lookup-pos), then the competitors of the ratio
// columns.
func SummaryImpls() []Impl {
	var out []Impl
	for _, m := range []cuckoo.Mode{cuckoo.LockFree, cuckoo.Locked} {
		b := benchimpl.Cuckoo("cuckoo-", m, 12, true)
		b.Only = []Workload{LookupPos}
		out = append(out, benchimpl.Cuckoo("cuckoo-", m, 12, false), b)
	}
	theirs := append(append(xorImpls(), seiflotfyImpls()...), bloomImpl())
	for _, t := range summaryTheirs {
		for _, im := range theirs {
			if im.Name == t.name {
				out = append(out, im)
			}
		}
	}
	return EqualLoad(out)
}

// summaryClass is one size of the summary: its class and what this
// filter's table is for it.
type summaryClass struct {
	size  Size
	class int // S
	ask   int // New's argument for a table of S slots
	slots int // that table's Cap
}

// newSummaryClass returns the class of size (the class S in its N) and the
// request that makes this filter's default table for it.
func newSummaryClass(size Size, class int) (summaryClass, error) {
	im := benchimpl.Cuckoo("cuckoo-", cuckoo.LockFree, 12, false)
	ask, err := EqualRequest(im, class)
	if err != nil {
		return summaryClass{}, err
	}
	f, err := im.New(ask, nil)
	if err != nil {
		return summaryClass{}, err
	}
	return summaryClass{size: size, class: class, ask: ask, slots: f.(benchkit.Loader).Cap()}, nil
}

// WriteSummary prints rep, measured over SummaryImpls at the given
// classes, as markdown: the machine and the command, then per size the
// table of our rates and ratios, then what the cells mean.
func WriteSummary(w io.Writer, rep *Report, classes []summaryClass) error {
	m := rep.Machine
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %s, %d vCPUs, GOMAXPROCS=%d, %s %s/%s", m.CPU, m.NumCPU, m.GOMAXPROCS, m.GoVersion, m.GOOS, m.GOARCH)
	if m.LoadStart >= 0 {
		fmt.Fprintf(&b, "; 1-minute load average %.2f at the start, %.2f at the end", m.LoadStart, m.LoadEnd)
	}
	fmt.Fprintf(&b, ".\n")
	if m.Busy() {
		fmt.Fprintf(&b, "**Other processes were running (load %.2f on %d CPUs): these rates are skewed.**\n", m.LoadStart, m.NumCPU)
	}
	fmt.Fprintf(&b, "Command: `%s`", rep.Command)
	for _, h := range rep.Header {
		fmt.Fprintf(&b, "; %s", h)
	}
	fmt.Fprintf(&b, ".\n")
	if rep.Ops > 0 {
		fmt.Fprintf(&b, "Each rate is the median of %d runs: %d operations each for lookups and mixed, whole fills into fresh tables for fill.\n", rep.Reps, rep.Ops)
	} else {
		fmt.Fprintf(&b, "Each rate is the median of %d runs of %s/%d for lookups and mixed, of whole fills into fresh tables for %s for fill.\n", rep.Reps, rep.Duration, rep.Reps, rep.Duration)
	}
	var notes []string
	for _, sc := range classes {
		keys := sc.size.N
		fmt.Fprintf(&b, "\n**%s**: the same %s keys in every structure; seiflotfy's table %s slots (2^%d), this filter's New(%s) %s slots: %.2f%% and %.2f%% load",
			sc.size.Name, commas(keys), commas(sc.class), log2(sc.class), commas(sc.ask), commas(sc.slots),
			100*float64(keys)/float64(sc.class), 100*float64(keys)/float64(sc.slots))
		if c := rep.Find(summaryOurs[0].name, sc.size.Name, LookupPos, 1); c != nil && c.Load >= 0 {
			fmt.Fprintf(&b, " (measured after the lookups: this filter %.2f%%", 100*c.Load)
			if t := rep.Find("seiflotfy", sc.size.Name, LookupPos, 1); t != nil && t.Load >= 0 {
				fmt.Fprintf(&b, ", seiflotfy %.2f%%", 100*t.Load)
			}
			fmt.Fprintf(&b, ")")
		}
		fmt.Fprintf(&b, ".\n\n")
		fmt.Fprintf(&b, "| workload | g | this filter | Mops/s |")
		for _, t := range summaryTheirs {
			fmt.Fprintf(&b, " ÷ %s |", t.head)
		}
		fmt.Fprintf(&b, "\n| --- | ---: | --- | ---: |%s\n", strings.Repeat(" ---: |", len(summaryTheirs)))
		for _, row := range summaryRows {
			for _, g := range rep.Goroutines {
				for _, o := range summaryOurs {
					name := o.name
					if row.batch {
						name = o.batch
					}
					ours := rep.Find(name, sc.size.Name, row.ours, g)
					fmt.Fprintf(&b, "| %s | %d | %s | %s |", row.name, g, o.mode, rate(ours))
					for _, t := range summaryTheirs {
						theirs := rep.Find(t.name, sc.size.Name, row.theirs, g)
						fmt.Fprintf(&b, " %s |", ratio(ours, theirs))
						notes = appendNotes(notes, theirs)
					}
					notes = appendNotes(notes, ours)
					fmt.Fprintf(&b, "\n")
				}
			}
		}
		var mem []string
		for _, name := range append([]string{summaryOurs[0].name, summaryOurs[1].name}, theirNames()...) {
			if in := rep.Info(name, sc.size.Name); in != nil && in.Error == "" {
				mem = append(mem, fmt.Sprintf("%s %.2f bits/key, %.3f%%", name, in.BitsPerKey(), 100*in.FPR))
			} else if in != nil {
				notes = append(notes, fmt.Sprintf("%s %s: %s", name, sc.size.Name, in.Error))
			}
		}
		fmt.Fprintf(&b, "\nTable bits per key and false-positive rate at this load: %s.\n", strings.Join(mem, "; "))
	}
	fmt.Fprintf(&b, `
Mops/s is this filter's rate; every other column is this filter's rate over
that structure's in the same size, workload and goroutines (above 1: this
filter is faster). g: goroutines. fill: the keys inserted into an empty
table; xor8 and binary fuse8 are static, their fill is their build from the
same keys, single-threaded. present, absent: Lookup of the inserted keys,
of keys never inserted. batch: this filter's LookupBatch, %d present keys a
call, over the others' present rate (they have no batch call). mixed: 90%%
lookups, 5%% deletes, 5%% re-inserts with every key in (the Bloom filter
cannot delete: it skips the deletes). –: not measured (seiflotfy unguarded
is not safe for two goroutines; static filters have no mixed). *: a rate
whose runs spread over 1.5x. Instructions per operation, every layout in
both modes, the growing filter and seiflotfy's fill, from one command:
`+"`(cd bench && go build -o /tmp/opcount ./cmd/opcount) && scripts/opcount-table.sh /tmp/opcount`.\n", benchkit.BatchLen)
	if len(notes) > 0 {
		fmt.Fprintf(&b, "\nNotes:\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func theirNames() []string {
	var out []string
	for _, t := range summaryTheirs {
		out = append(out, t.name)
	}
	return out
}

// appendNotes adds c's notes but those the summary's footer explains.
func appendNotes(notes []string, c *Cell) []string {
	if c == nil {
		return notes
	}
	for _, n := range c.Notes {
		if strings.HasPrefix(n, "build from all keys") || strings.HasPrefix(n, "deletes unsupported") {
			continue
		}
		s := fmt.Sprintf("%s %s %s g=%d: %s", c.Impl, c.Size, c.Workload, c.Goroutines, n)
		if !slices.Contains(notes, s) {
			notes = append(notes, s)
		}
	}
	return notes
}

func rate(c *Cell) string {
	if c == nil || c.Mops <= 0 {
		return "–"
	}
	s := fmt.Sprintf("%.1f", c.Mops)
	if c.Unstable() {
		s += "*"
	}
	return s
}

func ratio(ours, theirs *Cell) string {
	if ours == nil || theirs == nil || ours.Mops <= 0 || theirs.Mops <= 0 {
		return "–"
	}
	s := fmt.Sprintf("%.2f", ours.Mops/theirs.Mops)
	if ours.Unstable() || theirs.Unstable() {
		s += "*"
	}
	return s
}

// commas writes n with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func log2(pow2 int) int { return bits.Len(uint(pow2)) - 1 }
