//go:build unix

package main

import (
	"os"
	"syscall"
)

// keepOwner gives tmp the owner and group of old, the file it replaces,
// where the process may (root may; others keep their own, as any new file
// of theirs): a rebuild by root of a file another user owns leaves it
// readable by that user.
func keepOwner(tmp *os.File, old os.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		tmp.Chown(int(st.Uid), int(st.Gid)) // best effort: EPERM for others
	}
}
