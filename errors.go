package cuckoo

import "errors"

// Every error begins with "cuckoo: ". A decoding error says what is wrong
// and where, and matches exactly one of ErrTruncated, ErrFormat, ErrCorrupt.
var (
	// ErrTruncated matches decoding errors for data that ends before the
	// filter it announces (they also match io.ErrUnexpectedEOF).
	ErrTruncated = errors.New("cuckoo: truncated data")
	// ErrFormat matches decoding errors for data that is not a filter this
	// package reads: wrong magic, an unknown version or hash algorithm, a
	// header no version allows, or bytes after UnmarshalBinary's filter.
	ErrFormat = errors.New("cuckoo: not a filter in a format this package reads")
	// ErrCorrupt matches decoding errors for a known format whose bytes were
	// damaged: a wrong checksum or item count, or bits outside a bucket's slots.
	ErrCorrupt = errors.New("cuckoo: corrupted data")
	// ErrZeroFilter is returned by the methods that need a table (the
	// inserts, MarshalBinary, WriteTo) of a zero Filter or Growing.
	ErrZeroFilter = errors.New("cuckoo: zero Filter or Growing: it was not made with New or NewGrowing (or loaded with UnmarshalBinary or ReadFrom) and has no table")
)

// decodeError matches its class and cause with errors.Is.
type decodeError struct {
	msg   string
	wraps []error // the class, and the cause if any
}

func (e *decodeError) Error() string   { return e.msg }
func (e *decodeError) Unwrap() []error { return e.wraps }
