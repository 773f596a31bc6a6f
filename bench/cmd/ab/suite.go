package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Entry is one line of a suite: a package (a directory relative to the
// repository's root, as ./kernels) and a go test -bench pattern for it.
type Entry struct {
	Pkg     string
	Pattern string
	Line    int    // line number in the suite file
	Note    string // the line's trailing comment, if any
}

// ParseSuite reads a suite: one entry a line, "<package> <pattern>",
// fields separated by white space; "#" at the start of a line or after
// white space starts a comment (a "#" inside a pattern, as in a benchmark
// name's #01 suffix, does not). Every pattern must compile as a go test
// -bench pattern.
func ParseSuite(r io.Reader) ([]Entry, error) {
	var es []Entry
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, note := splitComment(sc.Text())
		f := strings.Fields(line)
		switch len(f) {
		case 0:
			continue
		case 2:
		default:
			return nil, fmt.Errorf("suite line %d: want \"<package> <pattern>\", got %q", n, line)
		}
		pkg := cleanPkg(f[0])
		if _, err := CompilePattern(f[1]); err != nil {
			return nil, fmt.Errorf("suite line %d: %v", n, err)
		}
		es = append(es, Entry{Pkg: pkg, Pattern: f[1], Line: n, Note: note})
	}
	return es, sc.Err()
}

// splitComment splits a suite line at its comment.
func splitComment(s string) (line, note string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
			return s[:i], strings.TrimSpace(s[i+1:])
		}
	}
	return s, ""
}

// cleanPkg writes a package directory as ./dir, without a trailing slash.
func cleanPkg(p string) string {
	p = strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
	if p == "" || p == "." {
		return "."
	}
	return "./" + p
}

// Pkgs returns the packages of a suite in the order they first appear.
func Pkgs(es []Entry) []string {
	var ps []string
	for _, e := range es {
		if !slices.Contains(ps, e.Pkg) {
			ps = append(ps, e.Pkg)
		}
	}
	return ps
}

// ForPkg returns the patterns of a suite for package pkg.
func ForPkg(es []Entry, pkg string) []string {
	var out []string
	for _, e := range es {
		if e.Pkg == pkg {
			out = append(out, e.Pattern)
		}
	}
	return out
}
