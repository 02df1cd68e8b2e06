package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("isTerminal(%s) = true; want false (a character device, not a terminal)", os.DevNull)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) {
		t.Error("isTerminal(pipe) = true; want false")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("isTerminal(regular file) = true; want false")
	}
	if isTerminal(&bytes.Buffer{}) {
		t.Error("isTerminal(bytes.Buffer) = true; want false")
	}
	// The master side of a pseudo-terminal is a terminal, where the
	// system has them.
	if runtime.GOOS == "linux" {
		pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
		if err != nil {
			t.Logf("no pseudo-terminal to check the positive case: %v", err)
			return
		}
		defer pty.Close()
		if !isTerminal(pty) {
			t.Error("isTerminal(/dev/ptmx) = false; want true")
		}
	}
}
