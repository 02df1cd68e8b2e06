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
		summary:  "look up keys, one per line, in a filter file: prints \"KEY\\ttrue|false\" for each (the counts go to standard error); exits 0 if some key may be present, 1 if none, 2 on errors",
		run:      runQuery,
	}
}

// Exit statuses of query, as grep's: whether anything matched, or an error.
const (
	queryMatched   = 0
	queryNoneFound = 1
	queryError     = 2
)

func runQuery(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("query", stderr)
	pos, status, ok := parseFlags(fs, args, 1, 2)
	if !ok {
		return status
	}
	f, _, err := loadFilter(arg(pos, 0))
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
	fmt.Fprintf(stderr, "%d keys: %d maybe present, %d absent\n", n, present, n-present)
	if present == 0 {
		return queryNoneFound
	}
	return queryMatched
}
