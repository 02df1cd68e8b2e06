package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCmd runs the dispatcher in-process with stdin and args.
func runCmd(t *testing.T, stdin string, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errw bytes.Buffer
	status = run(args, strings.NewReader(stdin), &out, &errw)
	return status, out.String(), errw.String()
}

// keyLines returns "prefix0\nprefix1\n..." with n keys.
func keyLines(prefix string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s%d\n", prefix, i)
	}
	return b.String()
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUsage(t *testing.T) {
	status, stdout, stderr := runCmd(t, "")
	if status != exitUsage || stdout != "" {
		t.Fatalf("no arguments: status %d, stdout %q; want %d and nothing", status, stdout, exitUsage)
	}
	for _, name := range []string{"build", "query", "info"} {
		if !strings.Contains(stderr, "cuckoo "+name+" ") {
			t.Errorf("usage does not list %s:\n%s", name, stderr)
		}
	}
	status, stdout, _ = runCmd(t, "", "help")
	if status != exitOK || !strings.Contains(stdout, "cuckoo build -o FILE") {
		t.Fatalf("help: status %d, stdout %q; want 0 and the usage", status, stdout)
	}
	status, stdout, _ = runCmd(t, "", "help", "build")
	if status != exitOK || !strings.Contains(stdout, "-capacity") {
		t.Fatalf("help build: status %d, stdout %q; want 0 and the flags", status, stdout)
	}
	status, _, stderr = runCmd(t, "", "frobnicate")
	if status != exitUsage || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: status %d, stderr %q", status, stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	filter := buildFilter(t, keyLines("k", 10))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build"}, "-o FILE is required"},
		{[]string{"build", "-o", "x", "a", "b"}, "want at most 1 argument, got 2"},
		{[]string{"build", "-o", "x", "-bits", "16"}, "-bits must be 8, 12 or 15"},
		{[]string{"build", "-o", "x", "-capacity", "-1"}, "-capacity must be positive"},
		{[]string{"build", "-nosuchflag"}, "flag provided but not defined"},
		{[]string{"query"}, "want 1 to 2 arguments, got 0"},
		{[]string{"query", filter, "a", "b"}, "want 1 to 2 arguments, got 3"},
		{[]string{"info"}, "want 1 argument, got 0"},
		{[]string{"info", filter, filter}, "want 1 argument, got 2"},
	} {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			status, stdout, stderr := runCmd(t, "", tc.args...)
			if status != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Fatalf("status %d, stdout %q, stderr %q; want %d and %q on stderr", status, stdout, stderr, exitUsage, tc.want)
			}
		})
	}
}

// TestBinary builds the command and runs it as a program once.
func TestBinary(t *testing.T) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "cuckoo")
	if out, err := exec.Command(gotool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	keys := writeFile(t, "keys.txt", keyLines("key-", 1000))
	filter := filepath.Join(dir, "f.cuckoo")
	if out, err := exec.Command(bin, "build", "-o", filter, keys).CombinedOutput(); err != nil {
		t.Fatalf("cuckoo build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "query", filter)
	cmd.Stdin = strings.NewReader("key-1\nkey-999\n")
	var qerr bytes.Buffer
	cmd.Stderr = &qerr
	out, err := cmd.Output()
	if err != nil || string(out) != "key-1\ttrue\nkey-999\ttrue\n" || qerr.String() != "2 keys: 2 maybe present, 0 absent\n" {
		t.Fatalf("cuckoo query: %v\n%s\nstderr %q", err, out, qerr.String())
	}
	cmd = exec.Command(bin, "query", filter)
	cmd.Stdin = strings.NewReader("absent-1\n")
	if err := cmd.Run(); err == nil || err.(*exec.ExitError).ExitCode() != queryNoneFound {
		t.Fatalf("cuckoo query, no key present: %v; want exit status 1", err)
	}
	out, err = exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "cuckoo ") || len(strings.Fields(string(out))) != 4 {
		t.Fatalf("cuckoo --version: %v, %q; want \"cuckoo VERSION GOVERSION OS/ARCH\"", err, out)
	}
	cmd = exec.Command(bin, "info", keys)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitError || !strings.Contains(stderr.String(), "wrong magic") {
		t.Fatalf("cuckoo info on a text file: %v, stderr %q; want exit status 2 and wrong magic", err, stderr.String())
	}
	if err := exec.Command(bin).Run(); err == nil || err.(*exec.ExitError).ExitCode() != exitUsage {
		t.Fatalf("cuckoo without arguments: %v; want exit status 2", err)
	}
}

// TestScanKeysLimit: a key of exactly maxKeyLen bytes is read, with either
// line ending or none; one byte more is refused with its line number.
// Before, a line of maxKeyLen bytes and its "\n" was refused as longer
// than maxKeyLen.
func TestScanKeysLimit(t *testing.T) {
	long := strings.Repeat("x", maxKeyLen)
	for _, end := range []string{"\n", "\r\n", ""} {
		var got []int
		err := scanKeys(strings.NewReader("a\n"+long+end), func(key []byte) error {
			got = append(got, len(key))
			return nil
		})
		if err != nil || len(got) != 2 || got[1] != maxKeyLen {
			t.Errorf("a key of %d bytes ending %q: keys %v, %v; want it read", maxKeyLen, end, got, err)
		}
		err = scanKeys(strings.NewReader("a\n"+long+"y"+end), func([]byte) error { return nil })
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line 2 is longer than %d bytes", maxKeyLen)) {
			t.Errorf("a key of %d bytes ending %q: %v; want line 2 refused", maxKeyLen+1, end, err)
		}
	}
}
