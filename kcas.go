package cuckoo

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Lock-free multi-word CAS (K-CAS) on a table's words: Harris, Fraser and Pratt
// (DISC 2002); descriptor reuse after Arbel-Raviv and Brown (DISC 2017).
//
// A word with both top bits clear holds a plain value, else a reference
// tag | seq<<refSeqShift | slot to use seq of the K-CAS or RDCSS part (tag)
// of descriptor slot, in a table never freed, so no pointer hides in an
// integer. Each use of a part bumps its sequence (state, or rseq) before it
// writes the fields, and readers check it before and after (setField).
//
// Protocol, over a descriptor's words (ascending) and state (kcasDesc):
//
//  1. Install: for each word in order, place the K-CAS reference if the word
//     holds its old value, by an RDCSS that succeeds only while the state is
//     undecided, so a lagging helper cannot install a reference to a decided
//     operation. Another operation's reference is helped first; any other
//     value decides failure.
//  2. Decide: CAS the state from (seq, undecided) to (seq, succeeded or
//     failed): the linearization point. seq is in the compared value, so a
//     helper of an older use cannot decide a newer one.
//  3. Unhook: replace each reference by the new value (succeeded) or the old
//     one (failed), first completing a lagging helper's RDCSS that targets
//     this use, which (the state being decided) restores the old value.
//     Claim: after the owner's unhook no word holds or can come to hold a
//     reference to this use, so the slot may be reused. Proof: every
//     reference placed was removed, and any later RDCSS for this use reads a
//     decided or reused state and puts back the old value.
//
// Reads never block or write (load); writers that meet a reference help it
// to completion (helpWord): the algorithm is lock-free.

const (
	tagKCAS  = uint64(1) << 63
	tagRDCSS = uint64(1) << 62
	tagMask  = tagKCAS | tagRDCSS

	refSlotBits = 16
	refSlotMask = 1<<refSlotBits - 1
	refSeqShift = refSlotBits
	refSeqMask  = 1<<(payloadBits-refSlotBits) - 1 // 46 bits of sequence

	maxK          = 4 // words per K-CAS
	maxDescs      = 1 << refSlotBits
	descShardBits = 3 // log2 of the descriptor pool's free-list shards

	statusUndecided = 0
	statusSucceeded = 1
	statusFailed    = 2
)

// kcasDesc is one descriptor slot: the K-CAS part and the RDCSS part its
// leaseholder uses for installs (its own or, helping, another's). Only the
// leaseholder writes it; anyone reads it by seqlock.
type kcasDesc struct {
	state atomic.Uint64 // seq<<2 | status
	n     atomic.Uint64
	idx   [maxK]atomic.Uint64
	old   [maxK]atomic.Uint64
	new   [maxK]atomic.Uint64

	rseq atomic.Uint64
	rref atomic.Uint64              // the K-CAS reference the RDCSS installs
	ridx atomic.Uint64              // the word it targets
	rold atomic.Uint64              // the value that word must hold
	_    [64 - (6+3*maxK)*8%64]byte // whole cache lines
}

// descriptors serves every kcasTable (a reference names one use of one slot):
// slot s is item s+1 of a slotPool, free lists sharded by stack (shard.go).
var descriptors = newDescPool()

type descPool struct{ pool slotPool[kcasDesc] }

func newDescPool() *descPool {
	return &descPool{slotPool[kcasDesc]{heads: make([]poolHead, 1<<descShardBits), limit: maxDescs}}
}

func (p *descPool) desc(slot uint32) *kcasDesc { return p.pool.item(slot + 1) }
func (p *descPool) lease() uint32              { return p.pool.lease(stackShard(descShardBits)) - 1 }
func (p *descPool) release(slot uint32)        { p.pool.release(stackShard(descShardBits), slot+1) }

// descLease is a goroutine's lease of a descriptor slot for one operation,
// cached per P in leaseCache so that leasing writes no line shared with other
// cores. A lease sync.Pool drops is garbage, and its cleanup returns the slot
// (a lease in use is held in a variable). Race builds bypass the cache (their
// sync.Pool drops a quarter of its items), and their leases stay on the stack.
type descLease struct {
	slot uint32
	d    *kcasDesc // descriptors.desc(slot), from the lease's first kcasWith
}

var leaseCache sync.Pool // of *descLease

func leaseDesc() *descLease {
	if raceEnabled {
		return &descLease{slot: descriptors.lease()}
	}
	if l, ok := leaseCache.Get().(*descLease); ok {
		return l
	}
	l := &descLease{slot: descriptors.lease()}
	runtime.AddCleanup(l, descriptors.release, l.slot)
	return l
}

// release ends the lease; the caller must not use the slot afterwards.
func (l *descLease) release() {
	if raceEnabled {
		descriptors.release(l.slot)
		return
	}
	leaseCache.Put(l)
}

// setField writes a descriptor field: a plain store on amd64 built by gc, else
// atomically (race builds must not race a plain store with atomic loads). Claim:
// a seqlock read that sees s in both sequence loads returns the fields of use s.
// Proof (amd64, gc): gc keeps memory operations in program order around atomics
// (one SSA memory chain; dead-store elimination stops at any other memory
// operation), so the processor gets, per use, the sequence store, the field
// stores, then the publishing CAS. A reader holds a reference with seq s only
// because a CAS put it in a word after use s's field stores (the owner's install,
// or a helper completing an RDCSS whose fields it validated). Under x86-TSO
// stores become visible in program order and loads are not reordered with loads,
// so the reader's field loads return use s's values or later ones; a later one
// belongs to a use > s whose sequence store became visible first, so the second
// sequence load rejects the read. Aligned word stores do not tear. Tests:
// TestDescriptorReuseRejectsStaleRead, TestDescriptorSeqlockUnderReuse.
func setField(p *atomic.Uint64, v uint64) {
	if runtime.GOARCH == "amd64" && runtime.Compiler == "gc" && !raceEnabled {
		*(*uint64)(unsafe.Pointer(p)) = v
	} else {
		p.Store(v)
	}
}

// descFieldsWritten, in race builds, runs between the writing of slot's
// fields and their publication (tests place a stale reader there).
var descFieldsWritten func(slot uint32)

func fieldsWritten(slot uint32) {
	if raceEnabled && descFieldsWritten != nil {
		descFieldsWritten(slot)
	}
}

// kcasTable is a word array with atomic loads, single-word CAS and K-CAS.
type kcasTable struct {
	words []atomic.Uint64
	// vers: a packed table's versions (packed.go), or a one-word table's
	// wrap epochs, one per stripe of buckets (twophase.go, "Counter wraps").
	vers    []atomic.Uint64
	verMask uint64 // len(vers)-1 (setVers)
}

// versionBase is the K-CAS index of vers word 0: above every bucket word, so
// a move installs its versions and epochs after its bucket words.
const versionBase = 1 << 32

func (t *kcasTable) setVers(v []atomic.Uint64) {
	if len(v)&(len(v)-1) != 0 || len(v) == 0 {
		panic("cuckoo: vers must be a power of two of words")
	}
	t.vers, t.verMask = v, uint64(len(v)-1)
}

func (t *kcasTable) epochIdx(b uint64) uint64 { return versionBase + b&t.verMask }

// addWraps makes op add one to the wrap epoch of bucket i if wrapI, j if wrapJ,
// once if shared: a K-CAS names a word once (twophase.go, "Counter wraps").
func (t *kcasTable) addWraps(op *kcasOp, i uint64, wrapI bool, j uint64, wrapJ bool) {
	wrapJ = wrapJ && !(wrapI && t.epochIdx(j) == t.epochIdx(i))
	for k, b := range [2]uint64{i, j} {
		if k == 0 && wrapI || k == 1 && wrapJ {
			e := t.load(t.epochIdx(b))
			op.add(t.epochIdx(b), e, e+1)
		}
	}
}

// epochOf returns vers word b&verMask (bucket b's wrap epoch; verOf uses it for
// packed versions) with no bounds check (BENCHMARKS.md, "Tuning constants").
func (t *kcasTable) epochOf(b uint64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.vers)), (b&t.verMask)*uint64(unsafe.Sizeof(t.vers[0]))))
}

// versIndex is vers for loops over many buckets (lookupGroup, pkLookupGroup):
// base and mask stay in registers; t's fields would reload after each store.
type versIndex struct {
	base unsafe.Pointer
	mask uint64
}

func (t *kcasTable) versIndex() versIndex {
	return versIndex{unsafe.Pointer(unsafe.SliceData(t.vers)), t.verMask}
}

// of returns vers word i&mask: in bounds, since mask = len(vers)-1.
func (x versIndex) of(i uint64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Add(x.base, (i&x.mask)*uint64(unsafe.Sizeof(atomic.Uint64{}))))
}

func (t *kcasTable) word(i uint64) *atomic.Uint64 {
	if i >= versionBase {
		return &t.vers[i-versionBase]
	}
	return &t.words[i]
}

// kcasOp, a K-CAS's argument: n distinct words (kcas sorts them), old and new values.
type kcasOp struct {
	n   int
	idx [maxK]uint64
	old [maxK]uint64
	new [maxK]uint64
}

func (op *kcasOp) add(i, old, new uint64) {
	op.idx[op.n], op.old[op.n], op.new[op.n] = i, old, new
	op.n++
}

// kcasSnap is a consistent copy of a descriptor's K-CAS part; d is descriptors.desc(slot).
type kcasSnap struct {
	kcasOp
	ref  uint64
	slot uint32
	seq  uint64
	d    *kcasDesc
}

func makeRef(tag uint64, slot uint32, seq uint64) uint64 {
	return tag | (seq&refSeqMask)<<refSeqShift | uint64(slot)
}
func refSlot(ref uint64) uint32 { return uint32(ref & refSlotMask) }
func refSeq(ref uint64) uint64  { return ref >> refSeqShift & refSeqMask }
func stateSeq(st uint64) uint64 { return st >> 2 & refSeqMask }

// snapKCAS reads the K-CAS part ref names into s. It returns the state read
// last, and false if the descriptor has moved on to another use.
func (t *kcasTable) snapKCAS(ref uint64, s *kcasSnap) (uint64, bool) {
	slot, seq := refSlot(ref), refSeq(ref)
	d := descriptors.desc(slot)
	if stateSeq(d.state.Load()) != seq {
		return 0, false
	}
	n := int(min(d.n.Load(), maxK)) // every use writes n <= maxK; min keeps i provably in bounds
	s.ref, s.slot, s.seq, s.n, s.d = ref, slot, seq, n, d
	for i := 0; i < n; i++ {
		s.idx[i] = d.idx[i].Load()
		s.old[i] = d.old[i].Load()
		s.new[i] = d.new[i].Load()
	}
	st := d.state.Load()
	return st, stateSeq(st) == seq
}

// snapRDCSS reads the RDCSS part ref names; ok is false if it was reused
// (then ref is in no word any more).
func (t *kcasTable) snapRDCSS(ref uint64) (kref, idx, old uint64, ok bool) {
	slot, seq := refSlot(ref), refSeq(ref)
	d := descriptors.desc(slot)
	if d.rseq.Load()&refSeqMask != seq {
		return 0, 0, 0, false
	}
	kref, idx, old = d.rref.Load(), d.ridx.Load(), d.rold.Load()
	return kref, idx, old, d.rseq.Load()&refSeqMask == seq
}

// load returns the logical value of word i: a K-CAS reference resolves by
// its state, an RDCSS reference to its old value (it has not taken effect),
// and a reference that has left the word (reused) makes it read again.
func (t *kcasTable) load(i uint64) uint64 {
	hookRead(t, i)
	for {
		v := t.word(i).Load()
		if v&tagMask == 0 {
			return v
		}
		if v&tagRDCSS != 0 {
			if _, _, old, ok := t.snapRDCSS(v); ok {
				return old
			}
			continue
		}
		var s kcasSnap
		st, ok := t.snapKCAS(v, &s)
		for k := 0; ok && k < s.n; k++ {
			if s.idx[k] == i {
				if st&3 == statusSucceeded {
					return s.new[k]
				}
				return s.old[k]
			}
		}
	}
}

// loadWord is load for a table word: one atomic load when the word is plain.
func (t *kcasTable) loadWord(i uint64) uint64 {
	hookRead(t, i)
	if w := t.words[i].Load(); w&tagMask == 0 {
		return w
	}
	return t.load(i)
}

// cas is a single-word CAS of a plain value; it fails on a reference, which
// the caller then helps (helpWord) before retrying. i, a bucket's, is in bounds.
func (t *kcasTable) cas(i, old, new uint64) bool {
	hookWrite(t, i)
	return wordAt(t.words, i).CompareAndSwap(old, new)
}

func (t *kcasTable) helpWord(v uint64) {
	if v&tagRDCSS != 0 {
		t.completeRDCSSRef(v) // needs no descriptor of our own
		return
	}
	my := leaseDesc()
	t.helpWordWith(v, my.slot)
	my.release()
}

// kcas atomically replaces op.old[k] by op.new[k] at op.idx[k] for every k
// if every word holds its old value (all plain), and reports whether it did.
func (t *kcasTable) kcas(op *kcasOp) bool {
	my := leaseDesc()
	ok := t.kcasWith(&kcasSnap{kcasOp: *op}, my)
	my.release()
	return ok
}

// kcasWith is kcas of s's op in lease my's slot (its last use over); it fills in s.
func (t *kcasTable) kcasWith(s *kcasSnap, my *descLease) bool {
	hookKCAS(t, &s.kcasOp)
	// One install order for all operations makes helping terminate.
	for a := 1; a < s.n; a++ {
		for b := a; b > 0 && s.idx[b] < s.idx[b-1]; b-- {
			s.idx[b], s.idx[b-1] = s.idx[b-1], s.idx[b]
			s.old[b], s.old[b-1] = s.old[b-1], s.old[b]
			s.new[b], s.new[b-1] = s.new[b-1], s.new[b]
		}
	}
	if my.d == nil {
		my.d = descriptors.desc(my.slot)
	}
	slot, d := my.slot, my.d
	seq := d.state.Load()>>2 + 1
	d.state.Store(seq<<2 | statusUndecided) // before any field (seqlock)
	setField(&d.n, uint64(s.n))
	for k := 0; k < s.n; k++ {
		setField(&d.idx[k], s.idx[k])
		setField(&d.old[k], s.old[k])
		setField(&d.new[k], s.new[k])
	}
	fieldsWritten(slot)
	s.ref, s.slot, s.seq, s.d = makeRef(tagKCAS, slot, seq), slot, seq&refSeqMask, d
	// The first word needs no RDCSS: until its reference is placed nobody
	// knows of the operation, so nobody can have decided it. If it does not
	// hold its old value, the operation fails unseen.
	w0 := t.word(s.idx[0])
	for v := w0.Load(); v != s.old[0] || !w0.CompareAndSwap(v, s.ref); v = w0.Load() {
		if v&tagMask != 0 {
			t.helpWordWith(v, slot)
		} else if v != s.old[0] {
			return false
		}
	}
	return t.help(s, slot, 1)
}

// help runs the protocol for s, installing with the RDCSS part of slot my
// from word from on (earlier words hold s.ref), and returns the outcome; a
// helper with a stale snapshot gets false.
func (t *kcasTable) help(s *kcasSnap, my uint32, from int) bool {
	d := s.d
	if st := d.state.Load(); stateSeq(st) == s.seq && st&3 == statusUndecided {
		status := uint64(statusSucceeded)
		for k := from; k < s.n && status == statusSucceeded; k++ {
			v := t.rdcss(my, s, k)
			for v != s.ref && v&tagKCAS != 0 {
				t.helpWordWith(v, my) // another operation's reference
				v = t.rdcss(my, s, k)
			}
			if v != s.ref && v != s.old[k] {
				status = statusFailed
			}
		}
		d.state.CompareAndSwap(st, st&^3|status)
	}
	st := d.state.Load()
	if stateSeq(st) != s.seq {
		return false
	}
	final := &s.old // step 3's values
	if st&3 == statusSucceeded {
		final = &s.new
	}
	for k := 0; k < s.n; k++ {
		if !t.word(s.idx[k]).CompareAndSwap(s.ref, final[k]) { // unhook's common case
			// Needed: a helper's RDCSS here, completed late, may put s.ref back
			// after this CAS failed (TestKCASUnhookCompletesALaggingRDCSS).
			t.unhook(s, k, final[k])
		}
	}
	return st&3 == statusSucceeded
}

// helpWordWith is helpWord for a goroutine holding the lease of slot my.
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

// unhook is step 3 for word k of s, final its value when no reference is left.
func (t *kcasTable) unhook(s *kcasSnap, k int, final uint64) {
	w := t.word(s.idx[k])
	for {
		v := w.Load()
		switch {
		case v == s.ref:
			if w.CompareAndSwap(v, final) {
				return
			}
		case v&tagRDCSS != 0:
			if kref, _, _, valid := t.snapRDCSS(v); valid && kref != s.ref {
				return // another operation's install
			}
			t.completeRDCSSRef(v) // ours, or reused (then it does nothing)
		default:
			return
		}
	}
}

// rdcss installs s.ref into word s.idx[k] if it holds s.old[k] and s is still
// undecided (HFP's RDCSS, s's state as control word). It returns s.old[k] if it
// attempted the install, else the plain value or K-CAS reference in the way.
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
	fieldsWritten(my)
	ref := makeRef(tagRDCSS, my, rseq)
	w := t.word(i)
	for v := w.Load(); v != old || !w.CompareAndSwap(old, ref); v = w.Load() {
		if v&tagRDCSS != 0 {
			t.completeRDCSSRef(v)
		} else if v != old {
			return v
		}
	}
	t.completeRDCSS(s.d, ref, s.ref, i, old)
	return old
}

func (t *kcasTable) completeRDCSSRef(ref uint64) {
	if kref, i, old, ok := t.snapRDCSS(ref); ok {
		t.completeRDCSS(descriptors.desc(refSlot(kref)), ref, kref, i, old)
	}
}

// completeRDCSS replaces ref in word i by kref if kref's operation (in d) is
// undecided, else by old.
func (t *kcasTable) completeRDCSS(d *kcasDesc, ref, kref, i, old uint64) {
	if st := d.state.Load(); st&3 == statusUndecided && stateSeq(st) == refSeq(kref) {
		old = kref
	}
	t.word(i).CompareAndSwap(ref, old)
}
