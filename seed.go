package cuckoo

import "math/rand/v2"

// randomSeed returns the seed of a filter made without WithSeed. With a
// known seed, keys sharing a bucket and fingerprint can be searched for
// offline until their pair of buckets is full; under a random seed such keys
// scatter (keyed; TestCraftedCollisionsDoNotTransfer). math/rand/v2's global
// generator is ChaCha8 seeded from the operating system's entropy, so one
// filter's seed does not predict another's; it never fails and allocates
// nothing. Seed() and an encoding reveal the seed: keep both secret where
// keys come from an adversary.
func randomSeed() uint64 { return rand.Uint64() }
