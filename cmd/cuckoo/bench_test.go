package main

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// benchRows parses the result table of cuckoo bench: one map per row, keyed
// by the header's column names.
func benchRows(t *testing.T, out string) []map[string]string {
	t.Helper()
	var cols []string
	var rows []map[string]string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "impl" && f[1] == "workload" {
			cols = f
			continue
		}
		if cols == nil || len(f) < len(cols)-1 {
			continue
		}
		r := map[string]string{}
		for i, c := range cols {
			if i < len(f) {
				r[c] = f[i]
			}
		}
		rows = append(rows, r)
	}
	if cols == nil {
		t.Fatalf("no table header in output:\n%s", out)
	}
	return rows
}

func TestBenchCommandEndToEnd(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "chart.svg")
	status, stdout, stderr := runCmd(t, "", "bench", "-sizes", "10k", "-goroutines", "1,2",
		"-bits", "12", "-duration", "20ms", "-svg", svg)
	if status != exitOK {
		t.Fatalf("status = %d; want %d; stderr:\n%s", status, exitOK, stderr)
	}
	for _, want := range []string{"cpu:", "GOMAXPROCS", "rtm elision"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("header lacks %q:\n%s", want, stdout)
		}
	}
	rows := benchRows(t, stdout)
	type cell struct{ impl, workload, g string }
	got := map[cell]map[string]string{}
	for _, r := range rows {
		got[cell{r["impl"], r["workload"], r["goroutines"]}] = r
	}
	impls := []string{"lockfree-f12", "locked-f12", "map-rwmutex", "probe"}
	for _, w := range []string{"fill", "lookup-pos", "lookup-neg", "mixed"} {
		for _, g := range []string{"1", "2"} {
			for _, impl := range impls {
				r, ok := got[cell{impl, w, g}]
				if !ok {
					t.Errorf("no row for impl=%s workload=%s goroutines=%s", impl, w, g)
					continue
				}
				if mops, err := strconv.ParseFloat(r["Mops/s"], 64); err != nil || mops <= 0 {
					t.Errorf("%s %s g=%s: Mops/s = %q; want a positive number", impl, w, g, r["Mops/s"])
				}
				if strings.HasPrefix(impl, "lockfree") || strings.HasPrefix(impl, "locked") {
					if r["allocs/op"] != "0.00" {
						t.Errorf("%s %s g=%s: allocs/op = %s; want 0.00", impl, w, g, r["allocs/op"])
					}
				}
			}
			if r := got[cell{"lockfree-f12", w, g}]; r != nil && r["ratio"] != "1.00" {
				t.Errorf("reference row %s g=%s: ratio = %s; want 1.00", w, g, r["ratio"])
			}
			if r := got[cell{"lockfree-f12", w, g}]; r != nil && w == "fill" && r["load"] != "95.0%" {
				t.Errorf("fill g=%s: load = %s; want 95.0%%", g, r["load"])
			}
		}
	}
	for _, g := range []string{"1", "2"} {
		if _, ok := got[cell{"lockfree-f12-batch", "lookup-pos", g}]; !ok {
			t.Errorf("no LookupBatch row for goroutines=%s", g)
		}
	}

	// The chart is well-formed XML with one polyline per implementation
	// and chart.
	f, err := os.Open(svg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	polylines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	if polylines < len(impls) {
		t.Errorf("SVG has %d polylines; want at least %d (one per implementation)", polylines, len(impls))
	}
}

func TestBenchCommandBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "-sizes", "lots"},
		{"bench", "-goroutines", "0"},
		{"bench", "-modes", "optimistic"},
		{"bench", "-bits", "9"},
		{"bench", "-no-such-flag"},
	} {
		if status, _, _ := runCmd(t, "", args...); status != exitUsage {
			t.Errorf("%v: status = %d; want %d", args, status, exitUsage)
		}
	}
}
