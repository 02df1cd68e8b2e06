//go:build ignore

// gen_variants, run by "go generate" (migrate.go), writes
// zz_<algorithm>_<codec>.go for every template <algorithm>.go.tmpl and
// every row of codecs, pasting the codec's snippets into the template, so
// each variant is straight Go with no indirect call.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"log"
	"os"
	"reflect"
	"strings"
	"text/template"
)

// A shape is the table-shape axis as the templates see it. Recv is the
// receiver, Self its name, Key a placed key's uint64 parameters (a Growing
// filter's: a key's buckets and entries, q1 in b1, q2 in b2), First which
// bucket b1 is; T the word table, Locks its stripe locks, Help what helps a
// K-CAS reference found in a word, Plain a writer's read of a word's
// logical value; Result an add's result type, Done and Full its "added"
// and "no room", Found InsertUnique's with a match present (grow_table.go:
// growFrozen too). The path's driver (relocate.go.tmpl) is a method of
// Driver (named DSelf) with the table parameter On, if any.
type shape struct {
	Growing                                       bool
	Recv, Self, Key, First, T, Locks, Help, Plain string
	Result, Done, Full, Found, Driver, DSelf, On  string
}

var (
	fixedShape = shape{Recv: "f *Filter", Self: "f", Key: "b1, b2, fp", First: "the lower bucket",
		T: "f.t", Locks: "f.locks", Help: "f.helpWord", Plain: "f.plainWord",
		Result: "bool", Done: "true", Full: "false", Found: "false", Driver: "f *Filter", DSelf: "f"}
	growingShape = shape{Growing: true, Recv: "x *growTable", Self: "x",
		Key: "b1, b2, q1, q2", First: "the key's first bucket", T: "x.t",
		Locks: "x.locks", Help: "x.t.helpWord", Plain: "x.t.load",
		Result: "int", Done: "growDone", Full: "growFull", Found: "growDone",
		Driver: "g *Growing", DSelf: "g", On: "x *growTable, "}
)

// A codec is how a word holds buckets and fingerprints, as Go snippets:
// arguments are Go expressions (usually names), results Go expressions unless
// said otherwise. Each func field is the template function of its name with the
// first letter lowered ({{word "b"}}); a nil one gives "". The growing codec's
// snippets ignore fp and use the entry of the bucket given (entryOf).
type codec struct {
	shape
	Name   string // names the files: zz_<algorithm>_<Name>.go
	Prefix string // prepended to generated names ("pk": search, pkSearch)
	Doc    string // one line, for the generated files

	// Locals declares, once per function, what the snippets read.
	Locals string
	// Word is the index of bucket b's word; Part is b's bits of word w.
	Word func(b string) string
	Part func(w, b string) string
	// Room is a mask of the slots of bucket bits x of bucket b that may take
	// fp, 0 for none. FPDependent: Room depends on fp (a bucket without room
	// may have an empty slot; a search node carries the fingerprint moving
	// in). Barred: freeing slot s of b gives in no room (nil: never).
	Room        func(x, b, fp string) string
	FPDependent bool
	Barred      func(s, b, in string) string

	// Slots is a bucket's constant slot count (straight per-slot code:
	// SlotsConst names it, SlotAt is the fingerprint in slot s of bits x),
	// or 0: SlotsExpr is the count, and templates walk a copy x of the
	// bits, SlotLow(x) the lowest slot's fingerprint, x >>= SlotBits the
	// next; CursorLocals declares what those read.
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
	// Take is "nw, ok": w less one copy of fp in b (nw is w when !ok). Has: b
	// of w holds fp; HasEither: b1 of w1 or b2 of w2 does. Matches counts the
	// copies of fp in b of w; MatchesOne in a key's one bucket b1 of w.
	Take, Has, Matches func(w, b, fp string) string
	MatchesOne         func(w string) string
	HasEither          func(w1, w2, b1, b2, fp string) string
	// Choose is statements declaring b, w, nw, ok for fp and buckets b1, b2 of
	// words w1, w2 (w1 == w2 when shared): the bucket the placement rule picks,
	// its word, that word with fp put in, and whether it had room (nw is w when
	// not). ReadPair is plain reads of both words (one when shared); ReadSearch
	// a search's first reads, with the tests' stall points (twophase.go).
	// Frozen: word w (an operand: bracket an expression) is frozen, a write
	// stops (nil: never). Alt: the other bucket of v in b, or b where v may not
	// move (search.go.tmpl, which gives the fixed filter m).
	Choose               func(b1, b2, fp, w1, w2 string) string
	ReadPair, ReadSearch func(b1, b2 string) string
	Frozen               func(w string) string
	Alt                  func(b, v string) string
	// Guard is the word a search reads before its first reads of b and
	// before "absent" (b's stripe's wrap epoch, or b's version). Settled:
	// fp, in neither first read, was not in flight (w1 the first read of
	// b1, g Guard's pointer, e its value before w1; LockedClaim and
	// twophase.go argue it). LookupSlow is statements returning the full
	// search's answer, from b1, b2, fp, e, w1, w2. Counter is the migration
	// counter of word w (nil: none in the word, the guard is b1's version).
	Guard       func(b string) string
	Counter     func(w string) string
	Settled     func(b1, w1, g, e string) string
	LookupSlow  string
	LockedClaim string
	// Bump is word w after a step through it (counter bumped if any).
	// SharedWords: a step's buckets may share a word. MoveVersionDoc: what a step
	// bumps. Wraps tests a word for a wrapped counter ("": none). MoveLockFree
	// completes a LockFree step's K-CAS op; LockedBetween, LockedAfter run under
	// a Locked step's locks between and after its two stores (move.go.tmpl).
	Bump                                     func(w string) string
	SharedWords                              bool
	MoveVersionDoc, Wraps                    string
	MoveLockFree, LockedBetween, LockedAfter string
	// Group is a batch group's type. MaxPath is the most fingerprints an
	// insert relocates; ShortQueue, FullQueue the search's queue lengths;
	// Shallow, where set, when a search stops at its short queue.
	Group                                   string
	MaxPath, ShortQueue, FullQueue, Shallow string
}

// codecs is the table of word codecs, each with its table shape.
var codecs = []codec{
	{
		shape:          fixedShape,
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
		ReadSearch:     func(b1, b2 string) string { return fmt.Sprintf("f.readPair(%s, %s)", b1, b2) },
		Guard:          func(b string) string { return fmt.Sprintf("f.t.epochOf(%s)", b) },
		Counter:        func(w string) string { return fmt.Sprintf("l.counter(%s)", w) },
		Settled:        func(b1, w1, g, e string) string { return fmt.Sprintf("f.unchanged(%s, %s, %s)", b1, w1, e) },
		HasEither:      func(w1, w2, b1, b2, fp string) string { return fmt.Sprintf("l.containsEither(%s, %s, %s)", w1, w2, fp) },
		LookupSlow:     "return f.findAfter(b1, b2, fp, w1, w2, e)",
		Bump:           func(w string) string { return fmt.Sprintf("l.bumpCounter(%s)", w) },
		Alt:            func(b, v string) string { return fmt.Sprintf("altBucket(%s, %s, m)", b, v) },
		MoveVersionDoc: "both buckets' migration counters",
		Wraps:          "l.wraps",
		MoveLockFree:   "if raceEnabled {\nl.checkRelocation(op.old[0], op.new[0], op.old[1], op.new[1], fp)\n}",
		LockedAfter:    "if raceEnabled {\nl.checkRelocation(ws, t.words[src].Load(), wd, t.words[dst].Load(), fp)\n}",
		LockedClaim:    "locked.go",
		Choose: func(b1, b2, fp, w1, w2 string) string {
			return fmt.Sprintf(`b, w, r := l.choose(%s, %s, %s, %s)
			nw, ok := w|%s*l.slotUnit(r), r != 0`, b1, b2, w1, w2, fp)
		},
		ReadPair: func(b1, b2 string) string {
			return fmt.Sprintf("loadAt(&f.t, wordAt(f.t.words, %s)), loadAt(&f.t, wordAt(f.t.words, %s))", b1, b2)
		},
		Matches:    func(w, b, fp string) string { return fmt.Sprintf("l.matches(%s, %s)", w, fp) },
		MatchesOne: func(w string) string { return fmt.Sprintf("l.matches(%s, fp)", w) },
		Group:      "group",
		MaxPath:    "maxPathLen",
		ShortQueue: "discoverShortQueue",
		FullQueue:  "bfsQueueLen",
	},
	{
		shape:       fixedShape,
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
		SlotGet:    func(w, b, s string) string { return fmt.Sprintf("%s>>(pkShift(%s)+uint64(%s)*8)&0xff", w, b, s) },
		SlotClear:  func(w, b, s string) string { return fmt.Sprintf("%s&^(0xff<<(pkShift(%s)+uint64(%s)*8))", w, b, s) },
		PutRoom:    func(w, b, fp, r string) string { return fmt.Sprintf("pkPut(%s, %s, %s, %s)", w, b, fp, r) },
		Take:       func(w, b, fp string) string { return fmt.Sprintf("pkTake(%s, %s, %s)", w, b, fp) },
		Has:        func(w, b, fp string) string { return fmt.Sprintf("pkHas(pkHalf(%s, %s), %s)", w, b, fp) },
		ReadSearch: func(b1, b2 string) string { return fmt.Sprintf("f.pkReadSearch(%s, %s)", b1, b2) },
		Guard:      func(b string) string { return fmt.Sprintf("f.t.verOf(%s)", b) },
		Settled:    func(b1, w1, g, e string) string { return fmt.Sprintf("loadAt(&f.t, %s) == %s", g, e) },
		HasEither: func(w1, w2, b1, b2, fp string) string {
			return fmt.Sprintf("pkHasEither(%s, %s, %s, %s, %s)", w1, w2, b1, b2, fp)
		},
		LookupSlow:     "_, ok := f.pkFind(b1, b2, fp)\n\treturn ok",
		Bump:           func(w string) string { return w },
		SharedWords:    true,
		Alt:            func(b, v string) string { return fmt.Sprintf("altBucket(%s, %s, m)", b, v) },
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
		MatchesOne: func(w string) string { return fmt.Sprintf("pkMatchCount(%s, b1, fp)", w) },
		Group:      "pkGroup",
		MaxPath:    "pkMaxPathLen",
		ShortQueue: "pkShortQueue",
		FullQueue:  "pkQueueLen",
	},
	{
		shape:  growingShape,
		Name:   "lanes",
		Prefix: "grow",
		Doc:    "a Growing filter's table, four 15-bit lanes per word (grow_lane.go)",
		Word:   func(b string) string { return b },
		Part:   func(w, b string) string { return w },
		Room:   func(x, b, fp string) string { return "emptyLanes(" + x + ")" },
		PutRoom: func(w, b, fp, r string) string {
			return fmt.Sprintf("%s | %s*((%s&-%s)>>(tailBits-1))", w, entryOf[b], r, r)
		},
		Has: func(w, b, fp string) string { return fmt.Sprintf("matchLanes(%s, %s) != 0", w, entryOf[b]) },
		HasEither: func(w1, w2, b1, b2, fp string) string {
			return fmt.Sprintf("matchEither(laneDiff(%s, %s), laneDiff(%s, %s))", w1, entryOf[b1], w2, entryOf[b2])
		},
		ReadSearch:  func(b1, b2 string) string { return fmt.Sprintf("x.readPair(%s, %s)", b1, b2) },
		Guard:       func(b string) string { return fmt.Sprintf("x.t.epochOf(%s)", b) },
		Counter:     func(w string) string { return fmt.Sprintf("growCounter(%s)", w) },
		Settled:     func(b1, w1, g, e string) string { return fmt.Sprintf("x.unchanged(%s, %s, %s, %s)", b1, w1, g, e) },
		LookupSlow:  "_, ok := x.growFind(b1, b2, q1, q2)\n\treturn ok",
		LockedClaim: "grow_table.go",
		Choose: func(b1, b2, fp, w1, w2 string) string {
			return fmt.Sprintf(`b, w, q := %[1]s, %[3]s, q1
			if laneCount(%[4]s) < laneCount(%[3]s) {
				b, w, q = %[2]s, %[4]s, q2
			}
			nw, ok := putLane(w, q)`, b1, b2, w1, w2)
		},
		ReadPair: func(b1, b2 string) string {
			return fmt.Sprintf("loadAt(&x.t, &x.t.words[%s]), loadAt(&x.t, &x.t.words[%s])", b1, b2)
		},
		Frozen:         func(w string) string { return w + "&frozenBit != 0" },
		Alt:            func(b, v string) string { return fmt.Sprintf("x.altOr(%s, %s)", b, v) },
		Matches:        func(w, b, fp string) string { return fmt.Sprintf("matchCount(%s, %s, %s)", w, entryOf[b], entryOf[b]) },
		MatchesOne:     func(w string) string { return fmt.Sprintf("matchCount(%s, q1, q2)", w) },
		Slots:          4,
		SlotsConst:     "slotsPerBucket",
		SlotAt:         func(x string, s int) string { return fmt.Sprintf("lane(%s, %d)", x, s) },
		SlotGet:        func(w, b, s string) string { return fmt.Sprintf("lane(%s, %s)", w, s) },
		SlotClear:      func(w, b, s string) string { return fmt.Sprintf("setLane(%s, %s, 0)", w, s) },
		Bump:           func(w string) string { return fmt.Sprintf("growBump(%s)", w) },
		MoveVersionDoc: "both buckets' counters",
		Wraps:          "growWraps",
		MaxPath:        "maxPathLen",
		ShortQueue:     "bfsShortQueue",
		FullQueue:      "bfsQueueLen",
		Shallow:        "x.canGrow()",
	},
}

// entryOf names the growing codec's entry for the bucket a snippet is
// given: a key's q1, q2, Choose's q, a move destination's nv.
var entryOf = map[string]string{"b1": "q1", "b2": "q2", "b": "q", "dst": "nv"}

// algorithms lists the templates, each generated once per codec of the
// fixed shape, and for the growing shape where marked.
var algorithms = []struct {
	name    string
	growing bool
}{{"search", true}, {"move", true}, {"delete", false}, {"lookup", true}, {"add", true}, {"unique", true}, {"relocate", true}}

func main() {
	log.SetFlags(0)
	log.SetPrefix("gen_variants: ")
	for _, a := range algorithms {
		src, err := os.ReadFile(a.name + ".go.tmpl")
		if err != nil {
			log.Fatal(err)
		}
		for _, c := range codecs {
			if a.growing || !c.Growing {
				generate(a.name, string(src), c)
			}
		}
	}
}

// generate writes zz_<a>_<c.Name>.go from the template text src.
func generate(a, src string, c codec) {
	funcs := template.FuncMap{
		// fn returns a function's name in this codec's variant.
		"fn": func(name string) string {
			if c.Prefix == "" {
				return name
			}
			return c.Prefix + strings.ToUpper(name[:1]) + name[1:]
		},
		// stall is a search's stall point (twophase.go, grow_table.go).
		"stall": func(b1, stage string) string {
			if c.Growing {
				return fmt.Sprintf("growSearchStalled(x, %s, %s)", b1, stage)
			}
			return fmt.Sprintf("if raceEnabled {\nsearchStalled(f, %s, %s)\n}", b1, stage)
		},
		// stat counts n in the fixed filter's statistic name, on its line.
		"stat": func(name, n string) string {
			if c.Growing {
				return ""
			}
			return fmt.Sprintf("\nf.stats.add(%s, %s)", name, n)
		},
		// locals declares the codec's Locals on a line of their own.
		"locals": func() string {
			if c.Locals == "" {
				return ""
			}
			return "\n\t" + c.Locals
		},
	}
	// The snippets, by their fields' names (codec).
	row := reflect.ValueOf(c)
	for i := range row.NumField() {
		if f := row.Field(i); f.Kind() == reflect.Func {
			if f.IsNil() { // a restriction the codec lacks
				empty := func([]reflect.Value) []reflect.Value { return []reflect.Value{reflect.ValueOf("")} }
				f = reflect.MakeFunc(f.Type(), empty)
			}
			name := row.Type().Field(i).Name
			funcs[strings.ToLower(name[:1])+name[1:]] = f.Interface()
		}
	}
	t, err := template.New(a).Funcs(funcs).Parse(src)
	if err != nil {
		log.Fatal(err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by gen_variants.go; DO NOT EDIT.\n\n// Source: %s.go.tmpl, for the %s codec: %s.\n\n", a, c.Name, c.Doc)
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
