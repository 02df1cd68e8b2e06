module github.com/seed25b00da8/cuckoo/bench

go 1.26.0

replace github.com/seed25b00da8/cuckoo => ../

require (
	github.com/FastFilter/xorfilter v0.4.2-0.20260120015552-4e5a4d9df65a
	github.com/bits-and-blooms/bloom/v3 v3.7.1
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/seed25b00da8/cuckoo v0.0.0-00010101000000-000000000000
	github.com/seiflotfy/cuckoofilter v0.0.0-20240715131351-a2f2c23f1771
)

require (
	github.com/bits-and-blooms/bitset v1.24.2 // indirect
	github.com/dgryski/go-metro v0.0.0-20200812162917-85c65e2d0165 // indirect
	golang.org/x/sys v0.40.0 // indirect
)
