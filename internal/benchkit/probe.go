package benchkit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// The memory probe is the ceiling for a two-bucket lookup: per operation it
// makes two independent random 8-byte loads from a table of one uint64 per
// bucket of the structure it stands beside, with no hashing. The indices
// come from the key's random half and one more xorshift step, mapped into
// the table by multiply-shift. Insert and Delete do the same two loads and
// write nothing, so every workload measures memory reads only.

// NewProbe returns the memory-probe impl; words(n) is the number of buckets
// of the structure it stands beside.
func NewProbe(name string, words func(n int) int) Impl {
	return Impl{
		Name:  name,
		Desc:  "memory probe, not a filter: two independent random 8-byte loads per op from one uint64 per cuckoo bucket, no hashing (the ceiling of a two-bucket lookup)",
		Probe: true,
		New: func(n int, _ *Keys) (Filter, error) {
			m := words(n)
			if m < 1 {
				return nil, fmt.Errorf("probe table of %d words", m)
			}
			t := make([]uint64, m)
			// Write every word: untouched pages would all map the zero
			// page and never miss the cache.
			x := uint64(0x2545F4914F6CDD1D)
			for i := range t {
				x = xorshift(x)
				t[i] = x
			}
			return &Probe{t: t}, nil
		},
	}
}

// Probe is the memory probe's table.
type Probe struct {
	t []uint64
}

func xorshift(x uint64) uint64 {
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	return x
}

// probeIndices returns the two table indices for random x, both below m.
func probeIndices(x uint64, m int) (int, int) {
	i1, _ := bits.Mul64(x, uint64(m))
	i2, _ := bits.Mul64(xorshift(x), uint64(m))
	return int(i1), int(i2)
}

func (p *Probe) load(key []byte) bool {
	i1, i2 := probeIndices(binary.LittleEndian.Uint64(key[len(key)-8:]), len(p.t))
	return p.t[i1]&p.t[i2] == 1 // almost never true; the loads are what counts
}

// errProbeHit is returned in the (practically impossible) case that both
// loaded words equal 1. Insert and Delete must use the loaded values: the
// compiler removes loads whose values are never used, and the probe then
// measures nothing.
var errProbeHit = errors.New("benchkit: probe words both 1")

// Insert loads two words.
func (p *Probe) Insert(key []byte) error {
	if p.load(key) {
		return errProbeHit
	}
	return nil
}

// Lookup loads two words.
func (p *Probe) Lookup(key []byte) bool { return p.load(key) }

// Delete loads two words.
func (p *Probe) Delete(key []byte) bool { return !p.load(key) }

// TableBytes returns the table's size.
func (p *Probe) TableBytes() int64 { return int64(len(p.t)) * 8 }

// Words returns the table's length.
func (p *Probe) Words() int { return len(p.t) }
