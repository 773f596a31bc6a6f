package bench

import (
	"fmt"
	"math"
	"testing"

	"github.com/heedml/heed/kernels"
)

// TestStepsMatchHeed checks every peer's composed attention step against
// heed's attention package on the same inputs, within the sum of both error
// bounds: the scores' bound (γ of the products, plus the peer's tanh accuracy
// for Bahdanau), propagated through the softmax (a score error δ moves each
// weight by a factor within e^(2·max δ)) with the softmax's own bound, and
// through the weighted sum of the context.
func TestStepsMatchHeed(t *testing.T) {
	var ref *Impl
	for _, im := range Impls() {
		if im.Heed && !im.Parallel && im.ISA == defaultISA && im.Decode == decodeAttend {
			ref = im
		}
	}
	defer kernelsUseDefault()
	for _, k := range []Kernel{StepDot, StepScaled, StepGeneral, StepAdditive, StepBatch, MultiHead, StepMemory} {
		sizes := []int{16, 128, 512}
		switch k {
		case MultiHead:
			sizes = []int{16, 64}
		case StepMemory:
			sizes = Sizes(k, true)
		}
		for _, n := range sizes {
			// Each step leaves its inputs alone and must overwrite its
			// outputs (NaN before each), so one case serves every
			// implementation.
			c := NewCase(k, n)
			c.Bind(ref)(1)
			want := c.stepResult()
			for _, im := range Impls() {
				if !im.Has(k) || im == ref {
					continue
				}
				t.Run(fmt.Sprintf("%v/%d/%s", k, n, im.Name), func(t *testing.T) {
					poisonOutputs(c)
					c.Bind(im)(1)
					got := c.stepResult()
					bound := stepBounds(c, ref, im)
					from := 0
					if im.Decode == decodeFused { // its weights are the scores
						from = c.attn.S
					}
					bad := 0
					for i := from; i < len(want); i++ {
						if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= bound[i]) {
							if bad++; bad <= 3 {
								t.Errorf("output %d = %v, heed %v: |diff| %.3g > bound %.3g", i, got[i], want[i], d, bound[i])
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

// poisonOutputs sets every output of step case c to NaN.
func poisonOutputs(c *Case) {
	a := c.attn
	for _, s := range append([][]float32{a.weights, a.ctx, a.out.Data}, append(a.bw, a.bc...)...) {
		for i := range s {
			s[i] = float32(math.NaN())
		}
	}
}

// stepBounds returns, per output of c (weights then context, per sequence;
// MultiHead: the output matrix), the allowed |heed − peer|.
func stepBounds(c *Case, impls ...*Impl) []float64 {
	a := c.attn
	expTol, tanhTol := 0.0, 0.0
	for _, im := range impls {
		expTol += max(im.Tol[Softmax], 2*u)
		tanhTol += max(im.Tol[Tanh], im.Tol[Additive], 2*u)
	}
	switch c.Kernel {
	case StepBatch:
		var b []float64
		for i := range a.batch {
			s, e := dotScores(a.batch[i], a.bh[i], 1)
			b = append(b, softmaxContextBounds(s, e, a.batch[i], expTol)...)
		}
		return b
	case MultiHead:
		return multiHeadBounds(a, expTol)
	}
	var s, e []float64
	switch c.Kernel {
	case StepDot, StepMemory: // StepMemory: its first call takes the first Memory
		s, e = dotScores(a.keys, a.h, 1)
	case StepScaled:
		s, e = dotScores(a.keys, a.h, 1/math.Sqrt(float64(a.D)))
	case StepGeneral:
		s, e = generalScores(a)
	case StepAdditive:
		s, e = additiveScores(a, tanhTol)
	}
	return softmaxContextBounds(s, e, a.keys, expTol)
}

// dotScores returns the exact scale·hᵀk_s and the error bound of two float32
// evaluations (γ_{d+2}: the products' sum, the scaling, 1/√d's rounding).
func dotScores(keys kernels.Matrix, h []float32, scale float64) (s, e []float64) {
	for r := 0; r < keys.Rows; r++ {
		var v, ab float64
		for j, x := range keys.Row(r) {
			v += float64(x) * float64(h[j])
			ab += math.Abs(float64(x) * float64(h[j]))
		}
		s, e = append(s, scale*v), append(e, 2*gamma(len(h)+2)*scale*ab)
	}
	return s, e
}

func generalScores(a *attnInputs) (s, e []float64) {
	d := a.D
	u1, uab := make([]float64, d), make([]float64, d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			w := float64(a.w.Data[i*d+j]) * float64(a.h[i])
			u1[j] += w
			uab[j] += math.Abs(w)
		}
	}
	for r := 0; r < a.S; r++ {
		var v, ab float64
		for j, x := range a.keys.Row(r) {
			v += float64(x) * u1[j]
			ab += math.Abs(float64(x)) * uab[j]
		}
		s, e = append(s, v), append(e, 2*gamma(2*d+1)*ab)
	}
	return s, e
}

// additiveScores: q = W₁h and K = H̄W₂ᵀ each within γ_d of exact, their sum
// rounds once; tanh (slope ≤ 1) passes that on and adds its own relative
// error; the v-weighted sum adds γ_d.
func additiveScores(a *attnInputs, tanhTol float64) (s, e []float64) {
	d := a.D
	q, qab := make([]float64, d), make([]float64, d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			w := float64(a.w1.Data[i*d+j]) * float64(a.h[j])
			q[i] += w
			qab[i] += math.Abs(w)
		}
	}
	for r := 0; r < a.S; r++ {
		key := a.keys.Row(r)
		var v, ev float64
		for i := 0; i < d; i++ {
			var kk, kab float64
			for j := 0; j < d; j++ {
				w := float64(a.w2.Data[i*d+j]) * float64(key[j])
				kk += w
				kab += math.Abs(w)
			}
			th := math.Tanh(q[i] + kk)
			argErr := 2*gamma(d+1)*(qab[i]+kab) + 2*u*math.Abs(q[i]+kk)
			v += float64(a.av[i]) * th
			ev += math.Abs(float64(a.av[i])) * (argErr + tanhTol*math.Abs(th) + 2*gamma(d)*math.Abs(th))
		}
		s, e = append(s, v), append(e, ev)
	}
	return s, e
}

// softmaxContextBounds turns scores s with errors e into bounds on the
// weights and the context Σ α_s·key_s.
func softmaxContextBounds(s, e []float64, keys kernels.Matrix, expTol float64) []float64 {
	n := len(s)
	m, emax := math.Inf(-1), 0.0
	for i := range s {
		m, emax = max(m, s[i]), max(emax, e[i])
	}
	var z float64
	for _, x := range s {
		z += math.Exp(x - m)
	}
	b := make([]float64, 0, n+keys.Cols)
	alpha, da := make([]float64, n), make([]float64, n)
	for i, x := range s {
		alpha[i] = math.Exp(x-m) / z
		rel := math.Expm1(2*emax) + 2*(math.Abs(x-m)+float64(n)+4)*u + 2*expTol
		da[i] = alpha[i] * rel
		b = append(b, da[i]+1e-45)
	}
	for j := 0; j < keys.Cols; j++ {
		var dc, ab float64
		for r := 0; r < n; r++ {
			k := math.Abs(float64(keys.Data[r*keys.Stride+j]))
			dc += da[r] * k
			ab += alpha[r] * k
		}
		b = append(b, dc+2*gamma(n+1)*ab*(1+math.Expm1(2*emax))+1e-45)
	}
	return b
}

// multiHeadBounds: per head and query row, the causal dot step's bounds
// (scores scaled by 1/√d_k), applied to that row's block of the output.
func multiHeadBounds(a *attnInputs, expTol float64) []float64 {
	T, S, d := a.T, a.S, a.D
	dk := d / a.heads
	b := make([]float64, T*d)
	for i := 0; i < a.heads; i++ {
		ki, vi := colBlock(a.keys, i*dk, (i+1)*dk), colBlock(a.v, i*dk, (i+1)*dk)
		qi := colBlock(a.q, i*dk, (i+1)*dk)
		for t := 0; t < T; t++ {
			n := min(S, t+1)
			s, e := dotScores(rowBlock(ki, 0, n), qi.Row(t), 1/math.Sqrt(float64(dk)))
			bt := softmaxContextBounds(s, e, rowBlock(vi, 0, n), expTol)
			copy(b[t*d+i*dk:t*d+(i+1)*dk], bt[n:])
		}
	}
	return b
}
