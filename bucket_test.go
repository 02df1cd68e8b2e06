package cuckoo

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

func TestLayout(t *testing.T) {
	for _, tc := range []struct {
		f, b     uint
		ctrBits  uint
		maxFP    uint64
		ctrShift uint
	}{
		{f: 8, b: 4, ctrBits: 30, maxFP: 255, ctrShift: 32},
		{f: 12, b: 4, ctrBits: 14, maxFP: 4095, ctrShift: 48},
		{f: 15, b: 4, ctrBits: 2, maxFP: 32767, ctrShift: 60},
		{f: 12, b: 5, ctrBits: 2, maxFP: 4095, ctrShift: 60},
	} {
		t.Run(fmt.Sprintf("bits=%d/slots=%d", tc.f, tc.b), func(t *testing.T) {
			l := newLayout(tc.f, tc.b)
			if got := l.counterBits(); got != tc.ctrBits {
				t.Fatalf("counterBits = %d; want %d", got, tc.ctrBits)
			}
			if l.slotMask != tc.maxFP || l.ctrShift != tc.ctrShift {
				t.Fatalf("slotMask, ctrShift = %d, %d; want %d, %d", l.slotMask, l.ctrShift, tc.maxFP, tc.ctrShift)
			}
			// Slots, counter and tags must tile the word exactly.
			if got := l.fpMask | l.ctrMask<<l.ctrShift | tagMask; got != ^uint64(0) {
				t.Fatalf("fields cover %#x; want all bits", got)
			}
			if l.fpMask&(l.ctrMask<<l.ctrShift) != 0 || (l.ctrMask<<l.ctrShift)&tagMask != 0 {
				t.Fatal("fields overlap")
			}
		})
	}
}

// testLayouts returns every layout the fixed filter has.
func testLayouts() []layout {
	return []layout{newLayout(8, 4), newLayout(12, 4), newLayout(15, 4), newLayout(12, 5)}
}

func TestBucketPacking(t *testing.T) {
	for _, l := range testLayouts() {
		f := l.f
		max := l.slotMask
		for _, tc := range []struct {
			name  string
			slots [4]uint64
			ctr   uint64
		}{
			{"empty", [4]uint64{0, 0, 0, 0}, 0},
			{"full-max", [4]uint64{max, max, max, max}, l.ctrMask},
			{"ones", [4]uint64{1, 1, 1, 1}, 1},
			{"holes", [4]uint64{0, 1, 0, max}, 7 & l.ctrMask},
			{"last-empty", [4]uint64{5, max, max - 1, 0}, l.ctrMask - 1},
			{"first-empty", [4]uint64{0, 2, 3, 4}, 0},
			{"high-bit-lanes", [4]uint64{1 << (f - 1), 1, 1 << (f - 1), 0}, 3 & l.ctrMask},
		} {
			t.Run(fmt.Sprintf("bits=%d/slots=%d/case=%s", f, l.b, tc.name), func(t *testing.T) {
				// A fifth slot, where the layout has one, repeats slot 1.
				slots := tc.slots[:]
				if l.b == 5 {
					slots = append(slots[:4:4], tc.slots[1])
				}
				w := tc.ctr << l.ctrShift
				for s, fp := range slots {
					w = l.setSlot(w, s, fp)
				}
				if w&tagMask != 0 {
					t.Fatalf("word %#x has tag bits set", w)
				}
				for s, fp := range slots {
					if got := l.slot(w, s); got != fp {
						t.Errorf("slot(%d) = %d; want %d", s, got, fp)
					}
				}
				if got := l.counter(w); got != tc.ctr {
					t.Errorf("counter = %d; want %d", got, tc.ctr)
				}
				wantEmpty, wantOcc := -1, 0
				for s, fp := range slots {
					if fp == 0 && wantEmpty < 0 {
						wantEmpty = s
					}
					if fp != 0 {
						wantOcc++
					}
				}
				if got := l.emptySlot(w); got != wantEmpty {
					t.Errorf("emptySlot = %d; want %d", got, wantEmpty)
				}
				if got := l.occupied(w); got != wantOcc {
					t.Errorf("occupied = %d; want %d", got, wantOcc)
				}
				// Every fingerprint value that matters: each present
				// one, its neighbours, and the extremes.
				probe := []uint64{1, 2, max, max - 1, 1 << (f - 1)}
				for _, fp := range slots {
					if fp != 0 {
						probe = append(probe, fp, fp^1)
					}
				}
				for _, fp := range probe {
					if fp == 0 || fp > max {
						continue
					}
					want := -1
					for s, x := range slots {
						if x == fp {
							want = s
							break
						}
					}
					if got := l.match(w, fp); got != want {
						t.Errorf("match(%d) = %d; want %d", fp, got, want)
					}
					if got := l.contains(w, fp); got != (want >= 0) {
						t.Errorf("contains(%d) = %v; want %v", fp, got, want >= 0)
					}
				}
			})
		}
	}
}

// TestMatchExhaustive checks the SWAR search against a loop over slots for
// every fingerprint at f=8 over many random words.
func TestMatchExhaustive(t *testing.T) {
	for _, l := range testLayouts() {
		f, nb := l.f, int(l.b)
		x := uint64(0x9e3779b97f4a7c15)
		for i := 0; i < 2000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			w := x &^ tagMask
			// Force some empty and some repeated slots.
			if i%3 == 0 {
				w = l.setSlot(w, i%nb, 0)
			}
			if i%5 == 0 {
				w = l.setSlot(w, (i+1)%nb, l.slot(w, (i+2)%nb))
			}
			for fp := uint64(1); fp <= l.slotMask; fp += 1 + uint64(f-8)*3 {
				want := -1
				for s := 0; s < nb; s++ {
					if l.slot(w, s) == fp {
						want = s
						break
					}
				}
				if got := l.match(w, fp); got != want {
					t.Fatalf("bits=%d word=%#x match(%d) = %d; want %d", f, w, fp, got, want)
				}
			}
		}
	}
}

func TestBumpCounterWraps(t *testing.T) {
	for _, l := range testLayouts() {
		t.Run(fmt.Sprintf("bits=%d/slots=%d", l.f, l.b), func(t *testing.T) {
			w := l.fpMask | l.ctrMask<<l.ctrShift // all slots max, counter max
			got := l.bumpCounter(w)
			if l.counter(got) != 0 {
				t.Errorf("counter after wrap = %d; want 0", l.counter(got))
			}
			if got&l.fpMask != l.fpMask {
				t.Errorf("slots changed by bumpCounter: %#x; want %#x", got&l.fpMask, l.fpMask)
			}
			if got&tagMask != 0 {
				t.Errorf("bumpCounter set tag bits: %#x", got)
			}
			if c := l.counter(l.bumpCounter(l.setSlot(0, 2, 9))); c != 1 {
				t.Errorf("counter after one bump = %d; want 1", c)
			}
		})
	}
}

func TestLayoutOccupied(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, l := range testLayouts() {
		f := l.f
		var prev uint64
		prevOcc := 0
		for i := 0; i < 200000; i++ {
			w := rng.Uint64()
			// Empty some slots, and use extreme values.
			for s := 0; s < int(l.b); s++ {
				switch rng.IntN(4) {
				case 0:
					w = l.setSlot(w, s, 0)
				case 1:
					w = l.setSlot(w, s, uint64(1)<<rng.IntN(int(f)))
				case 2:
					w = l.setSlot(w, s, l.slotMask)
				}
			}
			want := 0
			for s := 0; s < int(l.b); s++ {
				if l.slot(w, s) != 0 {
					want++
				}
			}
			if got := l.occupied(w); got != want {
				t.Fatalf("bits=%d: occupied(%#x) = %d; want %d", f, w, got, want)
			}
			if i > 0 {
				b, cw, room := l.choose(1, 2, prev, w)
				if want < prevOcc != (b == 2) || cw != map[uint64]uint64{1: prev, 2: w}[b] {
					t.Fatalf("bits=%d: choose(%#x, %#x) = bucket %d, word %#x; want the second iff it has fewer (%d and %d slots)", f, prev, w, b, cw, prevOcc, want)
				}
				if z := l.zeroSlots(cw); room&-room != z&-z || (room == 0) != (z == 0) {
					t.Fatalf("bits=%d: choose(%#x, %#x) room %#x; want the first empty slot of %#x", f, prev, w, room, cw)
				}
			}
			prev, prevOcc = w, want
		}
	}
}

// put returns w with fp in its first empty slot, and whether it had one.
func (l *layout) put(w, fp uint64) (uint64, bool) {
	z := l.zeroSlots(w)
	return w | fp*l.slotUnit(z), z != 0
}

// The tests' slot finders (the library needs only masks).

func (l *layout) counterBits() uint { return payloadBits - l.b*l.f }

// slotOf returns the slot of a zeroSlots result's lowest set bit.
func (l *layout) slotOf(z uint64) int { return bits.TrailingZeros64(z) / int(l.f) }

// match returns the slot of w holding fp (never 0), or -1.
func (l *layout) match(w, fp uint64) int {
	if z := l.zeroSlots(w ^ fp*l.lo); z != 0 {
		return l.slotOf(z)
	}
	return -1
}

// emptySlot returns w's first empty slot, or -1.
func (l *layout) emptySlot(w uint64) int {
	if z := l.zeroSlots(w); z != 0 {
		return l.slotOf(z)
	}
	return -1
}

func (f *Filter) setSeed(seed uint64, alg uint8) {
	f.seed, f.fmix, f.mul = seed, alg == formatHashXXFmix, mix64(seed)|1
}

// init sets up an empty table of n words, n in [1, maxBuckets].
func (f *Filter) init(n uint64, lay layout, seed uint64, mode Mode) {
	f.adopt(make([]atomic.Uint64, n), lay, seed, formatHashXXMul, mode, 0)
}
