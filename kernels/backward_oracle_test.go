package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The float64 oracles of the backward kernels: each gradient formula
// evaluated in float64, and TestBackwardOraclesFD, which checks every formula
// against central finite differences of its float64 forward, so that the
// float32 kernels are measured against gradients that are known right.

func softmaxF64(x []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	y := make([]float64, len(x))
	var s float64
	for i, v := range x {
		y[i] = math.Exp(v - m)
		s += y[i]
	}
	for i := range y {
		y[i] /= s
	}
	return y
}

func logSoftmaxF64(x []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - m)
	}
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = v - m - math.Log(s)
	}
	return y
}

func sigmoid64s(x []float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = sigmoid64(v)
	}
	return y
}

func tanh64s(x []float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = math.Tanh(v)
	}
	return y
}

// softmaxBackward64 is y∘(dy − ⟨y, dy⟩) with the terms at y = 0 left out.
func softmaxBackward64(y, dy []float64) []float64 {
	var c float64
	for i := range y {
		if y[i] != 0 {
			c += y[i] * dy[i]
		}
	}
	dx := make([]float64, len(y))
	for i := range y {
		dx[i] = y[i] * (dy[i] - c)
	}
	return dx
}

// logSoftmaxBackward64 is dy − e^y·Σ dy.
func logSoftmaxBackward64(y, dy []float64) []float64 {
	var s float64
	for _, v := range dy {
		s += v
	}
	dx := make([]float64, len(y))
	for i := range y {
		dx[i] = dy[i] - math.Exp(y[i])*s
	}
	return dx
}

func tanhBackward64(y, dy []float64) []float64 {
	dx := make([]float64, len(y))
	for i := range y {
		dx[i] = dy[i] * (1 - y[i]*y[i])
	}
	return dx
}

func sigmoidBackward64(y, dy []float64) []float64 {
	dx := make([]float64, len(y))
	for i := range y {
		dx[i] = dy[i] * y[i] * (1 - y[i])
	}
	return dx
}

// additiveScore64 returns score_s = Σᵢ v[i]·tanh(q[i] + K[s][i]).
func additiveScore64(q []float64, k [][]float64, v []float64) []float64 {
	sc := make([]float64, len(k))
	for s, row := range k {
		for i := range q {
			sc[s] += v[i] * math.Tanh(q[i]+row[i])
		}
	}
	return sc
}

// additiveBackward64 returns the gradients of ⟨ds, score⟩ with respect to q,
// v and K.
func additiveBackward64(q []float64, k [][]float64, v, ds []float64) (dq, dv []float64, dk [][]float64) {
	dq, dv = make([]float64, len(q)), make([]float64, len(q))
	dk = make([][]float64, len(k))
	for s, row := range k {
		dk[s] = make([]float64, len(q))
		for i := range q {
			t := math.Tanh(q[i] + row[i])
			dv[i] += ds[s] * t
			g := ds[s] * v[i] * (1 - t*t)
			dq[i] += g
			dk[s][i] = g
		}
	}
	return dq, dv, dk
}

// recompute64 is e^(scale·s − lse).
func recompute64(s, scale, lse float64) float64 { return math.Exp(scale*s - lse) }

// block64 is p·(dp − delta).
func block64(p, dp, delta float64) float64 { return p * (dp - delta) }

// fdGrad returns the central difference of f at x along every coordinate,
// with steps relative to max(1, |x[i]|).
func fdGrad(f func(x []float64) float64, x []float64) []float64 {
	g := make([]float64, len(x))
	for i := range x {
		h := 1e-6 * math.Max(1, math.Abs(x[i]))
		v := x[i]
		x[i] = v + h
		fp := f(x)
		x[i] = v - h
		fm := f(x)
		x[i] = v
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

func dot64s(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func randSlice(rng *rand.Rand, n int, scale float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = (rng.Float64()*2 - 1) * scale
	}
	return x
}

// checkFD fails t unless the analytic gradient g is within 1e-6 of the finite
// differences fd, relative to the larger of 1 and the gradient's magnitude.
func checkFD(t *testing.T, what string, g, fd []float64) {
	t.Helper()
	var norm float64
	for _, v := range g {
		norm = math.Max(norm, math.Abs(v))
	}
	for i := range g {
		if d := math.Abs(g[i] - fd[i]); !(d <= 1e-6*math.Max(1, norm)) {
			t.Fatalf("%s: gradient[%d] = %v, finite differences %v", what, i, g[i], fd[i])
		}
	}
}

// TestBackwardOraclesFD checks each float64 gradient formula the tests use
// against central finite differences of the float64 forward: L = ⟨dy, f(x)⟩
// for the activations, ⟨ds, scores⟩ for the additive score, and, for the
// flash-attention tile, ⟨dP, softmax(scale·S)⟩ against SoftmaxRecompute's and
// SoftmaxBackwardBlock's formulas chained as the backward chains them.
func TestBackwardOraclesFD(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{1, 2, 5, 17, 64} {
		x, dy := randSlice(rng, n, 3), randSlice(rng, n, 1)
		for _, c := range []struct {
			name    string
			forward func([]float64) []float64
			grad    func(y, dy []float64) []float64
		}{
			{"softmax", softmaxF64, softmaxBackward64},
			{"log-softmax", logSoftmaxF64, logSoftmaxBackward64},
			{"tanh", tanh64s, tanhBackward64},
			{"sigmoid", sigmoid64s, sigmoidBackward64},
		} {
			L := func(x []float64) float64 { return dot64s(dy, c.forward(x)) }
			checkFD(t, c.name, c.grad(c.forward(x), dy), fdGrad(L, x))
		}

		// Additive: the gradients with respect to q, v and every row of K.
		S := 1 + n%7
		q, v, ds := randSlice(rng, n, 1), randSlice(rng, n, 1), randSlice(rng, S, 1)
		k := make([][]float64, S)
		for s := range k {
			k[s] = randSlice(rng, n, 2)
		}
		dq, dv, dk := additiveBackward64(q, k, v, ds)
		checkFD(t, "additive dq", dq, fdGrad(func(q []float64) float64 { return dot64s(ds, additiveScore64(q, k, v)) }, q))
		checkFD(t, "additive dv", dv, fdGrad(func(v []float64) float64 { return dot64s(ds, additiveScore64(q, k, v)) }, v))
		for s := range k {
			checkFD(t, "additive dk", dk[s], fdGrad(func(r []float64) float64 {
				kk := append([][]float64(nil), k...)
				kk[s] = r
				return dot64s(ds, additiveScore64(q, kk, v))
			}, k[s]))
		}

		// Flash tile: one row of scores, P recomputed from the logsumexp,
		// D = ⟨p, dp⟩, dS = P∘(dP − D) times scale is ∂L/∂S.
		scale := 0.125 + rng.Float64()
		sc, dp := randSlice(rng, n, 4), randSlice(rng, n, 1)
		L := func(s []float64) float64 {
			z := make([]float64, len(s))
			for j := range s {
				z[j] = scale * s[j]
			}
			return dot64s(dp, softmaxF64(z))
		}
		m := math.Inf(-1)
		for _, v := range sc {
			m = math.Max(m, scale*v)
		}
		var sum float64
		for _, v := range sc {
			sum += math.Exp(scale*v - m)
		}
		lse := m + math.Log(sum)
		p := make([]float64, n)
		for j := range sc {
			p[j] = recompute64(sc[j], scale, lse)
		}
		delta := dot64s(p, dp)
		g := make([]float64, n)
		for j := range g {
			g[j] = scale * block64(p[j], dp[j], delta)
		}
		checkFD(t, "flash tile", g, fdGrad(L, sc))
	}
}
