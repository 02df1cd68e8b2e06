package cuckoo

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// oldChoose is choose as of the popcount rule it replaced.
func (l *layout) oldChoose(b1, b2, w1, w2 uint64) (b, w, room uint64) {
	n1, e2 := l.nonEmpty(w1), l.hi&^l.nonEmpty(w2)
	b, w, room = b1, w1, l.hi&^n1
	if bits.OnesCount64(n1|e2<<1) > int(l.b) {
		b, w, room = b2, w2, e2
	}
	return b, w, room
}

// TestChooseMatchesPopcount: every pair of occupancy patterns of every
// one-word layout, slot values and counter/tag bits random.
func TestChooseMatchesPopcount(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, fb := range [][2]uint{{8, 4}, {12, 4}, {12, 5}, {15, 4}, {4, 4}, {5, 4}, {6, 4}, {7, 4}, {9, 4}, {10, 4}, {11, 4}, {13, 4}, {14, 4}} {
		l := newLayout(fb[0], fb[1])
		if !validLayout(fb[0], fb[1]) {
			continue
		}
		word := func(occ uint) uint64 {
			w := r.Uint64() &^ l.fpMask
			for s := uint(0); s < l.b; s++ {
				if occ>>s&1 != 0 {
					w |= (1 + r.Uint64()%l.slotMask) << (s * l.f)
				}
			}
			return w
		}
		for o1 := uint(0); o1 < 1<<l.b; o1++ {
			for o2 := uint(0); o2 < 1<<l.b; o2++ {
				for range 64 {
					w1, w2 := word(o1), word(o2)
					b, w, room := l.choose(3, 7, w1, w2)
					ob, ow, oroom := l.oldChoose(3, 7, w1, w2)
					if b != ob || w != ow || room != oroom {
						t.Fatalf("f=%d b=%d w1=%#x w2=%#x: choose %d %#x %#x, old %d %#x %#x", l.f, l.b, w1, w2, b, w, room, ob, ow, oroom)
					}
				}
			}
		}
	}
}

func TestHash16Exhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	k := make([]byte, 16)
	for i := range 1 << 20 {
		for j := range k {
			k[j] = byte(r.Uint32())
		}
		if i < 256*16 { // every byte value at every position, rest zero
			clear(k)
			k[i/256] = byte(i)
		}
		if hash16(k) != xxhash.Sum64(k) || hashKey(k) != xxhash.Sum64(k) {
			t.Fatalf("%x: hash16 %#x, xxhash %#x", k, hash16(k), xxhash.Sum64(k))
		}
	}
}
