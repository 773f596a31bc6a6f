package main

import (
	"slices"
	"testing"
)

func TestParseRenames(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Renames
		bad  bool
	}{
		{in: "", want: Renames{}},
		{in: "avx512=avx512-256,avx512-512", want: Renames{"avx512": {"avx512-256", "avx512-512"}}},
		{in: "a=b; c=d e", want: Renames{"a": {"b"}, "c": {"d", "e"}}},
		{in: "avx512", bad: true},
		{in: "=x", bad: true},
		{in: "a=", bad: true},
		{in: "a/b=c", bad: true},
		{in: "a=b/c", bad: true},
		{in: "a=b;a=c", bad: true},
	} {
		got, err := ParseRenames(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("ParseRenames(%q) = %v, want an error", c.in, got)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("ParseRenames(%q) = %v, %v, want %v", c.in, got, err, c.want)
			continue
		}
		for k, v := range c.want {
			if !slices.Equal(got[k], v) {
				t.Errorf("ParseRenames(%q)[%q] = %v, want %v", c.in, k, got[k], v)
			}
		}
	}
}

func TestRenamesApply(t *testing.T) {
	r := Renames{"avx512": {"avx512-256", "avx512-512"}, "x": {"y"}}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"BenchmarkDot/n=1024/avx512", []string{"BenchmarkDot/n=1024/avx512", "BenchmarkDot/n=1024/avx512-256", "BenchmarkDot/n=1024/avx512-512"}},
		{"BenchmarkDot/n=1024/avx2", []string{"BenchmarkDot/n=1024/avx2"}},
		{"BenchmarkA/x/avx512", []string{"BenchmarkA/x/avx512", "BenchmarkA/y/avx512-256", "BenchmarkA/y/avx512-512"}},
		{"avx512", []string{"avx512"}}, // the top-level name is never renamed
		{"BenchmarkDot/avx512x", []string{"BenchmarkDot/avx512x"}},
	} {
		if got := r.Apply(c.name); !slices.Equal(got, c.want) {
			t.Errorf("Apply(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestRelabel(t *testing.T) {
	const out = "goos: linux\n" +
		"BenchmarkDot/n=1024/avx512    \t 100\t 35.9 ns/op\n" +
		"BenchmarkDot/n=1024/avx512-2  \t 100\t 35.9 ns/op\n" +
		"BenchmarkDot/n=1024/avx5120   \t 100\t 35.9 ns/op\n"
	for _, c := range []struct {
		procs int
		want  string
	}{
		{1, "goos: linux\n" +
			"BenchmarkDot/n=1024/avx512-512    \t 100\t 35.9 ns/op\n" +
			"BenchmarkDot/n=1024/avx512-2  \t 100\t 35.9 ns/op\n" +
			"BenchmarkDot/n=1024/avx5120   \t 100\t 35.9 ns/op\n"},
		{2, "goos: linux\n" +
			"BenchmarkDot/n=1024/avx512-512    \t 100\t 35.9 ns/op\n" +
			"BenchmarkDot/n=1024/avx512-512-2  \t 100\t 35.9 ns/op\n" +
			"BenchmarkDot/n=1024/avx5120   \t 100\t 35.9 ns/op\n"},
	} {
		if got := Relabel(out, "BenchmarkDot/n=1024/avx512", "BenchmarkDot/n=1024/avx512-512", c.procs); got != c.want {
			t.Errorf("Relabel, procs %d:\n%s\nwant\n%s", c.procs, got, c.want)
		}
	}
}

func TestRenamesWiden(t *testing.T) {
	r := Renames{"avx512": {"avx512-256", "avx512-512"}}
	const pat = "^BenchmarkDot$/^n=(1024|65536)$/^(avx2|avx512-256|avx512-512)$"
	w := r.Widen(pat)
	p, err := CompilePattern(w)
	if err != nil {
		t.Fatalf("Widen(%q) = %q: %v", pat, w, err)
	}
	for name, want := range map[string]bool{
		"BenchmarkDot/n=1024/avx512":     true,
		"BenchmarkDot/n=1024/avx2":       true,
		"BenchmarkDot/n=1024/avx512-512": true,
		"BenchmarkDot/n=64/avx512":       false,
		"BenchmarkSum/n=1024/avx512":     false,
		"BenchmarkDot/n=1024/avx5120":    false,
	} {
		if got := p.MatchLeaf(name); got != want {
			t.Errorf("Widen(%q) = %q matches %s: %v, want %v", pat, w, name, got, want)
		}
	}
	if got := (Renames{}).Widen(pat); got != pat {
		t.Errorf("no renames: Widen = %q, want %q", got, pat)
	}
	if got, want := r.Widen("^A$/x|^B$"), "^A$/(x|^(?:avx512)$)|^B$"; got != want {
		t.Errorf("Widen of two alternatives = %q, want %q", got, want)
	}
}
