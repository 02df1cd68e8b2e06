package cuckoo

import (
	"sync/atomic"
	"unsafe"
)

// stepHook, set only by the model checker (relocation_model_test.go), runs
// before each atomic action on a kcasTable word (a load, CAS or K-CAS, atomic
// at its decision point): the checker stops it there and picks who acts next.
var stepHook atomic.Pointer[func(wordStep)]

// wordStep is an action: table t, the K-CAS indices of the n words it
// touches (versionBase and up: vers words), and whether it writes them.
type wordStep struct {
	t     *kcasTable
	write bool
	n     int
	idx   [maxK]uint64
}

func hookStep(t *kcasTable, write bool, n int, idx [maxK]uint64) {
	if h := stepHook.Load(); h != nil {
		(*h)(wordStep{t, write, n, idx})
	}
}

// hookRead, hookWrite and hookKCAS precede a load or a CAS of word i of t,
// or the K-CAS op on t. Each tests testHooks itself, so that outside hook
// builds a call costs its caller's inlining budget nothing.
func hookRead(t *kcasTable, i uint64) {
	if testHooks {
		hookStep(t, false, 1, [maxK]uint64{i})
	}
}
func hookWrite(t *kcasTable, i uint64) {
	if testHooks {
		hookStep(t, true, 1, [maxK]uint64{i})
	}
}
func hookKCAS(t *kcasTable, op *kcasOp) {
	if testHooks {
		hookStep(t, true, op.n, op.idx)
	}
}

// loadAt is p.Load() preceded by its hook, p a word of t or of its vers.
func loadAt(t *kcasTable, p *atomic.Uint64) uint64 {
	hookReadAt(t, p)
	return p.Load()
}

// hookReadAt precedes a load of *p, a word of t or of its vers.
func hookReadAt(t *kcasTable, p *atomic.Uint64) {
	if testHooks {
		a, w := uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(unsafe.SliceData(t.words)))
		i := uint64(a-w) / 8
		if a < w || i >= uint64(len(t.words)) {
			i = versionBase + uint64(a-uintptr(unsafe.Pointer(unsafe.SliceData(t.vers))))/8
		}
		hookRead(t, i)
	}
}
