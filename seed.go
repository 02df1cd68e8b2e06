package cuckoo

import "math/rand/v2"

// randomSeed returns the seed of a filter created without WithSeed.
//
// With a seed everybody knows, keys can be searched offline for ones that
// share a first bucket and a fingerprint: nine of them fill their pair of
// buckets and every further one gets ErrFull, whatever the load elsewhere.
// A random seed per filter makes such a search useless without the seed:
// keys colliding under one seed are scattered under another (keyed,
// filter.go; TestCraftedCollisionsDoNotTransfer).
//
// math/rand/v2's global generator is ChaCha8 seeded by the runtime from the
// operating system's entropy, so its output cannot be predicted from other
// filters' seeds; it never fails and allocates nothing. Seed() still reveals
// the seed, and an encoding stores it: treat both as secrets where keys come
// from an adversary.
func randomSeed() uint64 { return rand.Uint64() }
