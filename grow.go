package cuckoo

import (
	"fmt"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// A filter that grows (Growing).
//
// A Growing filter is a binary tree of nodes, each a fixed table of m0
// buckets (a Filter) with the same fingerprint size and seed. A key has one
// place in every node, the same in all of them: its buckets b1, b2 and its
// fingerprint fp come from its hash and m0 alone (place, altBucket). It also
// has a path: the bits of a second hash of it, path(key), pick the child at
// each depth (bit 63-d chooses the child of a node at depth d). The key's
// nodes are the nodes along its path, from the root to the deepest one
// that exists. Keys are stored only in their nodes; a fingerprint never
// moves from one node to another (relocations stay inside a node).
//
// Growth adds a node: when an insert finds no room in any of its nodes, it
// creates the child of its deepest node on its path (one CAS on the
// parent's child pointer) and inserts there. Nodes are never removed
// (Reset replaces the whole tree), so the set of a key's nodes only grows.
// Nothing moves during growth, so growth needs no protocol of its own: a
// new node starts empty, and every other node goes on as a fixed filter.
//
// Colliding keys. Say that keys x and y collide at node n when n is on
// both paths, fp(x) = fp(y), and their bucket pairs are equal. The pair
// is {b, alt(b, fp)} for either of its buckets b (alt is an involution),
// so a copy of fp in one of x's buckets lies in y's pair as well exactly
// when they collide. Since place and alt depend only on the key and m0,
// and paths through n pass through all of n's ancestors:
//
//	(N) if x and y collide at node n, they collide at every ancestor of n.
//
// This nesting is what makes deletes safe. It would not hold with nodes of
// different sizes (a key's pair in a table of 2·m0 buckets is not a
// refinement of its pair in m0 buckets under altBucket), which is why all
// nodes have m0 buckets and growth adds nodes instead of bigger tables.
//
// Searches go deepest node first. Lookup, Delete and Count collect the
// key's nodes (following child pointers from the root) and then search
// them from the deepest up to the root, each with the fixed filter's
// search (contains, deleteFp, countCopies). Insert tries the deepest node
// first and its ancestors after (where deletes may have made room), and
// grows only when all are full.
//
// Claim (no false negatives): a Lookup of x that starts after an Insert
// of x returned, with no Delete of x (and no Reset) begun since, reports
// true. Proof: think of each insert, from the moment it stores its copy,
// as owning one stored copy of its fingerprint, a copy that answers its key
// (in one of the key's nodes, in the key's pair). Ownership changes only
// when a Delete removes an owned copy: Delete(x) removes, at the deepest of
// x's nodes where the fixed search finds one, a copy c answering x. Let n
// be that node. If c is owned by an insert of x, that insert is the one
// deleted. If c is owned by no insert (its owner was retired by an earlier
// Delete), the Delete retires one of x's inserts and leaves that insert's
// copy unowned. Otherwise c is owned by an insert of a key y that collides
// with x at n (finished or still running); the Delete then retires one of
// x's own inserts instead, and y's insert takes over that insert's copy
// c'. c' answers x, lies in one of x's nodes, and (see below)
// that node is n or an ancestor of n; by (N) x and y collide there, so c'
// answers y. Every change of ownership thus moves an insert's copy to the
// same node or an ancestor: the depth of an insert's copy never grows.
// Now the lookup of x: let k be the depth of the copy owned by x's insert
// when the lookup searches the deepest node it collected (at depth D >= k,
// since that node existed when x's insert completed, before the walk).
// Going up, when the lookup searches the node at depth k on x's path: if
// the copy is still there throughout that search, the fixed filter's
// guarantee finds it; if it leaves during the search, it was deleted, so
// its owner moved to an ancestor, which the lookup searches next. Either
// way the lookup returns true before it passes the root.
//
// The "see below" of the Delete case: x's retired insert must own a copy
// at depth <= depth(n). The same argument as the lookup's applies to the
// Delete's own search: the copy owned by x's insert (which completed before
// the Delete began, as Delete's contract requires) is at depth <= D when
// the search starts and only moves up; the search would have found and
// removed a copy at any deeper node holding it; so when it removes c at n,
// x's insert owns a copy at depth <= depth(n). A Delete of a key that was
// never inserted is outside the contract, as for Filter.
//
// Deepest first is necessary, not a convenience: a delete that searched the
// root first could remove the root's copy owned by a key y that collides
// with x only at the root, while x's own copy sits in a deeper node where y
// has no place; y would then be lost (TestGrowingDeleteOrder builds that
// case and fails with the order reversed).
//
// Count adds the fixed filter's counts over the key's nodes, searched
// deepest first: a copy answering x that stays present through the call is
// counted by its node's search; a copy whose owner moves during the call
// moves to a node searched later.

// growMaxDepth bounds the tree's depth: a key's path has 64 bits, and
// 2^40 nodes of the smallest size already exceed any memory.
const growMaxDepth = 40

// growMinNodeBuckets is the smallest node: 4096 buckets (32 KiB, 15,564
// keys at 95%), so that a node's fixed part (its struct and counter shards,
// about 1 KB) stays a few percent of its table.
const growMinNodeBuckets = 4096

// growNodeShardBits caps the counter shards of a node: a tree of many
// nodes spreads its writers over them already.
const growNodeShardBits = 3

// Growing is a concurrent cuckoo filter that grows when it is full, instead
// of returning ErrFull, up to an optional maximum (WithMaxCapacity). It
// keeps the guarantees of Filter: no false negatives for keys inserted and
// not deleted, also while it grows; safe deletes of inserted keys (the
// insert, delete and reinsert of one key under growth included); lookups
// and deletes that never wait for another goroutine in LockFree mode.
// Create one with NewGrowing; a zero Growing holds nothing and reports every
// Insert as ErrZeroFilter.
//
// A Growing filter is a tree of fixed tables ("nodes") of the same size:
// growth adds a node, and nothing that is stored ever moves between nodes,
// so growth never stops lookups, inserts or deletes. The costs of growing
// this way, measured in BENCHMARKS.md ("Growing filter"):
//
//   - false positives: a lookup searches the key's nodes along one path
//     from the root, one node per depth, and each full node adds the false
//     positive rate of a fixed filter (about 8·α/2^f); a tree that grew
//     2^d times from one node is about d+1 deep;
//   - lookups: one fixed-filter search per depth, deepest first, so an
//     absent key costs about d+1 searches, a present key fewer;
//   - memory: nodes fill to 95% before their children appear; keys spread
//     evenly over the children, so right after a depth starts the tree holds
//     about twice the memory its keys need, and the ratio falls back to the
//     fixed filter's as the new depth fills.
//
// Len, Cap and LoadFactor sum over the nodes (a walk of the tree). A
// Growing filter must not be copied after first use.
type Growing struct {
	_ noCopy

	tree     atomic.Pointer[growTree]
	m0       uint64 // buckets of every node
	bits     uint
	seed     uint64
	alg      uint8
	mode     Mode
	maxDepth uint          // the deepest a node may be: growMaxDepth, or less under WithMaxCapacity
	locks    *stripedLocks // Locked mode: shared by every node (they have the same bucket indices)
}

// growTree is one tree of nodes; Reset replaces it.
type growTree struct {
	root *growNode
}

// growNode is a node: a fixed table, its children, and a hint that
// inserts should skip it.
type growNode struct {
	f     Filter
	depth uint
	kids  [2]atomic.Pointer[growNode]
	// full is set when an insert found no room here while the node was at
	// least growFullLoad full, and cleared by the next delete that removes
	// a fingerprint here. It only steers inserts (which nodes to try
	// first); correctness never depends on it.
	full atomic.Bool
}

// WithMaxCapacity bounds a Growing filter. It grows by levels of its tree
// (a tree d levels below the root has up to 2^(d+1)-1 nodes), down to the
// deepest level at which the complete tree still holds at most maxCapacity
// keys at 95% load; past that, an insert that finds no room returns
// ErrFull with nothing lost, as a Filter's does. So Cap never exceeds
// maxCapacity/0.95 slots, and a bound between two levels' capacities
// leaves the difference unused. 0 (the default) means no bound other than
// the depth bound of 40. New rejects it.
func WithMaxCapacity(maxCapacity int) Option {
	return func(c *config) { c.maxCap, c.maxCapSet = maxCapacity, true }
}

// NewGrowing returns a filter that starts with room for capacity keys (at
// least 15,564: the smallest node has 4096 buckets) and grows as keys
// arrive. It takes the options of New (fingerprint bits, seed, mode) and
// WithMaxCapacity. It returns an error if capacity is not positive or above
// MaxCapacity, if the maximum is below the first node's capacity, or if an
// option has a value outside its range.
func NewGrowing(capacity int, opts ...Option) (*Growing, error) {
	c, err := newConfig(capacity, opts)
	if err != nil {
		return nil, err
	}
	m0 := max(bucketsFor(capacity), growMinNodeBuckets)
	g := &Growing{m0: m0, bits: uint(c.bits), seed: c.seed, alg: formatHashXXMul, mode: c.mode, maxDepth: growMaxDepth}
	if c.maxCap < 0 {
		return nil, fmt.Errorf("cuckoo: maximum capacity must not be negative, got %d", c.maxCap)
	}
	if c.maxCap > 0 {
		perNode := nodeKeys(m0)
		if uint64(c.maxCap) < perNode {
			return nil, fmt.Errorf("cuckoo: maximum capacity %d is below the first node's %d keys", c.maxCap, perNode)
		}
		// The deepest level at which the complete tree still fits: the
		// filter's capacity never exceeds the bound, and every key's path
		// can reach that depth.
		d := uint(0)
		for d < growMaxDepth && (uint64(1)<<(d+2)-1)*perNode <= uint64(c.maxCap) {
			d++
		}
		g.maxDepth = d
	}
	if g.mode == Locked {
		g.locks = newStripedLocks(int(m0))
	}
	g.tree.Store(g.newTree())
	return g, nil
}

// nodeKeys is the number of keys a node of m buckets is sized for (95%).
func nodeKeys(m uint64) uint64 {
	return m * slotsPerBucket * targetLoadNum / targetLoadDen
}

// newTree returns a tree of one empty node.
func (g *Growing) newTree() *growTree {
	return &growTree{root: g.newNode(0)}
}

// newNode returns an empty node at depth d.
func (g *Growing) newNode(d uint) *growNode {
	n := &growNode{depth: d}
	n.f.adoptWith(make([]atomic.Uint64, g.m0), g.bits, g.seed, g.alg, g.mode, 0, g.locks,
		min(shardBitsFor(g.m0), growNodeShardBits))
	return n
}

// proto returns a node whose Filter places keys as every node does.
func (g *Growing) proto() *Filter { return &g.tree.Load().root.f }

// placed is a key placed in the tree: its buckets and fingerprint (the same
// in every node) and its path bits.
type placed struct {
	b1, fp, b2, path uint64
}

// place places the key whose 64-bit hash (xxhash.Sum64 of the key) is h.
func (g *Growing) place(h uint64) placed {
	f := g.proto()
	kh := h
	if f.seed != 0 {
		kh = f.keyed(h)
	}
	var p placed
	p.b1, p.fp, p.b2 = place(kh, f.m, f.fpRange)
	p.path = mix64(kh ^ growPathSalt)
	return p
}

// growPathSalt makes a key's path bits a different function of its keyed
// hash than the bucket and fingerprint bits (which come from the hash
// itself through multiply-shift).
const growPathSalt = 0x9e3779b97f4a7c15

// childBit returns which child of a node at depth d the key with path bits
// p goes to.
func childBit(p uint64, d uint) uint64 { return p >> ((63 - d) & 63) & 1 } // & 63: one shift, no test for d > 63

// nodesOf stores the key's nodes, root first, in buf and returns how many
// there are.
func (t *growTree) nodesOf(p uint64, buf *[growMaxDepth + 1]*growNode) int {
	// A node at depth growMaxDepth has no children (grow refuses them and
	// the decoder rejects them), so the walk fits buf.
	k := 0
	for n := t.root; n != nil; n = n.kids[childBit(p, n.depth)].Load() {
		buf[k] = n
		k++
	}
	return k
}

// Insert adds key to the filter, growing it if no node on the key's path
// has room. It returns ErrFull only at the maximum (WithMaxCapacity) or the
// depth bound, and then the filter holds what it held before. On a zero
// Growing it returns ErrZeroFilter.
func (g *Growing) Insert(key []byte) error { return g.InsertHash(xxhash.Sum64(key)) }

// InsertString is Insert for a string key, without copying it.
func (g *Growing) InsertString(key string) error { return g.Insert(bytesOf(key)) }

// InsertHash is Insert for a key given by its 64-bit hash, as
// Filter.InsertHash (the same assumptions on h).
func (g *Growing) InsertHash(h uint64) error {
	if g.m0 == 0 {
		return ErrZeroFilter
	}
	return g.insert(g.place(h))
}

func (g *Growing) insert(p placed) error {
	var buf [growMaxDepth + 1]*growNode
	for {
		t := g.tree.Load()
		k := t.nodesOf(p.path, &buf)
		for i := k - 1; i >= 0; i-- {
			if n := buf[i]; !n.full.Load() && n.add(p) {
				return nil
			}
		}
		if !g.grow(buf[k-1], p.path) {
			// At the bound: one more pass that ignores the hints, so
			// that ErrFull means no node on the path had room.
			for i := k - 1; i >= 0; i-- {
				if buf[i].add(p) {
					return nil
				}
			}
			return ErrFull
		}
	}
}

// add inserts p into n and counts it, or reports false; a node that
// refuses an insert at growFullLoad or more is marked full.
func (n *growNode) add(p placed) bool {
	f := &n.f
	if f.insert(p.b1, p.b2, p.fp, f.t.words[p.b1].Load(), f.t.words[p.b2].Load()) {
		f.count.add(1)
		return true
	}
	if !n.full.Load() && f.LoadFactor() >= growFullLoad {
		n.full.Store(true)
	}
	return false
}

// growFullLoad is the load from which a refused insert marks a node full.
// Below it a refusal concerns one key's buckets, not the node: the ninth
// copy of a key (the eight slots of its buckets hold copies already), or a
// key among many that share its fingerprint and buckets. Marking the node
// then would send every later insert past it, and the tree would grow a
// level early.
const growFullLoad = 0.9

// grow makes sure the child of leaf on path p exists, creating it, and
// reports false if leaf is at the depth bound (growMaxDepth, or the one
// WithMaxCapacity set). Several
// goroutines may create the child at once: one CAS wins and the others drop
// theirs.
func (g *Growing) grow(leaf *growNode, p uint64) bool {
	if leaf.depth >= g.maxDepth {
		return false
	}
	slot := &leaf.kids[childBit(p, leaf.depth)]
	if slot.Load() == nil {
		slot.CompareAndSwap(nil, g.newNode(leaf.depth+1))
	}
	return true
}

// Lookup reports whether key may be in the filter, with Filter.Lookup's
// guarantee (no false negatives, also while the filter grows). It reports
// true for a key that was never inserted with probability about the sum of
// the false-positive rates of the nodes on the key's path.
func (g *Growing) Lookup(key []byte) bool { return g.LookupHash(xxhash.Sum64(key)) }

// LookupString is Lookup for a string key, without copying it.
func (g *Growing) LookupString(key string) bool { return g.Lookup(bytesOf(key)) }

// LookupHash is Lookup for a key given by its 64-bit hash.
func (g *Growing) LookupHash(h uint64) bool {
	if g.m0 == 0 {
		return false
	}
	return g.lookup(g.place(h))
}

func (g *Growing) lookup(p placed) bool {
	var buf [growMaxDepth + 1]*growNode
	k := g.tree.Load().nodesOf(p.path, &buf)
	// A first sweep only loads both buckets of every node, so that their
	// cache misses overlap; the searches below, in the order the argument
	// of grow.go relies on, then find the lines in cache. (Testing the
	// sweep's reads too cost every absent key one more test per node.)
	for i := k - 1; i >= 0; i-- {
		f := &buf[i].f
		_, _ = f.t.words[p.b1].Load(), f.t.words[p.b2].Load()
	}
	for i := k - 1; i >= 0; i-- {
		// contains, with its reads written out: it is too large to be
		// inlined, and the call per node cost absent lookups 6% more
		// instructions (1089 against 1159, cachegrind, bench/cmd/opcount
		// -impl growing -w neg).
		f := &buf[i].f
		e := f.t.epoch.Load() // before the buckets, as in Lookup
		if f.decide(p.b1, p.b2, p.fp, e, f.t.words[p.b1].Load(), f.t.words[p.b2].Load()) {
			return true
		}
	}
	return false
}

// Delete removes one copy of key's fingerprint and reports whether it found
// one. As with Filter, delete only keys that were inserted.
func (g *Growing) Delete(key []byte) bool { return g.DeleteHash(xxhash.Sum64(key)) }

// DeleteString is Delete for a string key, without copying it.
func (g *Growing) DeleteString(key string) bool { return g.Delete(bytesOf(key)) }

// DeleteHash is Delete for a key given by its 64-bit hash.
func (g *Growing) DeleteHash(h uint64) bool {
	if g.m0 == 0 {
		return false
	}
	p := g.place(h)
	var buf [growMaxDepth + 1]*growNode
	for i := g.tree.Load().nodesOf(p.path, &buf) - 1; i >= 0; i-- {
		n := buf[i]
		if n.f.deleteFp(p.b1, p.b2, p.fp) {
			if n.full.Load() {
				n.full.Store(false)
			}
			return true
		}
	}
	return false
}

// Count returns the number of copies of key's fingerprint in the key's
// places in every node: never less than the copies of key inserted and not
// deleted (before and during the call), as Filter.Count.
func (g *Growing) Count(key []byte) int {
	if g.m0 == 0 {
		return 0
	}
	p := g.place(xxhash.Sum64(key))
	var buf [growMaxDepth + 1]*growNode
	c := 0
	for i := g.tree.Load().nodesOf(p.path, &buf) - 1; i >= 0; i-- {
		c += buf[i].f.countCopies(p.b1, p.b2, p.fp)
	}
	return c
}

// InsertBatch inserts keys in order and returns how many it inserted; if
// that is less than len(keys), keys[n] did not fit (only at the maximum),
// err is ErrFull, and keys[n:] were not inserted.
func (g *Growing) InsertBatch(keys [][]byte) (n int, err error) {
	for n = range keys {
		if err = g.Insert(keys[n]); err != nil {
			return n, err
		}
	}
	return len(keys), nil
}

// LookupBatch stores in found[i] whether keys[i] may be in the filter, for
// i below n = min(len(keys), len(found)), and returns n, with Lookup's
// guarantee for each key. Each key's nodes are searched deepest first, as
// Lookup searches them; the keys of a group take turns, one node each per
// round, so that the bucket loads of a round overlap their cache misses.
func (g *Growing) LookupBatch(keys [][]byte, found []bool) (n int) {
	n = min(len(keys), len(found))
	if g.m0 == 0 {
		clear(found[:n])
		return n
	}
	var hs [batchGroup]uint64
	for base := 0; base < n; base += batchGroup {
		ks := keys[base:min(base+batchGroup, n)]
		for j, k := range ks {
			hs[j] = xxhash.Sum64(k)
		}
		g.lookupGroup(hs[:len(ks)], found[base:base+len(ks)])
	}
	return n
}

// lookupGroup answers the keys whose hashes are hs (at most batchGroup).
// Key j's search is the sequence of node searches Lookup makes, in the same
// order; each round first loads, for every key still searching, the epoch
// and both buckets of its next node, and then decides each of those node
// searches as Lookup's fast path does (or finishes it with the full search)
// before the next round reads anything. So every node search of a key ends
// before the next one of that key begins, which is all grow.go's argument
// asks of the order.
func (g *Growing) lookupGroup(hs []uint64, found []bool) {
	t := g.tree.Load()
	var (
		ps        [batchGroup]placed
		nodes     [batchGroup][growMaxDepth + 1]*growNode
		next      [batchGroup]int // the node key j searches next, counting down to the root; -1 when done
		e, w1, w2 [batchGroup]uint64
	)
	for j, h := range hs {
		ps[j] = g.place(h)
		next[j] = t.nodesOf(ps[j].path, &nodes[j]) - 1
		found[j] = false
	}
	for searching := len(hs); searching > 0; {
		for j := range hs {
			if i := next[j]; i >= 0 {
				f := &nodes[j][i].f
				e[j] = f.t.epoch.Load() // before the buckets, as in Lookup
				w1[j], w2[j] = f.t.words[ps[j].b1].Load(), f.t.words[ps[j].b2].Load()
			}
		}
		for j := range hs {
			i := next[j]
			if i < 0 {
				continue
			}
			p := &ps[j]
			hit := nodes[j][i].f.decide(p.b1, p.b2, p.fp, e[j], w1[j], w2[j])
			switch {
			case hit:
				found[j] = true
				next[j] = -1
				searching--
			case i == 0:
				next[j] = -1
				searching--
			default:
				next[j] = i - 1
			}
		}
	}
}

// walk calls fn for every node of the tree t, parents before children.
func (t *growTree) walk(fn func(*growNode)) {
	var stack [growMaxDepth + 2]*growNode
	stack[0] = t.root
	for k := 1; k > 0; {
		k--
		n := stack[k]
		fn(n)
		for c := len(n.kids) - 1; c >= 0; c-- {
			if kid := n.kids[c].Load(); kid != nil {
				stack[k] = kid
				k++
			}
		}
	}
}

// size returns the fingerprints stored (clamped to the slots, like
// Filter.Len) and the slots of all nodes, in one walk of the tree (Len and
// LoadFactor); 0, 0 for a zero Growing.
func (g *Growing) size() (n, c int) {
	if g.m0 == 0 {
		return 0, 0
	}
	g.tree.Load().walk(func(x *growNode) {
		n += x.f.Len()
		c += x.f.Cap()
	})
	return min(n, c), c
}

// Len returns the number of fingerprints stored: the sum of the nodes'
// Len, clamped to [0, Cap()] like Filter.Len.
func (g *Growing) Len() int {
	n, _ := g.size()
	return n
}

// Cap returns the number of fingerprint slots in all nodes.
func (g *Growing) Cap() int {
	if g.m0 == 0 {
		return 0
	}
	c := 0
	g.tree.Load().walk(func(x *growNode) { c += x.f.Cap() })
	return c
}

// LoadFactor returns Len()/Cap(), or 0 for a zero Growing.
func (g *Growing) LoadFactor() float64 {
	n, c := g.size()
	if c == 0 {
		return 0
	}
	return float64(n) / float64(c)
}

// Nodes returns the number of nodes (fixed tables of NodeCapacity keys)
// and the depth of the deepest one (0 while the filter has not grown).
func (g *Growing) Nodes() (nodes, depth int) {
	if g.m0 == 0 {
		return 0, 0
	}
	g.tree.Load().walk(func(x *growNode) {
		nodes++
		depth = max(depth, int(x.depth))
	})
	return nodes, depth
}

// FalsePositiveRate returns the expected rate at which Lookup reports a
// never-inserted key present, from the load of every node: a key's path
// passes through a given node at depth d with probability 2^-d, and each
// node on it adds the fixed filter's 8·α/(2^f-1) at the node's own load α.
// A tree whose nodes above its deepest level are full, d+1 levels deep,
// has about d+1 times the rate of one full fixed filter. It walks the tree.
func (g *Growing) FalsePositiveRate() float64 {
	if g.m0 == 0 {
		return 0
	}
	r := 0.0
	g.tree.Load().walk(func(x *growNode) {
		r += x.f.LoadFactor() / float64(uint64(1)<<x.depth)
	})
	return r * 2 * slotsPerBucket / float64(uint64(1)<<g.bits-1)
}

// NodeCapacity returns the number of keys each node is sized for: the
// capacity the filter started with (at least 15,564), and what each growth
// step adds.
func (g *Growing) NodeCapacity() int { return int(nodeKeys(g.m0)) }

// Reset removes every fingerprint and shrinks the filter back to one node.
// It may run concurrently with other operations; those that overlap it may
// or may not see their effects survive.
func (g *Growing) Reset() {
	if g.m0 == 0 {
		return
	}
	g.tree.Store(g.newTree())
}

// Mode returns the filter's synchronization mode.
func (g *Growing) Mode() Mode { return g.mode }

// FingerprintBits returns the fingerprint size in bits (0 for a zero
// Growing).
func (g *Growing) FingerprintBits() int { return int(g.bits) }

// Seed returns the hash seed, as Filter.Seed.
func (g *Growing) Seed() uint64 { return g.seed }
