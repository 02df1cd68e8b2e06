package compare

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/seed25b00da8/cuckoo/internal/benchkit"
)

// Equal load.
//
// By default every structure is made for n keys and holds n, so each is as
// full as its own sizing rule makes it: New(n) at 97% of its slots,
// seiflotfy's table at n/0.95 rounded up to a power of two, which for
// n = 2^20 is 2^21 slots at 48%. Inserts into a half-empty table rarely
// relocate, so such fill cells compare table loads more than filters.
//
// An equal-load size class S (a power of two: 1M is 2^20) fixes the slots
// instead, and what is equal in its cells is:
//
//   - the keys: every structure holds the same K = EqualKeys(S) keys,
//     benchkit's keys 0..K-1, and looks up the same absent keys;
//   - the table: every cuckoo table (a structure with a Cap) is made with
//     the least request whose Cap() is at least S, so it has S slots,
//     rounded up to whole buckets (five-slot buckets: at most 4 slots more).
//     seiflotfy's is exactly S slots, the table it gets for any request up
//     to A = floor(0.95·S) keys above half that (this module asks it for
//     n/0.95 slots); New(A) in a four-slot layout has S slots and spares;
//   - the load: K/S in both cuckoo tables in every workload. K is
//     floor(0.95·A) (1M: A = 996,147, K = 946,339, 90.25%). A fill inserts
//     the K keys into an empty table, lookups and mixed run with the K keys
//     in (mixed puts every key it deletes back ten operations later);
//   - the run: every cell comes from one process, one impl after another.
//
// The other structures have no slots to equal: the static filters are
// built from the K keys, the Bloom filter is sized for K keys at BloomFPR,
// the map for K keys.

// MinClass is the smallest equal-load class.
const MinClass = 1 << 10

// EqualAsked returns A = floor(0.95·S), the keys seiflotfy is asked for in
// class S; ceil(A/0.95) ≤ S < 2·ceil(A/0.95), so its power-of-two table has
// S slots.
func EqualAsked(class int) int { return class * 95 / 100 }

// EqualKeys returns K = floor(0.95·A), the keys every structure holds in
// class S.
func EqualKeys(class int) int { return EqualAsked(class) * 95 / 100 }

// classOfKeys returns the class S whose EqualKeys is k. K lies in
// (S/2, S), so S is the power of two above k.
func classOfKeys(k int) (int, error) {
	if k > 0 {
		s := 1 << bits.Len(uint(k))
		if s >= MinClass && EqualKeys(s) == k {
			return s, nil
		}
	}
	return 0, fmt.Errorf("compare: %d keys is no equal-load class's key count", k)
}

// EqualLoadSize returns the size of class S for Run: N is its key count.
func EqualLoadSize(name string, class int) (Size, error) {
	if class < MinClass || class&(class-1) != 0 {
		return Size{}, fmt.Errorf("compare: equal-load class %s: %d is not a power of two of at least %d", name, class, MinClass)
	}
	return Size{Name: name, N: EqualKeys(class)}, nil
}

// EqualLoad returns impls made for equal-load classes (see above): New is
// asked for a class's key count K and makes the structure its class says.
// Static impls are returned as they are (built from the K keys).
func EqualLoad(impls []Impl) []Impl {
	out := make([]Impl, len(impls))
	for i, im := range impls {
		if !im.Static {
			inner := im
			im.New = func(k int, keys *Keys) (Filter, error) {
				class, err := classOfKeys(k)
				if err != nil {
					return nil, err
				}
				m, err := EqualRequest(inner, class)
				if err != nil {
					return nil, err
				}
				return inner.New(m, keys)
			}
		}
		out[i] = im
	}
	return out
}

var requests = struct {
	sync.Mutex
	m map[string]int // impl name and class: the request
}{m: map[string]int{}}

// EqualRequest returns what im.New (the impl before EqualLoad) is asked
// for in class S: TableRequest for a structure with a Cap, else the K keys
// the class holds. It is searched once per impl name and class.
func EqualRequest(im Impl, class int) (int, error) {
	key := fmt.Sprintf("%s/%d", im.Name, class)
	requests.Lock()
	defer requests.Unlock()
	if m, ok := requests.m[key]; ok {
		return m, nil
	}
	m, err := TableRequest(im.New, class)
	if err != nil {
		return 0, err
	}
	if m == 0 {
		m = EqualKeys(class)
	}
	requests.m[key] = m
	return m, nil
}

// TableRequest returns the least m for which newFilter(m) has a Cap of at
// least slots, or 0 if newFilter's structures have no Cap. Cap must not
// decrease as m grows and newFilter(slots) must reach slots.
func TableRequest(newFilter func(int, *Keys) (Filter, error), slots int) (int, error) {
	capOf := func(m int) (int, bool, error) {
		f, err := newFilter(m, nil)
		if err != nil {
			return 0, false, err
		}
		l, ok := f.(benchkit.Loader)
		if !ok {
			return 0, false, nil
		}
		return l.Cap(), true, nil
	}
	c, ok, err := capOf(slots)
	if err != nil || !ok {
		return 0, err
	}
	if c < slots {
		return 0, fmt.Errorf("compare: a structure made for %d keys has %d slots, fewer than %d", slots, c, slots)
	}
	lo, hi := 0, slots // Cap(lo) < slots (or lo = 0) and Cap(hi) ≥ slots
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if c, _, err = capOf(mid); err != nil {
			return 0, err
		}
		if c >= slots {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
