package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

func init() {
	commands["query"] = command{
		synopsis: "FILE [INPUT]",
		summary:  "look up keys, one per line, in a filter file: prints \"KEY\\ttrue|false\" for each (the counts go to standard error)",
		details: keysHelp + " " +
			"FILE \"-\" reads the filter from standard input (cuckoo build -o - KEYS | cuckoo query - PROBES); " +
			"the keys must then come from an INPUT file: standard input cannot hold both.",
		exit: "Exit status, as grep's: 0 if some key may be present, 1 if none is (or there are no keys), 2 on errors and bad usage.",
		run:  runQuery,
	}
}

// Exit statuses of query, as grep's (and every subcommand's): whether
// anything matched, or an error.
const (
	queryMatched   = exitOK
	queryNoneFound = exitNotFound
	queryError     = exitError
)

func runQuery(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("query", stderr)
	pos, status, ok := parseFlags(fs, args, 1, 2)
	if !ok {
		return status
	}
	if arg(pos, 0) == "-" && (arg(pos, 1) == "" || arg(pos, 1) == "-") {
		fmt.Fprintln(stderr, "cuckoo query: the filter (FILE \"-\") and the keys (no INPUT, or \"-\") cannot both be read from standard input: give the keys as an INPUT file")
		return queryError
	}
	f, _, err := loadFilter(arg(pos, 0), stdin)
	if err != nil {
		fail(stderr, "query", err)
		return queryError
	}
	in, file, err := openInput(arg(pos, 1), stdin)
	if err != nil {
		fail(stderr, "query", err)
		return queryError
	}
	if file != nil {
		defer file.Close()
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	var n, present int64
	var line []byte
	err = scanKeys(in, func(key []byte) error {
		ok := f.Lookup(key)
		n++
		if ok {
			present++
		}
		line = strconv.AppendBool(append(append(line[:0], key...), '\t'), ok)
		line = append(line, '\n')
		_, err := w.Write(line)
		return err
	})
	if err != nil {
		w.Flush()
		fail(stderr, "query", err)
		return queryError
	}
	if err := w.Flush(); err != nil {
		fail(stderr, "query", err)
		return queryError
	}
	// The counts go to standard error, so that standard output holds only
	// the results.
	fmt.Fprintf(stderr, "%s: %d maybe present, %d absent\n", count(n, "key", "keys"), present, n-present)
	if present == 0 {
		return queryNoneFound
	}
	return queryMatched
}
