package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
)

// encodeFilter writes f to w. Tests replace it to make writing fail.
var encodeFilter = func(f filter, w io.Writer) (int64, error) { return f.WriteTo(w) }

// createTemp is os.CreateTemp. Tests replace it to make creating fail.
var createTemp = os.CreateTemp

// writeFilterFile writes f to path without ever losing what path held: it
// writes a temporary file in the same directory, flushes it to disk and
// renames it over path only when all of that succeeded. On error path is
// untouched and the temporary file removed, also when the process is
// interrupted (SIGINT, SIGTERM: removeTempsOnSignal). A symbolic link is
// followed, also one that names no file yet (the file it names is
// written, the link kept); an existing file's permissions are kept, and
// its owner and group where the process may set them (as root); a new
// file gets 0644. A path that exists and is not a regular file (a device
// such as /dev/null, a named pipe) is written in place, as there is
// nothing to lose. Errors name path, never the temporary file.
func writeFilterFile(path string, f filter) (int64, error) {
	target, err := linkTarget(path)
	if err != nil {
		return 0, fmt.Errorf("%s: %s", path, reason(err))
	}
	perm := os.FileMode(0o644)
	unchanged := "" // what an error says of path
	var old os.FileInfo
	if st, err := os.Stat(target); err == nil {
		if !st.Mode().IsRegular() {
			return writeInPlace(path, f)
		}
		perm = st.Mode().Perm()
		unchanged = " (the file was not changed)"
		old = st
	}
	dir := filepath.Dir(target)
	tmp, err := createTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		// The filter is written next to path, then renamed over it: the
		// directory must be writable, not only path.
		return 0, fmt.Errorf("%s: cannot create a file in its directory %s: %s%s", path, dir, reason(err), unchanged)
	}
	temps.add(tmp.Name())
	defer temps.remove(tmp.Name())
	n, err := encodeFilter(f, tmp)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil && old != nil {
		keepOwner(tmp, old)
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

// linkTarget returns the file path names: path itself, or where the chain
// of symbolic links from it ends, also when that file does not exist yet
// (filepath.EvalSymlinks fails then, and the link would be replaced by a
// regular file).
func linkTarget(path string) (string, error) {
	for range 40 {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", errors.New("too many levels of symbolic links")
}

// tempFiles are the temporary files being written, which
// removeTempsOnSignal removes when the process is interrupted.
type tempFiles struct {
	mu    sync.Mutex
	names map[string]bool
}

var temps = tempFiles{names: make(map[string]bool)}

func (t *tempFiles) add(name string) {
	t.mu.Lock()
	t.names[name] = true
	t.mu.Unlock()
}

func (t *tempFiles) remove(name string) {
	t.mu.Lock()
	delete(t.names, name)
	t.mu.Unlock()
}

// removeAll removes every temporary file being written. It keeps the
// lock, so that no other is started or renamed after it: the process
// exits next.
func (t *tempFiles) removeAll() {
	t.mu.Lock()
	for name := range t.names {
		os.Remove(name)
	}
}

// removeTempsOnSignal makes SIGINT and SIGTERM remove the temporary files
// being written before the process exits with 128 plus the signal's
// number, as a shell reports a process killed by it; the output files
// stay as they were.
func removeTempsOnSignal() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-c
		temps.removeAll()
		code := 130
		if sig == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
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
