//go:build unix

package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestBuildInterrupted: a build interrupted (SIGINT, SIGTERM) while it
// writes the filter exits 130 or 143, leaves the output file as it was and
// no temporary file behind. The build runs in a child process (this test
// binary, TestInterruptedBuildChild), which signals itself in the middle
// of writing. Before, the temporary file, the size of the whole filter,
// stayed.
func TestBuildInterrupted(t *testing.T) {
	for _, sig := range []struct {
		name string
		code int
	}{{"INT", 130}, {"TERM", 143}} {
		t.Run(sig.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "f.cuckoo")
			if err := os.WriteFile(out, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			keys := writeFile(t, "keys.txt", keyLines("k", 1000))
			cmd := exec.Command(os.Args[0], "-test.run", "^TestInterruptedBuildChild$")
			cmd.Env = append(os.Environ(), "CUCKOO_TEST_CHILD_BUILD="+out, "CUCKOO_TEST_CHILD_KEYS="+keys, "CUCKOO_TEST_CHILD_SIG="+sig.name)
			output, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != sig.code {
				t.Fatalf("child: %v; want exit status %d\n%s", err, sig.code, output)
			}
			if data, err := os.ReadFile(out); err != nil || string(data) != "precious" {
				t.Errorf("output after the interrupted build: %q, %v; want it unchanged", data, err)
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.Name() != "f.cuckoo" {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}

// TestInterruptedBuildChild is the child of TestBuildInterrupted; it does
// nothing when run on its own.
func TestInterruptedBuildChild(t *testing.T) {
	out := os.Getenv("CUCKOO_TEST_CHILD_BUILD")
	if out == "" {
		return
	}
	sig := syscall.SIGINT
	if os.Getenv("CUCKOO_TEST_CHILD_SIG") == "TERM" {
		sig = syscall.SIGTERM
	}
	removeTempsOnSignal()
	encodeFilter = func(f filter, w io.Writer) (int64, error) {
		if _, err := w.Write([]byte("part of a filter")); err != nil {
			return 0, err
		}
		syscall.Kill(os.Getpid(), sig)
		select {} // the handler exits
	}
	run([]string{"build", "-o", out, os.Getenv("CUCKOO_TEST_CHILD_KEYS")}, nil, io.Discard, io.Discard)
	t.Fatal("the build returned after the signal")
}

// TestBuildFollowsDanglingLink: -o naming a symbolic link to a file that
// does not exist yet writes that file and keeps the link (before, the link
// was replaced by a regular file). Run as root, a rebuild of a file owned
// by another user keeps its owner and group.
func TestBuildFollowsDanglingLink(t *testing.T) {
	dir := t.TempDir()
	keys := writeFile(t, "keys.txt", keyLines("k", 100))
	link := filepath.Join(dir, "link")
	if err := os.Symlink("sub/target.cuckoo", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if status, _, stderr := runCmd(t, "", "build", "-o", link, keys); status != exitOK {
		t.Fatalf("build -o link: %d %s", status, stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link after the build: %v, %v; want a symbolic link still", st, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "target.cuckoo")); err != nil {
		t.Errorf("the link's target: %v; want the filter written there", err)
	}

	if os.Geteuid() != 0 {
		return
	}
	owned := filepath.Join(dir, "owned.cuckoo")
	if err := os.WriteFile(owned, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(owned, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if status, _, stderr := runCmd(t, "", "build", "-o", owned, keys); status != exitOK {
		t.Fatalf("build -o owned: %d %s", status, stderr)
	}
	st, err := os.Stat(owned)
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Sys().(*syscall.Stat_t); s.Uid != 65534 || s.Gid != 65534 || st.Mode().Perm() != 0o600 {
		t.Errorf("rebuilt file: owner %d:%d, mode %v; want 65534:65534, 0600", s.Uid, s.Gid, st.Mode().Perm())
	}
}
