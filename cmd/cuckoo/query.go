package main

import (
	"bufio"
	"io"
	"strconv"
)

func init() {
	commands["query"] = command{
		synopsis: "FILE [INPUT]",
		summary:  "look up keys, one per line, in a filter file: prints \"KEY\\ttrue|false\" for each, then the counts",
		run:      runQuery,
	}
}

func runQuery(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("query", stderr)
	pos, status, ok := parseFlags(fs, args, 1, 2)
	if !ok {
		return status
	}
	f, _, err := loadFilter(arg(pos, 0))
	if err != nil {
		return fail(stderr, "query", err)
	}
	in, file, err := openInput(arg(pos, 1), stdin)
	if err != nil {
		return fail(stderr, "query", err)
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
		return fail(stderr, "query", err)
	}
	line = strconv.AppendInt(line[:0], n, 10)
	line = append(line, " keys: "...)
	line = strconv.AppendInt(line, present, 10)
	line = append(line, " maybe present, "...)
	line = strconv.AppendInt(line, n-present, 10)
	line = append(line, " absent\n"...)
	w.Write(line)
	if err := w.Flush(); err != nil {
		return fail(stderr, "query", err)
	}
	return exitOK
}
