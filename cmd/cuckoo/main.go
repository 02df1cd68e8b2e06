// Command cuckoo measures the filter on this machine, builds cuckoo filter
// files from lists of keys, queries them and describes them.
//
// Usage:
//
//	cuckoo bench [-sizes LIST] [-goroutines LIST] [-modes LIST] [-bits LIST] [-duration D] [-svg FILE]
//	cuckoo build -o FILE [-bits N] [-slots 4|5] | [-fpr P] [-capacity N] [-seed N] [-keep-duplicates] [-progress] [INPUT]
//	cuckoo query FILE [INPUT]
//	cuckoo info FILE
//
// Keys are read one per line from INPUT, or from standard input when INPUT is
// omitted or "-"; a trailing "\r" is removed (CRLF line endings) and empty
// lines are skipped. A FILE of "-" makes query and info read the filter from
// standard input (cuckoo build -o - KEYS | cuckoo query - PROBES); query's
// keys must then come from an INPUT file.
//
// Filter files are in the formats of the cuckoo package (FORMAT.md at the
// module root): build -capacity N writes a fixed filter (cuckoo.Filter) of
// that size; build without it writes a growing filter (cuckoo.Growing),
// which it fills in one pass over the keys, however many there are. query
// and info read both formats, told apart by the file's first 8 bytes.
//
// Error messages go to standard error and start with "cuckoo SUBCOMMAND: "
// (flag errors too, then the subcommand's usage). The exit status is grep's: 0 on success (for query: some
// key may be present), 1 if query finds no key, 2 on errors and bad usage.
// "cuckoo version" (or --version) prints the version.
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
	details  string // more help, for "cuckoo help NAME": sentences, wrapped when printed (optional)
	exit     string // its exit statuses, if not those of exitDefault
	run      func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands maps subcommand names to commands. Files add to it from init.
var commands = map[string]command{}

// Exit statuses, as grep's: 0 for success, 1 when query finds no key, 2
// for errors of every kind, bad usage included.
const (
	exitOK       = 0
	exitNotFound = 1
	exitError    = 2
	exitUsage    = exitError
)

func main() {
	removeTempsOnSignal()
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
			c, ok := commands[args[1]]
			if !ok {
				fmt.Fprintf(stderr, "cuckoo help: unknown command %q\n\n", args[1])
				usage(stderr)
				return exitUsage
			}
			return c.run([]string{"-h"}, stdin, stdout, stdout)
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
	fmt.Fprint(w, "\n")
	wrap(w, "Run \"cuckoo help COMMAND\" for a command's flags, \"cuckoo version\" for the version. "+keysHelp+" "+filterFileHelp+" "+exitHelp)
}

// Help shared by the usage and the subcommands' help.
const (
	keysHelp = "Keys are read one per line from INPUT, or from standard input if INPUT is omitted or \"-\"; " +
		"a trailing \"\\r\" is removed (CRLF line endings) and empty lines are skipped."
	filterFileHelp = "For query and info, FILE \"-\" reads the filter from standard input " +
		"(cuckoo build -o - KEYS | cuckoo query - PROBES); query's keys must then come from an INPUT file."
	exitHelp    = "Exit status, as grep's: 0 on success (query: some key may be present), 1 if query finds no key, 2 on errors and bad usage."
	exitDefault = "Exit status: 0 on success, 2 on errors and bad usage."
)

// wrap writes text to w as one paragraph in lines of at most 72 bytes
// (a longer word stays whole, on a line of its own).
func wrap(w io.Writer, text string) {
	n := 0 // bytes on the current line
	for _, word := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+len(word) > 72:
			fmt.Fprintln(w)
			n = 0
		default:
			fmt.Fprint(w, " ")
			n++
		}
		fmt.Fprint(w, word)
		n += len(word)
	}
	if n > 0 {
		fmt.Fprintln(w)
	}
}

// newFlags returns a flag set for subcommand name whose usage message shows
// the synopsis and the flags.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("cuckoo "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		c := commands[name]
		fmt.Fprintf(fs.Output(), "usage: cuckoo %s %s\n\n%s\n", name, c.synopsis, c.summary)
		exit := c.exit
		if exit == "" {
			exit = exitDefault
		}
		fmt.Fprintln(fs.Output())
		wrap(fs.Output(), strings.TrimSpace(c.details+" "+exit))
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
// command must stop. A bad flag is reported after the subcommand's name
// ("cuckoo build: flag provided but not defined: -x"), then the usage.
func parseFlags(fs *flag.FlagSet, args []string, minArgs, maxArgs int) (pos []string, status int, ok bool) {
	pos, err := parsePositional(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return nil, exitOK, false
	}
	if err != nil {
		fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
		fs.Usage()
		return nil, exitUsage, false
	}
	if n := len(pos); n < minArgs || n > maxArgs {
		fmt.Fprintf(fs.Output(), "%s: want %s, got %d\n", fs.Name(), argCount(minArgs, maxArgs), n)
		fs.Usage()
		return nil, exitUsage, false
	}
	return pos, exitOK, true
}

// parsePositional parses args with fs, collecting the positional arguments
// between flags. The flag package's own messages, which lack the
// subcommand's name, and its call of fs.Usage are silenced: parseFlags
// prints the error.
func parsePositional(fs *flag.FlagSet, args []string) (pos []string, err error) {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// count returns n and the noun for it: "1 key", "2 keys", "0 keys".
func count[N ~int | ~int64 | ~uint64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func argCount(lo, hi int) string {
	plural := func(n int) string { return count(n, "argument", "arguments") }
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
// line ending ("\n" or "\r\n"). The key is valid only during the call. A
// line longer than maxKeyLen is an error that gives its number.
func scanKeys(r io.Reader, fn func(key []byte) error) error {
	sc := bufio.NewScanner(r)
	// Room for a key of maxKeyLen bytes and its "\r\n": the scanner needs
	// the line ending in its buffer to end the line.
	sc.Buffer(make([]byte, 64<<10), maxKeyLen+2)
	var line int64
	for sc.Scan() {
		line++
		key := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if len(key) > maxKeyLen {
			return fmt.Errorf("line %d is longer than %d bytes, the limit for one key", line, maxKeyLen)
		}
		if len(key) == 0 {
			continue
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d is longer than %d bytes, the limit for one key", line+1, maxKeyLen)
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
