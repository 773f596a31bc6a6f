package attention

import (
	"fmt"
	"math"
	"sync"

	"github.com/heedml/heed/kernels"
)

// This file holds the element-wise backward kernels the backward passes use,
// written in Go on kernels' existing kernels until kernels exports them with
// the same semantics (kernels.SoftmaxBackward, SoftmaxBackwardRows,
// TanhBackward, AdditiveScoreBackwardAdd, SoftmaxRecompute,
// SoftmaxBackwardBlock). Each function here is named as its kernel with a
// lower-case first letter; swapping them is a rename of the calls and the
// removal of this file. // Arguments are validated by the callers, so these only check what a bad
// call would otherwise corrupt silently (lengths). The file uses nothing of
// the package but its name.
//
// Accuracy (u = 2⁻²⁴), as the backward bounds in BACKWARD.md assume:
//   - softmaxBackward: ⟨y, dy⟩ by kernels.Dot (γ_n·Σ|y_i·dy_i|), then per
//     element one subtraction and one product (2u relative each).
//   - tanhBackward: 1 − y² and the product: |error| ≤ 3u·|dy|·(1 + y²).
//   - additiveScoreBackwardAdd: t_s = tanh(fl(q + K_s)) (kernels.Tanh, 2 ULP
//     after one rounding of the sum), each term of dv, dq and dk within
//     (|q_a + K_sa| + 8)·u of its exact value relative to
//     |ds_s|·|v_a|·(1 + t²) (|ds_s|·|t| for dv), summed in float32.
//   - softmaxRecompute: fl(scale·s − lse) (two roundings), then kernels.Exp
//     (2 ULP): relative (|scale·s| + |lse| + 4)·u, or 2⁻¹²⁶ absolute where
//     the exponential is subnormal.
//   - softmaxBackwardBlock: one subtraction and one product (2u relative).

// softmaxBackward sets dx = y∘(dy − ⟨y, dy⟩), the gradient of a softmax
// whose output is y with respect to its input, given the gradient dy of its
// output. dx may be dy or y exactly.
func softmaxBackward(dx, y, dy []float32) {
	if len(dx) != len(y) || len(dy) != len(y) {
		pendingPanic("softmaxBackward: len(dx)=%d, len(y)=%d, len(dy)=%d", len(dx), len(y), len(dy))
	}
	if len(y) == 0 {
		return
	}
	dot := kernels.Dot(y, dy)
	kernels.AddConst(dx, -dot, dy)
	kernels.Mul(dx, y, dx)
}

// softmaxBackwardRows is softmaxBackward on each row of the matrices.
func softmaxBackwardRows(dx, y, dy kernels.Matrix) {
	if dx.Rows != y.Rows || dy.Rows != y.Rows || dx.Cols != y.Cols || dy.Cols != y.Cols {
		pendingPanic("softmaxBackwardRows: dx %d×%d, y %d×%d, dy %d×%d", dx.Rows, dx.Cols, y.Rows, y.Cols, dy.Rows, dy.Cols)
	}
	for i := range y.Rows {
		softmaxBackward(pendingRow(dx, i), pendingRow(y, i), pendingRow(dy, i))
	}
}

// tanhBackward sets dx = dy∘(1 − y²), the gradient of tanh whose output is
// y. dx may be dy or y exactly.
func tanhBackward(dx, y, dy []float32) {
	if len(dx) != len(y) || len(dy) != len(y) {
		pendingPanic("tanhBackward: len(dx)=%d, len(y)=%d, len(dy)=%d", len(dx), len(y), len(dy))
	}
	for i, t := range y {
		dx[i] = dy[i] * (1 - t*t)
	}
}

// pendingChunk is the elements of a row additiveScoreBackwardAdd takes at a
// time through its buffers.
const pendingChunk = 256

// pendingBufs holds additiveScoreBackwardAdd's buffers (arrays on the stack
// would escape through kernels.Add, Sub and Mul).
var pendingBufs = sync.Pool{New: func() any { return new([2][pendingChunk]float32) }}

// additiveScoreBackwardAdd is the backward of kernels.AdditiveScore
// (score_s = Σ_a v_a·tanh(q_a + K_sa)) given ds, the gradient of the scores:
// with t_s = tanh(q + K_s) recomputed, it adds Σ_s ds_s·t_s to dv,
// Σ_s ds_s·(v∘(1 − t_s²)) to dq and ds_s·(v∘(1 − t_s²)) to row s of dk
// (skipped when dk.Rows == 0). Rows with ds_s = 0 contribute nothing (their
// row of K is not read).
func additiveScoreBackwardAdd(dq, dv []float32, dk kernels.Matrix, k kernels.Matrix, q, v, ds []float32) {
	da := len(v)
	if len(dq) != da || len(dv) != da || len(q) != da || k.Cols != da || len(ds) != k.Rows ||
		(dk.Rows != 0 && (dk.Rows != k.Rows || dk.Cols != da)) {
		pendingPanic("additiveScoreBackwardAdd: len(dq)=%d, len(dv)=%d, dk %d×%d, k %d×%d, len(q)=%d, len(v)=%d, len(ds)=%d",
			len(dq), len(dv), dk.Rows, dk.Cols, k.Rows, k.Cols, len(q), len(v), len(ds))
	}
	bufs := pendingBufs.Get().(*[2][pendingChunk]float32)
	defer pendingBufs.Put(bufs)
	tb, gb := &bufs[0], &bufs[1]
	for s, d := range ds {
		if d == 0 {
			continue
		}
		ks := pendingRow(k, s)
		var dks []float32
		if dk.Rows != 0 {
			dks = pendingRow(dk, s)
		}
		for c0 := 0; c0 < da; c0 += pendingChunk {
			c1 := min(da, c0+pendingChunk)
			t, g := tb[:c1-c0], gb[:c1-c0]
			kernels.Add(t, q[c0:c1], ks[c0:c1])
			kernels.Tanh(t, t)
			kernels.Axpy(d, t, dv[c0:c1])
			kernels.Mul(g, t, t)        // t²
			kernels.Mul(g, v[c0:c1], g) // v∘t²
			kernels.Sub(g, v[c0:c1], g) // v∘(1 − t²)
			kernels.Axpy(d, g, dq[c0:c1])
			if dks != nil {
				kernels.Axpy(d, g, dks[c0:c1])
			}
		}
	}
}

// softmaxRecompute sets p[i][j] = e^(scale·s[i][j] − lse[i]) for j < i + d
// and 0 for j ≥ i + d (every j when d ≥ s.Cols): a block of softmax weights
// recomputed from its scores and each row's logsumexp. p may be s. A row
// with lse[i] = −Inf gets zeros.
func softmaxRecompute(p, s kernels.Matrix, scale float32, lse []float32, d int) {
	if p.Rows != s.Rows || p.Cols != s.Cols || len(lse) < s.Rows {
		pendingPanic("softmaxRecompute: p %d×%d, s %d×%d, len(lse)=%d", p.Rows, p.Cols, s.Rows, s.Cols, len(lse))
	}
	for i := range s.Rows {
		pr, sr := pendingRow(p, i), pendingRow(s, i)
		n := min(s.Cols, max(0, i+d))
		l := lse[i]
		if math.IsInf(float64(l), -1) {
			n = 0
		}
		if n > 0 {
			if scale == 1 {
				kernels.AddConst(pr[:n], -l, sr[:n])
			} else {
				for j, x := range sr[:n] {
					pr[j] = scale*x - l
				}
			}
			kernels.Exp(pr[:n], pr[:n])
		}
		clear(pr[n:])
	}
}

// softmaxBackwardBlock sets ds[i][j] = p[i][j]·(dp[i][j] − delta[i]), the
// scores' gradient of a block of softmax weights p given the weights'
// gradient dp and delta[i] = Σ_j p_ij·dp_ij over the whole row. ds may be dp.
func softmaxBackwardBlock(ds, p, dp kernels.Matrix, delta []float32) {
	if ds.Rows != p.Rows || dp.Rows != p.Rows || ds.Cols != p.Cols || dp.Cols != p.Cols || len(delta) < p.Rows {
		pendingPanic("softmaxBackwardBlock: ds %d×%d, p %d×%d, dp %d×%d, len(delta)=%d", ds.Rows, ds.Cols, p.Rows, p.Cols, dp.Rows, dp.Cols, len(delta))
	}
	for i := range p.Rows {
		d := pendingRow(ds, i)
		kernels.AddConst(d, -delta[i], pendingRow(dp, i))
		kernels.Mul(d, pendingRow(p, i), d)
	}
}

// pendingRow returns row i of m.
func pendingRow(m kernels.Matrix, i int) []float32 {
	if m.Cols == 0 {
		return nil
	}
	return m.Data[i*m.Stride : i*m.Stride+m.Cols : i*m.Stride+m.Cols]
}

// pendingPanic panics with a message prefixed by the package name.
func pendingPanic(format string, args ...any) {
	panic(fmt.Sprintf("heed/attention: "+format, args...))
}
