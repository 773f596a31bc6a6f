package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Renames maps an element of the old version's benchmark names (the parts
// between slashes) to the elements the new version gives the same
// benchmark (-old-as): where the old one had a leaf .../avx512 at the
// CPU's one AVX-512 width, the new one may time .../avx512-256 and
// .../avx512-512.
type Renames map[string][]string

// ParseRenames parses -old-as: "old=new1,new2" pairs separated by
// semicolons.
func ParseRenames(s string) (Renames, error) {
	r := Renames{}
	for pair := range strings.SplitSeq(s, ";") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		from, to, ok := strings.Cut(pair, "=")
		targets := strings.FieldsFunc(to, func(c rune) bool { return c == ',' || c == ' ' })
		if !ok || from == "" || strings.Contains(from, "/") || len(targets) == 0 {
			return nil, fmt.Errorf("-old-as %q: want old=new[,new…] pairs separated by ;", pair)
		}
		for _, t := range targets {
			if strings.Contains(t, "/") {
				return nil, fmt.Errorf("-old-as %q: %q is not one name element", pair, t)
			}
		}
		if _, dup := r[from]; dup {
			return nil, fmt.Errorf("-old-as: %q renamed twice", from)
		}
		r[from] = targets
	}
	return r, nil
}

// Apply returns the names an old benchmark name may stand for in the new
// version: the name itself, then, if an element has a rename, the name with
// each such element replaced by each of its targets (one name per
// combination). Each is paired with the new version's leaf of that name, if
// it has one: a package whose leaves kept the old element matches as before.
func (r Renames) Apply(name string) []string {
	renamed := r.replace(name)
	if len(renamed) == 1 && renamed[0] == name {
		return renamed
	}
	return append([]string{name}, renamed...)
}

// replace returns name with each element that has a rename replaced by each
// of its targets.
func (r Renames) replace(name string) []string {
	out := []string{""}
	for i, e := range strings.Split(name, "/") {
		alts := []string{e}
		if t, ok := r[e]; ok && i > 0 {
			alts = t
		}
		var next []string
		for _, prefix := range out {
			for _, a := range alts {
				if i > 0 {
					a = prefix + "/" + a
				}
				next = append(next, a)
			}
		}
		out = next
	}
	return out
}

// Widen returns the -test.bench pattern that runs, in the old version, what
// pat runs plus the benchmarks named with an old element where pat has a
// level (below the top) that the element's renames would meet: each such
// level l becomes (l|^(?:old…)$). The renamed leaves are then kept or
// dropped by pat itself (MatchLeaf of the new name).
func (r Renames) Widen(pat string) string {
	if len(r) == 0 {
		return pat
	}
	var olds []string
	for from := range r {
		olds = append(olds, regexp.QuoteMeta(from))
	}
	slices.Sort(olds)
	extra := "|^(?:" + strings.Join(olds, "|") + ")$)"
	var alts []string
	for _, alt := range splitPattern(pat) {
		for i := 1; i < len(alt); i++ {
			alt[i] = "(" + alt[i] + extra
		}
		alts = append(alts, strings.Join(alt, "/"))
	}
	return Join(alts)
}

// Relabel returns a test binary's benchmark output with the result lines of
// the benchmark old (with or without package testing's -<procs> suffix)
// named new, so that benchstat pairs an old leaf with its new name.
func Relabel(out, old, new string, procs int) string {
	if old == new {
		return out
	}
	suffix := "()"
	if procs != 1 {
		suffix = "(-" + strconv.Itoa(procs) + ")?"
	}
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(old) + suffix + `(\s)`)
	return re.ReplaceAllString(out, new+"${1}${2}")
}
