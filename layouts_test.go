package cuckoo

import "strconv"

// Layout-independent views of the table for the internal tests. A bucket is
// one 64-bit word in the one-bucket-per-word layouts and half a word in the
// packed layout of 8-bit fingerprints (packed.go); these helpers hide
// which, so that a test of something every layout does (placement, copies,
// encoding, relocation under load) runs on all of them.

// bits8OneWord stands, in the internal tests' lists of layouts, for four
// 8-bit slots in one bucket per 64-bit word (newLayout(8, 4)): the layout
// New built for 8-bit fingerprints before the packed one. New no longer
// builds it, but version-1 encodings of it still load (UnmarshalBinary,
// ReadFrom; testdata), into filters that run the one-word code: migration
// counters in the words, the wrap epoch, the two-phase search and the
// destination-first moves of Locked mode. Tests of that code list it where
// they listed 8 before the packed layout; NewTestFilter builds it, and
// LayoutBits and LayoutSlots read it as 8 bits and 4 slots.
const bits8OneWord = 8 | 1<<16

// newOneWord8Filter returns an empty filter of the bits8OneWord layout
// sized for capacity keys as New sized it (95% load), with the given mode
// and seed.
func newOneWord8Filter(capacity int, mode Mode, seed uint64) *Filter {
	f := &Filter{}
	f.init(bucketsFor(capacity), newLayout(8, slotsPerBucket), seed, mode)
	return f
}

// layoutName names a test layout value in subtest names and messages:
// bits8OneWord as "8-oneword", the others as their number.
func layoutName(bits int) string {
	if bits == bits8OneWord {
		return "8-oneword"
	}
	return strconv.Itoa(bits)
}

// wordOf returns the index of the word that holds bucket b.
func wordOf(f *Filter, b uint64) uint64 {
	if f.lay.packed {
		return b >> 1
	}
	return b
}

// bucketFps returns the fingerprints in bucket b's slots, 0 for an empty
// slot (and for the array's entries past SlotsPerBucket), from the logical
// value of its word (kcasTable.load). It returns an array, not a slice:
// the relocators of the stress tests call it without pause, and an
// allocation per call made their race runs several times slower.
func bucketFps(f *Filter, b uint64) (fps [maxSlots]uint64) {
	w := f.t.load(wordOf(f, b))
	for s := range f.SlotsPerBucket() {
		if f.lay.packed {
			fps[s] = pkHalf(w, b) >> (8 * s) & 0xff
		} else {
			fps[s] = f.lay.slot(w, s)
		}
	}
	return fps
}

// slotsFor returns how many slots of bucket b may hold fp: all of them,
// except slot 3 of an odd bucket for fp >= pkTopLimit in the packed layout
// (its top slot keeps the word's tag bits clear).
func slotsFor(f *Filter, b, fp uint64) int {
	n := f.SlotsPerBucket()
	if f.lay.packed && b&1 != 0 && fp >= pkTopLimit {
		n--
	}
	return n
}

// maxCopies returns the most copies of fp that its buckets b1 and b2 hold
// together: slotsFor each of them, or of the one bucket when b1 == b2.
func maxCopies(f *Filter, b1, b2, fp uint64) int {
	n := slotsFor(f, b1, fp)
	if b2 != b1 {
		n += slotsFor(f, b2, fp)
	}
	return n
}

// hasRoom reports whether bucket b has an empty slot that may take fp.
func hasRoom(f *Filter, b, fp uint64) bool {
	w := f.t.load(wordOf(f, b))
	if f.lay.packed {
		return pkFree(pkHalf(w, b), b, fp) != 0
	}
	return f.lay.emptySlot(w) >= 0
}

// setSlotOf stores v into slot s of bucket b by a plain store (the test is
// the only writer).
func setSlotOf(f *Filter, b uint64, s int, v uint64) {
	w := f.t.words[wordOf(f, b)].Load()
	if f.lay.packed {
		sh := pkShift(b) + uint64(s)*8
		w = w&^(0xff<<sh) | v<<sh
	} else {
		w = f.lay.setSlot(w, s, v)
	}
	f.t.words[wordOf(f, b)].Store(w)
}
