package cuckoo

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// This file implements a lock-free multi-word compare-and-swap (K-CAS) over
// the words of a table, after Harris, Fraser and Pratt, "A Practical
// Multi-Word Compare-and-Swap Operation" (DISC 2002), with the descriptor reuse
// of Arbel-Raviv and Brown, "Reuse, don't Recycle" (DISC 2017).
//
// Words. A word whose two top bits are clear holds a plain value (a bucket).
// A word with tagKCAS set refers to a K-CAS descriptor, one with tagRDCSS set
// refers to the RDCSS part of a descriptor. A reference is
//
//	tag | seq<<refSeqShift | slot
//
// where slot indexes the descriptor table and seq is the descriptor's
// sequence number for the operation that installed the reference. No pointer
// is ever hidden in an integer: the garbage collector sees the descriptor
// table through ordinary pointers, and the table is never freed while the
// kcasTable is alive.
//
// Descriptors. A goroutine leases a descriptor slot for the whole of one
// operation (a relocation leases one for its whole path, migrate.go) and
// returns it afterwards, through a per-P cache (descLease). Reusing a slot
// bumps its sequence number before any field is rewritten, so anyone
// holding a reference with the old number can tell that its operation is
// over. Fields are read with the seqlock pattern: load the state word, the
// fields, the state word again; if both loads show the reference's
// sequence number the fields belong to that operation.
//
// Field writes. The leaseholder bumps the sequence (state for the K-CAS
// part, rseq for the RDCSS part) with an atomic store, writes the fields
// with setField, then publishes the descriptor with the CAS that installs
// its reference. On amd64 built by gc (race builds excepted) setField is a
// plain store, elsewhere an atomic one: a sequentially consistent store is
// an XCHG on amd64, and the field stores were most of a K-CAS's locked
// instructions.
//
// Claim: a seqlock read of a reference with sequence s that sees s in both
// of its loads of the sequence word returns the field values written for
// use s. Proof, for amd64 (x86-TSO) built by gc: the compiler keeps memory
// operations in program order around atomic operations (its SSA threads
// every store and atomic through one memory chain, and its dead-store pass
// stops at any other memory operation), so the processor receives, for
// each use, the sequence store, then the field stores, then the CAS that
// publishes a reference. A reader holds a reference with sequence s only
// because it loaded it from a word, where a CAS placed it after use s's
// field stores: the owner's install, or a helper's completion of an RDCSS
// whose fields it had read and validated, which itself came after the
// owner's. Under TSO stores become visible in program order and loads are
// not reordered with other loads, so the reader's field loads, after its
// load of the reference, return use s's values or later ones. A later one
// was written by use s+1 or later, whose sequence store became visible
// before it; the reader's second sequence load, later in its program
// order, then returns more than s and the read is rejected. Word-sized
// plain stores on amd64 are single MOVs to aligned words, which never
// tear. Plain stores may pass the owner's later loads of table words;
// that is harmless, since nobody reads the fields before the publishing
// CAS, and a locked instruction drains the store buffer.
// The Go memory model calls a plain store racing with an atomic load a
// data race, so this argument rests on gc and x86, not on the model:
// other processors, whose plain stores may become visible out of order,
// other compilers, and race builds keep the atomic store.
// TestDescriptorReuseRejectsStaleRead places a read between use s+1's
// field writes and its publication; TestDescriptorSeqlockUnderReuse reads
// descriptors found in words while other goroutines reuse their slots.
//
// Protocol (HFP). The K-CAS descriptor lists up to maxK word indices in
// ascending order with their expected (old) and new values, and a state word
// seq<<2|status, status one of undecided, succeeded, failed.
//
//  1. Phase 1: for each word in order, install a reference to the descriptor
//     if the word holds its old value. The install is an RDCSS: it places the
//     K-CAS reference only if the descriptor is still undecided, so a helper
//     that lags behind cannot install a reference to an operation that has
//     already finished. A word holding another operation's reference is
//     helped first. A word holding neither the old value nor our reference
//     decides failure.
//  2. Decide: CAS the state from (seq, undecided) to (seq, succeeded or
//     failed). This is the linearization point. Because the sequence number is
//     part of the compared value, a helper of an older use of the slot cannot
//     decide a newer operation.
//  3. Phase 2: replace every reference to the descriptor by the new value
//     (succeeded) or the old value (failed). Before that, an RDCSS reference
//     of a lagging helper that targets this descriptor is completed, which
//     (the state being decided) restores the old value; otherwise the
//     helper's own completion could install a K-CAS reference after phase 2
//     had passed the word, leaving a reference to a slot that may already be
//     reused. Once the owner has finished phase 2, no word holds or can come
//     to hold a reference to this use of the descriptor: any later RDCSS for
//     it reads a decided (or reused) state and restores the old value. Only
//     then does the owner release the slot.
//
// Reads never block and never write: a reader that finds a K-CAS reference
// reads the descriptor and returns the new value if the state is succeeded
// and the old value otherwise; an RDCSS reference resolves to its expected old
// value (the RDCSS has not taken effect yet). If the descriptor was reused in
// the meantime the reference is gone from the word and the reader re-reads.
// Writers that find a reference help the operation to completion (Insert and
// Delete through helpWord) so that one stalled goroutine cannot block others:
// the algorithm is lock-free.

const (
	tagKCAS  = uint64(1) << 63
	tagRDCSS = uint64(1) << 62
	tagMask  = tagKCAS | tagRDCSS

	refSlotBits = 16
	refSlotMask = 1<<refSlotBits - 1
	refSeqShift = refSlotBits
	refSeqMask  = 1<<(payloadBits-refSlotBits) - 1 // 46 bits of sequence

	maxK = 4 // words per K-CAS

	statusUndecided = 0
	statusSucceeded = 1
	statusFailed    = 2

	maxDescs = 1 << refSlotBits
)

// kcasDesc is one slot of the descriptor table: a K-CAS descriptor and the
// RDCSS descriptor its leaseholder uses to install references (its own, or
// another operation's when helping). Every field is written only by the
// goroutine holding the lease and read by anyone through a seqlock read.
type kcasDesc struct {
	state atomic.Uint64 // seq<<2 | status of the K-CAS part
	n     atomic.Uint64 // number of words
	idx   [maxK]atomic.Uint64
	old   [maxK]atomic.Uint64
	new   [maxK]atomic.Uint64

	rseq atomic.Uint64 // sequence of the RDCSS part
	rref atomic.Uint64 // the K-CAS reference the RDCSS installs
	ridx atomic.Uint64 // the word it targets
	rold atomic.Uint64 // the value the word must hold

	_ [64 - (6+3*maxK)*8%64]byte // pad to whole cache lines
}

// descPool is the descriptor table and its free lists: a slotPool (pool.go)
// of at most maxDescs descriptors, named by slot = index. Chunks are added
// when more goroutines than ever before run a K-CAS at once, so steady
// state allocates nothing.
//
// The free list is split into shards, each goroutine leasing from and
// releasing to the shard of its stack (shard.go), stealing from the others
// only when its own is empty; in non-race builds the per-P lease cache
// (descLease) sits in front of it, so the free lists are touched only when
// a P's cache is empty or a garbage collection emptied it.
type descPool struct {
	pool slotPool[kcasDesc]
}

const descShardBits = 3

func newDescPool() *descPool {
	p := new(descPool)
	p.pool.init(1<<descShardBits, maxDescs, nil)
	return p
}

func (p *descPool) desc(slot uint32) *kcasDesc { return p.pool.item(slot + 1) }

// lease takes a free slot.
func (p *descPool) lease() uint32 { return p.pool.lease(stackShard(descShardBits)) - 1 }

// release returns slot to the free list.
func (p *descPool) release(slot uint32) { p.pool.release(stackShard(descShardBits), slot+1) }

// descriptors is the descriptor table of every kcasTable in the program.
// Sharing one table across filters keeps a filter's fixed size small (a
// thousand small filters need no thousand tables) and keeps the table warm.
// It is safe because a reference names one use of one slot (its sequence
// number): a word of a table can only ever hold references installed by
// operations on that table, so whoever finds one knows which table the
// descriptor's indices refer to.
var descriptors = newDescPool()

// descLease is the lease of one descriptor slot. Leases are cached per P in
// leaseCache, so that in steady state leasing and returning a slot writes
// only the current P's cache, no cache line shared with other cores (a
// shared free-list head was a bottleneck at many goroutines).
//
// A sync.Pool drops what it holds at garbage collection. A dropped lease is
// garbage, and its cleanup (runtime.AddCleanup) returns its slot to the
// free list, so no slot is lost: the table holds at most the leases in use
// plus those cached, plus those awaiting their cleanup. A lease is held in a
// variable for the whole operation (release is a method on it), so it
// cannot be collected, and its slot freed, while in use.
//
// Race builds skip the cache: the race detector's sync.Pool drops a quarter
// of what it is given on purpose, which would send most slots the long way
// round through the garbage collector. They lease from the free list and
// return to it directly, as every build does when it creates a lease.
type descLease struct{ slot uint32 }

var leaseCache sync.Pool // of *descLease

// leaseDesc returns a lease of a descriptor slot whose last operation is
// over.
func leaseDesc() *descLease {
	if raceEnabled {
		return &descLease{slot: descriptors.lease()}
	}
	if l, ok := leaseCache.Get().(*descLease); ok {
		return l
	}
	l := &descLease{slot: descriptors.lease()}
	runtime.AddCleanup(l, releaseSlot, l.slot)
	return l
}

// release ends the lease. The caller must not use the slot afterwards.
func (l *descLease) release() {
	if raceEnabled {
		descriptors.release(l.slot) // no cleanup was registered
		return
	}
	leaseCache.Put(l)
}

// releaseSlot is the cleanup of a collected lease: its slot goes back to
// the free list.
func releaseSlot(slot uint32) { descriptors.release(slot) }

// descFieldsWritten, in race builds only, is called by the leaseholder of
// slot after it has written a descriptor's fields and before it publishes
// them (tests place a stale reader there).
var descFieldsWritten func(slot uint32)

// fieldsWritten calls descFieldsWritten, if set.
func fieldsWritten(slot uint32) {
	if h := descFieldsWritten; h != nil {
		h(slot)
	}
}

// kcasTable is an array of words supporting atomic loads, single-word CAS
// and K-CAS. The filter's bucket table is one.
type kcasTable struct {
	words []atomic.Uint64
	// vers are named by K-CAS indices versionBase and up: the version
	// words of a packed table (packed.go), or the wrap epochs of a
	// one-word table (a fixed filter's one-word layouts, a Growing
	// filter's tables), one per stripe of buckets (twophase.go, "Counter
	// wraps"; epochOf).
	vers []atomic.Uint64
	// verMask is len(vers)-1 (a power of two minus one), set with vers by
	// setVers.
	verMask uint64
}

// setVers makes v (a power of two of words) the table's vers.
func (t *kcasTable) setVers(v []atomic.Uint64) {
	if len(v)&(len(v)-1) != 0 || len(v) == 0 {
		panic("cuckoo: vers must be a power of two of words")
	}
	t.vers, t.verMask = v, uint64(len(v)-1)
}

// epochIdx returns the K-CAS index of the wrap epoch of bucket b's stripe
// (one-word layouts of a fixed filter): vers word b&verMask. verIdx names
// a packed table's version words through it.
func (t *kcasTable) epochIdx(b uint64) uint64 {
	return versionBase + b&t.verMask
}

// addWraps adds to op, for each of buckets i and j whose migration
// counter the step in op wraps (wrapI, wrapJ), one to the wrap epoch of
// the bucket's stripe: once when both wrap in one stripe, since a K-CAS
// names each word once (twophase.go, "Counter wraps"; a fixed filter's
// relocation step, a Growing table's move or delete).
func (t *kcasTable) addWraps(op *kcasOp, i uint64, wrapI bool, j uint64, wrapJ bool) {
	if wrapI {
		ei := t.epochIdx(i)
		e := t.load(ei)
		op.add(ei, e, e+1)
	}
	if wrapJ && !(wrapI && t.epochIdx(j) == t.epochIdx(i)) {
		ej := t.epochIdx(j)
		e := t.load(ej)
		op.add(ej, e, e+1)
	}
}

// epochOf returns the wrap epoch of bucket b's stripe, vers word
// b&verMask (verOf reaches a packed table's versions through it).
// Single-key lookups call it, so it indexes without a bounds check:
// b&verMask < len(vers) (setVers). BENCHMARKS.md, "Tuning
// constants".
func (t *kcasTable) epochOf(b uint64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.vers)), (b&t.verMask)*uint64(unsafe.Sizeof(t.vers[0]))))
}

// versIndex is the table's vers words (the wrap epochs of a one-word
// layout, the versions of a packed one) as a loop over many buckets
// indexes them (placeAndRead, pkReadGroup): the first word and verMask,
// which stay in registers across the loop (t's fields would be reloaded
// after each of the loop's stores, which might alias them), and no bounds
// check.
type versIndex struct {
	base unsafe.Pointer
	mask uint64
}

// versIndex returns t's vers as a versIndex.
func (t *kcasTable) versIndex() versIndex {
	return versIndex{unsafe.Pointer(unsafe.SliceData(t.vers)), t.verMask}
}

// of returns vers word i&mask, without a bounds check: i&mask < len(vers)
// (setVers). For a one-word layout's bucket b, of(b) is the wrap epoch of
// its stripe (epochOf); for a packed bucket, of(b>>1) is its version
// (verOf).
func (x versIndex) of(i uint64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Add(x.base, (i&x.mask)*uint64(unsafe.Sizeof(atomic.Uint64{}))))
}

// versionBase is the K-CAS index of the first vers word: vers word v is
// versionBase+v, above every bucket word, so versions and epochs are
// installed after the bucket words of a move.
const versionBase = 1 << 32

// word returns the word with index i: a word of the table or a vers word.
func (t *kcasTable) word(i uint64) *atomic.Uint64 {
	if i >= versionBase {
		return &t.vers[i-versionBase]
	}
	return &t.words[i]
}

// kcasOp is the argument of a K-CAS: n words with their expected and new
// values. Indices must be distinct; kcas sorts them.
type kcasOp struct {
	n   int
	idx [maxK]uint64
	old [maxK]uint64
	new [maxK]uint64
}

// add appends one word to the operation.
func (op *kcasOp) add(i, old, new uint64) {
	op.idx[op.n], op.old[op.n], op.new[op.n] = i, old, new
	op.n++
}

// kcasSnap is a consistent copy of a descriptor's K-CAS part. d is
// descriptors.desc(slot), kept so that help and rdcss need not look it up
// again: a slot's descriptor never moves (slotPool), so the pointer is
// what every later lookup would return.
type kcasSnap struct {
	ref  uint64
	slot uint32
	seq  uint64
	n    int
	d    *kcasDesc
	idx  [maxK]uint64
	old  [maxK]uint64
	new  [maxK]uint64
}

func kcasRef(slot uint32, seq uint64) uint64 {
	return tagKCAS | (seq&refSeqMask)<<refSeqShift | uint64(slot)
}

func rdcssRef(slot uint32, seq uint64) uint64 {
	return tagRDCSS | (seq&refSeqMask)<<refSeqShift | uint64(slot)
}

func refSlot(ref uint64) uint32 { return uint32(ref & refSlotMask) }
func refSeq(ref uint64) uint64  { return ref >> refSeqShift & refSeqMask }

// stateSeq extracts the sequence of a state word, truncated as in references.
func stateSeq(st uint64) uint64 { return st >> 2 & refSeqMask }

// snapKCAS reads the descriptor ref refers to. It returns the state word read
// last (valid with the snapshot) and false if the descriptor has moved on to
// another operation.
func (t *kcasTable) snapKCAS(ref uint64, s *kcasSnap) (uint64, bool) {
	slot, seq := refSlot(ref), refSeq(ref)
	d := descriptors.desc(slot)
	if stateSeq(d.state.Load()) != seq {
		return 0, false
	}
	n := d.n.Load()
	if n > maxK {
		return 0, false
	}
	s.ref, s.slot, s.seq, s.n, s.d = ref, slot, seq, int(n), d
	for i := 0; i < int(n); i++ {
		s.idx[i] = d.idx[i].Load()
		s.old[i] = d.old[i].Load()
		s.new[i] = d.new[i].Load()
	}
	st := d.state.Load()
	return st, stateSeq(st) == seq
}

// snapRDCSS reads the RDCSS part ref refers to: the K-CAS reference it
// installs, its word and the old value. ok is false if the part has been
// reused, in which case ref is no longer in any word.
func (t *kcasTable) snapRDCSS(ref uint64) (kref, idx, old uint64, ok bool) {
	slot, seq := refSlot(ref), refSeq(ref)
	d := descriptors.desc(slot)
	if d.rseq.Load()&refSeqMask != seq {
		return 0, 0, 0, false
	}
	kref, idx, old = d.rref.Load(), d.ridx.Load(), d.rold.Load()
	return kref, idx, old, d.rseq.Load()&refSeqMask == seq
}

// load returns the logical value of word i: the plain value it holds, or the
// value it holds once the operation it refers to is accounted for. It never
// writes and never waits for another goroutine.
func (t *kcasTable) load(i uint64) uint64 {
	hookRead(t, i)
	for {
		v := t.word(i).Load()
		if v&tagMask == 0 {
			return v
		}
		if r, ok := t.resolve(i, v); ok {
			return r
		}
	}
}

// loadWord is load for a word of the table (i below versionBase), for the
// callers that read one word at a time: a plain value is returned from
// one atomic load, and load runs, reading the word again, only when the
// word held a reference (cheaper than load's loop and word's test for
// versionBase).
func (t *kcasTable) loadWord(i uint64) uint64 {
	hookRead(t, i)
	if w := t.words[i].Load(); w&tagMask == 0 {
		return w
	}
	return t.load(i)
}

// resolve returns the logical value of word i, which was seen holding the
// reference v. ok is false if the reference has since left the word.
func (t *kcasTable) resolve(i, v uint64) (uint64, bool) {
	if v&tagRDCSS != 0 {
		// An RDCSS in flight has not changed the logical value yet.
		_, _, old, ok := t.snapRDCSS(v)
		return old, ok
	}
	var s kcasSnap
	st, ok := t.snapKCAS(v, &s)
	if !ok {
		return 0, false
	}
	for k := 0; k < s.n; k++ {
		if s.idx[k] == i {
			if st&3 == statusSucceeded {
				return s.new[k], true
			}
			return s.old[k], true
		}
	}
	return 0, false
}

// cas is a single-word CAS of a plain value. It fails if the word holds
// anything else, including a reference; callers then read again and, if they
// see a reference, help it with helpWord.
func (t *kcasTable) cas(i, old, new uint64) bool {
	hookWrite(t, i)
	return t.words[i].CompareAndSwap(old, new)
}

// helpWord helps the operation whose reference v was seen in a word to
// completion, so that the caller can retry its CAS.
func (t *kcasTable) helpWord(v uint64) {
	if v&tagRDCSS != 0 {
		t.completeRDCSSRef(v) // needs no descriptor of our own
		return
	}
	my := leaseDesc()
	t.helpWordWith(v, my.slot)
	my.release()
}

// kcas atomically replaces op.old[k] with op.new[k] at op.idx[k] for every k
// if every word holds its old value, and reports whether it did. Values must
// be plain (top two bits clear).
func (t *kcasTable) kcas(op *kcasOp) bool {
	my := leaseDesc()
	ok := t.kcasWith(op, my.slot)
	my.release()
	return ok
}

// kcasWith is kcas for a goroutine that holds the lease of descriptor slot:
// the operation runs in that slot, whose previous operation (if any) must
// be over.
func (t *kcasTable) kcasWith(op *kcasOp, slot uint32) bool {
	hookKCAS(t, op)
	// Ascending index order gives all operations one install order, which
	// is what makes helping terminate (HFP).
	for a := 1; a < op.n; a++ {
		for b := a; b > 0 && op.idx[b] < op.idx[b-1]; b-- {
			op.idx[b], op.idx[b-1] = op.idx[b-1], op.idx[b]
			op.old[b], op.old[b-1] = op.old[b-1], op.old[b]
			op.new[b], op.new[b-1] = op.new[b-1], op.new[b]
		}
	}
	d := descriptors.desc(slot)
	seq := d.state.Load()>>2 + 1
	// Bump the sequence before rewriting any field (seqlock writer).
	d.state.Store(seq<<2 | statusUndecided)
	setField(&d.n, uint64(op.n))
	s := kcasSnap{ref: kcasRef(slot, seq), slot: slot, seq: seq & refSeqMask, n: op.n, d: d}
	for k := 0; k < op.n; k++ {
		setField(&d.idx[k], op.idx[k])
		setField(&d.old[k], op.old[k])
		setField(&d.new[k], op.new[k])
		s.idx[k], s.old[k], s.new[k] = op.idx[k], op.old[k], op.new[k]
	}
	if raceEnabled {
		fieldsWritten(slot)
	}
	// The owner installs the first word with a plain CAS. RDCSS exists to
	// stop a helper from installing a reference after the operation was
	// decided; before the first reference is in place no other goroutine
	// can know of the operation, so nobody can have decided it, and this
	// install cannot be late. If the first word does not hold its old
	// value the operation fails without ever having been visible.
	i0, old0 := s.idx[0], s.old[0]
	w0 := t.word(i0)
	for {
		v := w0.Load()
		if v == old0 {
			if w0.CompareAndSwap(old0, s.ref) {
				break
			}
			continue
		}
		if v&tagMask == 0 {
			return false
		}
		t.helpWordWith(v, slot)
	}
	return t.help(&s, slot, 1)
}

// help runs the HFP protocol for the operation in s, using the RDCSS part of
// slot my for its installs, starting phase 1 at word from (the words before
// it are known to hold the operation's reference). It returns the
// operation's outcome; a helper whose snapshot is stale learns nothing and
// gets false.
func (t *kcasTable) help(s *kcasSnap, my uint32, from int) bool {
	d := s.d
	if st := d.state.Load(); stateSeq(st) == s.seq && st&3 == statusUndecided {
		status := uint64(statusSucceeded)
	install:
		for k := from; k < s.n; k++ {
			for {
				v := t.rdcss(my, s, k)
				if v == s.ref {
					break // installed, by us or a helper
				}
				if v&tagKCAS != 0 {
					t.helpWordWith(v, my)
					continue
				}
				if v != s.old[k] {
					status = statusFailed
					break install
				}
				break
			}
		}
		d.state.CompareAndSwap(st, st&^3|status)
	}
	st := d.state.Load()
	if stateSeq(st) != s.seq {
		return false
	}
	ok := st&3 == statusSucceeded
	for k := 0; k < s.n; k++ {
		t.unhook(s, k, ok)
	}
	return ok
}

// helpWordWith is helpWord for a goroutine that already holds a lease.
func (t *kcasTable) helpWordWith(v uint64, my uint32) {
	if v&tagRDCSS != 0 {
		t.completeRDCSSRef(v)
		return
	}
	var s kcasSnap
	if _, ok := t.snapKCAS(v, &s); ok {
		t.help(&s, my, 0)
	}
}

// unhook is phase 2 for word k of s: it removes every reference to the
// operation from the word, first completing a lagging helper's RDCSS that
// targets it (see the protocol comment above).
func (t *kcasTable) unhook(s *kcasSnap, k int, ok bool) {
	i := s.idx[k]
	final := s.old[k]
	if ok {
		final = s.new[k]
	}
	w := t.word(i)
	for {
		v := w.Load()
		switch {
		case v == s.ref:
			if w.CompareAndSwap(v, final) {
				return
			}
		case v&tagRDCSS != 0:
			kref, _, _, valid := t.snapRDCSS(v)
			if !valid {
				continue
			}
			if kref != s.ref {
				return
			}
			t.completeRDCSSRef(v)
		default:
			return
		}
	}
}

// rdcss installs s.ref into word s.idx[k] if the word holds s.old[k] and the
// operation is still undecided (Harris-Fraser-Pratt's RDCSS, with the
// operation's state word as the control address). It returns the value it
// found: s.old[k] if it attempted the install, otherwise a plain value or a
// K-CAS reference that stood in the way.
func (t *kcasTable) rdcss(my uint32, s *kcasSnap, k int) uint64 {
	i, old := s.idx[k], s.old[k]
	d := s.d // my's descriptor when the owner installs its own operation
	if my != s.slot {
		d = descriptors.desc(my)
	}
	rseq := d.rseq.Load() + 1
	d.rseq.Store(rseq)
	setField(&d.rref, s.ref)
	setField(&d.ridx, i)
	setField(&d.rold, old)
	if raceEnabled {
		fieldsWritten(my)
	}
	ref := rdcssRef(my, rseq)
	w := t.word(i)
	for {
		v := w.Load()
		if v&tagRDCSS != 0 {
			t.completeRDCSSRef(v)
			continue
		}
		if v != old {
			return v
		}
		if w.CompareAndSwap(old, ref) {
			break
		}
	}
	t.completeRDCSS(s.d, ref, s.ref, i, old)
	return old
}

// completeRDCSSRef completes the RDCSS that ref refers to, if it is still in
// flight.
func (t *kcasTable) completeRDCSSRef(ref uint64) {
	kref, i, old, ok := t.snapRDCSS(ref)
	if ok {
		t.completeRDCSS(descriptors.desc(refSlot(kref)), ref, kref, i, old)
	}
}

// completeRDCSS replaces ref in word i by the K-CAS reference kref if that
// operation is still undecided, and by old otherwise. d is kref's
// descriptor, descriptors.desc(refSlot(kref)).
func (t *kcasTable) completeRDCSS(d *kcasDesc, ref, kref, i, old uint64) {
	st := d.state.Load()
	if st&3 == statusUndecided && stateSeq(st) == refSeq(kref) {
		t.word(i).CompareAndSwap(ref, kref)
	} else {
		t.word(i).CompareAndSwap(ref, old)
	}
}
