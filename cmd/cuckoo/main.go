// Command cuckoo measures the filter on this machine, builds cuckoo filter
// files from lists of keys, queries them and describes them.
//
// Usage:
//
//	cuckoo bench [-sizes LIST] [-goroutines LIST] [-modes LIST] [-bits LIST] [-duration D] [-svg FILE]
//	cuckoo build -o FILE [-bits N] [-capacity N] [-seed N] [-keep-duplicates] [-progress] [INPUT]
//	cuckoo query FILE [INPUT]
//	cuckoo info FILE
//
// Keys are read one per line from INPUT, or from standard input when INPUT is
// omitted or "-"; a trailing "\r" is removed and empty lines are skipped.
// Filter files are in the formats of the cuckoo package (FORMAT.md at the
// module root): build -capacity N writes a fixed filter (cuckoo.Filter) of
// that size; build without it writes a growing filter (cuckoo.Growing),
// which it fills in one pass over the keys, however many there are. query
// and info read both formats, told apart by the file's first 8 bytes.
// Errors go to standard error; the exit status is 1 for errors and 2 for
// bad usage, except for query, which exits like grep: 0 if some key may be
// present, 1 if none is, 2 on errors. "cuckoo --version" prints the
// version.
//
// Each subcommand lives in its own file and registers itself in commands
// from an init function.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// A command is one subcommand. run gets the arguments after the subcommand's
// name and returns the exit status.
type command struct {
	synopsis string // arguments, as in the usage text: "-o FILE [INPUT]"
	summary  string // one line: what it does
	run      func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands maps subcommand names to commands. Files add to it from init.
var commands = map[string]command{}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to the subcommand named by args[0].
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "version", "-version", "--version":
		printVersion(stdout)
		return exitOK
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && name == "help" {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"-h"}, stdin, stdout, stdout)
			}
		}
		usage(stdout)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "cuckoo: unknown command %q\n\n", name)
		usage(stderr)
		return exitUsage
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprint(w, "cuckoo builds, queries and describes cuckoo filter files.\n\nUsage:\n\n")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(w, "\tcuckoo %s %s\n", name, commands[name].synopsis)
	}
	fmt.Fprint(w, "\nCommands:\n\n")
	for _, name := range names {
		fmt.Fprintf(w, "\t%-8s %s\n", name, commands[name].summary)
	}
	fmt.Fprint(w, "\nRun \"cuckoo help COMMAND\" for a command's flags. Keys are read one per\n"+
		"line from INPUT, or standard input if INPUT is omitted or \"-\".\n")
}

// newFlags returns a flag set for subcommand name whose usage message shows
// the synopsis and the flags.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("cuckoo "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		c := commands[name]
		fmt.Fprintf(fs.Output(), "usage: cuckoo %s %s\n\n%s\n", name, c.synopsis, c.summary)
		var flags bool
		fs.VisitAll(func(*flag.Flag) { flags = true })
		if flags {
			fmt.Fprintln(fs.Output())
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args, where flags may come before or after positional
// arguments ("--" ends the flags), and checks the number of positional
// arguments. It returns them, or ok=false with the exit status when the
// command must stop.
func parseFlags(fs *flag.FlagSet, args []string, minArgs, maxArgs int) (pos []string, status int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if n := len(pos); n < minArgs || n > maxArgs {
		fmt.Fprintf(fs.Output(), "%s: want %s, got %d\n", fs.Name(), argCount(minArgs, maxArgs), n)
		fs.Usage()
		return nil, exitUsage, false
	}
	return pos, exitOK, true
}

func argCount(lo, hi int) string {
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return fmt.Sprintf("%d arguments", n)
	}
	switch {
	case lo == hi:
		return plural(lo)
	case lo == 0:
		return "at most " + plural(hi)
	}
	return fmt.Sprintf("%d to %s", lo, plural(hi))
}

// arg returns pos[i], or "" if there are not that many.
func arg(pos []string, i int) string {
	if i < len(pos) {
		return pos[i]
	}
	return ""
}

// fail prints err for subcommand name and returns exitError. The "cuckoo: "
// prefix of the library's errors is dropped: the line already names the
// program.
func fail(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "cuckoo %s: %s\n", name, trimPrefix(err))
	return exitError
}

func trimPrefix(err error) string { return strings.TrimPrefix(err.Error(), "cuckoo: ") }

// maxKeyLen bounds one input line.
const maxKeyLen = 16 << 20

// scanKeys calls fn for every key in r: every non-empty line, without its
// line ending ("\n" or "\r\n"). The key is valid only during the call.
func scanKeys(r io.Reader, fn func(key []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxKeyLen)
	for sc.Scan() {
		key := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if len(key) == 0 {
			continue
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("a line is longer than %d bytes", maxKeyLen)
		}
		return err
	}
	return nil
}

// openInput opens the key input: path, or stdin for "" and "-". file is
// nil for stdin.
func openInput(path string, stdin io.Reader) (r io.Reader, file *os.File, err error) {
	if path == "" || path == "-" {
		return stdin, nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f, nil
}

// isTerminal reports whether w is a terminal: a file whose terminal
// attributes can be read (not merely a character device: /dev/null is one).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminalFd(f.Fd())
}
