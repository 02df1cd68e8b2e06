package benchkit

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Size is a key count with the name it was given on the command line.
type Size struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// SizeHelp explains the size syntax, for flag help texts.
const SizeHelp = "k/K = 2^10, M = 2^20, G = 2^30 keys (1M is 1048576); plain numbers are taken as they are (1000000)"

// ParseSizes parses a comma-separated list of key counts such as
// "1M,32M", "10k" or "1000000". The suffixes are powers of two: k and K
// are 2^10, M is 2^20, G is 2^30. A count above limit (when limit > 0) is
// an error.
func ParseSizes(s string, limit int) ([]Size, error) {
	var out []Size
	for _, f := range SplitList(s) {
		mul, num := 1, f
		switch f[len(f)-1] {
		case 'k', 'K':
			mul, num = 1<<10, f[:len(f)-1]
		case 'M':
			mul, num = 1<<20, f[:len(f)-1]
		case 'G':
			mul, num = 1<<30, f[:len(f)-1]
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 || v > (1<<62)/mul || limit > 0 && v*mul > limit {
			return nil, fmt.Errorf("bad size %q (%s)", f, SizeHelp)
		}
		out = append(out, Size{Name: f, N: v * mul})
	}
	if len(out) == 0 {
		return nil, errors.New("no sizes")
	}
	return out, nil
}

// SplitList splits a comma-separated list, dropping empty items and the
// spaces around items.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ParseGoroutines parses a comma-separated list of goroutine counts (1 to
// 65536), dropping repeats, in increasing order.
func ParseGoroutines(s string) ([]int, error) {
	var out []int
	for _, f := range SplitList(s) {
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 || v > 1<<16 {
			return nil, fmt.Errorf("bad goroutine count %q", f)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no goroutine counts")
	}
	slices.Sort(out)
	return out, nil
}

// ParseWorkloads parses a comma-separated list of workload names,
// returning them once each in run order.
func ParseWorkloads(s string) ([]Workload, error) {
	seen := map[Workload]bool{}
	for _, f := range SplitList(s) {
		if !slices.Contains(Workloads, Workload(f)) {
			return nil, fmt.Errorf("bad workload %q (want %s)", f, JoinWorkloads(Workloads))
		}
		seen[Workload(f)] = true
	}
	var out []Workload
	for _, w := range Workloads {
		if seen[w] {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no workloads")
	}
	return out, nil
}

// JoinWorkloads joins workload names with commas.
func JoinWorkloads(ws []Workload) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = string(w)
	}
	return strings.Join(s, ",")
}
