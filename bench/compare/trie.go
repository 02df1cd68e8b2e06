package compare

import "math/bits"

// Trie is the erasable bit-labelled trie of a paper on cache penetration
// (in Chinese; a prefix tree proposed there as an exact, deletable replacement for a Bloom
// filter in front of a database), reproduced as the paper describes it:
//
//   - Construction: nodes are created only for prefixes that occur (the
//     "dynamic" trie, no R-way arrays of mostly nil links). Each node labels
//     its children with a bit array, one bit per possible byte, instead of
//     storing characters: bit c is set when a child for byte c exists, and
//     the children are kept packed in label order, so child c is
//     kids[popcount(bits below c)]. Inserting walks the key byte by byte,
//     creating the missing child and setting its bit, and sets the end mark
//     of the node of the last byte.
//   - Lookup walks the same path; a missing child (bit clear) is a miss, and
//     at the last byte the end mark decides. It is exact: no false positives.
//   - Delete clears the end mark; a node left with no children (its bit
//     array all zero) and no end mark is removed from its parent, whose bit
//     is cleared, and so on upwards while a parent is left empty.
//
// Not safe for concurrent use (the paper's structure has no concurrency
// control; the benchmark uses it from one goroutine).
type Trie struct {
	root trieNode
	n    int
}

type trieNode struct {
	bits [4]uint64   // bit c set: a child labelled with byte c exists
	kids []*trieNode // the children in label order
	end  bool        // a key ends here
}

// rank returns the index in kids of child c and whether it exists.
func (nd *trieNode) rank(c byte) (int, bool) {
	w, b := c>>6, uint64(1)<<(c&63)
	r := bits.OnesCount64(nd.bits[w] & (b - 1))
	for i := range w {
		r += bits.OnesCount64(nd.bits[i])
	}
	return r, nd.bits[w]&b != 0
}

func (nd *trieNode) empty() bool {
	return nd.bits[0]|nd.bits[1]|nd.bits[2]|nd.bits[3] == 0
}

// Insert adds key and reports whether it was new. The empty key is stored at
// the root.
func (t *Trie) Insert(key []byte) bool {
	nd := &t.root
	for _, c := range key {
		r, ok := nd.rank(c)
		if !ok {
			nd.kids = append(nd.kids, nil)
			copy(nd.kids[r+1:], nd.kids[r:])
			nd.kids[r] = &trieNode{}
			nd.bits[c>>6] |= 1 << (c & 63)
		}
		nd = nd.kids[r]
	}
	if nd.end {
		return false
	}
	nd.end = true
	t.n++
	return true
}

// Lookup reports whether key is in the trie (exactly).
func (t *Trie) Lookup(key []byte) bool {
	nd := &t.root
	for _, c := range key {
		r, ok := nd.rank(c)
		if !ok {
			return false
		}
		nd = nd.kids[r]
	}
	return nd.end
}

// Delete removes key and reports whether it was there, pruning the nodes
// that are left with neither children nor an end mark.
func (t *Trie) Delete(key []byte) bool {
	// The path is at most len(key)+1 nodes; keys here are short, so a
	// small stack array avoids allocating.
	var stack [16]*trieNode
	path := stack[:0]
	nd := &t.root
	for _, c := range key {
		r, ok := nd.rank(c)
		if !ok {
			return false
		}
		path = append(path, nd)
		nd = nd.kids[r]
	}
	if !nd.end {
		return false
	}
	nd.end = false
	t.n--
	for i := len(key) - 1; i >= 0 && !nd.end && nd.empty(); i-- {
		parent, c := path[i], key[i]
		r, _ := parent.rank(c)
		copy(parent.kids[r:], parent.kids[r+1:])
		parent.kids[len(parent.kids)-1] = nil
		parent.kids = parent.kids[:len(parent.kids)-1]
		parent.bits[c>>6] &^= 1 << (c & 63)
		nd = parent
	}
	return true
}

// Len returns the number of keys.
func (t *Trie) Len() int { return t.n }

// nodes counts the nodes below and including the root (tests).
func (t *Trie) nodes() int {
	var count func(*trieNode) int
	count = func(nd *trieNode) int {
		n := 1
		for _, k := range nd.kids {
			n += count(k)
		}
		return n
	}
	return count(&t.root)
}
