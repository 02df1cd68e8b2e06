package cuckoo

import (
	"sync"
	"testing"
)

func TestStackShardStablePerGoroutine(t *testing.T) {
	first := stackShard(6)
	for i := 0; i < 1000; i++ {
		if s := stackShard(6); s != first {
			t.Fatalf("call %d: shard %d, first call %d", i, s, first)
		}
	}
	if first >= 1<<6 {
		t.Fatalf("shard %d out of range [0, 64)", first)
	}
}

// TestStackShardSpreads checks that goroutines land on different shards:
// 64 goroutines alive at once must use more than a few of 64 shards (a
// constant or badly mixed choice would put them all on one or two), both
// by stackShard and by a 64-shard count's add (whose unchecked index must
// stay in the set; a one-shard count's is 0).
func TestStackShardSpreads(t *testing.T) {
	const g = 64
	shards, adds := make([]uint, g), make([]uint, g)
	var count, one shardedCount
	count.init(6)
	one.init(0)
	var mu sync.Mutex
	var ready, done sync.WaitGroup
	ready.Add(g)
	done.Add(g)
	release := make(chan struct{})
	for i := 0; i < g; i++ {
		go func() {
			defer done.Done()
			shards[i], adds[i] = stackShard(6), 1<<6
			mu.Lock() // one add at a time: the shard that changed is this one's
			count.add(1)
			for j := range count.shards {
				if count.shards[j].n[0].Load() > 0 {
					adds[i] = uint(j)
					count.shards[j].n[0].Store(0)
				}
			}
			if one.add(1); one.shards[0].n[0].Load() != 1 {
				t.Errorf("a one-shard count's add missed shard 0")
			}
			one.shards[0].n[0].Store(0)
			mu.Unlock()
			ready.Done()
			<-release // keep every stack alive until all have chosen
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
	for _, shards := range [][]uint{shards, adds} {
		seen := map[uint]bool{}
		for _, s := range shards {
			if s >= 1<<6 {
				t.Fatalf("shard %d out of range", s)
			}
			seen[s] = true
		}
		// 64 balls in 64 bins occupy about 40 bins; demand a third of that.
		if len(seen) < 14 {
			t.Fatalf("64 goroutines used only %d of 64 shards: %v", len(seen), shards)
		}
		t.Logf("64 goroutines used %d of 64 shards", len(seen))
	}
}

func (c *shardedCount) reset() {
	for i := range c.shards {
		c.shards[i].n[0].Store(0)
	}
}
