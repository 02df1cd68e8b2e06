package cuckoo

import "math/rand/v2"

// randomSeed returns the seed of a filter made without WithSeed, so that keys
// found offline to fill a pair of buckets scatter (keyed). math/rand/v2's
// ChaCha8, seeded by the operating system, does not let one filter's seed
// predict another's, never fails and allocates nothing.
func randomSeed() uint64 { return rand.Uint64() }
