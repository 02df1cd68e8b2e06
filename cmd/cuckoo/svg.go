package main

// A self-contained SVG chart of a bench report: one line chart of Mops/s
// against goroutines per workload and size, in a grid of small multiples
// under one title and one legend. No scripts, no external resources: it
// opens in any browser.

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/seed25b00da8/cuckoo"
)

// Chart geometry, in SVG user units (pixels).
const (
	svgChartW  = 480 // one chart, including its margins
	svgChartH  = 320
	svgPlotL   = 64 // plot area margins inside a chart
	svgPlotR   = 16
	svgPlotT   = 40
	svgPlotB   = 52
	svgMargin  = 16
	svgTitleH  = 56 // title and subtitle band
	svgLegendW = 230
	svgLegendH = 22
)

// svgPalette is Tableau 10: distinct hues that survive on white.
var svgPalette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// svgDash returns the stroke pattern of a row: solid for lock-free, dashed
// for locked, dotted for batch rows, long dashes for the baselines.
func svgDash(name string) string {
	switch {
	case strings.HasSuffix(name, "-batch"):
		return "2 4"
	case strings.HasPrefix(name, "locked"):
		return "8 4"
	case strings.HasPrefix(name, "map") || name == "probe":
		return "14 4 2 4"
	}
	return ""
}

// svgChart is one panel: a workload at a size.
type svgChart struct {
	size     size
	workload workload
	rows     []row
}

// charts returns the panels in order: sizes, then workloads.
func (r *benchReport) charts() []svgChart {
	var out []svgChart
	for _, sz := range r.cfg.sizes {
		for _, w := range r.cfg.workloads {
			c := svgChart{size: sz, workload: w}
			for _, x := range r.rows {
				if x.size.name == sz.name && x.workload == w && x.reps > 0 {
					c.rows = append(c.rows, x)
				}
			}
			if len(c.rows) > 0 {
				out = append(out, c)
			}
		}
	}
	return out
}

// logTicks returns the range of a logarithmic axis covering [lo, hi]
// (lo > 0): whole decades, and the tick values in it: every power of ten,
// plus 2 and 5 times it when the axis spans at most three decades.
func logTicks(lo, hi float64) (bottom, top float64, ticks []float64) {
	if !(lo > 0) || math.IsInf(hi, 0) || hi < lo {
		lo, hi = 1, 10
	}
	bottom = math.Pow(10, math.Floor(math.Log10(lo)))
	top = math.Pow(10, math.Ceil(math.Log10(hi)))
	if top <= bottom {
		top = bottom * 10
	}
	decades := int(math.Round(math.Log10(top / bottom)))
	for d := 0; d <= decades; d++ {
		p := bottom * math.Pow(10, float64(d))
		ticks = append(ticks, p)
		if d < decades && decades <= 3 {
			ticks = append(ticks, 2*p, 5*p)
		}
	}
	return bottom, top, ticks
}

// fmtTick prints a tick value (1, 2 or 5 times a power of ten) without
// float noise: "0.2", "5", "1000".
func fmtTick(v float64) string {
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

// writeSVG draws the report's charts.
func (r *benchReport) writeSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	charts := r.charts()
	names := r.rowNames()
	color := map[string]string{}
	for i, n := range names {
		color[n] = svgPalette[i%len(svgPalette)]
	}

	cols := 2
	if len(charts) < 2 {
		cols = 1
	}
	rowsN := (len(charts) + cols - 1) / cols
	width := 2*svgMargin + cols*svgChartW
	perLine := max((width-2*svgMargin)/svgLegendW, 1)
	legendLines := (len(names) + perLine - 1) / perLine
	legendTop := svgMargin + svgTitleH
	chartsTop := legendTop + legendLines*svgLegendH + 8
	height := chartsTop + rowsN*svgChartH + svgMargin

	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(bw, "<title>cuckoo bench: throughput against goroutines</title>\n")
	fmt.Fprintf(bw, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)

	// Title and subtitle.
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="18" font-weight="bold">cuckoo bench: throughput (Mops/s) against goroutines</text>`+"\n", svgMargin, svgMargin+18)
	sub := fmt.Sprintf("%s, %s/%s, GOMAXPROCS=%d, NumCPU=%d, %s, rtm=%v; %v per cell",
		cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.Version(), cuckoo.RTMActive(), r.cfg.duration)
	fmt.Fprintf(bw, `<text x="%d" y="%d" fill="#555555">%s</text>`+"\n", svgMargin, svgMargin+40, esc(sub))

	// Legend: one entry per implementation, the same color in every chart.
	fmt.Fprintf(bw, `<g class="legend">`+"\n")
	for i, n := range names {
		x := svgMargin + (i%perLine)*svgLegendW
		y := legendTop + (i/perLine)*svgLegendH + svgLegendH/2
		dash := ""
		if d := svgDash(n); d != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, d)
		}
		fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5"%s/>`, x, y, x+32, y, color[n], dash)
		fmt.Fprintf(bw, `<circle cx="%d" cy="%d" r="3.5" fill="%s"/>`, x+16, y, color[n])
		fmt.Fprintf(bw, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", x+40, y+1, esc(n))
	}
	fmt.Fprintf(bw, "</g>\n")

	gs := r.cfg.goroutines
	for ci, c := range charts {
		ox := svgMargin + (ci%cols)*svgChartW
		oy := chartsTop + (ci/cols)*svgChartH
		r.writeChart(bw, c, ox, oy, gs, names, color)
	}
	fmt.Fprintf(bw, "</svg>\n")
	return bw.Flush()
}

// writeChart draws one panel with its top-left corner at (ox, oy).
func (r *benchReport) writeChart(w io.Writer, c svgChart, ox, oy int, gs []int, names []string, color map[string]string) {
	px, py := float64(ox+svgPlotL), float64(oy+svgPlotT)
	pw := float64(svgChartW - svgPlotL - svgPlotR)
	ph := float64(svgChartH - svgPlotT - svgPlotB)

	// The y axis is logarithmic: the memory probe runs ten times faster
	// than the structures it bounds.
	lo, hi := math.Inf(1), 0.0
	for _, x := range c.rows {
		if x.mops > 0 {
			lo, hi = min(lo, x.mops), max(hi, x.mops)
		}
	}
	bottom, top, ticks := logTicks(lo, hi)
	// Goroutine counts are categories, evenly spaced.
	xAt := func(i int) float64 { return px + pw*(float64(i)+0.5)/float64(len(gs)) }
	yAt := func(v float64) float64 { return py + ph*(1-math.Log10(v/bottom)/math.Log10(top/bottom)) }

	fmt.Fprintf(w, `<g class="chart" data-workload="%s" data-size="%s">`+"\n", esc(string(c.workload)), esc(c.size.name))
	fmt.Fprintf(w, `<text x="%.1f" y="%d" font-size="14" font-weight="bold" text-anchor="middle">%s, n=%s</text>`+"\n",
		px+pw/2, oy+22, esc(string(c.workload)), esc(c.size.name))
	// Grid and y ticks.
	for _, v := range ticks {
		y := yAt(v)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, px, y, px+pw, y)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", px-6, y, fmtTick(v))
	}
	// x ticks.
	for i, g := range gs {
		x := xAt(i)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`, x, py+ph, x, py+ph+5)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>`+"\n", x, py+ph+18, g)
	}
	// Axes and their labels.
	fmt.Fprintf(w, `<path d="M%.1f %.1f V%.1f H%.1f" fill="none" stroke="#333333"/>`+"\n", px, py, py+ph, px+pw)
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle">goroutines</text>`+"\n", px+pw/2, py+ph+38)
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">Mops/s (log scale)</text>`+"\n",
		float64(ox+16), py+ph/2, float64(ox+16), py+ph/2)

	// One polyline per implementation, with a marker and a tooltip per
	// point.
	for _, n := range names {
		var pts []string
		var marks []string
		for i, g := range gs {
			for _, x := range c.rows {
				if x.impl == n && x.g == g && x.mops > 0 {
					X, Y := xAt(i), yAt(x.mops)
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", X, Y))
					marks = append(marks, fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s g=%d: %.2f Mops/s</title></circle>`,
						X, Y, color[n], esc(n), g, x.mops))
				}
			}
		}
		if len(pts) == 0 {
			continue
		}
		dash := ""
		if d := svgDash(n); d != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, d)
		}
		fmt.Fprintf(w, `<polyline data-impl="%s" points="%s" fill="none" stroke="%s" stroke-width="2"%s stroke-linejoin="round"/>`+"\n",
			esc(n), strings.Join(pts, " "), color[n], dash)
		fmt.Fprintln(w, strings.Join(marks, ""))
	}
	fmt.Fprintf(w, "</g>\n")
}

// writeSVGFile writes the chart to path.
func writeSVGFile(path string, r *benchReport) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := r.writeSVG(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
