//go:build unix

package kernels

import (
	"math"
	"testing"
)

// The backward kernels on operands flush against PROT_NONE pages: a read or
// write of one byte outside crashes the test.

func TestBackwardGuard(t *testing.T) {
	const rows = 3
	for _, k := range backwards {
		t.Run(k.name, func(t *testing.T) {
			forEachGuarded(t, rows*(257+3), 9, func(t *testing.T, n int, get func(int) []float32) {
				dx, y, dy := get(n), get(n), get(n)
				for i := range y {
					y[i] /= 4
				}
				k.vec(dx, y, dy)
				k.check(t, k.name, dx, y, dy)
				k.vec(y, y, dy)
				if k.rows == nil {
					return
				}
				for _, pad := range []int{0, 3} {
					stride := n + pad
					m := func() Matrix {
						return Matrix{Rows: rows, Cols: n, Stride: stride, Data: get(max(rows-1, 0)*stride + n)}
					}
					dx, y, dy := m(), m(), m()
					k.rows(dx, y, dy)
					k.rows(dy, y, dy)
				}
			})
		})
	}
}

func TestSoftmaxRecomputeGuard(t *testing.T) {
	const rows = 3
	forEachGuarded(t, rows*(257+3), 6, func(t *testing.T, n int, get func(int) []float32) {
		for _, pad := range []int{0, 3} {
			stride := n + pad
			m := func() Matrix {
				return Matrix{Rows: rows, Cols: n, Stride: stride, Data: get(max(rows-1, 0)*stride + n)}
			}
			p, s := m(), m()
			lse := get(rows)
			lse[1] = float32(math.Inf(-1))
			for _, d := range []int{n, 1, -1} {
				SoftmaxRecompute(p, s, 0.5, lse, d)
				checkSoftmaxRecompute(t, "SoftmaxRecompute", p, s, 0.5, lse, d)
			}
			SoftmaxRecompute(s, s, 0.5, lse, n)
		}
	})
}

func TestSoftmaxBackwardBlockGuard(t *testing.T) {
	const rows = 3
	forEachGuarded(t, rows*(257+3), 8, func(t *testing.T, n int, get func(int) []float32) {
		for _, pad := range []int{0, 3} {
			stride := n + pad
			m := func() Matrix {
				return Matrix{Rows: rows, Cols: n, Stride: stride, Data: get(max(rows-1, 0)*stride + n)}
			}
			ds, p, dp := m(), m(), m()
			delta := get(rows)
			SoftmaxBackwardBlock(ds, p, dp, delta)
			checkSoftmaxBackwardBlock(t, "SoftmaxBackwardBlock", ds, p, dp, delta)
			SoftmaxBackwardBlock(dp, p, dp, delta)
		}
	})
}

func TestAdditiveScoreBackwardGuard(t *testing.T) {
	const rows = 5
	forEachGuarded(t, rows*(257+3), 16, func(t *testing.T, n int, get func(int) []float32) {
		for _, pad := range []int{0, 3} { // rows packed, and padded with the last one flush
			stride := n + pad
			m := func() Matrix { return Matrix{Rows: rows, Cols: n, Stride: stride, Data: get((rows-1)*stride + n)} }
			k := m()
			g := additiveGrads{dq: get(n), dv: get(n), dk: m()}
			q, v, ds := get(n), get(n), get(rows)
			ds[2] = 0
			for i := range q {
				q[i] /= 4
			}
			before := g.clone()
			AdditiveScoreBackwardAdd(g.dq, g.dv, g.dk, k, q, v, ds)
			checkAdditiveBackward(t, "AdditiveScoreBackwardAdd", g, before, k, q, v, ds)
			AdditiveScoreBackwardAdd(g.dq, g.dv, Matrix{}, k, q, v, ds)
		}
	})
}
