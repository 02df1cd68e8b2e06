package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// svgDoc is what the tests learn from a chart file.
type svgDoc struct {
	charts []svgPanel
	texts  []string // every text element's content
}

type svgPanel struct {
	workload, size string
	polylines      []string // data-impl of each polyline
	points         []string // points of each polyline
}

// parseSVG reads the chart at path with encoding/xml, failing the test if it
// is not well-formed or not self-contained.
func parseSVG(t *testing.T, path string) svgDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseSVGData(t, data)
}

func parseSVGData(t *testing.T, data []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var cur *svgPanel
	depth, chartDepth := 0, -1
	root := true
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			attr := func(name string) string {
				for _, a := range tok.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			if root {
				if tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element %v, want svg in the SVG namespace", tok.Name)
				}
				root = false
			}
			switch tok.Name.Local {
			case "script", "foreignObject", "image", "use", "style":
				t.Errorf("SVG has a <%s> element", tok.Name.Local)
			case "g":
				if attr("class") == "chart" {
					if cur != nil {
						t.Fatal("nested charts")
					}
					doc.charts = append(doc.charts, svgPanel{workload: attr("data-workload"), size: attr("data-size")})
					cur, chartDepth = &doc.charts[len(doc.charts)-1], depth
				}
			case "polyline":
				if cur == nil {
					t.Errorf("polyline outside a chart")
					break
				}
				cur.polylines = append(cur.polylines, attr("data-impl"))
				cur.points = append(cur.points, attr("points"))
			case "text":
				inText = true
				doc.texts = append(doc.texts, "")
			}
			for _, a := range tok.Attr {
				if a.Name.Local == "href" || strings.HasPrefix(a.Name.Local, "on") || strings.Contains(a.Value, "url(") {
					t.Errorf("SVG refers outside itself or runs code: <%s %s=%q>", tok.Name.Local, a.Name.Local, a.Value)
				}
			}
		case xml.EndElement:
			if depth == chartDepth {
				cur, chartDepth = nil, -1
			}
			if tok.Name.Local == "text" {
				inText = false
			}
			depth--
		case xml.CharData:
			if inText {
				doc.texts[len(doc.texts)-1] += string(tok)
			}
		}
	}
	if root {
		t.Fatal("SVG has no root element")
	}
	return doc
}

// testReport returns a report with made-up rows: two sizes, two workloads,
// three goroutine counts, one missing cell and one cell that did not run.
func testReport() *benchReport {
	cfg := benchConfig{
		sizes:      []size{{"1k", 1 << 10}, {"1M", 1 << 20}},
		goroutines: []int{1, 2, 64},
		workloads:  []workload{wFill, wLookupNeg},
		duration:   time.Second,
	}
	kinds := map[string]bool{kindCuckoo: true, kindBatch: true, kindMap: true}
	rep := &benchReport{cfg: cfg, structs: structures([]cuckoo.Mode{cuckoo.LockFree}, []int{12}, kinds)}
	for _, sz := range cfg.sizes {
		for _, w := range cfg.workloads {
			for gi, g := range cfg.goroutines {
				for i, name := range rep.rowNames() {
					if w == wFill && strings.HasSuffix(name, "-batch") {
						continue
					}
					if name == "map-rwmutex" && g == 64 && sz.name == "1M" {
						continue // missing cell
					}
					r := row{impl: name, workload: w, size: sz, g: g, reps: 1, mops: float64((i + 1) * (gi + 1) * 7)}
					if name == "map-rwmutex" && g == 2 && w == wFill {
						r.reps, r.mops = 0, 0 // not run
					}
					rep.rows = append(rep.rows, r)
				}
			}
		}
	}
	return rep
}

func TestSVGChart(t *testing.T) {
	rep := testReport()
	var buf bytes.Buffer
	if err := rep.writeSVG(&buf); err != nil {
		t.Fatal(err)
	}
	doc := parseSVGData(t, buf.Bytes())
	if len(doc.charts) != 4 {
		t.Fatalf("%d charts, want 4 (2 sizes x 2 workloads)", len(doc.charts))
	}
	wantOrder := []string{"fill 1k", "lookup-neg 1k", "fill 1M", "lookup-neg 1M"}
	for i, ch := range doc.charts {
		if got := string(ch.workload) + " " + ch.size; got != wantOrder[i] {
			t.Errorf("chart %d is %q, want %q", i, got, wantOrder[i])
		}
		want := []string{"lockfree-f12", "map-rwmutex"}
		if ch.workload == "lookup-neg" {
			want = []string{"lockfree-f12", "lockfree-f12-batch", "map-rwmutex"}
		}
		if !slices.Equal(ch.polylines, want) {
			t.Errorf("chart %d: polylines %v, want %v", i, ch.polylines, want)
		}
		for j, p := range ch.points {
			n := len(strings.Fields(p))
			want := 3
			if ch.polylines[j] == "map-rwmutex" && ch.size == "1M" {
				want-- // the missing cell
			}
			if ch.polylines[j] == "map-rwmutex" && ch.workload == "fill" {
				want-- // the cell that did not run
			}
			if n != want {
				t.Errorf("chart %d %s: %d points, want %d: %q", i, ch.polylines[j], n, want, p)
			}
		}
	}
	all := strings.Join(doc.texts, "|")
	for _, want := range []string{"cuckoo bench: throughput (Mops/s) against goroutines", "goroutines", "Mops/s (log scale)",
		"lockfree-f12", "lockfree-f12-batch", "map-rwmutex", "fill, n=1k", "|64|", "|1|"} {
		if !strings.Contains(all, want) {
			t.Errorf("chart text lacks %q: %s", want, all)
		}
	}
}

func TestSVGEscapes(t *testing.T) {
	rep := testReport()
	rep.cfg.sizes[0].name = `<1k & "x">`
	for i := range rep.rows {
		if rep.rows[i].size.n == 1<<10 {
			rep.rows[i].size.name = rep.cfg.sizes[0].name
		}
	}
	var buf bytes.Buffer
	if err := rep.writeSVG(&buf); err != nil {
		t.Fatal(err)
	}
	doc := parseSVGData(t, buf.Bytes())
	if doc.charts[0].size != `<1k & "x">` {
		t.Errorf("size attribute round-trips as %q", doc.charts[0].size)
	}
}

func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi      float64
		bottom, top float64
		ticks       []string
	}{
		{3, 40, 1, 100, []string{"1", "2", "5", "10", "20", "50", "100"}},
		{0.3, 250, 0.1, 1000, []string{"0.1", "1", "10", "100", "1000"}},
		{0.3, 25, 0.1, 100, []string{"0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100"}},
		{0.02, 300, 0.01, 1000, []string{"0.01", "0.1", "1", "10", "100", "1000"}},
		{10, 10, 10, 100, []string{"10", "20", "50", "100"}},
		{5, 5, 1, 10, []string{"1", "2", "5", "10"}},
		{0, 0, 1, 10, []string{"1", "2", "5", "10"}}, // nothing to plot
	} {
		bottom, top, ticks := logTicks(tc.lo, tc.hi)
		var got []string
		for _, v := range ticks {
			got = append(got, fmtTick(v))
		}
		if bottom != tc.bottom || top != tc.top || !slices.Equal(got, tc.ticks) {
			t.Errorf("logTicks(%v, %v) = %v, %v, %v; want %v, %v, %v", tc.lo, tc.hi, bottom, top, got, tc.bottom, tc.top, tc.ticks)
		}
	}
}
