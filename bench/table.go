package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Env describes where the results were measured.
type Env struct {
	CPU, Go, Command string
	CPUID            string // vendor, family and model (cpuid)
	OpenBLAS         string // OpenBLAS's configuration and core; "" when not built in
	Heed             string // heed's default ISA and, with AVX-512, its vector width
	Commit           string // heed's git commit, "+dirty" if modified; "" outside a checkout
	When             time.Time
}

// CurrentEnv returns the CPU model (from /proc/cpuinfo where readable), its
// vendor, family and model, OpenBLAS's core, the Go version and the given
// command.
func CurrentEnv(command string) Env {
	cpu := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if _, v, ok := strings.Cut(l, ":"); ok {
					cpu = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	cpu = fmt.Sprintf("%s, %d logical CPUs (%s/%s)", cpu, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	commit := ""
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			commit += "+dirty"
		}
	}
	return Env{CPU: cpu, CPUID: CPUID(), Heed: heedDefault(), OpenBLAS: OpenBLASLine(), Go: runtime.Version(), Command: command, Commit: commit, When: time.Now().UTC()}
}

// heedDefault describes the ISA and AVX-512 width heed chose for this CPU.
func heedDefault() string {
	if defaultWidth != 0 {
		return fmt.Sprintf("%s, %d-bit vectors for the kernels that come in both widths", defaultISA, defaultWidth)
	}
	return defaultISA.String()
}

// columns returns the implementations that appear in rs, in registry order.
func columns(rs []Result) []*Impl {
	seen := map[*Impl]bool{}
	var ims []*Impl
	for _, r := range rs {
		if !seen[r.Impl] {
			seen[r.Impl] = true
			ims = append(ims, r.Impl)
		}
	}
	sort.SliceStable(ims, func(i, j int) bool { return ims[i].order < ims[j].order })
	return ims
}

// Best returns heed's fastest single-threaded result and the fastest
// single-threaded peer result among rs (one case); nil where there is none.
func Best(rs []Result) (heed, peer *Result) {
	for i := range rs {
		r := &rs[i]
		if r.Impl.Parallel {
			continue
		}
		if r.Impl.Heed {
			if heed == nil || r.Ns < heed.Ns {
				heed = r
			}
		} else if peer == nil || r.Ns < peer.Ns {
			peer = r
		}
	}
	return heed, peer
}

func fmtNs(ns float64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%.1f ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.2f ms", ns/1e6)
}

func fmtRate(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// byCase groups rs by case, in order of first appearance.
func byCase(rs []Result) [][]Result {
	idx := map[*Case]int{}
	var g [][]Result
	for _, r := range rs {
		i, ok := idx[r.Case]
		if !ok {
			i = len(g)
			idx[r.Case] = i
			g = append(g, nil)
		}
		g[i] = append(g[i], r)
	}
	return g
}

// WriteMarkdown writes the report: environment, ceilings, one table per
// kernel (throughput and fraction of the roofline per implementation, heed's
// best time and its speed-up over the best single-threaded peer), and notes.
func WriteMarkdown(w io.Writer, env Env, ceil Ceilings, rs []Result) {
	fmt.Fprintf(w, "# heed benchmark results\n\n")
	fmt.Fprintf(w, "Measured %s on **%s** with %s by `%s`", env.When.Format("2006-01-02 15:04 MST"), env.CPU, env.Go, env.Command)
	if env.Commit != "" {
		fmt.Fprintf(w, " at heed commit %s", env.Commit)
	}
	fmt.Fprintf(w, ".\nCPU: %s.", env.CPUID)
	if env.Heed != "" {
		fmt.Fprintf(w, " heed's default: %s.", env.Heed)
	}
	if env.OpenBLAS != "" {
		fmt.Fprintf(w, " OpenBLAS: %s.", env.OpenBLAS)
	}
	fmt.Fprintf(w, "\n")
	fmt.Fprintf(w, "Each figure is the median of several timing rounds in one process, one measurement at a time; the machine may be shared, so read ratios rather than absolute numbers.\n\n")

	fmt.Fprintf(w, "## Ceilings (one core, measured in the same process with %s)\n\n", ceil.Loops)
	fmt.Fprintf(w, "| read-only streaming | buffer | GB/s |\n|---|---:|---:|\n")
	for _, l := range ceil.Levels {
		fmt.Fprintf(w, "| %s | %s | %.1f |\n", l.Name, fmtBytes(l.Bytes), l.GBs)
	}
	fmt.Fprintf(w, "| **FMA peak** | %s | **%.1f GFLOP/s** |\n\n", ceil.FMA, ceil.GFlops)
	WriteFMAPeak(w, ceil, rs)
	fmt.Fprintf(w, "## Summary\n\nheed's fastest single-threaded ISA against the fastest single-threaded peer, over the sizes measured:\n\n")
	for _, l := range Summary(rs) {
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintf(w, "\nTargets (issue 5):\n\n")
	WriteTargets(w, Targets(rs))
	if hasResults(rs, StepMemory) {
		fmt.Fprintf(w, "\nThe decode step from memory:\n\n")
		WriteTargets(w, DecodeTargets(rs))
	}
	fmt.Fprintf(w, "\nImplementations in this build:")
	hasC, hasSimd := false, false
	for _, im := range Impls() {
		fmt.Fprintf(w, " %s", im.Name)
		hasC = hasC || im.CGo
		hasSimd = hasSimd || strings.HasPrefix(im.Name, "highway")
	}
	fmt.Fprintf(w, ".")
	if !hasC {
		fmt.Fprintf(w, " OpenBLAS and SLEEF are not in this build: install libopenblas-dev and libsleef-dev and run `make bench-cgo`.")
	}
	if !hasSimd {
		fmt.Fprintf(w, " go-highway and simd/archsimd are not in this build: run `make bench-all` (GOEXPERIMENT=simd, with the cgo peers).")
	}
	fmt.Fprintf(w, " heed/generic is package fallback/ (pure Go) reached through kernels' validation.\n\n")
	fmt.Fprintf(w, "## Results\n\nEach cell below is `throughput (fraction of roofline)`. The roofline of a call is the larger of its bytes/s over the streaming ceiling of the cache level its working set fits in (`BW L1` … `BW memory`) and its flops/s over the FMA ceiling (`FMA`). Exp, Tanh and AdditiveScore are bounded by instruction throughput instead: their fraction (`FMA slot`) is elements per FMA slot of the FMA ceiling, so 1/fraction is what one element costs in FMA slots. Softmax takes the larger of that and its bandwidth fraction. The `bound` column names the ceiling of heed's best result.\n\n")

	for _, k := range Kernels {
		var kr []Result
		for _, r := range rs {
			if r.Case.Kernel == k {
				kr = append(kr, r)
			}
		}
		if len(kr) == 0 {
			continue
		}
		ims := columns(kr)
		fmt.Fprintf(w, "### %v (%s)\n\n| size | bound |", k, Unit(k))
		for _, im := range ims {
			fmt.Fprintf(w, " %s |", im.Name)
		}
		fmt.Fprintf(w, " heed best | time | ÷ best peer |\n|---|---|")
		for range ims {
			fmt.Fprintf(w, "---:|")
		}
		fmt.Fprintf(w, "---|---:|---:|\n")
		for _, g := range byCase(kr) {
			h, p := Best(g)
			bound := ""
			if h != nil {
				bound = h.Bound
			}
			fmt.Fprintf(w, "| %s | %s |", g[0].Case.Label, bound)
			for _, im := range ims {
				cell := "—"
				for _, r := range g {
					if r.Impl == im {
						cell = fmt.Sprintf("%s (%.2f)", fmtRate(r.Rate), r.Frac)
					}
				}
				fmt.Fprintf(w, " %s |", cell)
			}
			if h == nil {
				fmt.Fprintf(w, " — | — | — |\n")
				continue
			}
			ratio := "—"
			if p != nil {
				ratio = fmt.Sprintf("%.2f× (vs %s)", p.Ns/h.Ns, p.Impl.Name)
			}
			fmt.Fprintf(w, " %s | %s | %s |\n", h.Impl.Name, fmtNs(h.Ns), ratio)
		}
		fmt.Fprintln(w)
		var notes []string
		for _, im := range ims {
			if n := im.Note[k]; n != "" {
				notes = append(notes, fmt.Sprintf("%s: %s", im.Name, n))
			}
			if f := im.Format[k]; f != nil {
				notes = append(notes, fmt.Sprintf("%s: %s", im.Name, f.Note))
			}
			if t := im.Tol[k]; t > 0 {
				notes = append(notes, fmt.Sprintf("%s: its e^x or tanh is accurate to %.1g relative (heed: 2 ULP ≈ 1.2e-7), the tolerance TestPeersMatchHeed allows it", im.Name, t))
			}
		}
		if len(notes) > 0 {
			fmt.Fprintf(w, "Compositions and accuracy: %s.\n\n", strings.Join(notes, "; "))
		}
	}
	fmt.Fprintf(w, "Implementations marked ×P run P goroutines (vek-matmul: vek's own goroutines over all CPUs); they are shown beside the single-threaded ones but not ranked against them in `÷ best peer`. Single-threaded implementations are timed by the process's CPU time (Linux), so waiting for a CPU held by another process does not count; multi-threaded ones by the wall clock, so on a busy machine the multi-threaded figures understate.\n")
}

// hasResults reports whether rs holds results of kernel k.
func hasResults(rs []Result, k Kernel) bool {
	for _, r := range rs {
		if r.Case.Kernel == k {
			return true
		}
	}
	return false
}

func fmtBytes(b int64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%d MiB", b>>20)
	case b >= 1<<10:
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%d B", b)
}

// WriteCSV writes every result, one per line.
func WriteCSV(w io.Writer, rs []Result) {
	cw := csv.NewWriter(w)
	cw.Write([]string{"kernel", "size", "impl", "ns_per_call", "rate", "unit", "fraction_of_roofline", "bound"})
	for _, r := range rs {
		cw.Write([]string{r.Case.Kernel.String(), r.Case.Label, r.Impl.Name, fmt.Sprintf("%.2f", r.Ns),
			fmt.Sprintf("%.4g", r.Rate), Unit(r.Case.Kernel), fmt.Sprintf("%.4f", r.Frac), r.Bound})
	}
	cw.Flush()
}

// ReadCSV reads results that WriteCSV wrote, for redrawing the plots. Each
// implementation is this build's of that name, or a single-threaded peer
// standing in for one built elsewhere; each case has the kernel, label and
// size (from the label) that the plots need, and no inputs.
func ReadCSV(r io.Reader) ([]Result, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || len(recs[0]) < 8 || recs[0][0] != "kernel" {
		return nil, fmt.Errorf("bench: not a results CSV (header %q)", recs[:min(1, len(recs))])
	}
	byName := map[string]Kernel{}
	for _, k := range Kernels {
		byName[k.String()] = k
	}
	ims := map[string]*Impl{}
	for _, im := range Impls() {
		ims[im.Name] = im
	}
	cases := map[[2]string]*Case{}
	var rs []Result
	for i, rec := range recs[1:] {
		k, ok := byName[rec[0]]
		if !ok {
			return nil, fmt.Errorf("bench: line %d: unknown kernel %q", i+2, rec[0])
		}
		c := cases[[2]string{rec[0], rec[1]}]
		if c == nil {
			n, err := labelSize(rec[1])
			if err != nil {
				return nil, fmt.Errorf("bench: line %d: %v", i+2, err)
			}
			c = &Case{Kernel: k, N: n, Label: rec[1]}
			cases[[2]string{rec[0], rec[1]}] = c
		}
		im := ims[rec[2]]
		if im == nil {
			im = &Impl{Name: rec[2], Heed: strings.HasPrefix(rec[2], "heed"), order: 1000 + i}
			ims[rec[2]] = im
		}
		res := Result{Case: c, Impl: im, Bound: rec[7]}
		for j, f := range []*float64{&res.Ns, &res.Rate, &res.Frac} {
			if *f, err = strconv.ParseFloat(rec[3+j+j/2], 64); err != nil {
				return nil, fmt.Errorf("bench: line %d: %v", i+2, err)
			}
		}
		rs = append(rs, res)
	}
	return rs, nil
}

// labelSize returns the size a case label names: n in "n=4096", "64×64",
// "8×(256×256)", "S=512,d=128", "8×(S=512,d=128)", "T=S=128,d=256,4h".
func labelSize(label string) (int, error) {
	s := label
	if i := strings.LastIndex(s, "("); i >= 0 {
		s = s[i+1:]
	}
	for _, p := range []string{"T=", "S=", "n="} {
		s = strings.TrimPrefix(s, p)
	}
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(s[:end])
	if err != nil {
		return 0, fmt.Errorf("no size in label %q", label)
	}
	return n, nil
}

// Summary returns one line per kernel: heed's speed-up over the best
// single-threaded peer, smallest and largest over the sizes measured.
func Summary(rs []Result) []string {
	var out []string
	for _, k := range Kernels {
		lo, hi := math.Inf(1), math.Inf(-1)
		var loAt, hiAt string
		for _, g := range byCase(rs) {
			if g[0].Case.Kernel != k {
				continue
			}
			h, p := Best(g)
			if h == nil || p == nil {
				continue
			}
			s := p.Ns / h.Ns
			if s < lo {
				lo, loAt = s, g[0].Case.Label+" vs "+p.Impl.Name
			}
			if s > hi {
				hi, hiAt = s, g[0].Case.Label+" vs "+p.Impl.Name
			}
		}
		if !math.IsInf(lo, 1) {
			out = append(out, fmt.Sprintf("%v: heed %.2f× (%s) to %.2f× (%s) the best peer", k, lo, loAt, hi, hiAt))
		}
	}
	return out
}
