package main

import (
	"bufio"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ParseList returns the benchmark names in the output of a test binary's
// -test.list (one top-level name a line, then "ok" lines from go test).
func ParseList(out string) []string {
	var names []string
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "Benchmark") && !strings.ContainsAny(line, " \t") {
			names = append(names, line)
		}
	}
	return names
}

// resultLine matches a benchmark result line: the name, then the iteration
// count.
var resultLine = regexp.MustCompile(`^(Benchmark\S*)\s+(\d+)\s`)

// ParseResults returns the names of the benchmarks that reported a result
// in a test binary's benchmark output, in order, without duplicates, each
// without the -<procs> suffix that package testing appends where GOMAXPROCS
// is not 1.
func ParseResults(out string, procs int) []string {
	var names []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := resultLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := StripProcs(m[1], procs)
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// StripProcs removes the "-<procs>" suffix that package testing appends to
// a benchmark's name where GOMAXPROCS is not 1.
func StripProcs(name string, procs int) string {
	if procs == 1 {
		return name
	}
	return strings.TrimSuffix(name, "-"+strconv.Itoa(procs))
}

// Split returns the names in both a and b (in a's order), those only in a
// and those only in b.
func Split(a, b []string) (both, onlyA, onlyB []string) {
	for _, n := range a {
		if slices.Contains(b, n) {
			both = append(both, n)
		} else {
			onlyA = append(onlyA, n)
		}
	}
	for _, n := range b {
		if !slices.Contains(a, n) {
			onlyB = append(onlyB, n)
		}
	}
	return both, onlyA, onlyB
}
