package bench

import (
	"fmt"
	"io"
)

// WritePerformance writes a short section for README: the command and CPU, one
// row per kernel at its smallest, a middle and its largest size (heed's best
// single-threaded result, its fraction of the ceiling, and its speed-up over
// the best Go peer and the best C library), and the targets. RESULTS.md has
// every figure.
func WritePerformance(w io.Writer, env Env, rs []Result) {
	fmt.Fprintf(w, "Measured with `%s` on %s (%s), %s, %s, heed commit %s (full tables: bench/RESULTS.md, plots: bench/results.svg, bench/results-ratio.svg).",
		env.Command, env.CPU, env.CPUID, env.Go, env.When.Format("2006-01-02"), env.Commit)
	if env.OpenBLAS != "" {
		fmt.Fprintf(w, " OpenBLAS: %s.", env.OpenBLAS)
	}
	fmt.Fprintf(w, " Speed-up = peer time ÷ heed time, single-threaded.\n\n")
	fmt.Fprintf(w, "| kernel | size | heed | time | throughput | of ceiling | vs best Go peer | vs best C library |\n|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, k := range Kernels {
		var gs [][]Result
		for _, g := range byCase(rs) {
			if g[0].Case.Kernel == k {
				gs = append(gs, g)
			}
		}
		if len(gs) == 0 {
			continue
		}
		pick := []int{0, len(gs) / 2, len(gs) - 1}
		for i, gi := range pick {
			if i > 0 && gi == pick[i-1] {
				continue
			}
			g := gs[gi]
			h, _ := Best(g)
			if h == nil {
				continue
			}
			var goPeer, cPeer *Result
			for j := range g {
				r := &g[j]
				switch {
				case r.Impl.Heed || r.Impl.Parallel:
				case r.Impl.CGo:
					if cPeer == nil || r.Ns < cPeer.Ns {
						cPeer = r
					}
				default:
					if goPeer == nil || r.Ns < goPeer.Ns {
						goPeer = r
					}
				}
			}
			vs := func(p *Result) string {
				if p == nil {
					return "—"
				}
				return fmt.Sprintf("%.2f× %s", p.Ns/h.Ns, p.Impl.Name)
			}
			fmt.Fprintf(w, "| %v | %s | %s | %s | %s %s | %.2f %s | %s | %s |\n", k, g[0].Case.Label, h.Impl.Name, fmtNs(h.Ns),
				fmtRate(h.Rate), Unit(k), h.Frac, h.Bound, vs(goPeer), vs(cPeer))
		}
	}
	fmt.Fprintf(w, "\nTargets:\n\n")
	WriteTargets(w, Targets(rs))
	if hasResults(rs, StepMemory) {
		WriteTargets(w, DecodeTargets(rs))
	}
}
