package cuckoo

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// randomSeed returns the seed of a filter made without WithSeed, so that keys
// found offline to fill a pair of buckets scatter (keyed). math/rand/v2's
// ChaCha8, seeded by the operating system, does not let one filter's seed
// predict another's, never fails and allocates nothing.
func randomSeed() uint64 { return rand.Uint64() }

const p1, p2, p3, p4, p5 = 11400714785074694791, 14029467366897019727, 1609587929392839161, 9650029242287828579, 2870177450012600261

// sum64Short is xxhash.Sum64 (XXH64, primes p1..p5) of b, len(b) < 32, in
// Go: a leaf call with register arguments, without the assembly's setup for
// long inputs (BENCHMARKS.md, "Tuning constants"). Reads stay below len(b).
func sum64Short(b []byte) uint64 {
	n, p := len(b), unsafe.Pointer(unsafe.SliceData(b))
	h := p5 + uint64(n)
	if n >= 8 {
		h = round8(h, p)
		if n >= 16 {
			h = round8(h, unsafe.Add(p, 8))
			if n >= 24 {
				h = round8(h, unsafe.Add(p, 16))
			}
		}
	}
	i := n &^ 7
	if n&4 != 0 {
		h ^= uint64(binary.LittleEndian.Uint32((*[4]byte)(unsafe.Add(p, i))[:])) * p1
		h, i = bits.RotateLeft64(h, 23)*p2+p3, i+4
	}
	for ; i < n; i++ {
		h = bits.RotateLeft64(h^uint64(*(*byte)(unsafe.Add(p, i)))*p5, 11) * p1
	}
	h = (h ^ h>>33) * p2
	h = (h ^ h>>29) * p3
	return h ^ h>>32
}

// round8 mixes the 8 bytes at p into h.
func round8(h uint64, p unsafe.Pointer) uint64 {
	h ^= bits.RotateLeft64(binary.LittleEndian.Uint64((*[8]byte)(p)[:])*p2, 31) * p1
	return bits.RotateLeft64(h, 27)*p1 + p4
}
