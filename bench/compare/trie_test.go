package compare

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTrieAgainstMap runs random inserts, lookups (present and absent),
// deletes and re-inserts against a map and checks every answer and, at the
// end, that deleting everything prunes the trie back to its root.
func TestTrieAgainstMap(t *testing.T) {
	for _, alpha := range []string{"ab", "abcdefghijklmnopqrstuvwxyz", "\x00\x3f\x40\x7f\x80\xbf\xc0\xff"} {
		t.Run(fmt.Sprintf("alphabet=%d", len(alpha)), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(alpha))))
			key := func() []byte {
				k := make([]byte, r.IntN(7)) // includes the empty key and prefixes of others
				for i := range k {
					k[i] = alpha[r.IntN(len(alpha))]
				}
				return k
			}
			var tr Trie
			ref := map[string]bool{}
			ops := 200_000
			if testing.Short() {
				ops = 20_000
			}
			for i := range ops {
				k := key()
				switch r.IntN(3) {
				case 0:
					if got, want := tr.Insert(k), !ref[string(k)]; got != want {
						t.Fatalf("op %d: Insert(%q) = %v; want %v", i, k, got, want)
					}
					ref[string(k)] = true
				case 1:
					if got, want := tr.Delete(k), ref[string(k)]; got != want {
						t.Fatalf("op %d: Delete(%q) = %v; want %v", i, k, got, want)
					}
					delete(ref, string(k))
				}
				if got, want := tr.Lookup(k), ref[string(k)]; got != want {
					t.Fatalf("op %d: Lookup(%q) = %v; want %v", i, k, got, want)
				}
				if tr.Len() != len(ref) {
					t.Fatalf("op %d: Len = %d; want %d", i, tr.Len(), len(ref))
				}
			}
			for k := range ref {
				if !tr.Lookup([]byte(k)) {
					t.Fatalf("present %q not found", k)
				}
			}
			for k := range ref {
				if !tr.Delete([]byte(k)) {
					t.Fatalf("Delete(%q) of a present key = false", k)
				}
				if tr.Lookup([]byte(k)) {
					t.Fatalf("%q found after Delete", k)
				}
			}
			if n := tr.nodes(); n != 1 || tr.Len() != 0 {
				t.Fatalf("after deleting everything: %d nodes, Len %d; want 1, 0", n, tr.Len())
			}
		})
	}
}

// TestTriePrune: deleting a key removes exactly the nodes no other key uses,
// and re-inserting restores it.
func TestTriePrune(t *testing.T) {
	var tr Trie
	for _, k := range []string{"abcde", "abcdf", "abx", "ab"} {
		tr.Insert([]byte(k))
	}
	// root, a, b, c, d, e, f, x
	if n := tr.nodes(); n != 8 {
		t.Fatalf("nodes = %d; want 8", n)
	}
	tr.Delete([]byte("abcde"))
	if n := tr.nodes(); n != 7 {
		t.Fatalf("after deleting abcde: nodes = %d; want 7 (only e pruned)", n)
	}
	tr.Delete([]byte("abcdf"))
	if n := tr.nodes(); n != 4 {
		t.Fatalf("after deleting abcdf: nodes = %d; want 4 (c, d, f pruned)", n)
	}
	tr.Delete([]byte("ab")) // b keeps its child x: only the end mark goes
	if n := tr.nodes(); n != 4 || tr.Lookup([]byte("ab")) || !tr.Lookup([]byte("abx")) {
		t.Fatalf("after deleting ab: nodes %d, ab %v, abx %v; want 4, false, true", n, tr.Lookup([]byte("ab")), tr.Lookup([]byte("abx")))
	}
	if !tr.Insert([]byte("abcde")) || !tr.Lookup([]byte("abcde")) || tr.Lookup([]byte("abcd")) {
		t.Fatal("re-insert of abcde failed, or its prefix abcd is reported present")
	}
}

// TestTrieWorkloadSmall runs the paper's workload at a small size: every
// structure finds every present key, the trie and the map report no absent
// key, and the keys are distinct 5-character strings.
func TestTrieWorkloadSmall(t *testing.T) {
	seen := map[[5]byte]bool{}
	for i := range 20_000 {
		var k [5]byte
		FiveCharKey(&k, i)
		if seen[k] {
			t.Fatalf("key %d (%q) repeats", i, k)
		}
		seen[k] = true
	}
	var sb strings.Builder
	rows, err := RunTrieWorkload(&sb, []int{10_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows; want 4", len(rows))
	}
	for _, r := range rows {
		exact := strings.HasPrefix(r.Impl, "trie") || strings.HasPrefix(r.Impl, "map")
		if exact && r.FalsePositives != 0 {
			t.Fatalf("%s: %d false positives; want 0", r.Impl, r.FalsePositives)
		}
		if r.HeapBytes <= 0 {
			t.Fatalf("%s: heap growth %d; want > 0", r.Impl, r.HeapBytes)
		}
	}
}
