package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseSuite(t *testing.T) {
	es, err := ParseSuite(strings.NewReader(`# a comment
kernels  ^BenchmarkDot$/^n=(1024|65536)$   # L1, L2

./attention/ ^BenchmarkStep$/./^avx512$
	./kernels	^BenchmarkGemm$/^n=64#01$
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Pkg: "./kernels", Pattern: "^BenchmarkDot$/^n=(1024|65536)$", Line: 2, Note: "L1, L2"},
		{Pkg: "./attention", Pattern: "^BenchmarkStep$/./^avx512$", Line: 4},
		{Pkg: "./kernels", Pattern: "^BenchmarkGemm$/^n=64#01$", Line: 5},
	}
	if !reflect.DeepEqual(es, want) {
		t.Errorf("ParseSuite:\n got %+v\nwant %+v", es, want)
	}
	if got := Pkgs(es); !slices.Equal(got, []string{"./kernels", "./attention"}) {
		t.Errorf("Pkgs = %v", got)
	}
	if got := ForPkg(es, "./kernels"); !slices.Equal(got, []string{"^BenchmarkDot$/^n=(1024|65536)$", "^BenchmarkGemm$/^n=64#01$"}) {
		t.Errorf("ForPkg = %v", got)
	}
	for _, bad := range []string{"./kernels", "./kernels a b", "./kernels ^Benchmark(Dot$"} {
		if _, err := ParseSuite(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseSuite(%q): no error", bad)
		}
	}
}

// The committed suite parses, names the three packages and every pattern
// selects leaves by their top-level name.
func TestDefaultSuite(t *testing.T) {
	es, err := ParseSuite(strings.NewReader(defaultSuite))
	if err != nil {
		t.Fatal(err)
	}
	if got := Pkgs(es); !slices.Equal(got, []string{"./kernels", "./attention", "./rnn"}) {
		t.Errorf("suite packages = %v", got)
	}
	for _, e := range es {
		if !strings.HasPrefix(e.Pattern, "^Benchmark") {
			t.Errorf("line %d: %q does not anchor a top-level benchmark", e.Line, e.Pattern)
		}
	}
}

func TestSplitPattern(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [][]string
	}{
		{"Dot", [][]string{{"Dot"}}},
		{"Dot|Softmax", [][]string{{"Dot"}, {"Softmax"}}},
		{"^A$/^n=(1|2)$/x", [][]string{{"^A$", "^n=(1|2)$", "x"}}},
		{"A/[/|]b|C", [][]string{{"A", "[/|]b"}, {"C"}}},
		{`A\/b/c\|d`, [][]string{{`A\/b`, `c\|d`}}},
		{"A/", [][]string{{"A", ""}}},
	} {
		if got := splitPattern(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitPattern(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMatch(t *testing.T) {
	p, err := CompilePattern("^BenchmarkDot$/^n=(1024|65536)$/^avx512|Softmax")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"BenchmarkDot/n=1024/avx512-512":   true,
		"BenchmarkDot/n=1024/avx2":         false,
		"BenchmarkDot/n=64/avx512-512":     false,
		"BenchmarkDot/n=1024":              false, // partial: only its sub-benchmarks run
		"BenchmarkSoftmax/n=16/avx2":       true,
		"BenchmarkLogSoftmax/Softmax/n=16": true, // unanchored
		"BenchmarkDotSoftmax/x/y":          true, // the second alternative
		"BenchmarkSum/n=1024/avx512-512":   false,
	} {
		if got := p.MatchLeaf(name); got != want {
			t.Errorf("MatchLeaf(%q) = %v, want %v", name, got, want)
		}
	}
	for top, want := range map[string]bool{"BenchmarkDot": true, "BenchmarkDotSoftmaxMatTVec": true, "BenchmarkSum": false} {
		if got := p.MatchTop(top); got != want {
			t.Errorf("MatchTop(%q) = %v, want %v", top, got, want)
		}
	}
}

// Exact selects its name and nothing else, even with the characters that
// benchmark names hold.
func TestExact(t *testing.T) {
	names := []string{
		"BenchmarkDot/n=1024/avx512-512",
		"BenchmarkDot/n=1024/avx512-5120",
		"BenchmarkMatVecFar/32000x512x4/avx2/other+zen4+zen5",
		"BenchmarkMatVecFar/32000x512x4/avx2/otherXzen4+zen5",
		"BenchmarkStep/Luong_dot/S=128,d=64/avx2",
		"BenchmarkX/a(b)|c/[d]",
		"BenchmarkX/a(b)|c/[d]#01",
		"BenchmarkGemmMicro",
		"BenchmarkGemmMicro2",
	}
	for _, n := range names {
		p, err := CompilePattern(Exact(n))
		if err != nil {
			t.Fatalf("Exact(%q) = %q: %v", n, Exact(n), err)
		}
		for _, m := range names {
			if got := p.MatchLeaf(m); got != (m == n) {
				t.Errorf("Exact(%q) = %q matches %q: %v", n, Exact(n), m, got)
			}
		}
	}
}

func TestOrder(t *testing.T) {
	got := Order(4)
	want := []Side{Old, New, New, Old, Old, New, New, Old}
	if !slices.Equal(got, want) {
		t.Errorf("Order(4) = %v, want %v", got, want)
	}
	for _, r := range []int{1, 2, 3, 10} {
		o := Order(r)
		var n [2]int
		first := 0
		for i, s := range o {
			n[s]++
			if i%2 == 0 && s == Old {
				first++
			}
			if i%2 == 1 && s == o[i-1] {
				t.Errorf("Order(%d): round %d runs %v twice", r, i/2, s)
			}
		}
		if n[Old] != r || n[New] != r || first != (r+1)/2 {
			t.Errorf("Order(%d) = %v: %d old, %d new, old first %d times", r, o, n[Old], n[New], first)
		}
	}
}

func TestParseListAndResults(t *testing.T) {
	list := "BenchmarkDot\nBenchmarkGemm\nok  \tgithub.com/heedml/heed/kernels\t0.005s\n"
	if got := ParseList(list); !slices.Equal(got, []string{"BenchmarkDot", "BenchmarkGemm"}) {
		t.Errorf("ParseList = %v", got)
	}
	out := `goos: linux
goarch: amd64
pkg: github.com/heedml/heed/kernels
cpu: Intel(R) Xeon(R) Processor
BenchmarkDot/n=1024/avx512-512-2         	 2975433	        35.93 ns/op	228004.30 MB/s
BenchmarkDot/n=1024/avx2-2               	 2975433	        35.93 ns/op
--- SKIP: BenchmarkGemmMicro
    gemm_micro_bench_test.go:12: no micro-kernel
BenchmarkGemm/n=64-2   	1	 1234 ns/op	  1.0 GFLOP/s
--- BENCH: BenchmarkGemm/n=64-2
    gemm_bench_test.go:40: note
BenchmarkDot/n=1024/avx512-512-2         	 2975433	        35.93 ns/op
PASS
`
	want := []string{"BenchmarkDot/n=1024/avx512-512", "BenchmarkDot/n=1024/avx2", "BenchmarkGemm/n=64"}
	if got := ParseResults(out, 2); !slices.Equal(got, want) {
		t.Errorf("ParseResults(procs 2) = %v, want %v", got, want)
	}
	if got := StripProcs("BenchmarkDot/avx512-512", 1); got != "BenchmarkDot/avx512-512" {
		t.Errorf("StripProcs(…, 1) = %q", got)
	}
}

func TestSplit(t *testing.T) {
	both, a, b := Split([]string{"x", "y", "z"}, []string{"w", "z", "x"})
	if !slices.Equal(both, []string{"x", "z"}) || !slices.Equal(a, []string{"y"}) || !slices.Equal(b, []string{"w"}) {
		t.Errorf("Split = %v, %v, %v", both, a, b)
	}
}

// benchstatCSV is benchstat's -format csv output for two files of two
// packages (the second table's config repeats only its pkg line).
const benchstatCSV = `goos: linux
goarch: amd64
pkg: github.com/heedml/heed/kernels
cpu: Intel(R) Xeon(R) Processor
,old.txt,,new.txt,,,
,sec/op,CI,sec/op,CI,vs base,P
Dot/n=64/avx512-512,6.0e-09,1%,6.6e-09,2%,+10.00%,p=0.000 n=10
Dot/n=1024/avx512-512,2.9e-08,1%,2.95e-08,1%,+1.72%,p=0.001 n=10
Dot/n=65536/avx2,2.9e-06,1%,3.2e-06,9%,~,p=0.190 n=10
Sum/n=64/avx2,6.0e-09,1%,5.0e-09,1%,-16.67%,p=0.000 n=10
geomean,1.3e-08,,1.4e-08,,+3.00%,

,old.txt,,new.txt,,,
,B/s,CI,B/s,CI,vs base,P
Dot/n=64/avx512-512,8.4e+10,1%,7.6e+10,2%,-9.09%,p=0.000 n=10
Dot/n=1024/avx512-512,2.8e+11,1%,2.75e+11,1%,-1.70%,p=0.001 n=10
geomean,1.5e+11,,1.4e+11,,-5.0%,

pkg: github.com/heedml/heed/attention
,old.txt,,new.txt,,,
,cpu-sec/op,CI,cpu-sec/op,CI,vs base,P
"Step/Luong_dot/S=128,d=64/avx512",1.0e-06,1%,1.05e-06,1%,+5.00%,p=0.030 n=10+9
"Step/cosine/S=128,d=64/avx512",1.0e-06,1%,1.05e-06,1%,+5.00%,p=0.060 n=10
geomean,1.0e-06,,1.05e-06,,+5.00%,

,old.txt,,new.txt,,,
,allocs/op,CI,allocs/op,CI,vs base,P
"Step/Luong_dot/S=128,d=64/avx512",0,0%,3,0%,+∞%,p=0.000 n=10
`

func TestParseBenchstatCSVAndSlower(t *testing.T) {
	rows, err := ParseBenchstatCSV(benchstatCSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 {
		t.Fatalf("%d rows, want 9: %+v", len(rows), rows)
	}
	r := rows[0]
	if r.Pkg != "github.com/heedml/heed/kernels" || r.Name != "Dot/n=64/avx512-512" || r.Unit != "sec/op" || r.Old != 6e-9 || r.New != 6.6e-9 || r.Delta != 10 || r.P != 0 || r.N != "10" {
		t.Errorf("row 0 = %+v", r)
	}
	if !math.IsNaN(rows[2].Delta) || rows[2].P != 0.19 {
		t.Errorf("row 2 (~) = %+v", rows[2])
	}
	if r := rows[6]; r.Pkg != "github.com/heedml/heed/attention" || r.Name != "Step/Luong_dot/S=128,d=64/avx512" || r.Unit != "cpu-sec/op" || r.N != "10+9" {
		t.Errorf("row 6 = %+v", r)
	}
	var got []string
	for _, r := range Slower(rows, 0.05, 2) {
		got = append(got, shortPkg(r.Pkg)+" "+r.Name+" "+r.Unit)
	}
	// Dot/n=1024 moved by 1.7% (under the threshold), Dot/n=65536 is not
	// significant, Sum got faster, cosine has p ≥ 0.05, allocs say nothing
	// of speed.
	want := []string{"kernels Dot/n=64/avx512-512 sec/op", "kernels Dot/n=64/avx512-512 B/s", "attention Step/Luong_dot/S=128,d=64/avx512 cpu-sec/op"}
	if !slices.Equal(got, want) {
		t.Errorf("Slower = %q, want %q", got, want)
	}
	if n := len(Slower(rows, 0.05, 12)); n != 0 {
		t.Errorf("Slower with threshold 12%%: %d rows, want 0", n)
	}
}

func TestDirection(t *testing.T) {
	for unit, want := range map[string]int{"sec/op": -1, "cpu-sec/op": -1, "cpu-ns/op": -1, "B/s": 1, "GFLOP/s": 1, "cpu-GFLOP/s": 1, "B/op": 0, "allocs/op": 0, "caches": 0} {
		if got := Direction(unit); got != want {
			t.Errorf("Direction(%q) = %d, want %d", unit, got, want)
		}
	}
}

// The real benchstat, if the pinned one is in the module cache or
// installable, parses into the same rows as its CSV: a check that the CSV
// layout this command reads is the one benchstat writes. Skipped offline.
func TestBenchstatCSVLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	bs, err := installBenchstat(t.Context(), dir)
	if err != nil {
		t.Skipf("benchstat not installable here: %v", err)
	}
	var old, new strings.Builder
	old.WriteString("pkg: example.com/p\n")
	new.WriteString("pkg: example.com/p\n")
	for i := range 8 {
		old.WriteString("BenchmarkA/x=1,y=2\t100\t" + strconv.Itoa(1000+i) + " ns/op\t" + strconv.Itoa(50+i%2) + " MB/s\n")
		new.WriteString("BenchmarkA/x=1,y=2\t100\t" + strconv.Itoa(1200+i) + " ns/op\t" + strconv.Itoa(40+i%2) + " MB/s\n")
	}
	for name, s := range map[string]string{"old.txt": old.String(), "new.txt": new.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runIn(t.Context(), dir, nil, bs, "-format", "csv", "old.txt", "new.txt")
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	rows, err := ParseBenchstatCSV(out)
	if err != nil {
		t.Fatal(err)
	}
	sl := Slower(rows, 0.05, 2)
	if len(sl) != 2 || sl[0].Name != "A/x=1,y=2" || sl[0].Pkg != "example.com/p" || sl[0].Unit != "sec/op" || sl[1].Unit != "B/s" {
		t.Errorf("from benchstat's CSV:\n%s\nrows %+v, slower %+v", out, rows, sl)
	}
}

func TestLeafOf(t *testing.T) {
	leaves := []leaf{{pkg: "./kernels", name: "BenchmarkDot/n=1024/avx2"}, {pkg: "./attention", name: "BenchmarkDot/n=1024/avx2"}, {pkg: "./bench/internal/roof", name: "BenchmarkFMA/zmm×8"}}
	for _, c := range []struct {
		pkg, name string
		want      int
	}{
		{"github.com/heedml/heed/kernels", "Dot/n=1024/avx2", 0},
		{"github.com/heedml/heed/attention", "Dot/n=1024/avx2", 1},
		{"github.com/heedml/heed/bench/internal/roof", "FMA/zmm×8", 2},
		{"github.com/heedml/heed/rnn", "Dot/n=1024/avx2", -1},
		{"github.com/heedml/heed/kernels", "Dot/n=1024", -1},
	} {
		l, ok := leafOf(leaves, Row{Pkg: c.pkg, Name: c.name})
		if c.want < 0 {
			if ok {
				t.Errorf("leafOf(%s %s) = %v, want none", c.pkg, c.name, l)
			}
			continue
		}
		if !ok || l != leaves[c.want] {
			t.Errorf("leafOf(%s %s) = %v %v, want %v", c.pkg, c.name, l, ok, leaves[c.want])
		}
	}
}
