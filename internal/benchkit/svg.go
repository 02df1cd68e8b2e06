package benchkit

// A self-contained SVG chart of a report: per size, one panel per workload
// with Mops/s against the goroutine counts. Every implementation has its
// own colour and marker (a batch row shares its plain row's colour with a
// hollow marker and a dashed line); each point is the median of the
// repetitions and its whisker spans their minimum and maximum. The legend
// names and explains every series. No scripts, no external resources: it
// opens in any browser and converts with rsvg-convert.

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Chart geometry, in SVG user units (pixels).
const (
	svgPanelW  = 500 // one panel, including its margins
	svgPanelH  = 340
	svgPlotL   = 64 // plot area margins inside a panel
	svgPlotR   = 16
	svgPlotT   = 52
	svgPlotB   = 56
	svgMargin  = 16
	svgTitleH  = 64 // title and subtitle band
	svgLegendH = 20 // one legend line
)

// svgPalette holds strong hues that stay apart on white and for the common
// colour-vision deficiencies (Okabe-Ito first, then darker extras).
// Grey is kept for memory probes, which are not filters.
var svgPalette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#000000", "#56b4e9", "#e69f00", "#8c564b", "#6a3d9a", "#b8860b"}

const svgProbeColor = "#7f7f7f"

// svgMarkers are the marker shapes, in order.
var svgMarkers = []string{"circle", "square", "triangle", "diamond", "triangle-down", "cross", "plus", "star"}

// WorkloadHelp says what each workload measures, for legends and help.
var WorkloadHelp = map[Workload]string{
	Fill:      "inserts into an empty structure up to n keys (97% of a five-slot cuckoo filter's slots, 95% of a four-slot one's)",
	LookupPos: "lookups of inserted keys",
	LookupNeg: "lookups of keys never inserted",
	Mixed:     "90% lookups, 5% deletes, 5% re-inserts, 95% of n keys in",
}

// svgStyle is how one series is drawn.
type svgStyle struct {
	color, marker string
	hollow        bool // batch rows
}

// svgStyles gives every impl a style: a family (the name without "-batch")
// gets the next colour and marker; its batch row is hollow and dashed. A
// memory probe is grey crosses.
func (r *Report) svgStyles(names []string) map[string]svgStyle {
	out := map[string]svgStyle{}
	fam := map[string]int{}
	for _, n := range names {
		if in := r.Info(n, r.Impls[0].Size); in != nil && in.Kind == "probe" {
			out[n] = svgStyle{color: svgProbeColor, marker: "cross"}
			continue
		}
		base, batch := strings.CutSuffix(n, "-batch")
		i, ok := fam[base]
		if !ok {
			i = len(fam)
			fam[base] = i
		}
		out[n] = svgStyle{color: svgPalette[i%len(svgPalette)], marker: svgMarkers[i%len(svgMarkers)], hollow: batch}
	}
	return out
}

// marker returns the SVG element of a marker centred at (x, y).
func (s svgStyle) markerAt(x, y float64, title string) string {
	fill := s.color
	if s.hollow {
		fill = "#ffffff"
	}
	const r = 4.5
	paint := fmt.Sprintf(`fill="%s" stroke="%s" stroke-width="1.5"`, fill, s.color)
	var shape string
	switch s.marker {
	case "circle":
		shape = fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="%.1f" %s>`, x, y, r, paint)
	case "square":
		shape = fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s>`, x-r*0.85, y-r*0.85, 1.7*r, 1.7*r, paint)
	case "cross", "plus":
		a := r
		d := fmt.Sprintf("M%.1f %.1fH%.1fM%.1f %.1fV%.1f", x-a, y, x+a, x, y-a, y+a)
		if s.marker == "cross" {
			d = fmt.Sprintf("M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f", x-a, y-a, x+a, y+a, x-a, y+a, x+a, y-a)
		}
		shape = fmt.Sprintf(`<path d="%s" fill="none" stroke="%s" stroke-width="2.5">`, d, s.color)
	default:
		shape = fmt.Sprintf(`<polygon points="%s" %s>`, polygon(s.marker, x, y, r*1.2), paint)
	}
	tag := shape[1:strings.IndexAny(shape, " >")]
	return shape + "<title>" + esc(title) + "</title></" + tag + ">"
}

// polygon returns the points of a triangle, diamond or star around (x, y).
func polygon(kind string, x, y, r float64) string {
	var pts [][2]float64
	switch kind {
	case "triangle":
		pts = [][2]float64{{0, -1}, {0.87, 0.6}, {-0.87, 0.6}}
	case "triangle-down":
		pts = [][2]float64{{0, 1}, {0.87, -0.6}, {-0.87, -0.6}}
	case "diamond":
		pts = [][2]float64{{0, -1}, {0.8, 0}, {0, 1}, {-0.8, 0}}
	default: // star
		for i := range 10 {
			a := math.Pi * (float64(i)/5 - 0.5)
			k := 1.0
			if i%2 == 1 {
				k = 0.45
			}
			pts = append(pts, [2]float64{k * math.Cos(a), k * math.Sin(a)})
		}
	}
	s := make([]string, len(pts))
	for i, p := range pts {
		s[i] = fmt.Sprintf("%.1f,%.1f", x+r*p[0], y+r*p[1])
	}
	return strings.Join(s, " ")
}

// niceSteps are the tick mantissas of a logarithmic axis.
var niceSteps = []float64{1, 2, 5}

// LogAxis returns a logarithmic axis fitted to [lo, hi] (lo > 0): its ends
// are the nearest 1, 2 or 5 times a power of ten outside the data, and its
// ticks every such value between them, or only the powers of ten (and the
// ends) when the axis spans more than three decades.
func LogAxis(lo, hi float64) (bottom, top float64, ticks []float64) {
	if !(lo > 0) || math.IsInf(hi, 0) || math.IsNaN(hi) || hi < lo {
		lo, hi = 1, 10
	}
	nice := func(d int, i int) float64 { return niceSteps[i] * math.Pow(10, float64(d)) }
	// bottom: the largest nice value <= lo.
	d := int(math.Floor(math.Log10(lo)))
	bottom = nice(d, 0)
	for i := range niceSteps {
		if v := nice(d, i); v <= lo*(1+1e-9) {
			bottom = v
		}
	}
	// top: the smallest nice value >= hi, above bottom.
	top = 0
	for e := int(math.Floor(math.Log10(hi))); top == 0; e++ {
		for i := range niceSteps {
			if v := nice(e, i); v >= hi*(1-1e-9) && v > bottom {
				top = v
				break
			}
		}
	}
	all := math.Log10(top/bottom) <= 3
	for e := d; ; e++ {
		for i := range niceSteps {
			v := nice(e, i)
			if v < bottom*(1-1e-9) {
				continue
			}
			if v > top*(1+1e-9) {
				return bottom, top, ticks
			}
			if all || i == 0 || v == bottom || v == top {
				ticks = append(ticks, v)
			}
		}
	}
}

// FmtTick prints a tick value without float noise: "0.2", "5", "1000".
func FmtTick(v float64) string {
	if v >= 1 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 1, 64)
}

// esc escapes s for XML text and attribute values.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// svgPanel is one panel: a workload at a size.
type svgPanel struct {
	size  Size
	w     Workload
	cells []Cell
}

func (r *Report) panels() []svgPanel {
	var out []svgPanel
	for _, sz := range r.Sizes {
		for _, w := range r.Workloads {
			p := svgPanel{size: sz, w: w}
			for _, c := range r.Cells {
				if c.Size == sz.Name && c.Workload == w && c.Reps > 0 && c.Mops > 0 {
					p.cells = append(p.cells, c)
				}
			}
			if len(p.cells) > 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// WriteSVG draws the report's chart.
func (r *Report) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	panels := r.panels()
	names := r.Names()
	styles := r.svgStyles(names)

	cols := min(max(len(r.Workloads), 1), 2)
	if len(panels) < 2 {
		cols = 1
	}
	rows := (len(panels) + cols - 1) / cols
	// The legend has a column of names and one of descriptions; its width
	// is estimated from the characters (about 7.5 and 6 units each).
	nameW, descW := 0, 0
	for _, in := range r.Impls {
		nameW, descW = max(nameW, len(in.Impl)), max(descW, len(in.Desc))
	}
	descX := svgMargin + 44 + int(7.5*float64(nameW)) + 12
	width := max(2*svgMargin+cols*svgPanelW, descX+6*descW+svgMargin)
	panelsTop := svgMargin + svgTitleH
	legendTop := panelsTop + rows*svgPanelH + 8
	legendLines := len(names) + 2
	height := legendTop + legendLines*svgLegendH + svgMargin

	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(bw, "<title>%s: throughput against goroutines</title>\n", esc(r.Title))
	fmt.Fprintf(bw, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)

	m := r.Machine
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="18" font-weight="bold">%s: throughput (Mops/s) against goroutines</text>`+"\n", svgMargin, svgMargin+18, esc(r.Title))
	sub := fmt.Sprintf("%s, %s/%s, GOMAXPROCS=%d, NumCPU=%d, %s", m.CPU, m.GOOS, m.GOARCH, m.GOMAXPROCS, m.NumCPU, m.GoVersion)
	for _, h := range r.Header {
		sub += ", " + h
	}
	fmt.Fprintf(bw, `<text x="%d" y="%d" fill="#444444">%s</text>`+"\n", svgMargin, svgMargin+38, esc(sub))
	how := fmt.Sprintf("higher is better; point = median of a cell's runs, whisker = their minimum to maximum (%s per cell, %d runs of lookups and mixed)", r.Duration, r.Reps)
	fmt.Fprintf(bw, `<text x="%d" y="%d" fill="#444444">%s</text>`+"\n", svgMargin, svgMargin+56, esc(how))
	if m.Busy() {
		fmt.Fprintf(bw, `<text x="%d" y="%d" fill="#b00000" font-weight="bold" text-anchor="end">%s</text>`+"\n", width-svgMargin, svgMargin+18,
			esc(fmt.Sprintf("WARNING: 1-minute load %.2f at start on %d CPUs: rates skewed", m.LoadStart, m.NumCPU)))
	}

	for i, p := range panels {
		ox := svgMargin + (i%cols)*svgPanelW
		oy := panelsTop + (i/cols)*svgPanelH
		r.writePanel(bw, p, ox, oy, names, styles)
	}

	// Legend: one line per implementation, its style and what it is.
	fmt.Fprintf(bw, `<g class="legend">`+"\n")
	y := legendTop + svgLegendH/2
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-weight="bold">Series</text>`+"\n", svgMargin, y+4)
	for _, n := range names {
		y += svgLegendH
		st := styles[n]
		dash := ""
		if st.hollow {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`, svgMargin, y, svgMargin+36, y, st.color, dash)
		fmt.Fprint(bw, st.markerAt(float64(svgMargin+18), float64(y), n))
		desc := ""
		for _, in := range r.Impls {
			if in.Impl == n {
				desc = in.Desc
				break
			}
		}
		fmt.Fprintf(bw, `<text x="%d" y="%d" font-weight="bold">%s</text>`, svgMargin+44, y+4, esc(n))
		fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="11" fill="#444444">%s</text>`+"\n", descX, y+4, esc(desc))
	}
	y += svgLegendH
	fmt.Fprintf(bw, `<text x="%d" y="%d" fill="#444444">%s</text>`+"\n", svgMargin, y+4,
		esc("goroutine counts are categories spaced evenly, not to scale; within a category the series are set side by side so whiskers do not overlap"))
	fmt.Fprintf(bw, "</g>\n</svg>\n")
	return bw.Flush()
}

// writePanel draws one panel with its top-left corner at (ox, oy).
func (r *Report) writePanel(w io.Writer, p svgPanel, ox, oy int, names []string, styles map[string]svgStyle) {
	px, py := float64(ox+svgPlotL), float64(oy+svgPlotT)
	pw := float64(svgPanelW - svgPlotL - svgPlotR)
	ph := float64(svgPanelH - svgPlotT - svgPlotB)
	gs := r.Goroutines

	// The y axis is logarithmic, fitted to the whiskers: the memory probe
	// runs ten times faster than the structures it bounds.
	lo, hi := math.Inf(1), 0.0
	var here []string // the series in this panel, in legend order
	for _, n := range names {
		for _, c := range p.cells {
			if c.Impl == n {
				lo, hi = min(lo, c.MopsMin, c.Mops), max(hi, c.MopsMax, c.Mops)
				if len(here) == 0 || here[len(here)-1] != n {
					here = append(here, n)
				}
			}
		}
	}
	bottom, top, ticks := LogAxis(lo, hi)
	band := pw / float64(len(gs))
	xAt := func(gi, si int) float64 {
		spread := 0.7 * band
		off := 0.0
		if len(here) > 1 {
			off = spread * (float64(si)/float64(len(here)-1) - 0.5)
		}
		return px + band*(float64(gi)+0.5) + off
	}
	yAt := func(v float64) float64 { return py + ph*(1-math.Log10(v/bottom)/math.Log10(top/bottom)) }

	fmt.Fprintf(w, `<g class="chart" data-workload="%s" data-size="%s">`+"\n", esc(string(p.w)), esc(p.size.Name))
	fmt.Fprintf(w, `<text x="%.1f" y="%d" font-size="14" font-weight="bold" text-anchor="middle">%s, n=%s</text>`+"\n",
		px+pw/2, oy+20, esc(string(p.w)), esc(p.size.Name))
	if h := WorkloadHelp[p.w]; h != "" {
		fmt.Fprintf(w, `<text x="%.1f" y="%d" font-size="11" fill="#444444" text-anchor="middle">%s</text>`+"\n", px+pw/2, oy+36, esc(h))
	}
	for _, v := range ticks {
		y := yAt(v)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`, px, y, px+pw, y)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", px-6, y, FmtTick(v))
	}
	// Category bands: a light separator between goroutine counts.
	for i, g := range gs {
		if i > 0 {
			x := px + band*float64(i)
			fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#c8c8c8" stroke-dasharray="2 3"/>`, x, py, x, py+ph)
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle" font-weight="bold">%d</text>`+"\n", px+band*(float64(i)+0.5), py+ph+18, g)
	}
	fmt.Fprintf(w, `<path d="M%.1f %.1f V%.1f H%.1f" fill="none" stroke="#333333"/>`+"\n", px, py, py+ph, px+pw)
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle">goroutines (categories, not to scale)</text>`+"\n", px+pw/2, py+ph+40)
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">Mops/s (log scale)</text>`+"\n",
		float64(ox+16), py+ph/2, float64(ox+16), py+ph/2)

	// Per series: a thin line joining its medians, then per point the
	// whisker and the marker.
	for si, n := range here {
		st := styles[n]
		var pts []string
		var marks []string
		for gi, g := range gs {
			for _, c := range p.cells {
				if c.Impl != n || c.Goroutines != g {
					continue
				}
				X, Y := xAt(gi, si), yAt(c.Mops)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", X, Y))
				y0, y1 := yAt(c.MopsMin), yAt(c.MopsMax)
				marks = append(marks, fmt.Sprintf(`<path class="whisker" d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f" stroke="%s" stroke-width="1.2" fill="none"/>`,
					X, y0, y1, X-3, y0, X+3, X-3, y1, X+3, st.color))
				marks = append(marks, st.markerAt(X, Y, fmt.Sprintf("%s %s g=%d: %.2f Mops/s (runs %.2f..%.2f, %d)", n, p.w, g, c.Mops, c.MopsMin, c.MopsMax, c.Reps)))
			}
		}
		dash := ""
		if st.hollow {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(w, `<polyline data-impl="%s" points="%s" fill="none" stroke="%s" stroke-opacity="0.55" stroke-width="1.5"%s stroke-linejoin="round"/>`+"\n",
			esc(n), strings.Join(pts, " "), st.color, dash)
		fmt.Fprintln(w, strings.Join(marks, ""))
	}
	fmt.Fprintf(w, "</g>\n")
}
