package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version returns the module version the command was built from, as the go
// command recorded it ("v1.2.0" for go install ...@v1.2.0), or "(devel)"
// when there is none (a build from a checkout without version control
// information, or a test binary).
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

func printVersion(w io.Writer) {
	fmt.Fprintf(w, "cuckoo %s %s %s/%s\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
