package attention

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// The cosine score x_s = ĥ·k̂_s (ĥ = h/‖h‖, k̂_s = k_s/‖k_s‖) has the
// gradients ∂x_s/∂h = (k̂_s − x_s·ĥ)/‖h‖ and ∂x_s/∂k_s = (ĥ − x_s·k̂_s)/‖k_s‖.
// With G_s = ds_s/‖k_s‖ (the cached inverse norms) the backward forms
//
//	dh   += (Σ_s G_s·k_s − ⟨ds, x⟩·ĥ)/‖h‖
//	dk_s += G_s·ĥ − (G_s·x_s)·k̂_s
//
// with the scores recomputed; the last term is taken as the product of
// G_s·x_s and k̂_s = k_s/‖k_s‖, both well inside the float32 range for any
// key whose inverse norm is cached (G_s·x_s/‖k_s‖ would underflow for norms
// from about 2⁶³ on). The wide keys (cosine.go), whose inverse norm is
// cached as 0, add their terms in float64.

// cosineBackward adds one query's cosine gradients for the scores'
// gradients ds (keys [0, len(ds))) to dh (unless nil) and Grads.Keys; ds is
// overwritten.
func (m *Memory) cosineBackward(g *Grads, dh, ds, h []float32) {
	n := len(ds)
	keys := rows(m.keys, 0, n)
	dK := keysGrad(g, n)
	qh := m.prepareQuery(h)
	nh := norm(h)
	if nh == 0 { // the score is the constant 0
		return
	}
	bw := &m.bw
	bw.c = grow(bw.c, n)
	x := bw.c[:n]
	kernels.MatVec(x, keys, qh)
	m.cosineScores(x, qh, 0)
	e := kernels.Dot(ds, x)
	var tq []float32
	if dh != nil {
		bw.vec = grow(bw.vec, len(h))
		tq = bw.vec
		clear(tq)
	}
	for _, s := range m.wide {
		if int(s) < n && ds[s] != 0 {
			var dks []float32
			if dK.Rows > 0 {
				dks = row(dK, int(s))
			}
			wideGrad(tq, dks, row(keys, int(s)), qh, ds[s])
		}
	}
	inv := m.invNorm[:n]
	kernels.Mul(ds, ds, inv) // G
	if dh != nil {
		kernels.MatTVecAdd(tq, keys, ds)
		kernels.AddScaled(tq, -e, qh, tq)
		addDivided(dh, tq, nh)
	}
	if dK.Rows > 0 {
		outerAdd(dK, 1, ds, qh)
		bw.vec2 = grow(bw.vec2, m.keys.Cols)
		for s := range n {
			x[s] *= ds[s] // G_s·x_s
		}
		m.subUnitKeys(dK, x, bw.vec2)
	}
}

// subUnitKeys subtracts c_s·k̂_s from row s of dK for every key s with
// c_s ≠ 0, k̂_s = k_s/‖k_s‖ (by the cached inverse norm), using tmp
// (length d_k).
func (m *Memory) subUnitKeys(dK kernels.Matrix, c, tmp []float32) {
	for s, cs := range c {
		if cs == 0 || m.invNorm[s] == 0 {
			continue
		}
		kernels.Scale(tmp, m.invNorm[s], row(m.keys, s))
		kernels.Axpy(-cs, tmp, row(dK, s))
	}
}

// cosineBackwardMany is cosineBackward for the B queries q (rows) with the
// scores' gradients ds (B×n), the products over all queries at once.
func (m *Memory) cosineBackwardMany(g *Grads, dq, ds, q kernels.Matrix) {
	B, n, d := ds.Rows, ds.Cols, m.keys.Cols
	keys := rows(m.keys, 0, n)
	dK := keysGrad(g, n)
	bw := &m.bw
	qh := scratchMat(&bw.a, B, d)
	bw.norms = grow(bw.norms, B)
	for b := range B {
		unitQuery(row(qh, b), row(q, b))
		bw.norms[b] = norm(row(q, b))
	}
	x := scratchMat(&bw.c, B, n)
	kernels.Gemm(kernels.NoTrans, kernels.Trans, 1, qh, keys, 0, x)
	bw.vec = grow(bw.vec, B)
	e := bw.vec
	for b := range B {
		m.cosineScores(row(x, b), row(qh, b), 0)
		e[b] = kernels.Dot(row(ds, b), row(x, b))
	}
	var tq kernels.Matrix
	if wanted(dq) {
		tq = zeroMat(&bw.b, B, d)
	}
	for _, s := range m.wide {
		if int(s) >= n {
			continue
		}
		var dks []float32
		if dK.Rows > 0 {
			dks = row(dK, int(s))
		}
		for b := range B {
			if d := row(ds, b)[s]; d != 0 && bw.norms[b] != 0 {
				var t []float32
				if wanted(dq) {
					t = row(tq, b)
				}
				wideGrad(t, dks, row(keys, int(s)), row(qh, b), d)
			}
		}
	}
	inv := m.invNorm[:n]
	bw.col = grow(bw.col, n)
	col := bw.col
	clear(col)
	for b := range B {
		gb := row(ds, b)
		kernels.Mul(gb, gb, inv) // G
		xb := row(x, b)
		kernels.Mul(xb, gb, xb)
		kernels.Add(col, col, xb) // Σ_b G_bs·x_bs
	}
	if wanted(dq) {
		kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, ds, keys, 1, tq)
		for b := range B {
			if bw.norms[b] == 0 {
				continue
			}
			t := row(tq, b)
			kernels.AddScaled(t, -e[b], row(qh, b), t)
			addDivided(row(dq, b), t, bw.norms[b])
		}
	}
	if dK.Rows > 0 {
		kernels.Gemm(kernels.Trans, kernels.NoTrans, 1, ds, qh, 1, dK)
		bw.vec2 = grow(bw.vec2, d)
		m.subUnitKeys(dK, col, bw.vec2)
	}
}

// wideGrad adds the terms of a wide key k (one whose norm is outside
// [normLo, normHi]) for the unit query qh and the score's gradient d, in
// float64: d·k̂ to tq (unless nil) and (d/‖k‖)·(qh − x·k̂) to dk (unless
// nil), with k̂ = k/‖k‖ and x = qh·k̂.
func wideGrad(tq, dk, k, qh []float32, d float32) {
	var kk, dot float64
	for i, v := range k {
		kk += float64(v) * float64(v)
		dot += float64(v) * float64(qh[i])
	}
	ns := math.Sqrt(kk)
	x := dot / ns
	for i, v := range k {
		kh := float64(v) / ns
		if tq != nil {
			tq[i] += float32(float64(d) * kh)
		}
		if dk != nil {
			dk[i] += float32(float64(d) / ns * (float64(qh[i]) - x*kh))
		}
	}
}

// addDivided adds x/n to dst, with one rounding of 1/n when it is far
// inside the float32 range, else element by element in float64.
func addDivided(dst, x []float32, n float64) {
	if n >= 0x1p-60 && n <= 0x1p60 {
		kernels.Axpy(float32(1/n), x, dst)
		return
	}
	for i, v := range x {
		dst[i] += float32(float64(v) / n)
	}
}
