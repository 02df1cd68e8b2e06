package benchkit

import "encoding/binary"

// KeySize is the length of every key.
const KeySize = 16

// NegBit marks the counters of negative keys, which are never inserted: the
// positive keys are numbers 0..n-1, the negative ones NegBit|0..n-1.
const NegBit = 1 << 63

// PutKey writes key number i into dst[:KeySize]: the counter i
// little-endian, then Mix64 of it little-endian. The second half is random
// looking, for structures that read their index from the key's bytes (the
// memory probe); the first half makes every key distinct. Keys are computed
// where they are used, so a run needs no key array (32M keys would be
// 512 MiB) and a goroutine writes them into its own buffer without
// allocating.
func PutKey(dst []byte, i uint64) {
	binary.LittleEndian.PutUint64(dst[:8], i)
	binary.LittleEndian.PutUint64(dst[8:KeySize], Mix64(i+0x9E3779B97F4A7C15))
}

// Key returns key number i in a new slice.
func Key(i uint64) []byte {
	k := make([]byte, KeySize)
	PutKey(k, i)
	return k
}

// Mix64 is the finalizer of MurmurHash3: it spreads x over 64 bits.
func Mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// Keys holds keys stored back to back, for static structures that are
// built from all their keys at once.
type Keys struct {
	buf []byte
}

// NewKeys returns the positive keys 0..n-1.
func NewKeys(n int) *Keys {
	buf := make([]byte, n*KeySize)
	for i := range n {
		PutKey(buf[i*KeySize:], uint64(i))
	}
	return &Keys{buf: buf}
}

// Len returns the number of keys.
func (k *Keys) Len() int { return len(k.buf) / KeySize }

// At returns key i. It does not allocate; the result aliases the set.
func (k *Keys) At(i int) []byte {
	o := i * KeySize
	return k.buf[o : o+KeySize : o+KeySize]
}
