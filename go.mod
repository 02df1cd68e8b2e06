module github.com/seed25b00da8/cuckoo

go 1.24

require github.com/cespare/xxhash/v2 v2.3.0
