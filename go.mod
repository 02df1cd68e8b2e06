module github.com/seed25b00da8/cuckoo

go 1.24.0

require github.com/cespare/xxhash/v2 v2.3.0

require golang.org/x/sys v0.40.0
