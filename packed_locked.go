package cuckoo

// Locked mode over the packed layout (packed.go), as locked.go: every write to
// a word holds its stripe (b>>1); lookups read unlocked. Under both words'
// locks, a step stores the destination word, bumps its version, then the source
// word (one store, then the version, if the buckets share a word).
//
// Claim: an unlocked lookup that reads V(b1) (t0), b1's word (t1), b2's word
// (t2) and V(b1) again (t3), and sees neither fp nor a change of V(b1), may
// answer "absent" for every copy present throughout [t0, t3]. Proof: a copy
// is in one of its buckets at every instant. Not in b1 at t1, so in b2; not
// in b2 at t2, so a step moving it b2 -> b1 stored b2 at some ts in (t1,
// t2), and b1 at td < ts with td > t1 (had b1 held the copy from td on, the
// read at t1 would show it, and no other step could take it out before ts:
// this one holds b1's lock past ts). Its add to V(b1) falls between td and
// ts, inside (t0, t3). A shared word is decided by one read. □
//
// InsertUnique and Count hold both words' locks: one instant. Delete
// (delete.go.tmpl) writes one word under its lock, or answers "absent" as
// the lookup does or under both locks. Colliding keys: as in locked.go,
// with the version in place of b1's counter.
