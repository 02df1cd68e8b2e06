package cuckoo

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// randomSeed returns the seed of a filter made without WithSeed, so that keys
// found offline to fill a pair of buckets scatter: ChaCha8, seeded by the OS,
// does not let one seed predict another, never fails and allocates nothing.
func randomSeed() uint64 { return rand.Uint64() }

const prime1, prime2, prime3, prime4, prime5 = 11400714785074694791, 14029467366897019727, 1609587929392839161, 9650029242287828579, 2870177450012600261

// sum64Short is xxhash.Sum64 (XXH64, primes prime1..5) of b, len(b) < 32, in
// Go: a leaf call with register arguments, without the assembly's stack
// arguments (BENCHMARKS.md, "Tuning constants"). Reads stay below len(b).
func sum64Short(b []byte) uint64 {
	n, p := len(b), unsafe.Pointer(unsafe.SliceData(b))
	h := prime5 + uint64(n)
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
		h ^= uint64(binary.LittleEndian.Uint32((*[4]byte)(unsafe.Add(p, i))[:])) * prime1
		h, i = bits.RotateLeft64(h, 23)*prime2+prime3, i+4
	}
	for ; i < n; i++ {
		h = bits.RotateLeft64(h^uint64(*(*byte)(unsafe.Add(p, i)))*prime5, 11) * prime1
	}
	h = (h ^ h>>33) * prime2
	h = (h ^ h>>29) * prime3
	return h ^ h>>32
}

// hash8 and hash16 are sum64Short of 8 and 16 bytes, straight-line to inline.
func hash8(key []byte) uint64 {
	h := bits.RotateLeft64(prime5+8^bits.RotateLeft64(binary.LittleEndian.Uint64(key)*prime2, 31)*prime1, 27)*prime1 + prime4
	h = (h ^ h>>33) * prime2
	h = (h ^ h>>29) * prime3
	return h ^ h>>32
}

func hash16(key []byte) uint64 {
	k := (*[16]byte)(key)
	h := bits.RotateLeft64(prime5+16^bits.RotateLeft64(binary.LittleEndian.Uint64(k[:8])*prime2, 31)*prime1, 27)*prime1 + prime4
	h = bits.RotateLeft64(h^bits.RotateLeft64(binary.LittleEndian.Uint64(k[8:])*prime2, 31)*prime1, 27)*prime1 + prime4
	h = (h ^ h>>33) * prime2
	h = (h ^ h>>29) * prime3
	return h ^ h>>32
}

// round8 mixes the 8 bytes at p into h.
func round8(h uint64, p unsafe.Pointer) uint64 {
	h ^= bits.RotateLeft64(binary.LittleEndian.Uint64((*[8]byte)(p)[:])*prime2, 31) * prime1
	return bits.RotateLeft64(h, 27)*prime1 + prime4
}

// hashKey is xxhash.Sum64(key), in Go below 32 bytes. Insert, Lookup and
// the batches write it out, so that hash8 and hash16 inline there.
func hashKey(key []byte) uint64 {
	switch {
	case len(key) == 8:
		return hash8(key)
	case len(key) == 16:
		return hash16(key)
	case len(key) < 32:
		return sum64Short(key)
	}
	return xxhash.Sum64(key)
}
