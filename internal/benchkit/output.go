package benchkit

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Output is a report file opened before a run, so that a path that cannot
// be written fails at once rather than after the measurements. It writes
// to a temporary file beside the path and renames it into place on Commit,
// so a failed run leaves an existing file as it was.
type Output struct {
	path string
	tmp  *os.File
}

// CreateOutput checks that path can be written: it is not a directory and
// its directory accepts a new file.
func CreateOutput(path string) (*Output, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", path, err)
	}
	tmp.Chmod(0o644) // CreateTemp makes it private; a report is not
	return &Output{path: path, tmp: tmp}, nil
}

// Commit writes the file with write and renames it into place.
func (o *Output) Commit(write func(io.Writer) error) error {
	err := write(o.tmp)
	if cerr := o.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.tmp.Name(), o.path)
	}
	if err != nil {
		os.Remove(o.tmp.Name())
		return fmt.Errorf("%s: %w", o.path, err)
	}
	return nil
}

// Abort removes the temporary file.
func (o *Output) Abort() {
	o.tmp.Close()
	os.Remove(o.tmp.Name())
}
