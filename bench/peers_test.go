package bench

import (
	"fmt"
	"math"
	"testing"
)

// TestPeersMatchHeed runs every implementation through the same Bind path the
// benchmarks use, on the same inputs, and checks that its result matches
// heed's (default ISA) within the sum of both error bounds: the bound of the
// kernel's contract (its doc comment) for heed, and for a peer the same bound, or
// the peer's own documented accuracy where it promises less (Impl.Tol, a
// relative error per e^x or tanh). So the comparison compares equal work.
func TestPeersMatchHeed(t *testing.T) {
	var ref *Impl
	for _, im := range Impls() {
		if im.Heed && !im.Parallel && im.ISA == defaultISA && im.Decode == decodeAttend {
			ref = im
		}
	}
	if ref == nil {
		t.Fatal("no heed implementation for the default ISA")
	}
	defer kernelsUseDefault()
	for _, k := range Kernels {
		if isStep(k) {
			continue // TestStepsMatchHeed
		}
		for _, n := range testSizes(k) {
			want := result(NewCase(k, n), ref)
			for _, im := range Impls() {
				if !im.Has(k) || im == ref {
					continue
				}
				t.Run(fmt.Sprintf("%v/%d/%s", k, n, im.Name), func(t *testing.T) {
					c := NewCase(k, n)
					got := result(c, im)
					bound := errorBounds(c, im.Tol[k]) // peer
					hb := errorBounds(c, 0)            // heed
					bad := 0
					for i := range want {
						d := math.Abs(float64(got[i]) - float64(want[i]))
						if !(d <= bound[i]+hb[i]) { // NaN fails too
							if bad++; bad <= 3 {
								t.Errorf("%s[%d] = %v, heed %v: |diff| %.3g > bound %.3g", k, i, got[i], want[i], d, bound[i]+hb[i])
							}
						}
					}
					if bad > 3 {
						t.Errorf("... %d of %d outputs outside the bound", bad, len(want))
					}
				})
			}
		}
	}
}

func testSizes(k Kernel) []int {
	switch k {
	case MatVec, MatTVec, MatVecBatch, Additive:
		return []int{1, 5, 16, 37, 100, 256}
	}
	return []int{1, 7, 16, 33, 100, 1000, 4097}
}

// result runs im once on c and returns a copy of its output.
func result(c *Case, im *Impl) []float32 {
	c.Bind(im)(1)
	switch c.Kernel {
	case Dot:
		return []float32{sink}
	case MatVecBatch:
		return append([]float32(nil), c.in.db.Data...)
	}
	return append([]float32(nil), c.in.dst...)
}

const u = 1.0 / (1 << 24)

func gamma(n int) float64 { return float64(n) * u / (1 - float64(n)*u) }

// errorBounds returns, per output of c, the absolute error an implementation
// may make: the kernel's documented bound, with rel (if > 0) as the relative accuracy
// of each e^x or tanh instead of heed's 2 ULP.
func errorBounds(c *Case, rel float64) []float64 {
	in, n := c.in, c.N
	fn := 2 * u // heed's e^x and tanh: 2 ULP
	if rel > 0 {
		fn = rel
	}
	switch c.Kernel {
	case Dot:
		var s float64
		for i := range in.x {
			s += math.Abs(float64(in.x[i]) * float64(in.y[i]))
		}
		return []float64{gamma(n) * s}
	case MatVec, MatTVec:
		b := make([]float64, n)
		for r := 0; r < n; r++ {
			for j := 0; j < n; j++ {
				if c.Kernel == MatVec {
					b[r] += math.Abs(float64(in.a.Data[r*n+j]) * float64(in.x[j]))
				} else { // column r of Aᵀx; dst started at 0
					b[r] += math.Abs(float64(in.a.Data[j*n+r]) * float64(in.x[j]))
				}
			}
			b[r] *= gamma(n + 1)
		}
		return b
	case MatVecBatch:
		b := make([]float64, 0, c.Batch*n)
		for q := 0; q < c.Batch; q++ {
			x := in.xb.Row(q)
			for r := 0; r < n; r++ {
				var s float64
				for j := 0; j < n; j++ {
					s += math.Abs(float64(in.a.Data[r*n+j]) * float64(x[j]))
				}
				b = append(b, gamma(n)*s)
			}
		}
		return b
	case Exp, Tanh:
		b := make([]float64, n)
		for i, x := range in.x {
			var e float64
			if c.Kernel == Exp {
				e = math.Exp(float64(x))
			} else {
				e = math.Tanh(float64(x))
			}
			b[i] = fn*math.Abs(e) + 1e-45
		}
		return b
	case Softmax:
		m := math.Inf(-1)
		for _, x := range in.x {
			m = max(m, float64(x))
		}
		var s float64
		for _, x := range in.x {
			s += math.Exp(float64(x) - m)
		}
		b := make([]float64, n)
		for i, x := range in.x {
			p := math.Exp(float64(x)-m) / s
			// Softmax's documented bound, plus the e^x error of a peer whose exp is
			// less accurate than heed's (propagated to the normalised output).
			b[i] = p * ((math.Abs(float64(x)-m)+float64(n)+4)*u + 2*max(fn-2*u, 0))
		}
		return b
	case Additive:
		b := make([]float64, n)
		for s := 0; s < n; s++ {
			var sv float64
			for i := 0; i < n; i++ {
				sv += math.Abs(float64(in.v[i]))
			}
			// Each term v·tanh carries the tanh error fn plus the rounding
			// of the sum (γₙ of Σ|v·tanh| ≤ Σ|v|), and q+K rounds once (u,
			// amplified by tanh' ≤ 1 and |q+K| ≤ 4).
			b[s] = sv * (fn + gamma(n) + 4*u)
		}
		return b
	}
	panic("bench: unknown kernel")
}
