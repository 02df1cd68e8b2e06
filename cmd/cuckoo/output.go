package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// encodeFilter writes f to w. Tests replace it to make writing fail.
var encodeFilter = func(f filter, w io.Writer) (int64, error) { return f.WriteTo(w) }

// createTemp is os.CreateTemp. Tests replace it to make creating fail.
var createTemp = os.CreateTemp

// writeFilterFile writes f to path without ever losing what path held: it
// writes a temporary file in the same directory, flushes it to disk and
// renames it over path only when all of that succeeded. On error path is
// untouched and the temporary file removed. A symbolic link is followed
// (the file it names is replaced, the link kept); an existing file's
// permissions are kept, a new file gets 0644. A path that exists and is not
// a regular file (a device such as /dev/null, a named pipe) is written in
// place, as there is nothing to lose. Errors name path, never the
// temporary file.
func writeFilterFile(path string, f filter) (int64, error) {
	target := path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		target = p
	}
	perm := os.FileMode(0o644)
	unchanged := "" // what an error says of path
	if st, err := os.Stat(target); err == nil {
		if !st.Mode().IsRegular() {
			return writeInPlace(path, f)
		}
		perm = st.Mode().Perm()
		unchanged = " (the file was not changed)"
	}
	dir := filepath.Dir(target)
	tmp, err := createTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		// The filter is written next to path, then renamed over it: the
		// directory must be writable, not only path.
		return 0, fmt.Errorf("%s: cannot create a file in its directory %s: %s%s", path, dir, reason(err), unchanged)
	}
	n, err := encodeFilter(f, tmp)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), target)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return 0, fmt.Errorf("%s: %s%s", path, reason(err), unchanged)
	}
	return n, nil
}

// reason returns err without the file names an *os.PathError or an
// *os.LinkError adds (those of the temporary file), and without the
// library's "cuckoo: " prefix.
func reason(err error) string {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return trimPrefix(err)
}

func writeInPlace(path string, f filter) (int64, error) {
	file, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	n, err := encodeFilter(f, file)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("%s: %s", path, trimPrefix(err))
	}
	return n, nil
}

// checkNotInput returns an error if the output path names the same file as
// the input (which would replace the keys with the filter). in is the input
// file, nil when it is not a file.
func checkNotInput(path string, in *os.File) error {
	if in == nil {
		return nil
	}
	ost, err := os.Stat(path)
	if err != nil {
		return nil // no such file: it cannot be the input
	}
	ist, err := in.Stat()
	if err != nil || !os.SameFile(ost, ist) {
		return nil
	}
	return fmt.Errorf("-o %s names the input file: refusing to replace the keys with the filter", path)
}
