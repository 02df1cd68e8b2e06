//go:build ignore

// gen_variants, run by "go generate" (migrate.go), writes
// zz_<algorithm>_<codec>.go for every template <algorithm>.go.tmpl and
// every row of codecs, pasting the codec's snippets into the template, so
// each variant is straight Go with no indirect call. CI (.ci/run) fails
// when "go generate ./..." changes a file.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"log"
	"os"
	"strings"
	"text/template"
)

// A codec is how a word holds buckets and fingerprints, as Go snippets:
// arguments are Go expressions (usually variable names), results Go
// expressions unless said otherwise.
type codec struct {
	Name   string // names the files: zz_<algorithm>_<Name>.go
	Prefix string // prepended to generated names ("pk": search, pkSearch)
	Doc    string // one line, for the generated files

	// Locals declares, once per function, what the snippets read.
	Locals string
	// Word is the index of bucket b's word; Part is b's bits of word w.
	Word func(b string) string
	Part func(w, b string) string
	// Room is a mask of the slots of bucket bits x of bucket b that may
	// take fp, 0 for none. FPDependent: Room depends on fp (a bucket
	// without room may have an empty slot, and a search node carries the
	// fingerprint moving in). Barred: freeing slot s of b gives in no room
	// ("" when never).
	Room        func(x, b, fp string) string
	FPDependent bool
	Barred      func(s, b, in string) string

	// Slots is a bucket's slot count when constant (per-slot code in
	// straight lines, named SlotsConst, SlotAt the fingerprint in slot s of
	// bits x), else 0: SlotsExpr is the count, and templates walk a copy x
	// of the bits, SlotLow(x) the lowest slot's fingerprint, x >>= SlotBits
	// the next; CursorLocals declares what those read.
	Slots                  int
	SlotsConst             string
	SlotAt                 func(x string, s int) string
	SlotsExpr              string
	CursorLocals, SlotBits string
	SlotLow                func(x string) string

	// SlotGet is the fingerprint in slot s of bucket b of word w; SlotClear
	// w with that slot emptied; PutRoom w with fp in a slot of b that r
	// (Room's non-zero result) marks.
	SlotGet, SlotClear func(w, b, s string) string
	PutRoom            func(w, b, fp, r string) string
	// Take is "nw, ok": w with one copy of fp taken from b (nw is w when
	// !ok). Has: b of w holds fp; HasEither: b1 of w1 or b2 of w2 does.
	// Matches is the number of copies of fp in b of w.
	Take, Has, Matches func(w, b, fp string) string
	HasEither          func(w1, w2, b1, b2, fp string) string
	// Choose is statements declaring b, w, nw, ok for fp and buckets b1,
	// b2 of words w1, w2 (w1 == w2 when shared): the bucket the placement
	// rule picks, its word, that word with fp put in, and whether it had
	// room (nw is w when not). ReadPair is plain reads of both words (one
	// when shared); ReadSearch names the method making a search's first
	// reads, with the tests' stall points (twophase.go).
	Choose     func(b1, b2, fp, w1, w2 string) string
	ReadPair   func(b1, b2 string) string
	ReadSearch string
	// Guard is the word a search reads before its first reads of b and
	// before "absent" (b's stripe's wrap epoch, or b's version). Settled:
	// fp, in neither first read, was not in flight (w1 the first read of
	// b1, g Guard's pointer, e its value before w1; LockedClaim and
	// twophase.go argue it). LookupSlow is statements returning the full
	// search's answer, from b1, b2, fp, e, w1, w2.
	Guard       func(b string) string
	Settled     func(b1, w1, g, e string) string
	LookupSlow  string
	LockedClaim string
	// Bump is word w after a step through it (counter bumped, if any).
	// SharedWords: a step's buckets may share a word. MoveVersionDoc says
	// what a step bumps. MoveLockFree completes a LockFree step's K-CAS
	// op; LockedBefore, LockedBetween, LockedAfter run under a Locked
	// step's locks around its two stores (move.go.tmpl).
	Bump                                                   func(w string) string
	SharedWords                                            bool
	MoveVersionDoc                                         string
	MoveLockFree, LockedBefore, LockedBetween, LockedAfter string
	// Group is a batch group's type. MaxPath is the most fingerprints an
	// insert relocates; ShortQueue, FullQueue the search's queue lengths.
	Group                          string
	MaxPath, ShortQueue, FullQueue string
}

// codecs is the table of word codecs the fixed filter has.
var codecs = []codec{
	{
		Name:           "word",
		Doc:            "one bucket per word, its masks read from f.lay (bucket.go)",
		Locals:         "l := &f.lay",
		Word:           func(b string) string { return b },
		Part:           func(w, b string) string { return w },
		Room:           func(x, b, fp string) string { return fmt.Sprintf("l.zeroSlots(%s)", x) },
		SlotsExpr:      "int(l.b)",
		CursorLocals:   "fb, mask := l.f&63, l.slotMask",
		SlotLow:        func(x string) string { return x + "&mask" },
		SlotBits:       "fb",
		SlotGet:        func(w, b, s string) string { return fmt.Sprintf("l.slot(%s, %s)", w, s) },
		SlotClear:      func(w, b, s string) string { return fmt.Sprintf("l.setSlot(%s, %s, 0)", w, s) },
		PutRoom:        func(w, b, fp, r string) string { return fmt.Sprintf("%s | %s*l.slotUnit(%s)", w, fp, r) },
		Take:           func(w, b, fp string) string { return fmt.Sprintf("l.take(%s, %s)", w, fp) },
		Has:            func(w, b, fp string) string { return fmt.Sprintf("l.contains(%s, %s)", w, fp) },
		ReadSearch:     "readPair",
		Guard:          func(b string) string { return fmt.Sprintf("f.t.epochOf(%s)", b) },
		Settled:        func(b1, w1, g, e string) string { return fmt.Sprintf("f.unchanged(%s, %s, %s)", b1, w1, e) },
		HasEither:      func(w1, w2, b1, b2, fp string) string { return fmt.Sprintf("l.containsEither(%s, %s, %s)", w1, w2, fp) },
		LookupSlow:     "return f.findAfter(b1, b2, fp, w1, w2, e)",
		Bump:           func(w string) string { return fmt.Sprintf("l.bumpCounter(%s)", w) },
		MoveVersionDoc: "both buckets' migration counters",
		MoveLockFree: `// A counter that goes from its maximum to 0 is counted in the
		// epoch of its bucket's stripe in the same atomic step
		// (twophase.go, "Counter wraps").
		if wrapS, wrapD := l.wraps(ws), l.wraps(wd); wrapS || wrapD {
			t.addWraps(&op, src, wrapS, dst, wrapD)
		}
		if raceEnabled {
			l.checkRelocation(op.old[0], op.new[0], op.old[1], op.new[1], fp)
		}`,
		LockedBefore: `// A step that wraps a counter counts in the epoch of that
		// bucket's stripe before and after its stores, both under the
		// locks (locked.go).
		wrapS, wrapD := l.wraps(ws), l.wraps(wd)
		if wrapS {
			t.epochOf(src).Add(1)
		}
		if wrapD {
			t.epochOf(dst).Add(1)
		}`,
		LockedAfter: `if raceEnabled {
			l.checkRelocation(ws, t.words[src].Load(), wd, t.words[dst].Load(), fp)
		}
		if wrapS {
			t.epochOf(src).Add(1)
		}
		if wrapD {
			t.epochOf(dst).Add(1)
		}`,
		LockedClaim: "locked.go",
		Choose: func(b1, b2, fp, w1, w2 string) string {
			return fmt.Sprintf(`b, w := %[1]s, %[4]s
			if l.emptier(%[5]s, %[4]s) {
				b, w = %[2]s, %[5]s
			}
			nw, ok := l.put(w, %[3]s)`, b1, b2, fp, w1, w2)
		},
		ReadPair: func(b1, b2 string) string {
			return fmt.Sprintf("loadAt(&f.t, &f.t.words[%s]), loadAt(&f.t, &f.t.words[%s])", b1, b2)
		},
		Matches:    func(w, b, fp string) string { return fmt.Sprintf("l.matches(%s, %s)", w, fp) },
		Group:      "group",
		MaxPath:    "maxPathLen",
		ShortQueue: "discoverShortQueue",
		FullQueue:  "bfsQueueLen",
	},
	{
		Name:        "packed",
		Prefix:      "pk",
		Doc:         "two four-slot 8-bit buckets per word, versions outside the table (packed.go)",
		Word:        func(b string) string { return b + ">>1" },
		Part:        func(w, b string) string { return fmt.Sprintf("pkHalf(%s, %s)", w, b) },
		Room:        func(x, b, fp string) string { return fmt.Sprintf("pkFree(%s, %s, %s)", x, b, fp) },
		FPDependent: true,
		Barred: func(s, b, in string) string {
			return fmt.Sprintf("%s == packedSlots-1 && %s&1 != 0 && %s >= pkTopLimit", s, b, in)
		},
		Slots:      4,
		SlotsConst: "packedSlots",
		SlotAt: func(x string, s int) string {
			switch s {
			case 0:
				return x + " & 0xff"
			case 3:
				return x + " >> 24" // pkHalf leaves 32 bits
			}
			return fmt.Sprintf("%s >> %d & 0xff", x, 8*s)
		},
		SlotGet: func(w, b, s string) string {
			return fmt.Sprintf("%s>>(pkShift(%s)+uint64(%s)*8)&0xff", w, b, s)
		},
		SlotClear: func(w, b, s string) string {
			return fmt.Sprintf("%s&^(0xff<<(pkShift(%s)+uint64(%s)*8))", w, b, s)
		},
		PutRoom:    func(w, b, fp, r string) string { return fmt.Sprintf("pkPut(%s, %s, %s, %s)", w, b, fp, r) },
		Take:       func(w, b, fp string) string { return fmt.Sprintf("pkTake(%s, %s, %s)", w, b, fp) },
		Has:        func(w, b, fp string) string { return fmt.Sprintf("pkHas(pkHalf(%s, %s), %s)", w, b, fp) },
		ReadSearch: "pkReadSearch",
		Guard:      func(b string) string { return fmt.Sprintf("f.t.verOf(%s)", b) },
		Settled:    func(b1, w1, g, e string) string { return fmt.Sprintf("loadAt(&f.t, %s) == %s", g, e) },
		HasEither: func(w1, w2, b1, b2, fp string) string {
			return fmt.Sprintf("pkHasEither(%s, %s, %s, %s, %s)", w1, w2, b1, b2, fp)
		},
		LookupSlow:     "_, ok := f.pkFind(b1, b2, fp)\n\treturn ok",
		Bump:           func(w string) string { return w },
		SharedWords:    true,
		MoveVersionDoc: "dst's version",
		MoveLockFree: `vd := t.verIdx(dst)
		hookReadAt(t, t.verOf(dst))
		v := t.verOf(dst).Load()
		if v&tagMask != 0 {
			v = t.load(vd)
		}
		op.add(vd, v, v+1)`,
		LockedBetween: "t.verOf(dst).Add(1)",
		LockedClaim:   "packed_locked.go",
		Choose: func(b1, b2, fp, w1, w2 string) string {
			return fmt.Sprintf(`b, w, put := pkChoose(%s, %s, %s, %s, %s)
			nw, ok := w|put, put != 0`, b1, b2, fp, w1, w2)
		},
		ReadPair:   func(b1, b2 string) string { return fmt.Sprintf("f.pkReadPair(%s, %s)", b1, b2) },
		Matches:    func(w, b, fp string) string { return fmt.Sprintf("pkMatchCount(%s, %s, %s)", w, b, fp) },
		Group:      "pkGroup",
		MaxPath:    "pkMaxPathLen",
		ShortQueue: "pkShortQueue",
		FullQueue:  "pkQueueLen",
	},
}

// algorithms lists the templates, each generated once per codec.
var algorithms = []string{"search", "move", "delete", "lookup", "add", "unique"}

func main() {
	log.SetFlags(0)
	log.SetPrefix("gen_variants: ")
	for _, a := range algorithms {
		src, err := os.ReadFile(a + ".go.tmpl")
		if err != nil {
			log.Fatal(err)
		}
		for _, c := range codecs {
			generate(a, string(src), c)
		}
	}
}

// generate writes zz_<a>_<c.Name>.go from the template text src.
func generate(a, src string, c codec) {
	c.fill()
	funcs := template.FuncMap{
		// fn returns a function's name in this codec's variant.
		"fn": func(name string) string {
			if c.Prefix == "" {
				return name
			}
			return c.Prefix + strings.ToUpper(name[:1]) + name[1:]
		},
		"word":      c.Word,
		"part":      c.Part,
		"room":      c.Room,
		"barred":    c.Barred,
		"slotAt":    c.SlotAt,
		"slotLow":   c.SlotLow,
		"slotGet":   c.SlotGet,
		"slotClear": c.SlotClear,
		"putRoom":   c.PutRoom,
		"bump":      c.Bump,
		"take":      c.Take,
		"has":       c.Has,
		"guard":     c.Guard,
		"settled":   c.Settled,
		"hasEither": c.HasEither,
		"choose":    c.Choose,
		"readPair":  c.ReadPair,
		"matches":   c.Matches,
		// locals declares the codec's Locals on a line of their own.
		"locals": func() string {
			if c.Locals == "" {
				return ""
			}
			return "\n\t" + c.Locals
		},
		// slots returns 0..Slots-1, for straight per-slot code.
		"slots": func() []int {
			s := make([]int, c.Slots)
			for i := range s {
				s[i] = i
			}
			return s
		},
		// idx returns "name[i]".
		"idx": func(name string, i int) string { return fmt.Sprintf("%s[%d]", name, i) },
	}
	t, err := template.New(a).Funcs(funcs).Parse(src)
	if err != nil {
		log.Fatal(err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by gen_variants.go; DO NOT EDIT.\n\n")
	fmt.Fprintf(&out, "// Source: %s.go.tmpl, for the %s codec: %s.\n\n", a, c.Name, c.Doc)
	if err := t.Execute(&out, c); err != nil {
		log.Fatal(err)
	}
	code, err := format.Source(out.Bytes())
	if err != nil {
		os.WriteFile("zz_error.go.txt", out.Bytes(), 0o644)
		log.Fatalf("%s for %s: %v (unformatted output in zz_error.go.txt)", a, c.Name, err)
	}
	name := fmt.Sprintf("zz_%s_%s.go", a, c.Name)
	if err := os.WriteFile(name, code, 0o644); err != nil {
		log.Fatal(err)
	}
}

// fill gives the optional snippets their "no such restriction" values.
func (c *codec) fill() {
	if c.Barred == nil {
		c.Barred = func(s, b, in string) string { return "" }
	}
	if c.SlotAt == nil {
		c.SlotAt = func(string, int) string { panic("SlotAt of a codec with a run-time slot count") }
	}
	if c.SlotLow == nil {
		c.SlotLow = func(string) string { panic("SlotLow of a codec with a constant slot count") }
	}
}
