package fallback

import "math"

// The backward kernels: the gradients of Softmax, LogSoftmax, Tanh and
// Sigmoid with respect to their inputs, given the outputs y and the
// gradient dy of the outputs, and the element-wise work of a flash-attention
// backward tile. Each writes its result in the order of operations, and with
// the roundings, that the assembly kernels use (see kernels/backward.go), so
// where a kernel has no reduction its results are the assembly's bit for bit.

// SoftmaxBackward sets dx[i] = y[i]·(dy[i] − c) with c = Σ y[j]·dy[j] over the
// j with y[j] ≠ 0, and dx[i] = +0 where y[i] = 0; len(dx), len(dy) ≥ len(y),
// and dx may be y or dy.
func SoftmaxBackward(dx, y, dy []float32) {
	dy, dx = dy[:len(y)], dx[:len(y)]
	var c float32
	for i, v := range y {
		if v != 0 { // NaN included
			c += v * dy[i]
		}
	}
	for i, v := range y {
		if v != 0 {
			dx[i] = (dy[i] - c) * v
		} else {
			dx[i] = 0
		}
	}
}

// LogSoftmaxBackward sets dx[i] = dy[i] − e^y[i]·Σⱼ dy[j], the product and the
// difference rounded once (a fused multiply-add), e^y[i] by Exp's algorithm;
// len(dx), len(dy) ≥ len(y), and dx may be y or dy.
func LogSoftmaxBackward(dx, y, dy []float32) {
	dy, dx = dy[:len(y)], dx[:len(y)]
	var s float32
	for _, v := range dy {
		s += v
	}
	for i, v := range y {
		dx[i] = fma32(-exp32(v), s, dy[i])
	}
}

// TanhBackward sets dx[i] = (1 − y[i]²)·dy[i], 1 − y² rounded once (a fused
// multiply-add); len(dx), len(dy) ≥ len(y), and dx may be y or dy.
func TanhBackward(dx, y, dy []float32) {
	dy, dx = dy[:len(y)], dx[:len(y)]
	for i, v := range y {
		dx[i] = fma32(-v, v, 1) * dy[i]
	}
}

// SigmoidBackward sets dx[i] = (y[i] − y[i]²)·dy[i], y − y² rounded once (a
// fused multiply-add); len(dx), len(dy) ≥ len(y), and dx may be y or dy.
func SigmoidBackward(dx, y, dy []float32) {
	dy, dx = dy[:len(y)], dx[:len(y)]
	for i, v := range y {
		dx[i] = fma32(-v, v, v) * dy[i]
	}
}

// SoftmaxRecompute sets, for each of the rows×cols elements of the matrices
// p (row stride ldp) and s (row stride lds), p[i][j] = e^(scale·s[i][j] −
// lse[i]) for j < min(cols, max(0, d+i)), the argument rounded once (a fused
// multiply-add) and the exponential by Exp's algorithm, and p[i][j] = 0 for
// the other j and for every j of a row with lse[i] = −Inf. p may be s (the
// same data and stride); d+i must not overflow.
func SoftmaxRecompute(p []float32, ldp int, s []float32, lds int, rows, cols int, scale float32, lse []float32, d int) {
	for i := 0; i < rows; i++ {
		pr, sr := p[i*ldp:i*ldp+cols], s[i*lds:i*lds+cols]
		l := lse[i]
		n := min(cols, max(0, d+i))
		if math.IsInf(float64(l), -1) {
			n = 0
		}
		for j, v := range sr[:n] {
			pr[j] = exp32(fma32(scale, v, -l))
		}
		clear(pr[n:])
	}
}

// SoftmaxBackwardBlock sets, for each of the rows×cols elements of ds, p and
// dp (row strides ldds, ldp, lddp), ds[i][j] = (dp[i][j] − delta[i])·p[i][j],
// and ds[i][j] = +0 where p[i][j] = 0. ds may be p or dp (the same data and
// stride).
func SoftmaxBackwardBlock(ds []float32, ldds int, p []float32, ldp int, dp []float32, lddp int, rows, cols int, delta []float32) {
	for i := 0; i < rows; i++ {
		dr, pr, gr := ds[i*ldds:i*ldds+cols], p[i*ldp:i*ldp+cols], dp[i*lddp:i*lddp+cols]
		dl := delta[i]
		for j, v := range pr {
			if v != 0 {
				dr[j] = (gr[j] - dl) * v
			} else {
				dr[j] = 0
			}
		}
	}
}

// AdditiveScoreBackwardAdd adds the gradients of the additive scores
// score_s = Σᵢ v[i]·tanh(q[i] + K[s,i]) (K: len(ds) rows of len(q) columns,
// row s at k[s*ldk:]) given the gradient ds of the scores: for every row s
// with ds[s] ≠ 0, in increasing s, and every column i, with
// t = tanh(q[i] + K[s,i]) (Tanh's algorithm), w = 1 − t² and p = ds[s]·v[i]
// (each rounded once),
//
//	dv[i] += ds[s]·t,  dq[i] += p·w,  dK[s,i] += p·w
//
// each accumulation one fused multiply-add. Rows with ds[s] = 0 are not read.
// dk nil skips the key gradient; else row s of dK is at dk[s*lddk:]. The
// outputs must not overlap each other or the inputs.
func AdditiveScoreBackwardAdd(dq, dv, dk []float32, lddk int, k []float32, ldk int, q, v, ds []float32) {
	d := len(q)
	v, dq, dv = v[:d], dq[:d], dv[:d]
	for s, g := range ds {
		if g == 0 {
			continue
		}
		row := k[s*ldk : s*ldk+d]
		var dkr []float32
		if dk != nil {
			dkr = dk[s*lddk : s*lddk+d]
		}
		for i, qi := range q {
			t := tanh32(qi + row[i])
			dv[i] = fma32(g, t, dv[i])
			w := fma32(-t, t, 1)
			p := float32(g * v[i])
			dq[i] = fma32(p, w, dq[i])
			if dkr != nil {
				dkr[i] = fma32(p, w, dkr[i])
			}
		}
	}
}

// FMA32 returns a·b + c rounded once to float32, as the fused multiply-add
// instructions of the assembly kernels compute it.
func FMA32(a, b, c float32) float32 { return fma32(a, b, c) }
