// Command ab settles whether a change made any benchmark slower: it builds
// the test binaries of two versions of heed (BASE, a git revision, and NEW,
// another one or by default the working tree with its uncommitted changes),
// runs each benchmark of a fixed suite (suite.txt) in both, alternated round
// by round in fresh processes, and compares them with benchstat.
//
//	make bench-ab BASE=<rev> [NEW=<rev>] [BENCH=<regex>] [ROUNDS=10] [BENCHTIME=100ms]
//	              [PKGS='./kernels ./attention'] [WIDTHS=256,512] [PROCS=1] [CONFIRM=20] [FAIL=1]
//
// or, from bench/, go run ./cmd/ab -base <rev> …; go run ./cmd/ab -h lists
// the flags. Steps:
//
//  1. BASE (and NEW if given) are checked out with git worktree add --detach
//     in a temporary directory, removed at the end; NEW defaults to the
//     working tree as it is, built in place.
//  2. Each version's test binary of each package is built once, go test -c
//     with the same flags (-buildflags). A package missing from a version's
//     tree is reported and left out.
//  3. Per package, -test.list gives each binary's top-level benchmarks, and
//     a run of each suite pattern with -test.benchtime 1x its leaves (the
//     benchmarks without sub-benchmarks). Only leaves present in both
//     versions are timed; the others are listed. BENCH, if set, keeps the
//     leaves it matches (go test -bench syntax); with -suite none, BENCH
//     (default ".") is the pattern for every package in PKGS instead.
//  4. Each leaf runs 2×ROUNDS times, each a fresh process, -test.run '^$'
//     -test.bench <the leaf's exact anchored name> -test.count 1
//     -test.benchtime BENCHTIME, with GOMAXPROCS=PROCS (default 1): old then
//     new in even rounds, new then old in odd ones. Outputs go to old.txt
//     and new.txt in the output directory.
//  5. benchstat -alpha 0.05 old.txt new.txt is printed (and kept, with its
//     CSV), then the rows slower by more than -threshold percent (2) at
//     p < alpha: times that grew and rates that fell. With -confirm N
//     (CONFIRM=N) the benchmarks of those rows run again, N rounds more,
//     and only the rows slower again count: a suite of a few hundred rows
//     flags some by chance at alpha 0.05. With -fail (FAIL=1) the command
//     exits 1 if any row counts.
//
// HEED_ISA and HEED_AVX512_WIDTH, from the environment or -isa and -width,
// reach both binaries; -widths 256,512 runs the whole comparison once per
// HEED_AVX512_WIDTH, each in its own subdirectory (w256/, w512/). -old-as
// old=new1,new2 (OLDAS) times each old leaf with a name element old against
// the new leaves with that element new1, new2 (Renames).
package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// benchstatVersion is the golang.org/x/perf version whose benchstat this
// command installs (into its temporary directory) unless -benchstat names
// one.
const benchstatVersion = "v0.0.0-20260908200009-22c9c6c9d4da"

//go:embed suite.txt
var defaultSuite string

type options struct {
	base, new  string
	suite      string
	bench      string
	pkgs       []string
	rounds     int
	confirm    int
	benchtime  string
	timeout    string
	procs      int
	isa        string
	width      string
	widths     []string
	buildFlags []string
	alpha      float64
	threshold  float64
	fail       bool
	out        string
	benchstat  string
	keep       bool
	list       bool
	oldAs      Renames
}

func main() {
	var o options
	var pkgs, widths, buildFlags, procs, oldAs string
	flag.StringVar(&o.base, "base", "", "the old version: a git revision (required)")
	flag.StringVar(&o.new, "new", "", "the new version: a git revision (default: the working tree, uncommitted changes included)")
	flag.StringVar(&o.suite, "suite", "", "the suite file (default: the built-in suite.txt); \"none\": -bench over -pkgs instead")
	flag.StringVar(&o.bench, "bench", "", "keep only the suite's benchmarks this go test -bench pattern matches; with -suite none, the pattern itself (default .)")
	flag.StringVar(&pkgs, "pkgs", "", "packages (directories from the repository's root), space- or comma-separated (default: the suite's, or ./kernels ./attention ./rnn with -suite none)")
	flag.IntVar(&o.rounds, "rounds", 10, "rounds: runs of each benchmark per version")
	flag.IntVar(&o.confirm, "confirm", 0, "run the benchmarks found slower again, this many rounds, and report only those slower again (0: no confirmation)")
	flag.StringVar(&o.benchtime, "benchtime", "100ms", "-test.benchtime of each run")
	flag.StringVar(&o.timeout, "timeout", "10m", "-test.timeout of each run")
	flag.StringVar(&procs, "procs", "1", "GOMAXPROCS of the benchmark processes (empty: this machine's default)")
	flag.StringVar(&o.isa, "isa", os.Getenv("HEED_ISA"), "HEED_ISA for both versions (default: the environment's)")
	flag.StringVar(&o.width, "width", os.Getenv("HEED_AVX512_WIDTH"), "HEED_AVX512_WIDTH for both versions (default: the environment's)")
	flag.StringVar(&widths, "widths", "", "run everything once per HEED_AVX512_WIDTH in this comma-separated list (as 256,512)")
	flag.StringVar(&buildFlags, "buildflags", "", "extra go test -c flags, the same for both versions (as -tags purego)")
	flag.Float64Var(&o.alpha, "alpha", 0.05, "significance level (benchstat -alpha)")
	flag.Float64Var(&o.threshold, "threshold", 2, "report significant slowdowns above this many percent")
	flag.BoolVar(&o.fail, "fail", false, "exit 1 if any benchmark is significantly slower by more than -threshold")
	flag.StringVar(&o.out, "out", "", "output directory (default: a new heed-ab-<time> under the temporary directory)")
	flag.StringVar(&o.benchstat, "benchstat", "", "benchstat binary (default: golang.org/x/perf/cmd/benchstat@"+benchstatVersion+", installed for the run)")
	flag.BoolVar(&o.keep, "keep", false, "keep the worktrees and binaries")
	flag.BoolVar(&o.list, "list", false, "list the benchmarks each version has and would be timed, and stop")
	flag.StringVar(&oldAs, "old-as", "", "old=new1,new2;…: compare the old version's leaves with a name element old with the new version's leaves named new1, new2 there (as avx512=avx512-256,avx512-512 for a BASE before the AVX-512 leaves were split by width)")
	flag.Parse()
	if o.base == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: ab -base <rev> [-new <rev>] [flags]; ab -h lists the flags")
		os.Exit(2)
	}
	o.pkgs = strings.FieldsFunc(pkgs, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	for i, p := range o.pkgs {
		o.pkgs[i] = cleanPkg(p)
	}
	o.widths = strings.FieldsFunc(widths, func(r rune) bool { return r == ',' || r == ' ' })
	o.buildFlags = strings.Fields(buildFlags)
	var err error
	if o.oldAs, err = ParseRenames(oldAs); err != nil {
		fmt.Fprintln(os.Stderr, "ab: "+err.Error())
		os.Exit(2)
	}
	switch n, err := strconv.Atoi(procs); {
	case procs == "":
		o.procs = runtime.GOMAXPROCS(0)
	case err != nil || n < 1:
		fmt.Fprintf(os.Stderr, "ab: -procs %q: want a positive number\n", procs)
		os.Exit(2)
	default:
		o.procs = n
	}
	if o.rounds < 1 {
		fmt.Fprintln(os.Stderr, "ab: -rounds must be at least 1")
		os.Exit(2)
	}

	if o.rounds < 4 && !o.list {
		fmt.Fprintf(os.Stderr, "ab: warning: with %d rounds no difference can reach p < 0.05 (benchstat's test needs 4 runs of each)\n", o.rounds)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	slower, err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ab:", err)
		os.Exit(1)
	}
	if o.fail && slower > 0 {
		os.Exit(1)
	}
}

// version is one side of the comparison: its tree and its test binaries.
type version struct {
	side  Side
	label string            // the revision and commit, or "working tree"
	tree  string            // the root of its checkout
	bins  map[string]string // package → test binary; missing where the package is not in the tree
}

// run does everything and returns the number of significantly slower rows.
func run(ctx context.Context, o options) (int, error) {
	start := time.Now()
	repo, err := gitOut(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return 0, fmt.Errorf("not in a git repository: %v", err)
	}
	suite, err := loadSuite(o)
	if err != nil {
		return 0, err
	}
	if len(o.pkgs) == 0 {
		if suite != nil {
			o.pkgs = Pkgs(suite)
		} else {
			o.pkgs = []string{"./kernels", "./attention", "./rnn"}
		}
	}
	if suite == nil {
		bench := o.bench
		if bench == "" {
			bench = "."
		}
		for _, p := range o.pkgs {
			suite = append(suite, Entry{Pkg: p, Pattern: bench})
		}
		o.bench = ""
	}
	var filter Pattern
	if o.bench != "" {
		if filter, err = CompilePattern(o.bench); err != nil {
			return 0, err
		}
	}

	tmp, err := os.MkdirTemp("", "heed-ab-work-")
	if err != nil {
		return 0, err
	}
	var cleanups []func()
	defer func() {
		if o.keep {
			fmt.Fprintf(os.Stderr, "ab: kept %s\n", tmp)
			return
		}
		for _, c := range slices.Backward(cleanups) {
			c()
		}
		os.RemoveAll(tmp)
	}()
	out := o.out
	if out == "" {
		out = filepath.Join(os.TempDir(), "heed-ab-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}

	benchstat := o.benchstat
	if benchstat == "" {
		if benchstat, err = installBenchstat(ctx, filepath.Join(tmp, "tools")); err != nil {
			return 0, err
		}
	}

	// Materialise the two versions.
	vs := [2]*version{{side: Old}, {side: New}}
	for _, v := range vs {
		rev := o.base
		if v.side == New {
			rev = o.new
		}
		if rev == "" {
			v.tree, v.label = repo, "working tree"
			if st, _ := gitOut(ctx, repo, "status", "--porcelain", "--untracked-files=no"); st != "" {
				v.label += " (uncommitted changes included)"
			}
			if h, err := gitOut(ctx, repo, "rev-parse", "--short", "HEAD"); err == nil {
				v.label += " at " + h
			}
			continue
		}
		commit, err := gitOut(ctx, repo, "rev-parse", "--verify", "--short", rev+"^{commit}")
		if err != nil {
			return 0, fmt.Errorf("%s: not a commit: %v", rev, err)
		}
		v.label = rev
		if !strings.HasPrefix(commit, rev) {
			v.label += " (" + commit + ")"
		}
		v.tree = filepath.Join(tmp, v.side.String())
		fmt.Fprintf(os.Stderr, "ab: git worktree add --detach %s %s\n", v.tree, rev)
		if _, err := gitOut(ctx, repo, "worktree", "add", "--detach", v.tree, commit); err != nil {
			return 0, err
		}
		tree := v.tree
		cleanups = append(cleanups, func() {
			if _, err := gitOut(context.Background(), repo, "worktree", "remove", "--force", tree); err != nil {
				fmt.Fprintf(os.Stderr, "ab: removing worktree %s: %v\n", tree, err)
				os.RemoveAll(tree)
				gitOut(context.Background(), repo, "worktree", "prune")
			}
		})
	}
	fmt.Fprintf(os.Stderr, "ab: old: %s\nab: new: %s\n", vs[0].label, vs[1].label)

	// Build.
	for _, v := range vs {
		v.bins = map[string]string{}
		for _, pkg := range o.pkgs {
			bin, err := build(ctx, v, pkg, filepath.Join(tmp, "bin", v.side.String()), o.buildFlags)
			if err != nil {
				return 0, err
			}
			v.bins[pkg] = bin
		}
	}

	passes := []string{o.width}
	if len(o.widths) > 0 {
		passes = o.widths
	}
	var all []Row
	var slower []Row
	var notes []string
	for _, w := range passes {
		dir := out
		if len(o.widths) > 0 {
			dir = filepath.Join(out, "w"+w)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return 0, err
			}
		}
		env := childEnv(o, w)
		p := &pass{o: o, vs: vs, env: env, dir: dir, suite: suite, filter: filter, width: w}
		rows, sl, ns, err := p.run(ctx, benchstat)
		if err != nil {
			return 0, err
		}
		all, slower, notes = append(all, rows...), append(slower, sl...), append(notes, ns...)
	}
	if o.list {
		return 0, nil
	}
	if len(notes) > 0 {
		os.WriteFile(filepath.Join(out, "notes.txt"), []byte(strings.Join(notes, "\n")+"\n"), 0o644)
	}

	// Summary.
	fmt.Printf("\n== summary (%s): old %s, new %s; %d rounds, -benchtime %s, GOMAXPROCS=%d", time.Since(start).Round(time.Second), vs[0].label, vs[1].label, o.rounds, o.benchtime, o.procs)
	if o.isa != "" {
		fmt.Printf(", HEED_ISA=%s", o.isa)
	}
	fmt.Printf("; outputs in %s\n", out)
	for _, n := range notes {
		fmt.Println(n)
	}
	if len(slower) == 0 {
		fmt.Printf("no benchmark is slower by more than %g%% at p < %g (%d rows compared)\n", o.threshold, o.alpha, len(all))
		return 0, nil
	}
	fmt.Printf("%d rows slower by more than %g%% at p < %g (of %d compared):\n", len(slower), o.threshold, o.alpha, len(all))
	for _, r := range slower {
		fmt.Printf("  %s %s %s: %+.1f%% (p=%.3f n=%s)\n", shortPkg(r.Pkg), r.Name, r.Unit, r.Delta, r.P, r.N)
	}
	return len(slower), nil
}

// pass is one comparison of the two versions under one environment.
type pass struct {
	o      options
	vs     [2]*version
	env    []string
	dir    string
	suite  []Entry
	filter Pattern
	width  string
}

// leaf is one benchmark to time: name in the new version, old its name in
// the old one where -old-as renames it ("" if the same).
type leaf struct{ pkg, name, old string }

func (p *pass) run(ctx context.Context, benchstat string) (rows, slower []Row, notes []string, err error) {
	tag := ""
	if p.width != "" {
		tag = " [HEED_AVX512_WIDTH=" + p.width + "]"
	}
	note := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...) + tag
		fmt.Fprintln(os.Stderr, "ab: "+s)
		notes = append(notes, s)
	}
	var leaves []leaf
	for _, pkg := range p.o.pkgs {
		oldBin, newBin := p.vs[0].bins[pkg], p.vs[1].bins[pkg]
		switch {
		case oldBin == "" && newBin == "":
			note("%s: in neither version; skipped", pkg)
			continue
		case oldBin == "":
			note("%s: not in old (%s); skipped", pkg, p.vs[0].label)
			continue
		case newBin == "":
			note("%s: not in new (%s); skipped", pkg, p.vs[1].label)
			continue
		}
		var tops [2][]string
		for i, v := range p.vs {
			out, err := p.exec(ctx, v, pkg, "-test.list", "^Benchmark")
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%s %s -test.list: %v\n%s", v.side, pkg, err, out)
			}
			tops[i] = ParseList(out)
		}
		patterns := ForPkg(p.suite, pkg)
		if len(patterns) == 0 {
			note("%s: no suite patterns", pkg)
		}
		for _, pat := range patterns {
			cp, _ := CompilePattern(pat)
			var found [2][]string
			for i := range p.vs {
				for _, t := range tops[i] {
					if cp.MatchTop(t) && (p.filter == nil || p.filter.MatchTop(t)) {
						found[i] = append(found[i], t)
					}
				}
			}
			_, onlyOld, onlyNew := Split(found[0], found[1])
			if len(onlyOld) > 0 {
				note("%s %s: top-level benchmarks only in old: %s", pkg, pat, strings.Join(onlyOld, " "))
			}
			if len(onlyNew) > 0 {
				note("%s %s: top-level benchmarks only in new: %s", pkg, pat, strings.Join(onlyNew, " "))
			}
			if len(found[0]) == 0 && len(found[1]) == 0 {
				if p.filter == nil {
					note("%s %s: matches no benchmark in either version", pkg, pat)
				}
				continue
			}
			var names [2][]string
			oldName := map[string]string{} // new name → old, where renamed
			for i, v := range p.vs {
				if len(found[i]) == 0 {
					continue
				}
				run := pat
				if i == 0 {
					run = p.o.oldAs.Widen(pat)
				}
				out, err := p.exec(ctx, v, pkg, "-test.run", "^$", "-test.bench", run, "-test.benchtime", "1x", "-test.count", "1", "-test.timeout", p.o.timeout)
				if err != nil {
					return nil, nil, nil, fmt.Errorf("%s %s: listing %s: %v\n%s", v.side, pkg, pat, err, tail(out))
				}
				for _, orig := range ParseResults(out, p.o.procs) {
					as := []string{orig}
					if i == 0 {
						as = p.o.oldAs.Apply(orig)
					}
					for _, n := range as {
						if cp.MatchLeaf(n) && (p.filter == nil || p.filter.MatchLeaf(n)) && !slices.Contains(names[i], n) {
							names[i] = append(names[i], n)
							if n != orig {
								oldName[n] = orig
							}
						}
					}
				}
			}
			if len(names[0]) == 0 && len(names[1]) == 0 && p.filter == nil {
				note("%s %s: matches no leaf in either version", pkg, pat)
			}
			both, onlyOld, onlyNew := Split(names[0], names[1])
			if len(onlyOld) > 0 {
				note("%s %s: %d benchmarks only in old: %s", pkg, pat, len(onlyOld), strings.Join(onlyOld, " "))
			}
			if len(onlyNew) > 0 {
				note("%s %s: %d benchmarks only in new: %s", pkg, pat, len(onlyNew), strings.Join(onlyNew, " "))
			}
			for _, n := range both {
				if l := (leaf{pkg, n, oldName[n]}); !slices.Contains(leaves, l) {
					leaves = append(leaves, l)
				}
			}
		}
	}
	fmt.Fprintf(os.Stderr, "ab: %d benchmarks in both versions%s\n", len(leaves), tag)
	if p.o.list {
		for _, l := range leaves {
			fmt.Printf("%s\t%s\n", l.pkg, l.name)
		}
		return nil, nil, notes, nil
	}
	if len(leaves) == 0 {
		return nil, nil, notes, nil
	}

	failures, err := p.timeLeaves(ctx, leaves, p.o.rounds, p.dir)
	if err != nil {
		return nil, nil, nil, err
	}
	if failures > 0 {
		note("%d runs failed or reported no result (kept out of old.txt and new.txt); see %s", failures, filepath.Join(p.dir, "failures.txt"))
	}
	rows, err = p.compare(ctx, benchstat, p.dir, tag)
	if err != nil {
		return nil, nil, nil, err
	}
	slower = Slower(rows, p.o.alpha, p.o.threshold)

	// Confirmation: the flagged leaves again, in their own rounds; the
	// verdict is theirs.
	if p.o.confirm > 0 && len(slower) > 0 {
		var again []leaf
		for _, r := range slower {
			if l, ok := leafOf(leaves, r); ok && !slices.Contains(again, l) {
				again = append(again, l)
			}
		}
		dir := filepath.Join(p.dir, "confirm")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, nil, err
		}
		fmt.Fprintf(os.Stderr, "ab: confirming %d flagged benchmarks with %d rounds%s\n", len(again), p.o.confirm, tag)
		f, err := p.timeLeaves(ctx, again, p.o.confirm, dir)
		if err != nil {
			return nil, nil, nil, err
		}
		failures += f
		crows, err := p.compare(ctx, benchstat, dir, tag+" (confirmation)")
		if err != nil {
			return nil, nil, nil, err
		}
		confirmed := Slower(crows, p.o.alpha, p.o.threshold)
		note("confirmation: %d of the %d rows flagged are slower again, in %d more rounds (%s)", len(confirmed), len(slower), p.o.confirm, dir)
		slower = confirmed
	}
	if p.width != "" {
		for i := range slower {
			slower[i].Name += " [w" + p.width + "]"
		}
	}
	if failures > 0 && p.o.fail {
		// A run that fails is a result that cannot be compared: count it.
		slower = append(slower, Row{Name: fmt.Sprintf("(%d failed runs)", failures), Unit: "runs"})
	}
	return rows, slower, notes, nil
}

// leafOf returns the leaf of a benchstat row: benchstat drops the
// "Benchmark" prefix and names the package by its import path.
func leafOf(leaves []leaf, r Row) (leaf, bool) {
	for _, l := range leaves {
		if l.name == "Benchmark"+r.Name && strings.HasSuffix(r.Pkg, strings.TrimPrefix(l.pkg, ".")) {
			return l, true
		}
	}
	return leaf{}, false
}

// timeLeaves runs each leaf rounds times per version, alternated (Order),
// into dir/old.txt and dir/new.txt, and returns the number of runs that
// failed (logged in dir/failures.txt).
func (p *pass) timeLeaves(ctx context.Context, leaves []leaf, rounds int, dir string) (int, error) {
	files := [2]*os.File{}
	for i, name := range []string{"old.txt", "new.txt"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return 0, err
		}
		defer f.Close()
		// Configuration lines, the same in both files (benchstat keeps
		// results of differing configurations apart).
		fmt.Fprintf(f, "gomaxprocs: %d\n", p.o.procs)
		if p.o.isa != "" {
			fmt.Fprintf(f, "heed-isa: %s\n", p.o.isa)
		}
		if w := envValue(p.env, "HEED_AVX512_WIDTH"); w != "" {
			fmt.Fprintf(f, "heed-avx512-width: %s\n", w)
		}
		files[i] = f
	}
	failLog, err := os.Create(filepath.Join(dir, "failures.txt"))
	if err != nil {
		return 0, err
	}
	defer failLog.Close()
	failures := 0
	start := time.Now()
	order := Order(rounds)
	for i, l := range leaves {
		eta := ""
		if i > 0 {
			eta = fmt.Sprintf(", ~%s left", (time.Since(start) / time.Duration(i) * time.Duration(len(leaves)-i)).Round(time.Second))
		}
		as := ""
		if l.old != "" {
			as = " (old: " + l.old + ")"
		}
		fmt.Fprintf(os.Stderr, "ab: [%d/%d %s%s] %s %s%s\n", i+1, len(leaves), time.Since(start).Round(time.Second), eta, l.pkg, l.name, as)
		for _, side := range order {
			v := p.vs[side]
			name := l.name
			if side == Old && l.old != "" {
				name = l.old
			}
			out, err := p.exec(ctx, v, l.pkg, "-test.run", "^$", "-test.bench", Exact(name), "-test.count", "1", "-test.benchtime", p.o.benchtime, "-test.timeout", p.o.timeout)
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			if err != nil || !slices.Contains(ParseResults(out, p.o.procs), name) {
				failures++
				fmt.Fprintf(failLog, "=== %s %s %s: %v\n%s\n", side, l.pkg, name, err, out)
				fmt.Fprintf(os.Stderr, "ab: %s %s %s: failed (%v), see %s\n", side, l.pkg, name, err, failLog.Name())
				continue
			}
			io.WriteString(files[side], Relabel(out, name, l.name, p.o.procs))
		}
	}
	if failures == 0 {
		failLog.Close()
		os.Remove(failLog.Name())
	}
	for _, f := range files {
		if err := f.Sync(); err != nil {
			return 0, err
		}
	}
	return failures, nil
}

// compare runs benchstat on dir's old.txt and new.txt, prints its table and
// keeps it (benchstat.txt), and returns the rows of its CSV (benchstat.csv).
func (p *pass) compare(ctx context.Context, benchstat, dir, tag string) ([]Row, error) {
	alpha := fmt.Sprint(p.o.alpha)
	text, err := runIn(ctx, dir, nil, benchstat, "-alpha", alpha, "old.txt", "new.txt")
	if err != nil {
		return nil, fmt.Errorf("benchstat: %v\n%s", err, text)
	}
	fmt.Printf("\n== benchstat -alpha %s old.txt new.txt%s (%s)\n%s", alpha, tag, dir, text)
	os.WriteFile(filepath.Join(dir, "benchstat.txt"), []byte(text), 0o644)
	csvOut, err := runIn(ctx, dir, nil, benchstat, "-alpha", alpha, "-format", "csv", "old.txt", "new.txt")
	if err != nil {
		return nil, fmt.Errorf("benchstat -format csv: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "benchstat.csv"), []byte(csvOut), 0o644)
	return ParseBenchstatCSV(csvOut)
}

// exec runs a version's test binary of pkg in the package's directory.
func (p *pass) exec(ctx context.Context, v *version, pkg string, args ...string) (string, error) {
	return runIn(ctx, filepath.Join(v.tree, pkg), p.env, v.bins[pkg], args...)
}

// childEnv is the environment of the benchmark processes: this one's, with
// GOMAXPROCS, HEED_ISA and HEED_AVX512_WIDTH set (width, if not empty,
// overriding o.width).
func childEnv(o options, width string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "GOMAXPROCS" && k != "HEED_ISA" && k != "HEED_AVX512_WIDTH" {
			env = append(env, kv)
		}
	}
	env = append(env, "GOMAXPROCS="+strconv.Itoa(o.procs))
	if o.isa != "" {
		env = append(env, "HEED_ISA="+o.isa)
	}
	if width == "" {
		width = o.width
	}
	if width != "" {
		env = append(env, "HEED_AVX512_WIDTH="+width)
	}
	return env
}

func envValue(env []string, key string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// loadSuite returns the suite to run, or nil for -suite none.
func loadSuite(o options) ([]Entry, error) {
	switch o.suite {
	case "none":
		return nil, nil
	case "":
		return ParseSuite(strings.NewReader(defaultSuite))
	}
	f, err := os.Open(o.suite)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseSuite(f)
}

// build compiles the test binary of pkg in v's tree into dir, from the
// package's module root (the nearest go.mod above it in the tree), and
// returns its path, or "" if the tree has no such package or it has no
// tests.
func build(ctx context.Context, v *version, pkg, dir string, flags []string) (string, error) {
	pkgDir := filepath.Join(v.tree, pkg)
	if st, err := os.Stat(pkgDir); err != nil || !st.IsDir() {
		fmt.Fprintf(os.Stderr, "ab: %s: %s has no %s\n", v.side, v.label, pkg)
		return "", nil
	}
	mod := pkgDir
	for {
		if _, err := os.Stat(filepath.Join(mod, "go.mod")); err == nil {
			break
		}
		if mod == v.tree || filepath.Dir(mod) == mod {
			return "", fmt.Errorf("%s: no go.mod above %s", v.side, pkgDir)
		}
		mod = filepath.Dir(mod)
	}
	rel, err := filepath.Rel(mod, pkgDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(pkg, "./"), "/", "_")+".test")
	args := append([]string{"test", "-c", "-o", bin}, flags...)
	args = append(args, "./"+filepath.ToSlash(rel))
	fmt.Fprintf(os.Stderr, "ab: %s: (cd %s && go %s)\n", v.side, mod, strings.Join(args, " "))
	if out, err := runIn(ctx, mod, nil, goCmd(), args...); err != nil {
		return "", fmt.Errorf("%s: building %s: %v\n%s", v.side, pkg, err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintf(os.Stderr, "ab: %s: %s has no tests\n", v.side, pkg)
		return "", nil
	}
	return bin, nil
}

// installBenchstat installs the pinned benchstat into dir.
func installBenchstat(ctx context.Context, dir string) (string, error) {
	env := append(os.Environ(), "GOBIN="+dir, "GOFLAGS=", "GOWORK=off")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if out, err := runIn(ctx, dir, env, goCmd(), "install", "golang.org/x/perf/cmd/benchstat@"+benchstatVersion); err != nil {
		return "", fmt.Errorf("installing benchstat (or pass -benchstat): %v\n%s", err, out)
	}
	return filepath.Join(dir, "benchstat"), nil
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// runIn runs a command in dir (env nil: this process's) and returns its
// standard output, or with an error its standard output and error.
func runIn(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	out, err := runIn(ctx, "", nil, "git", args...)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(out))
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/heedml/heed/")
}

// tail returns the last lines of s.
func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}
