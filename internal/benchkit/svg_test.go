package benchkit

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strings"
	"testing"
)

// svgDoc is what the tests learn from a chart file.
type svgDoc struct {
	charts []svgPanelDoc
	texts  []string // every text element's content
}

type svgPanelDoc struct {
	workload, size string
	polylines      []string // data-impl of each polyline
	points         []string // points of each polyline
	whiskers       int
	styles         map[string]string // impl -> "colour marker" of its points
}

func parseSVGData(t *testing.T, data []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var cur *svgPanelDoc
	depth, chartDepth := 0, -1
	root := true
	inText, inTitle := false, false
	var title, pendingStyle string
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
					doc.charts = append(doc.charts, svgPanelDoc{workload: attr("data-workload"), size: attr("data-size")})
					cur, chartDepth = &doc.charts[len(doc.charts)-1], depth
				}
			case "polyline":
				if cur == nil {
					t.Errorf("polyline outside a chart")
					break
				}
				cur.polylines = append(cur.polylines, attr("data-impl"))
				cur.points = append(cur.points, attr("points"))
			case "path":
				if cur != nil && attr("class") == "whisker" {
					cur.whiskers++
				} else if cur != nil {
					pendingStyle = "path " + attr("stroke") + " " + attr("fill")
				}
			case "circle", "rect", "polygon":
				if cur != nil {
					pendingStyle = tok.Name.Local + " " + attr("stroke") + " " + attr("fill")
				}
			case "title":
				inTitle = true
				title = ""
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
			if tok.Name.Local == "title" {
				inTitle = false
				if cur != nil && pendingStyle != "" {
					impl, _, _ := strings.Cut(title, " ")
					if cur.styles == nil {
						cur.styles = map[string]string{}
					}
					cur.styles[impl] = pendingStyle
					pendingStyle = ""
				}
			}
			depth--
		case xml.CharData:
			if inTitle {
				title += string(tok)
			}
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

// testReport returns a report with made-up cells: two sizes, two
// workloads, three goroutine counts, one missing cell, spread runs.
func testReport() *Report {
	r := &Report{
		Title:      "cuckoo bench",
		Sizes:      []Size{{"1k", 1 << 10}, {"1M", 1 << 20}},
		Goroutines: []int{1, 2, 64},
		Workloads:  []Workload{Fill, LookupNeg},
		Duration:   "1s",
		Reps:       3,
	}
	names := []string{"lockfree-f12", "lockfree-f12-batch", "map-rwmutex", "probe"}
	for _, sz := range r.Sizes {
		for _, n := range names {
			kind := "concurrent"
			if n == "probe" {
				kind = "probe"
			}
			r.Impls = append(r.Impls, ImplInfo{Impl: n, Desc: "what " + n + " is", Size: sz.Name, Kind: kind})
		}
		for _, w := range r.Workloads {
			for gi, g := range r.Goroutines {
				for i, n := range names {
					if n == "map-rwmutex" && g == 64 && sz.Name == "1M" {
						continue // missing cell
					}
					m := float64((i + 1) * (gi + 1) * 7)
					r.Cells = append(r.Cells, Cell{Impl: n, Workload: w, Size: sz.Name, N: sz.N, Goroutines: g, Reps: 3,
						Mops: m, MopsMin: m * 0.5, MopsMax: m * 1.5})
				}
			}
		}
	}
	return r
}

func TestSVGChart(t *testing.T) {
	rep := testReport()
	var buf bytes.Buffer
	if err := rep.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	doc := parseSVGData(t, buf.Bytes())
	if len(doc.charts) != 4 {
		t.Fatalf("%d panels, want 4 (2 sizes x 2 workloads)", len(doc.charts))
	}
	wantOrder := []string{"fill 1k", "lookup-neg 1k", "fill 1M", "lookup-neg 1M"}
	for i, ch := range doc.charts {
		if got := ch.workload + " " + ch.size; got != wantOrder[i] {
			t.Errorf("panel %d is %q, want %q", i, got, wantOrder[i])
		}
		if want := []string{"lockfree-f12", "lockfree-f12-batch", "map-rwmutex", "probe"}; !slices.Equal(ch.polylines, want) {
			t.Errorf("panel %d: polylines %v, want %v", i, ch.polylines, want)
		}
		points := 0
		for j, p := range ch.points {
			n := len(strings.Fields(p))
			points += n
			want := 3
			if ch.polylines[j] == "map-rwmutex" && ch.size == "1M" {
				want-- // the missing cell
			}
			if n != want {
				t.Errorf("panel %d %s: %d points, want %d: %q", i, ch.polylines[j], n, want, p)
			}
		}
		// Every point has its whisker and its marker; the markers tell the
		// series apart by colour and shape, the batch row by a hollow one.
		if ch.whiskers != points {
			t.Errorf("panel %d: %d whiskers for %d points", i, ch.whiskers, points)
		}
		seen := map[string]string{}
		for impl, st := range ch.styles {
			if other, ok := seen[st]; ok {
				t.Errorf("panel %d: %s and %s drawn alike (%s)", i, impl, other, st)
			}
			seen[st] = impl
		}
		if len(ch.styles) != 4 {
			t.Errorf("panel %d: markers of %d series, want 4: %v", i, len(ch.styles), ch.styles)
		}
		if !strings.HasSuffix(ch.styles["lockfree-f12-batch"], "#ffffff") {
			t.Errorf("panel %d: batch marker %q, want hollow", i, ch.styles["lockfree-f12-batch"])
		}
	}
	all := strings.Join(doc.texts, "|")
	for _, want := range []string{"cuckoo bench: throughput (Mops/s) against goroutines", "goroutines (categories, not to scale)",
		"Mops/s (log scale)", "whisker", "lockfree-f12-batch", "what map-rwmutex is", "what probe is", "fill, n=1k",
		WorkloadHelp[LookupNeg], "|64|", "|1|"} {
		if !strings.Contains(all, want) {
			t.Errorf("chart text lacks %q: %s", want, all)
		}
	}
	// The y axis is fitted: data from 3.5 (7 * 0.5) to 126 (7*4*3*1.5)
	// gets ends 2 and 200, not whole decades 1 and 1000.
	for _, want := range []string{"|2|", "|200|"} {
		if !strings.Contains(all, want) {
			t.Errorf("chart text lacks tick %q: %s", want, all)
		}
	}
	for _, bad := range []string{"|500|", "|1000|"} {
		if strings.Contains(all, bad) {
			t.Errorf("y axis has tick %q for data up to 126: %s", bad, all)
		}
	}
}

func TestSVGEscapes(t *testing.T) {
	rep := testReport()
	name := `<1k & "x">`
	for i := range rep.Cells {
		if rep.Cells[i].Size == "1k" {
			rep.Cells[i].Size = name
		}
	}
	rep.Sizes[0].Name = name
	var buf bytes.Buffer
	if err := rep.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	doc := parseSVGData(t, buf.Bytes())
	if doc.charts[0].size != name {
		t.Errorf("size attribute round-trips as %q", doc.charts[0].size)
	}
}

func TestLogAxis(t *testing.T) {
	for _, tc := range []struct {
		lo, hi      float64
		bottom, top float64
		ticks       []string
	}{
		{3, 40, 2, 50, []string{"2", "5", "10", "20", "50"}},
		{5, 300, 5, 500, []string{"5", "10", "20", "50", "100", "200", "500"}},
		{0.3, 250, 0.2, 500, []string{"0.2", "1", "10", "100", "500"}}, // over three decades: powers of ten
		{0.02, 300, 0.02, 500, []string{"0.02", "0.1", "1", "10", "100", "500"}},
		{10, 10, 10, 20, []string{"10", "20"}},
		{0, 0, 1, 10, []string{"1", "2", "5", "10"}}, // nothing to plot
	} {
		bottom, top, ticks := LogAxis(tc.lo, tc.hi)
		var got []string
		for _, v := range ticks {
			got = append(got, FmtTick(v))
		}
		if bottom != tc.bottom || top != tc.top || !slices.Equal(got, tc.ticks) {
			t.Errorf("LogAxis(%v, %v) = %v, %v, %v; want %v, %v, %v", tc.lo, tc.hi, bottom, top, got, tc.bottom, tc.top, tc.ticks)
		}
	}
}
