package compare

import "errors"

var errFull = errors.New("compare: filter is full")

// All returns every compared impl: this filter's modes, seiflotfy/cuckoofilter
// unguarded and locked, a Bloom filter, a Go map, the static xor filters, and
// the memory probe.
func All() []Impl {
	var out []Impl
	out = append(out, CuckooImpls()...)
	out = append(out, seiflotfyImpls()...)
	out = append(out, bloomImpl(), mapImpl())
	out = append(out, xorImpls()...)
	out = append(out, ProbeImpl())
	return out
}
