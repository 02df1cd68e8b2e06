package benchkit

import (
	"testing"
	"unsafe"
)

// span is the bytes of a buffer a worker writes for every operation.
type span struct{ lo, hi uintptr }

func spanOf[T any](s []T) span {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return span{lo, lo + uintptr(len(s))*unsafe.Sizeof(s[0])}
}

// TestWorkersWriteOwnLines checks that no two workers' per-operation
// buffers (key, keys, found) come within linePad bytes of each other, so
// that they never share a cache line or a pair of lines: unpadded, the
// 16-byte key buffers of consecutive workers shared lines.
func TestWorkersWriteOwnLines(t *testing.T) {
	var spans [][]span
	for range 16 {
		for _, batch := range []bool{false, true} {
			w := newWorker(batch)
			s := []span{spanOf(w.key)}
			if batch {
				s = append(s, spanOf(w.keys), spanOf(w.found))
			}
			spans = append(spans, s)
		}
	}
	for i, a := range spans {
		for j, b := range spans {
			if i == j {
				continue
			}
			for _, x := range a {
				for _, y := range b {
					if x.lo < y.hi+linePad && y.lo < x.hi+linePad {
						t.Fatalf("workers %d and %d write within %d bytes: [%#x, %#x) and [%#x, %#x)",
							i, j, linePad, x.lo, x.hi, y.lo, y.hi)
					}
				}
			}
		}
	}
}
