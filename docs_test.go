package cuckoo

import (
	"encoding/binary"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestLicense checks that the module carries its BSD 3-Clause license.
func TestLicense(t *testing.T) {
	data, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"The cuckoo Authors",
		"Redistributions of source code must retain",
		"Redistributions in binary form must reproduce",
		"Neither the name of the copyright holder",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("LICENSE lacks %q", want)
		}
	}
}

// TestReadmeInstallAndGoVersions checks that the README tells how to install
// the command and states the Go version each module's go.mod requires.
func TestReadmeInstallAndGoVersions(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "go install github.com/seed25b00da8/cuckoo/cmd/cuckoo@latest") {
		t.Error("README lacks the go install line for the cuckoo command")
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`)
	for _, tc := range []struct{ mod, want string }{
		{"go.mod", "library: Go %s or newer"},
		{"bench/go.mod", "needs Go %s"},
	} {
		data, err := os.ReadFile(tc.mod)
		if err != nil {
			t.Fatal(err)
		}
		m := goLine.FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s has no go line", tc.mod)
		}
		want := strings.Replace(tc.want, "%s", string(m[1]), 1)
		if !strings.Contains(string(readme), want) {
			t.Errorf("README does not say %q (from %s)", want, tc.mod)
		}
	}
}

// TestEveryExportedIdentifierHasAnExample checks that every exported
// function, type and method of the package has a runnable example
// (ExampleName, ExampleType, ExampleType_Method) in some _test.go file.
// Constants and variables are covered by the examples that use them.
func TestEveryExportedIdentifierHasAnExample(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]bool{}
	var want []string
	for _, pkg := range pkgs {
		for name, file := range pkg.Files {
			for _, decl := range file.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if strings.HasSuffix(name, "_test.go") {
						if strings.HasPrefix(d.Name.Name, "Example") {
							examples[d.Name.Name] = true
						}
						continue
					}
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						want = append(want, "Example"+d.Name.Name)
						continue
					}
					recv := d.Recv.List[0].Type
					if star, ok := recv.(*ast.StarExpr); ok {
						recv = star.X
					}
					if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
						want = append(want, "Example"+id.Name+"_"+d.Name.Name)
					}
				case *ast.GenDecl:
					if strings.HasSuffix(name, "_test.go") || d.Tok != token.TYPE {
						continue
					}
					for _, spec := range d.Specs {
						if ts := spec.(*ast.TypeSpec); ts.Name.IsExported() {
							want = append(want, "Example"+ts.Name.Name)
						}
					}
				}
			}
		}
	}
	if len(want) < 50 {
		t.Fatalf("found only %d exported identifiers; the parse went wrong", len(want))
	}
	sort.Strings(want)
	for _, w := range want {
		if !examples[w] {
			t.Errorf("no %s", w)
		}
	}
}

// TestFormatBucketCounts evaluates the bucket-count formulas of FORMAT.md,
// as written there, and checks them against the bucket count (bytes 16-23
// of the header) of New(n)'s MarshalBinary for every n from 1 to 3,000 and
// some larger ones, in each layout; and against newBuckets and
// newPackedWords, what New sizes its tables with, up to MaxCapacity, where
// the four-slot layouts reach maxBuckets.
func TestFormatBucketCounts(t *testing.T) {
	data, err := os.ReadFile("FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	const maxCap = int(min(MaxCapacity, math.MaxInt)) // MaxCapacity where int holds it
	for _, lay := range []struct {
		name, item string // item: how FORMAT.md's list item for the layout starts
		opts       []Option
		sized      func(n int) uint64 // New's bucket count, without allocating
	}{
		{"12x5", "Five 12-bit slots per bucket", nil, func(n int) uint64 { return newBuckets(n, 5) }},
		{"12x4", "Four 12-bit or 15-bit slots per bucket", []Option{WithSlotsPerBucket(4)}, func(n int) uint64 { return newBuckets(n, 4) }},
		{"15x4", "Four 12-bit or 15-bit slots per bucket", []Option{WithFingerprintBits(15)}, func(n int) uint64 { return newBuckets(n, 4) }},
		{"8", "The packed layout", []Option{WithFingerprintBits(8)}, func(n int) uint64 { return 2 * newPackedWords(n) }},
	} {
		t.Run(lay.name, func(t *testing.T) {
			formulas := formatFormulas(t, string(data), lay.item)
			var ns []int
			for n := 1; n <= 3000; n++ {
				ns = append(ns, n)
			}
			ns = append(ns, 4095, 4096, 10_000, 12_345, 99_999, 100_000, 1<<20, 1_000_003)
			for _, n := range ns {
				f, err := New(n, append(lay.opts, WithSeed(1))...)
				if err != nil {
					t.Fatalf("New(%d): %v", n, err)
				}
				b, err := f.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				got := binary.LittleEndian.Uint64(b[16:24])
				if want := evalFormulas(t, formulas, n); got != want {
					t.Fatalf("New(%d) has %d buckets; FORMAT.md's %q gives %d", n, got, formulas, want)
				}
			}
			// Too large to allocate: the formulas against New's sizing,
			// which the filters above confirm.
			ns = ns[:0]
			for n := 1_000_000; n < maxCap; n = n*3 + 7 {
				ns = append(ns, n)
			}
			for n := maxCap - 100; n <= maxCap; n++ {
				ns = append(ns, n)
			}
			for _, n := range ns {
				if got, want := lay.sized(n), evalFormulas(t, formulas, n); got != want {
					t.Fatalf("New(%d) sizes %d buckets; FORMAT.md's %q gives %d", n, got, formulas, want)
				}
			}
		})
	}
	// FORMAT.md's claim about the bound: only the 34 largest capacities
	// reach 2^31 buckets of four slots.
	if uint64(maxCap) != MaxCapacity {
		t.Skipf("int has %d bits: capacities up to MaxCapacity unchecked", strconv.IntSize)
	}
	if got := newBuckets(maxCap-33, 4); got != maxBuckets {
		t.Errorf("newBuckets(MaxCapacity-33, 4) = %d; want %d", got, uint64(maxBuckets))
	}
	if got := newBuckets(maxCap-34, 4); got >= maxBuckets {
		t.Errorf("newBuckets(MaxCapacity-34, 4) = %d; want below %d", got, uint64(maxBuckets))
	}
}

// formatFormulas returns the formulas (`x = expression`, in backquotes) of
// the list item of FORMAT.md that starts with "- "+item, in order.
func formatFormulas(t *testing.T, doc, item string) []string {
	t.Helper()
	i := strings.Index(doc, "\n- "+item)
	if i < 0 {
		t.Fatalf("FORMAT.md has no list item %q", item)
	}
	text := doc[i+1:]
	if j := strings.Index(text[1:], "\n- "); j >= 0 {
		text = text[:j+1]
	}
	if j := strings.Index(text, "\n\n"); j >= 0 {
		text = text[:j]
	}
	var formulas []string
	for _, m := range regexp.MustCompile("`([a-z] = [^`]+)`").FindAllStringSubmatch(strings.ReplaceAll(text, "\n  ", " "), -1) {
		formulas = append(formulas, m[1])
	}
	if len(formulas) == 0 || !strings.HasPrefix(formulas[len(formulas)-1], "m = ") {
		t.Fatalf("FORMAT.md's item %q: formulas %q; want some, the last for m", item, formulas)
	}
	return formulas
}

// evalFormulas evaluates formulas ("w = ceil(n·100/92) + 6", then "m =
// 2·w", ...) in exact rational arithmetic for capacity n and returns the
// last one's value, which must be a whole number. An expression may use
// the variables defined before it, numbers, + - · / ^ (powers bind
// tightest), parentheses, and ceil(x) and min(x, y).
func evalFormulas(t *testing.T, formulas []string, n int) uint64 {
	t.Helper()
	vars := map[string]*big.Rat{"n": new(big.Rat).SetInt64(int64(n))}
	var v *big.Rat
	for _, f := range formulas {
		name, expr, _ := strings.Cut(f, " = ")
		p := &formulaParser{in: []rune(expr), vars: vars}
		v = p.sum()
		if p.err == nil && p.pos < len(p.in) {
			p.err = fmt.Errorf("unexpected %q", string(p.in[p.pos:]))
		}
		if p.err != nil {
			t.Fatalf("FORMAT.md's formula %q: %v", f, p.err)
		}
		vars[name] = v
	}
	if !v.IsInt() || v.Sign() < 0 || !v.Num().IsUint64() {
		t.Fatalf("FORMAT.md's formulas %q give %v buckets for n = %d", formulas, v, n)
	}
	return v.Num().Uint64()
}

// formulaParser evaluates an expression of FORMAT.md by recursive descent.
type formulaParser struct {
	in   []rune
	pos  int
	vars map[string]*big.Rat
	err  error
}

func (p *formulaParser) peek() rune {
	for p.pos < len(p.in) && p.in[p.pos] == ' ' {
		p.pos++
	}
	if p.pos == len(p.in) {
		return 0
	}
	return p.in[p.pos]
}

func (p *formulaParser) expect(r rune) {
	if p.peek() != r {
		p.fail("want %q", r)
		return
	}
	p.pos++
}

func (p *formulaParser) fail(format string, args ...any) *big.Rat {
	if p.err == nil {
		p.err = fmt.Errorf("at %q: %s", string(p.in[min(p.pos, len(p.in)):]), fmt.Sprintf(format, args...))
	}
	return new(big.Rat)
}

// sum: product (('+' | '-') product)*.
func (p *formulaParser) sum() *big.Rat {
	v := p.product()
	for p.err == nil {
		switch p.peek() {
		case '+':
			p.pos++
			v = new(big.Rat).Add(v, p.product())
		case '-', '−':
			p.pos++
			v = new(big.Rat).Sub(v, p.product())
		default:
			return v
		}
	}
	return v
}

// product: power (('·' | '/') power)*.
func (p *formulaParser) product() *big.Rat {
	v := p.power()
	for p.err == nil {
		switch p.peek() {
		case '·':
			p.pos++
			v = new(big.Rat).Mul(v, p.power())
		case '/':
			p.pos++
			d := p.power()
			if d.Sign() == 0 {
				return p.fail("division by zero")
			}
			v = new(big.Rat).Quo(v, d)
		default:
			return v
		}
	}
	return v
}

// power: atom ('^' atom)?, the exponent a small whole number.
func (p *formulaParser) power() *big.Rat {
	v := p.atom()
	if p.err != nil || p.peek() != '^' {
		return v
	}
	p.pos++
	e := p.atom()
	if !e.IsInt() || e.Sign() < 0 || e.Num().Cmp(big.NewInt(64)) > 0 {
		return p.fail("exponent %v", e)
	}
	r := big.NewRat(1, 1)
	for range e.Num().Int64() {
		r.Mul(r, v)
	}
	return r
}

// atom: number | variable | ceil(sum) | min(sum, sum) | (sum).
func (p *formulaParser) atom() *big.Rat {
	r := p.peek()
	start := p.pos
	switch {
	case r == '(':
		p.pos++
		v := p.sum()
		p.expect(')')
		return v
	case unicode.IsDigit(r):
		for p.pos < len(p.in) && unicode.IsDigit(p.in[p.pos]) {
			p.pos++
		}
		v, _ := new(big.Rat).SetString(string(p.in[start:p.pos]))
		return v
	case unicode.IsLetter(r):
		for p.pos < len(p.in) && unicode.IsLetter(p.in[p.pos]) {
			p.pos++
		}
		name := string(p.in[start:p.pos])
		switch name {
		case "ceil":
			p.expect('(')
			x := p.sum()
			p.expect(')')
			q, m := new(big.Int).DivMod(x.Num(), x.Denom(), new(big.Int)) // floor for a positive denominator
			if m.Sign() != 0 {
				q.Add(q, big.NewInt(1))
			}
			return new(big.Rat).SetInt(q)
		case "min":
			p.expect('(')
			x := p.sum()
			p.expect(',')
			y := p.sum()
			p.expect(')')
			if x.Cmp(y) <= 0 {
				return x
			}
			return y
		}
		if v, ok := p.vars[name]; ok {
			return v
		}
		p.pos = start
		return p.fail("unknown name %q", name)
	}
	return p.fail("want a number, a name or (")
}

// TestReadmeIsAReference checks the README's shape: at most 220 lines, and
// no dates or commit hashes (the history of figures belongs to git, the
// figures themselves to BENCHMARKS.md).
func TestReadmeIsAReference(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	if n := strings.Count(readme, "\n"); n > 220 {
		t.Errorf("README.md has %d lines; want at most 220", n)
	}
	if m := regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`).FindString(readme); m != "" {
		t.Errorf("README.md carries a date, %s", m)
	}
	for _, m := range regexp.MustCompile(`\b[0-9a-f]{7,40}\b`).FindAllString(readme, -1) {
		if strings.ContainsAny(m, "abcdef") && strings.ContainsAny(m, "0123456789") {
			t.Errorf("README.md carries what looks like a commit hash, %s", m)
		}
	}
}

// TestReadmeLayoutTable checks the columns of the README's layout table
// that follow from the code, not from a measurement: the load each layout
// is sized for, its table bits per key at 2^20 keys, its expected
// false-positive rate 2·b·α/(2^f−1), the rates at which
// WithFalsePositiveRate picks it; and that each measured rate lies within
// 10% of the expected one, as the tests of the false-positive rate assert.
func TestReadmeLayoutTable(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "\n| layout | made by | load |")
	if !ok {
		t.Fatal("README.md has no layout table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	layouts := map[string]struct{ bits, slots int }{
		"`New(n)`":                  {12, 5},
		"`WithSlotsPerBucket(4)`":   {12, 4},
		"`WithFingerprintBits(15)`": {15, 4},
		"`WithFingerprintBits(8)`":  {8, 4},
	}
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'g', 3, 64) + "%" }
	const n = 1 << 20
	seen := 0
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 8 {
			t.Fatalf("layout table row %q: %d cells; want 8", line, len(cells))
		}
		lay, ok := layouts[cells[1]]
		if !ok {
			continue // the growing filter's row: measured figures only
		}
		seen++
		num, den := targetLoad(lay.slots)
		words := newBuckets(n, lay.slots)
		if lay.bits == 8 {
			num, den, words = packedLoadNum, packedLoadDen, newPackedWords(n)
		}
		if want := fmt.Sprintf("%d%%", 100*num/den); cells[2] != want {
			t.Errorf("%s: load %s; want %s", cells[1], cells[2], want)
		}
		if want := strconv.FormatFloat(float64(64*words)/n, 'f', 1, 64); cells[3] != want {
			t.Errorf("%s: table bits/key %s; want %s", cells[1], cells[3], want)
		}
		expected := layoutFalsePositiveRate(lay.bits, lay.slots)
		exp, measured, _ := strings.Cut(cells[5], " / ")
		if want := pct(expected); exp != want {
			t.Errorf("%s: expected false-positive rate %s; want %s", cells[1], exp, want)
		}
		m, err := strconv.ParseFloat(strings.TrimSuffix(measured, "%"), 64)
		if err != nil || math.Abs(m/100-expected) > 0.1*expected {
			t.Errorf("%s: measured false-positive rate %q is not within 10%% of the expected %s", cells[1], measured, pct(expected))
		}
		if !strings.Contains(cells[7], "p ≥ "+pct(expected)) && !strings.HasPrefix(cells[7], pct(expected)+" ≤ p") {
			t.Errorf("%s: WithFalsePositiveRate column %q; want its lower bound %s", cells[1], cells[7], pct(expected))
		}
		if bits, slots, err := layoutFor(expected); err != nil || bits != lay.bits || slots != lay.slots {
			t.Errorf("layoutFor(%v) = %d, %d, %v; want the layout of %s", expected, bits, slots, err, cells[1])
		}
	}
	if seen != len(layouts) {
		t.Errorf("the layout table has %d of the %d fixed layouts", seen, len(layouts))
	}
}

// TestDocCitations checks that every section of BENCHMARKS.md or README.md
// that a document or a code comment cites (the file name, a comma, then
// one or more quoted names joined by "and" or commas) is a heading there.
func TestDocCitations(t *testing.T) {
	headingsOf := func(file string) map[string]bool {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		h := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(data), -1) {
			h[m[1]] = true
		}
		return h
	}
	docs := map[string]map[string]bool{"BENCHMARKS.md": headingsOf("BENCHMARKS.md"), "README.md": headingsOf("README.md")}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "README.md", "FORMAT.md", "BENCHMARKS.md", "ARCHITECTURE.md")
	name := regexp.MustCompile(`"([^"]+)"`)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile(`\n\s*// ?`).ReplaceAllString(string(data), " ")
		for doc, headings := range docs {
			cite := regexp.MustCompile(regexp.QuoteMeta(doc) + `,\s+((?:"[^"]+"(?:,\s*|\s+and\s+)?)+)`)
			for _, c := range cite.FindAllStringSubmatch(text, -1) {
				for _, q := range name.FindAllStringSubmatch(c[1], -1) {
					if h := strings.Join(strings.Fields(q[1]), " "); !headings[h] {
						t.Errorf("%s cites %s, %q, which has no such heading", file, doc, h)
					}
				}
			}
		}
	}
}

// TestDocTestNamesExist checks that the tests, fuzz targets and examples
// that doc.go names (its proof obligations) exist.
func TestDocTestNamesExist(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]bool{}
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			for _, decl := range file.Decls {
				if d, ok := decl.(*ast.FuncDecl); ok && d.Recv == nil {
					funcs[d.Name.Name] = true
				}
			}
		}
	}
	names := regexp.MustCompile(`\b(?:Test|Fuzz|Example)[A-Z][A-Za-z0-9_]*`).FindAllString(string(doc), -1)
	if len(names) < 10 {
		t.Fatalf("doc.go names only %d tests; the parse went wrong", len(names))
	}
	for _, name := range names {
		if !funcs[name] {
			t.Errorf("doc.go names %s, which no _test.go file declares", name)
		}
	}
}
