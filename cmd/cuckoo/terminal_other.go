//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package main

// isTerminalFd reports false: on these systems the command cannot tell a
// terminal from another character device, and progress is then asked for
// with -progress.
func isTerminalFd(fd uintptr) bool { return false }
