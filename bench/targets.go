package bench

import (
	"fmt"
	"io"
	"strings"
)

// Target is one of the performance goals (README, bench/PERFORMANCE.md)
// checked against measured results.
type Target struct {
	Goal   string
	Met    bool
	Detail string // the measured figures: the worst case first
	Skip   string // why it could not be checked, if it could not
}

// Targets checks the results against the goals (single-threaded heed, best
// ISA, against single-threaded peers):
//   - heed ahead of every Go peer on every kernel at n ≥ 256, and not behind
//     any at n = 16 and 64;
//   - Dot and MatVec at least 0.9× OpenBLAS where the working set is in L1 or
//     L2, and at least 0.9 of the streaming ceiling from memory;
//   - Exp and Tanh at least 2× SLEEF's AVX2 speed (u10 Exp, u35 and u10 Tanh).
func Targets(rs []Result) []Target {
	groups := byCase(rs)
	var ts []Target

	for _, small := range []bool{false, true} {
		t := Target{Goal: "heed ahead of every Go peer on every kernel at n ≥ 256", Met: true}
		if small {
			t.Goal = "heed not behind any Go peer at n = 16 and 64"
		}
		var misses []string
		worst, worstAt := 0.0, ""
		for _, g := range groups {
			n := g[0].Case.N
			if small != (n < 256) {
				continue
			}
			h, _ := Best(g)
			if h == nil {
				continue
			}
			for _, r := range g {
				if r.Impl.Heed || r.Impl.CGo || r.Impl.Parallel {
					continue
				}
				s := r.Ns / h.Ns
				ok := s > 1
				if small {
					ok = s >= 1
				}
				at := fmt.Sprintf("%v %s vs %s %.2f×", g[0].Case.Kernel, g[0].Case.Label, r.Impl.Name, s)
				if !ok {
					t.Met = false
					misses = append(misses, at)
				}
				if worstAt == "" || s < worst {
					worst, worstAt = s, at
				}
			}
		}
		t.Detail = detail(worstAt, misses)
		ts = append(ts, t)
	}

	vsC := func(goal string, kernels []Kernel, peer string, bounds []string, min float64) Target {
		t := Target{Goal: goal, Met: true}
		var misses []string
		worst, worstAt := 0.0, ""
		for _, g := range groups {
			if !hasKernel(kernels, g[0].Case.Kernel) {
				continue
			}
			h, _ := Best(g)
			if h == nil || !hasBound(bounds, h.Bound) {
				continue
			}
			for _, r := range g {
				if r.Impl.Name != peer {
					continue
				}
				s := r.Ns / h.Ns
				at := fmt.Sprintf("%v %s vs %s %.2f×", g[0].Case.Kernel, g[0].Case.Label, peer, s)
				if s < min {
					t.Met = false
					misses = append(misses, at)
				}
				if worstAt == "" || s < worst {
					worst, worstAt = s, at
				}
			}
		}
		if worstAt == "" {
			t.Met, t.Skip = false, peer+" not measured (build with make bench-cgo)"
		}
		t.Detail = detail(worstAt, misses)
		return t
	}
	ts = append(ts, vsC("Dot and MatVec ≥ 0.9× OpenBLAS at L1/L2 sizes", []Kernel{Dot, MatVec}, "openblas", []string{"BW L1", "BW L2"}, 0.9))

	t := Target{Goal: "Dot and MatVec ≥ 0.9 of the streaming ceiling from memory", Met: true}
	var misses []string
	worst, worstAt := 0.0, ""
	for _, g := range groups {
		if k := g[0].Case.Kernel; k != Dot && k != MatVec {
			continue
		}
		h, _ := Best(g)
		if h == nil || h.Bound != "BW memory" {
			continue
		}
		at := fmt.Sprintf("%v %s %s %.2f of ceiling", g[0].Case.Kernel, g[0].Case.Label, h.Impl.Name, h.Frac)
		if h.Frac < 0.9 {
			t.Met = false
			misses = append(misses, at)
		}
		if worstAt == "" || h.Frac < worst {
			worst, worstAt = h.Frac, at
		}
	}
	t.Detail = detail(worstAt, misses)
	ts = append(ts, t)

	ts = append(ts,
		vsC("Exp ≥ 2× SLEEF expf u10 AVX2 (Debian's SLEEF has no u35 expf)", []Kernel{Exp}, "sleef-u10/avx2", nil, 2),
		vsC("Tanh ≥ 2× SLEEF tanhf u35 AVX2", []Kernel{Tanh}, "sleef-u35/avx2", nil, 2),
		vsC("Tanh ≥ 2× SLEEF tanhf u10 AVX2", []Kernel{Tanh}, "sleef-u10/avx2", nil, 2))
	return ts
}

func hasKernel(ks []Kernel, k Kernel) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// hasBound reports whether b is one of bounds (nil: any).
func hasBound(bounds []string, b string) bool {
	if bounds == nil {
		return true
	}
	for _, x := range bounds {
		if x == b {
			return true
		}
	}
	return false
}

func detail(worst string, misses []string) string {
	if worst == "" {
		return ""
	}
	if len(misses) == 0 {
		return "worst: " + worst
	}
	n := len(misses)
	if n > 6 {
		misses = append(misses[:6:6], fmt.Sprintf("and %d more", n-6))
	}
	return fmt.Sprintf("missed at %d: %s", n, strings.Join(misses, "; "))
}

// WriteTargets writes the targets as a markdown list.
func WriteTargets(w io.Writer, ts []Target) {
	for _, t := range ts {
		mark := "met"
		switch {
		case t.Skip != "":
			mark = "not checked: " + t.Skip
		case !t.Met:
			mark = "**missed**"
		}
		fmt.Fprintf(w, "- %s — %s", t.Goal, mark)
		if t.Detail != "" {
			fmt.Fprintf(w, " (%s)", t.Detail)
		}
		fmt.Fprintln(w)
	}
}
