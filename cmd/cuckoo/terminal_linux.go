//go:build linux

package main

import "golang.org/x/sys/unix"

// isTerminalFd reports whether fd is a terminal: whether the terminal
// attributes can be read (a character device such as /dev/null has none).
func isTerminalFd(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}
