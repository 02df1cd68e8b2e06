package benchkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// writeHeader prints what every text report starts with: the machine, the
// method and the implementations.
func (r *Report) writeHeader(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "# %s\n", r.Title)
	fmt.Fprintf(w, "cpu: %s\n", m.CPU)
	fmt.Fprintf(w, "goos/goarch: %s/%s  GOMAXPROCS: %d  NumCPU: %d  go: %s\n", m.GOOS, m.GOARCH, m.GOMAXPROCS, m.NumCPU, m.GoVersion)
	for _, h := range r.Header {
		fmt.Fprintln(w, h)
	}
	if m.LoadStart >= 0 {
		fmt.Fprintf(w, "1-minute load average at start: %.2f, at end: %.2f\n", m.LoadStart, m.LoadEnd)
	}
	if m.Busy() {
		fmt.Fprintf(w, "WARNING: other processes were running (1-minute load %.2f at start on %d CPUs): the rates are skewed\n", m.LoadStart, m.NumCPU)
	}
	if r.Command != "" {
		fmt.Fprintf(w, "command: %s\n", r.Command)
	}
	if r.Ops > 0 {
		fmt.Fprintf(w, "per cell: lookups and mixed = median of %d runs of %d operations; fill = median of %d whole fills into fresh structures\n", r.Reps, r.Ops, r.Reps)
	} else {
		fmt.Fprintf(w, "%s per cell: lookups and mixed = median of %d runs of 1/%d of it; fill = median of whole fills into fresh structures\n", r.Duration, r.Reps, r.Reps)
	}
	fmt.Fprintf(w, "keys: %d bytes (counter i, then a 64-bit mix of i); each goroutine inserts and deletes its own slice, lookups walk all keys\n", KeySize)
	fmt.Fprintln(w, "fill = n inserts into a filter sized for n (92%, 95% or 97% load, by layout); mixed = 90% lookup/5% delete/5% re-insert with 95% of the n keys in")
	fmt.Fprintf(w, "ratio = Mops/s over %s's in the same size, workload and goroutines; allocs/op from runtime.MemStats.Mallocs\n", r.Ref)
	fmt.Fprintln(w, "bits/key = table bits over n (heap growth where the table size is unknown); load = Len/Cap after the cell; FPR = hits of lookup-neg")
	for _, n := range r.Names() {
		for _, in := range r.Impls {
			if in.Impl == n {
				fmt.Fprintf(w, "  %-20s %s\n", n, in.Desc)
				break
			}
		}
	}
}

// SortedCells returns the cells in table order: size, workload, goroutines,
// then impl in measurement order.
func (r *Report) SortedCells() []Cell {
	var sizes []string
	for _, s := range r.Sizes {
		sizes = append(sizes, s.Name)
	}
	names := r.Names()
	cells := slices.Clone(r.Cells)
	slices.SortStableFunc(cells, func(a, b Cell) int {
		if c := slices.Index(sizes, a.Size) - slices.Index(sizes, b.Size); c != 0 {
			return c
		}
		if c := slices.Index(Workloads, a.Workload) - slices.Index(Workloads, b.Workload); c != 0 {
			return c
		}
		if c := a.Goroutines - b.Goroutines; c != 0 {
			return c
		}
		return slices.Index(names, a.Impl) - slices.Index(names, b.Impl)
	})
	return cells
}

// ratioTo returns c's ratio to the reference impl: "1.00" for the
// reference itself, "-" without one.
func (r *Report) ratioTo(c Cell, one string) string {
	switch {
	case c.Impl == r.Ref && c.Mops > 0:
		return one
	case c.Ratios[r.Ref] > 0:
		return fmt.Sprintf("%.2f", c.Ratios[r.Ref])
	}
	return "-"
}

// WriteTable prints the header and one table with a line per cell (the
// cuckoo command's layout). Impls that could not be built get a line
// saying why.
func (r *Report) WriteTable(w io.Writer) error {
	bw := bufio.NewWriter(w)
	r.writeHeader(bw)
	fmt.Fprintln(bw)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "impl\tworkload\tsize\tgoroutines\tMops/s\tratio\tallocs/op\tbits/key\tload\tFPR\t  notes\t\n")
	for _, c := range r.SortedCells() {
		bpk := "-"
		if in := r.Info(c.Impl, c.Size); in != nil && in.BitsPerKey() >= 0 {
			bpk = fmt.Sprintf("%.1f", in.BitsPerKey())
		}
		load := "-"
		if c.Load >= 0 {
			load = fmt.Sprintf("%.1f%%", 100*c.Load)
		}
		fpr := "-"
		if c.FPR >= 0 {
			fpr = fmt.Sprintf("%.3f%%", 100*c.FPR)
		}
		notes := slices.Clone(c.Notes)
		if c.Unstable() {
			notes = append(notes, fmt.Sprintf("unstable: runs %.2f..%.2f", c.MopsMin, c.MopsMax))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\t  %s\t\n", c.Impl, c.Workload, c.Size, c.Goroutines,
			c.Mops, r.ratioTo(c, "1.00"), FormatAllocs(c.AllocsPerOp), bpk, load, fpr, strings.Join(notes, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, in := range r.Impls {
		if in.Error != "" {
			fmt.Fprintf(bw, "%s n=%s: not run: %s\n", in.Impl, in.Size, in.Error)
		}
	}
	return bw.Flush()
}

// FormatAllocs prints allocations per operation to two decimals, like the
// go test -benchmem column but not truncated to an integer: a structure
// that allocates once per call shows 1.00, while one-off growth of internal
// pools and the runtime's own allocations during the timed part (new
// threads, GC workers), amortized over the cell, show as 0.00.
func FormatAllocs(a float64) string { return fmt.Sprintf("%.2f", a) }

// WriteText prints the header, then per size a table of the impls and a
// table per workload with a column per goroutine count (the comparison
// module's layout). With matrix, it adds the ratio of every impl to every
// other.
func (r *Report) WriteText(w io.Writer, matrix bool) error {
	bw := bufio.NewWriter(w)
	r.writeHeader(bw)
	names := r.Names()
	// Names are padded by hand: the tables align right, except the names.
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, size := range r.Sizes {
		fmt.Fprintf(bw, "\n## n=%s (%d keys)\n\n", size.Name, size.N)
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%-*s\tkind\tbits/key\theap bits/key\tFPR\t  notes\n", width, "impl")
		for _, in := range r.Impls {
			if in.Size != size.Name {
				continue
			}
			notes := strings.Join(in.Notes, "; ")
			if in.Error != "" {
				notes = "not run: " + in.Error
			}
			fpr := "-"
			if in.FPRProbes > 0 {
				fpr = fmt.Sprintf("%.4f%%", 100*in.FPR)
			}
			fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t  %s\n", width, in.Impl, in.Kind, bitsStr(in.TableBitsPerKey, in.TableBytes),
				bitsStr(in.HeapBitsPerKey, in.HeapBytes), fpr, notes)
		}
		tw.Flush()
		for _, wl := range r.Workloads {
			r.writeWorkload(bw, size, wl, names, width, matrix)
		}
	}
	return bw.Flush()
}

func (r *Report) writeWorkload(bw io.Writer, size Size, wl Workload, names []string, width int, matrix bool) {
	present := false
	for _, c := range r.Cells {
		present = present || (c.Size == size.Name && c.Workload == wl)
	}
	if !present {
		return
	}
	fmt.Fprintf(bw, "\n### workload=%s n=%s: Mops/s, then ratio to %s\n\n", wl, size.Name, r.Ref)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t", width, "impl")
	for _, g := range r.Goroutines {
		fmt.Fprintf(tw, "g=%d\t", g)
	}
	for _, g := range r.Goroutines {
		fmt.Fprintf(tw, "x ref g=%d\t", g)
	}
	fmt.Fprintln(tw)
	var notes []string
	unstable := false
	for _, name := range names {
		row, has := fmt.Sprintf("%-*s\t", width, name), false
		var ratios string
		for _, g := range r.Goroutines {
			c := r.Find(name, size.Name, wl, g)
			if c == nil {
				row += "-\t"
				ratios += "-\t"
				continue
			}
			has = true
			star := ""
			if c.Unstable() {
				star, unstable = "*", true
			}
			row += fmt.Sprintf("%.2f%s\t", c.Mops, star)
			ratios += r.ratioTo(*c, "1") + "\t"
			if len(c.Notes) > 0 {
				notes = append(notes, fmt.Sprintf("%s g=%d: %s", name, g, strings.Join(c.Notes, "; ")))
			}
		}
		if has {
			fmt.Fprintln(tw, row+ratios)
		}
	}
	tw.Flush()
	if unstable {
		fmt.Fprintf(bw, "  * repetitions spread over more than 1.5x (see mops_min, mops_max in the JSON)\n")
	}
	for _, n := range notes {
		fmt.Fprintf(bw, "  note: %s\n", n)
	}
	if matrix {
		r.writeMatrix(bw, size, wl, names)
	}
}

func bitsStr(v float64, bytes int64) string {
	if bytes < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

// writeMatrix prints, for each goroutine count, the ratio of every impl (row)
// to every peer (column, numbered).
func (r *Report) writeMatrix(w io.Writer, size Size, wl Workload, names []string) {
	for _, g := range r.Goroutines {
		var rows []string
		for _, n := range names {
			if r.Find(n, size.Name, wl, g) != nil {
				rows = append(rows, n)
			}
		}
		if len(rows) < 2 {
			continue
		}
		fmt.Fprintf(w, "\n  ratios g=%d (row Mops/s / column Mops/s)\n", g)
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "  \t")
		for j := range rows {
			fmt.Fprintf(tw, "#%d\t", j+1)
		}
		fmt.Fprintln(tw)
		for i, n := range rows {
			c := r.Find(n, size.Name, wl, g)
			fmt.Fprintf(tw, "  #%d %s\t", i+1, n)
			for _, p := range rows {
				if v, ok := c.Ratios[p]; ok {
					fmt.Fprintf(tw, "%.2f\t", v)
				} else {
					fmt.Fprint(tw, "-\t")
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}
