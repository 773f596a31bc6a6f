// Command fit derives the polynomial coefficients of heed's Exp and Tanh by a
// discrete minimax fit (Lawson's iteratively reweighted least squares, in
// float64, on a Chebyshev basis) and writes them as Go constants into
// internal/coef of the core module. Run from asmgen/ (make generate does):
//
//	go run ./fit [-out ../internal/coef/coef.go]
//
// Both fits minimise the maximum relative error of the approximation:
//
//   - Exp: eʳ ≈ 1 + c₁r + … + c₆r⁶ on [−ln2/2, ln2/2] (the reduced range of
//     r = x − n·ln2), with the constant term fixed at 1 so that the result is
//     exact at r = 0.
//   - TanhE: expm1(2r)/2 ≈ r + r²·(1 + e₁r + … + e₄r⁴) on [−ln2/4, ln2/4], for
//     Tanh's E = expm1(2a) = 2ⁿ⁺¹·expm1(2r)/2 + 2ⁿ − 1 with r = a − n·ln2/2.
//     Relative to expm1 (not to eʳ), so that it stays accurate as r → 0,
//     where tanh(a) = E/(E+2) passes E's relative error on undamped. The two
//     lowest coefficients are fixed at 1: the relative error then vanishes
//     like r² at 0, which the exhaustive sweep needs (with e₀ free as well,
//     8 inputs of Tanh reach 3 ULP; a degree more costs an FMA).
//
// Lawson's algorithm reweights a least-squares fit on a dense grid (8000
// Chebyshev-spaced points) by the error at each point until the weights
// concentrate on the equioscillation points of the minimax solution. The
// coefficients are rounded to float32, and the reported error is that of the
// rounded coefficients, evaluated in float64 on a denser grid. go run ./fit
// -survey prints the error of each degree, which chose the degrees above
// (for Tanh with the exhaustive sweep of kernels: degree 3 of the bracket
// reaches 15 ULP, degree 4 stays within 2).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"sync"
)

const (
	expDegree  = 6 // Exp: c₁..c₆
	tanhEDeg   = 4 // Tanh's expm1: e₁..e₄
	gridPoints = 8000
	iterations = 3000
)

// problem is a weighted linear minimax problem: find b minimising
// max |w(p)·(f(p) − Σ b_j·g(p)·T_j(s(p)))| over grid points p, with T_j the
// Chebyshev polynomials and s(p) ∈ [−1, 1].
type problem struct {
	pts        []float64
	f, w, g, s func(p float64) float64
	n          int // number of basis functions
}

// lawson returns the coefficients b_j of the discrete minimax fit. The basis
// values sit in one flat slice (row i at i·n) and every sum accumulates in
// the order of the grid, so the result does not depend on how the loops are
// laid out.
func (pr problem) lawson() []float64 {
	m, n := len(pr.pts), pr.n
	phi := make([]float64, m*n)
	f := make([]float64, m)
	w := make([]float64, m)
	for i, p := range pr.pts {
		row := phi[i*n : i*n+n]
		copy(row, cheb(pr.s(p), n))
		for j := range row {
			row[j] *= pr.g(p)
		}
		f[i], w[i] = pr.f(p), pr.w(p)
	}
	omega := make([]float64, m)
	for i := range omega {
		omega[i] = 1 / float64(m)
	}
	var b []float64
	for it := 0; it < iterations; it++ {
		// Normal equations of min Σ ω_i·w_i²·(f_i − φ_i·b)².
		a := make([]float64, n*n)
		rhs := make([]float64, n)
		for i := 0; i < m; i++ {
			ww := omega[i] * w[i] * w[i]
			row := phi[i*n : i*n+n]
			for j, pj := range row {
				t := ww * pj
				rhs[j] += t * f[i]
				aj := a[j*n : j*n+n]
				for k, pk := range row {
					aj[k] += t * pk
				}
			}
		}
		rows := make([][]float64, n)
		for j := range rows {
			rows[j] = a[j*n : j*n+n]
		}
		b = solve(rows, rhs)
		var sum float64
		for i := 0; i < m; i++ {
			e := f[i]
			for j, pj := range phi[i*n : i*n+n] {
				e -= pj * b[j]
			}
			omega[i] *= math.Abs(w[i] * e)
			sum += omega[i]
		}
		for i := range omega {
			omega[i] /= sum
		}
	}
	return b
}

// cheb returns T_0(s)..T_{n−1}(s).
func cheb(s float64, n int) []float64 {
	t := make([]float64, n)
	t[0] = 1
	if n > 1 {
		t[1] = s
	}
	for j := 2; j < n; j++ {
		t[j] = 2*s*t[j-1] - t[j-2]
	}
	return t
}

// chebToMono converts Σ b_j·T_j(s) to Σ m_k·s^k.
func chebToMono(b []float64) []float64 {
	n := len(b)
	// rows of T_j in monomials
	tm := [][]float64{make([]float64, n), make([]float64, n)}
	tm[0][0] = 1
	if n > 1 {
		tm[1][1] = 1
	}
	for j := 2; j < n; j++ {
		r := make([]float64, n)
		for k := 0; k < n; k++ {
			if k > 0 {
				r[k] += 2 * tm[j-1][k-1]
			}
			r[k] -= tm[j-2][k]
		}
		tm = append(tm, r)
	}
	m := make([]float64, n)
	for j := 0; j < n; j++ {
		for k := 0; k < n; k++ {
			m[k] += b[j] * tm[j][k]
		}
	}
	return m
}

// solve solves a·x = y by Gaussian elimination with partial pivoting.
func solve(a [][]float64, y []float64) []float64 {
	n := len(y)
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		y[c], y[p] = y[p], y[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < n; k++ {
				a[r][k] -= f * a[c][k]
			}
			y[r] -= f * y[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := y[r]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x
}

func grid(lo, hi float64, n int) []float64 {
	p := make([]float64, n)
	for i := range p {
		// Chebyshev-spaced: denser near the ends, where the extrema crowd.
		p[i] = lo + (hi-lo)*(1-math.Cos(math.Pi*float64(i)/float64(n-1)))/2
	}
	return p
}

// fitExp returns c₁..c₆ (float32) of eʳ ≈ 1 + Σ c_k r^k and the max relative error.
func fitExp(expDegree int) ([]float32, float64) {
	a := math.Ln2 / 2
	pr := problem{
		pts: grid(-a, a, gridPoints),
		f:   func(r float64) float64 { return math.Expm1(r) },
		w:   func(r float64) float64 { return math.Exp(-r) },
		g:   func(r float64) float64 { return r / a },
		s:   func(r float64) float64 { return r / a },
		n:   expDegree,
	}
	m := chebToMono(pr.lawson())
	c := make([]float32, expDegree)
	for k := range c { // (r/a)·Σ m_k (r/a)^k
		c[k] = float32(m[k] / math.Pow(a, float64(k+1)))
	}
	var maxErr float64
	for _, r := range grid(-a, a, 100000) {
		p := 0.0
		for k := len(c) - 1; k >= 0; k-- {
			p = p*r + float64(c[k])
		}
		p = 1 + p*r
		maxErr = math.Max(maxErr, math.Abs(p/math.Exp(r)-1))
	}
	return c, maxErr
}

// expm1Half returns expm1(2r)/2 − r − r² over r³ accurately (a series for
// small r): the function the Tanh fit approximates by e₁ + e₂r + ….
func expm1Half(r float64) float64 {
	if math.Abs(r) < 0.01 {
		// expm1(2r)/2 = Σ_{k≥1} 2^(k−1)·r^k/k!
		return 2.0/3 + r*(1.0/3+r*(2.0/15+r*(2.0/45+r*(4.0/315+r*(1.0/315)))))
	}
	return (math.Expm1(2*r)/2 - r - r*r) / (r * r * r)
}

// fitTanhE returns e₁..e_deg (float32) of expm1(2r)/2 ≈ r + r²·(1 + Σ e_k r^k)
// on [−ln2/4, ln2/4] and the max relative error.
func fitTanhE(deg int) ([]float32, float64) {
	a := math.Ln2 / 4
	h := func(r float64) float64 { return math.Expm1(2*r) / 2 }
	pr := problem{
		pts: grid(-a, a, gridPoints),
		f:   expm1Half,
		w:   func(r float64) float64 { return r * r * r / h(r) },
		g:   func(r float64) float64 { return 1 },
		s:   func(r float64) float64 { return r / a },
		n:   deg,
	}
	m := chebToMono(pr.lawson())
	c := make([]float32, deg)
	for k := range c { // Σ m_k (r/a)^k = e_{k+1}·r^k
		c[k] = float32(m[k] / math.Pow(a, float64(k)))
	}
	var maxErr float64
	for _, r := range grid(-a, a, 100001) {
		if r == 0 {
			continue
		}
		p := 0.0
		for k := len(c) - 1; k >= 0; k-- {
			p = p*r + float64(c[k])
		}
		y := r + r*r*(1+r*p)
		maxErr = math.Max(maxErr, math.Abs(y/h(r)-1))
	}
	return c, maxErr
}

func main() {
	out := flag.String("out", "../internal/coef/coef.go", "output file")
	survey := flag.Bool("survey", false, "print the error of each degree instead")
	flag.Parse()
	if *survey {
		for d := 4; d <= 7; d++ {
			_, e := fitExp(d)
			fmt.Printf("exp degree %d: max rel error %.3g (2^%.2f)\n", d, e, math.Log2(e))
		}
		for d := 2; d <= 6; d++ {
			_, e := fitTanhE(d)
			fmt.Printf("tanh expm1 degree %d: max rel error %.3g (2^%.2f)\n", d, e, math.Log2(e))
		}
		for d := 4; d <= 9; d++ {
			_, e := fitLog(d)
			fmt.Printf("log1p degree %d: max rel error %.3g (2^%.2f)\n", d, e, math.Log2(e))
		}
		return
	}
	// The three fits are independent: run them side by side.
	var (
		ec, tc []float32
		ee, te float64
		wg     sync.WaitGroup
	)
	wg.Add(2)
	go func() { defer wg.Done(); ec, ee = fitExp(expDegree) }()
	go func() { defer wg.Done(); tc, te = fitTanhE(tanhEDeg) }()
	logDone := make(chan logFit, 1)
	go func() { c, e := fitLog(logDegree); logDone <- logFit{c, e} }()
	wg.Wait()
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by asmgen/fit; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "// Package coef holds the polynomial coefficients of heed's Exp and Tanh,\n")
	fmt.Fprintf(&b, "// derived by asmgen/fit (a discrete minimax fit of the relative error).\n")
	fmt.Fprintf(&b, "package coef\n\n")
	fmt.Fprintf(&b, "// eʳ ≈ 1 + r·(Exp1 + r·(Exp2 + … + r·Exp%d)) on [−ln2/2, ln2/2];\n", expDegree)
	fmt.Fprintf(&b, "// max relative error of the float32 coefficients %.3g (2^%.1f).\n", ee, math.Log2(ee))
	fmt.Fprintf(&b, "const (\n")
	for k, c := range ec {
		fmt.Fprintf(&b, "\tExp%d float32 = %v // %#x\n", k+1, hex(c), math.Float32bits(c))
	}
	fmt.Fprintf(&b, ")\n\n")
	fmt.Fprintf(&b, "// expm1(2r)/2 ≈ r + r²·(1 + r·(TanhE1 + r·(TanhE2 + … + r·TanhE%d))) on\n", tanhEDeg)
	fmt.Fprintf(&b, "// [−ln2/4, ln2/4], for Tanh's expm1(2a) (a reduced by n·ln2/2); max relative\n")
	fmt.Fprintf(&b, "// error of the float32 coefficients %.3g (2^%.1f).\n", te, math.Log2(te))
	fmt.Fprintf(&b, "const (\n")
	for k, c := range tc {
		fmt.Fprintf(&b, "\tTanhE%d float32 = %v // %#x\n", k+1, hex(c), math.Float32bits(c))
	}
	fmt.Fprintf(&b, ")\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lf := <-logDone
	le, err := lf.e, writeLog(filepath.Dir(*out), lf)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("log: log1p tail degree %d on [sqrt(1/2)-1, sqrt(2)-1], max rel error %.3g (2^%.2f)\n", logDegree, le, math.Log2(le))
	fmt.Printf("exp: degree %d on [-ln2/2, ln2/2], max rel error %.3g (2^%.2f)\n", expDegree, ee, math.Log2(ee))
	fmt.Printf("tanh: expm1(2r)/2, degree %d on [-ln2/4, ln2/4], max rel error %.3g (2^%.2f)\n", tanhEDeg, te, math.Log2(te))
}

// hex formats a float32 exactly as a Go hexadecimal float literal.
func hex(c float32) string { return fmt.Sprintf("%x", float64(c)) }
