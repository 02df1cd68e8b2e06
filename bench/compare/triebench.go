package compare

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// The workload of the paper of trie.go: fixed-length 5-character strings, at
// sizes from 100K to 8M, with build time, lookup time and memory, here for its
// trie, this filter at f=12 and f=8, and a Go map[string]struct{}.

const (
	trieAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	// trieSpace = 62^5 distinct 5-character strings.
	trieSpace = 62 * 62 * 62 * 62 * 62
	// trieStride is odd and not a multiple of 31, so i -> i*trieStride
	// mod 62^5 is a bijection: keys 0..n-1 are distinct and the absent
	// keys n..2n-1 differ from all of them.
	trieStride = 2654435761
)

// FiveCharKey writes the i-th 5-character key (0 <= i < 62^5) into dst.
func FiveCharKey(dst *[5]byte, i int) {
	x := uint64(i) * trieStride % trieSpace
	for j := range dst {
		dst[j] = trieAlphabet[x%62]
		x /= 62
	}
}

// TrieRow is one measured cell of the trie workload.
type TrieRow struct {
	Impl                 string
	N                    int
	Build                time.Duration
	PresentNs, AbsentNs  float64 // per lookup
	HeapBytes            int64   // live heap growth from the build
	FalsePositives, Miss int     // absent keys reported present; present keys missed
}

type setImpl struct {
	name   string
	build  func(keys [][]byte) (any, error)
	lookup func(s any, key []byte) bool
}

func trieImpls() []setImpl {
	filter := func(bits int) setImpl {
		return setImpl{
			name: fmt.Sprintf("cuckoo f=%d", bits),
			build: func(keys [][]byte) (any, error) {
				f, err := cuckoo.New(len(keys), cuckoo.WithFingerprintBits(bits))
				if err != nil {
					return nil, err
				}
				for _, k := range keys {
					if err := f.Insert(k); err != nil {
						return nil, err
					}
				}
				return f, nil
			},
			lookup: func(s any, key []byte) bool { return s.(*cuckoo.Filter).Lookup(key) },
		}
	}
	return []setImpl{
		{
			name: "trie (doc 001)",
			build: func(keys [][]byte) (any, error) {
				t := new(Trie)
				for _, k := range keys {
					t.Insert(k)
				}
				return t, nil
			},
			lookup: func(s any, key []byte) bool { return s.(*Trie).Lookup(key) },
		},
		filter(12),
		filter(8),
		{
			name: "map[string]struct{}",
			build: func(keys [][]byte) (any, error) {
				m := make(map[string]struct{}) // grown as the trie is, not pre-sized
				for _, k := range keys {
					m[string(k)] = struct{}{}
				}
				return m, nil
			},
			lookup: func(s any, key []byte) bool { _, ok := s.(map[string]struct{})[string(key)]; return ok },
		},
	}
}

func trieHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// RunTrieWorkload measures every structure at every size, one goroutine, and
// writes a Markdown table to w as it goes.
func RunTrieWorkload(w io.Writer, sizes []int) ([]TrieRow, error) {
	var rows []TrieRow
	fmt.Fprintln(w, "| n | structure | build (ms) | ns/lookup present | ns/lookup absent | heap (MB) | bytes/key | false positives |")
	fmt.Fprintln(w, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, n := range sizes {
		if n < 1 || 2*n > trieSpace {
			return rows, fmt.Errorf("compare: trie workload size %d out of range", n)
		}
		present := make([][]byte, n)
		absent := make([][]byte, n)
		buf := make([]byte, 10*n) // one allocation for all keys
		for i := range n {
			var k [5]byte
			FiveCharKey(&k, i)
			present[i] = buf[10*i : 10*i+5 : 10*i+5]
			copy(present[i], k[:])
			FiveCharKey(&k, n+i)
			absent[i] = buf[10*i+5 : 10*i+10 : 10*i+10]
			copy(absent[i], k[:])
		}
		for _, im := range trieImpls() {
			before := trieHeap()
			start := time.Now()
			s, err := im.build(present)
			if err != nil {
				return rows, fmt.Errorf("compare: %s at n=%d: %w", im.name, n, err)
			}
			r := TrieRow{Impl: im.name, N: n, Build: time.Since(start)}
			r.HeapBytes = trieHeap() - before
			start = time.Now()
			for _, k := range present {
				if !im.lookup(s, k) {
					r.Miss++
				}
			}
			r.PresentNs = float64(time.Since(start).Nanoseconds()) / float64(n)
			start = time.Now()
			for _, k := range absent {
				if im.lookup(s, k) {
					r.FalsePositives++
				}
			}
			r.AbsentNs = float64(time.Since(start).Nanoseconds()) / float64(n)
			runtime.KeepAlive(s)
			if r.Miss != 0 {
				return rows, fmt.Errorf("compare: %s at n=%d missed %d present keys", im.name, n, r.Miss)
			}
			rows = append(rows, r)
			fmt.Fprintf(w, "| %s | %s | %.0f | %.1f | %.1f | %.1f | %.1f | %d (%.3f%%) |\n", sizeName(n), r.Impl,
				float64(r.Build.Microseconds())/1000, r.PresentNs, r.AbsentNs, float64(r.HeapBytes)/(1<<20),
				float64(r.HeapBytes)/float64(n), r.FalsePositives, 100*float64(r.FalsePositives)/float64(n))
		}
	}
	return rows, nil
}

func sizeName(n int) string {
	switch {
	case n%(1<<20) == 0 && n >= 1<<20:
		return fmt.Sprintf("%dMi", n>>20)
	case n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n%1000 == 0:
		return fmt.Sprintf("%dK", n/1000)
	}
	return fmt.Sprint(n)
}
