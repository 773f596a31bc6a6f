package main

import (
	"fmt"
	"regexp"
	"strings"
)

// Pattern is a go test -bench pattern as package testing reads it:
// alternatives separated by a "|" outside brackets and parentheses, each a
// list of levels separated by a "/" outside them, each level an unanchored
// regular expression matched against the same level of a benchmark's name.
type Pattern [][]*regexp.Regexp

// CompilePattern compiles s the way package testing splits and compiles
// -test.bench.
func CompilePattern(s string) (Pattern, error) {
	var p Pattern
	for _, alt := range splitPattern(s) {
		var levels []*regexp.Regexp
		for _, l := range alt {
			re, err := regexp.Compile(l)
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %v", s, err)
			}
			levels = append(levels, re)
		}
		p = append(p, levels)
	}
	return p, nil
}

// splitPattern splits s into alternatives and each into levels, at the "|"
// and "/" that are outside brackets and parentheses and not escaped.
func splitPattern(s string) [][]string {
	var alts [][]string
	var levels []string
	brackets, parens := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			brackets++
		case ']':
			if brackets--; brackets < 0 { // an unmatched ']' is literal
				brackets = 0
			}
		case '(':
			if brackets == 0 {
				parens++
			}
		case ')':
			if brackets == 0 {
				parens--
			}
		case '\\':
			i++
		case '/', '|':
			if brackets == 0 && parens == 0 {
				levels = append(levels, s[:i])
				if s[i] == '|' {
					alts = append(alts, levels)
					levels = nil
				}
				s, i = s[i+1:], 0
				continue
			}
		}
		i++
	}
	return append(alts, append(levels, s))
}

// match reports whether name (split at "/") matches p, and whether only
// partly (the name has fewer levels than the first alternative that
// matches), as package testing decides what to run: a partly matched
// benchmark runs only to reach its sub-benchmarks.
func (p Pattern) match(name []string) (ok, partial bool) {
	for _, alt := range p {
		ok = true
		for i, re := range alt {
			if i >= len(name) {
				break
			}
			if !re.MatchString(name[i]) {
				ok = false
				break
			}
		}
		if ok {
			return true, len(name) < len(alt)
		}
	}
	return false, false
}

// MatchLeaf reports whether p selects the benchmark named name (a leaf: one
// with no sub-benchmarks), as -test.bench p would run and report it.
func (p Pattern) MatchLeaf(name string) bool {
	ok, partial := p.match(strings.Split(name, "/"))
	return ok && !partial
}

// MatchTop reports whether p runs the top-level benchmark top (to report it
// or to reach its sub-benchmarks).
func (p Pattern) MatchTop(top string) bool {
	ok, _ := p.match([]string{top})
	return ok
}

// Exact returns the -test.bench pattern that selects the benchmark named
// name and nothing else at its depth: each level anchored and quoted.
func Exact(name string) string {
	levels := strings.Split(name, "/")
	for i, l := range levels {
		levels[i] = "^" + regexp.QuoteMeta(l) + "$"
	}
	return strings.Join(levels, "/")
}

// Join returns one -test.bench pattern that runs what any of ps runs.
func Join(ps []string) string {
	return strings.Join(ps, "|")
}
