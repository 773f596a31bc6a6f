package bench

import (
	"math"
	"testing"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
)

// storedKeys returns the keys as the format stores them, widened to float64.
func storedKeys(f attention.Format, keys kernels.Matrix) [][]float64 {
	out := make([][]float64, keys.Rows)
	w := make([]float32, keys.Cols)
	for s := range out {
		x := keys.Data[s*keys.Stride : s*keys.Stride+keys.Cols]
		switch f {
		case attention.BFloat16:
			b := make([]kernels.BF16, len(x))
			kernels.ToBF16(b, x)
			kernels.FromBF16(w, b)
		case attention.Float16:
			b := make([]kernels.F16, len(x))
			kernels.ToF16(b, x)
			kernels.FromF16(w, b)
		case attention.Q8, attention.Q8Q8:
			b := make([]kernels.Q8Block, kernels.Q8Blocks(len(x)))
			kernels.ToQ8(b, x)
			kernels.FromQ8(w, b)
		default:
			copy(w, x)
		}
		out[s] = make([]float64, len(w))
		for j, v := range w {
			out[s][j] = float64(v)
		}
	}
	return out
}

// TestDecodeFormat checks each stored-cache step against a float64 step:
// heed's (every ISA) on the keys as the format stores them, within 1e-4; each
// peer's on the float32 keys, within the bound its FormatStep's roundings
// give (formatPeerBound). It also checks the bytes the step is credited with.
func TestDecodeFormat(t *testing.T) {
	defer kernelsUseDefault()
	for k, f := range formatKernels {
		const S = 300
		c := NewCase(k, S)
		// Bytes of one stored row of 128: 4 or 2 per element, 4 Q8 blocks of 36.
		rowBytes := map[attention.Format]int64{attention.Float32: 512, attention.BFloat16: 256, attention.Float16: 256, attention.Q8: 144, attention.Q8Q8: 144}[f]
		if want := 2 * S * rowBytes; c.Bytes != want {
			t.Errorf("%v: %d bytes per step, want %d (keys and values)", k, c.Bytes, want)
		}
		a := c.attn
		kv := storedKeys(f, a.keys)
		stored, w := float64Step(kv, a.h)
		heedBound := 1e-4
		if f == attention.Q8Q8 {
			heedBound += queryQ8Bound(kv, a.h, w)
		}
		ran := 0
		for _, im := range Impls() {
			if !im.Has(k) {
				continue
			}
			ran++
			if im.Parallel {
				t.Errorf("%v: %s runs it: only single-threaded steps should", k, im.Name)
			}
			im.enter()
			for i := range a.ctx {
				a.ctx[i] = float32(math.NaN())
			}
			c.Bind(im)(1)
			want, bound := stored, make([]float64, len(stored))
			for j := range bound {
				bound[j] = heedBound
			}
			if !im.Heed {
				want, bound = formatPeerBound(im.Format[k], a.keys, a.h)
			}
			for j := range want {
				if d := math.Abs(float64(a.ctx[j]) - want[j]); !(d <= bound[j]) {
					t.Fatalf("%v %s: context[%d] = %v, want %v ± %.3g (float64 step)", k, im.Name, j, a.ctx[j], want[j], bound[j])
				}
			}
		}
		if ran == 0 {
			t.Errorf("%v: no implementation runs it", k)
		}
	}
}

// float64Step returns the context and the weights of a Luong dot step on
// keys kv (the values too) for query h, in float64.
func float64Step(kv [][]float64, h []float32) (ctx, w []float64) {
	w = make([]float64, len(kv))
	mx := math.Inf(-1)
	for s := range kv {
		for j, x := range kv[s] {
			w[s] += x * float64(h[j])
		}
		mx = max(mx, w[s])
	}
	var sum float64
	for s := range w {
		w[s] = math.Exp(w[s] - mx)
		sum += w[s]
	}
	ctx = make([]float64, len(kv[0]))
	for s := range w {
		w[s] /= sum
		for j := range ctx {
			ctx[j] += w[s] * kv[s][j]
		}
	}
	return ctx, w
}

// queryQ8Bound bounds how far quantising the query h to Q8 blocks moves a
// step's context (heed's Q8Q8 steps do where the VNNI kernels run): each
// score by Σ|k̂|·Scale/2 over each block, so each weight by a factor within
// e^(±2·max δ), the context by (e^(2·max δ) − 1)·Σ w·max|v̂|.
func queryQ8Bound(kv [][]float64, h []float32, w []float64) float64 {
	hq := make([]kernels.Q8Block, kernels.Q8Blocks(len(h)))
	kernels.ToQ8(hq, h)
	var delta, vmax float64
	for _, row := range kv {
		var d float64
		for j, x := range row {
			d += math.Abs(x) * float64(hq[j/32].Scale) / 2
			vmax = max(vmax, math.Abs(x))
		}
		delta = max(delta, d)
	}
	var sum float64
	for _, x := range w {
		sum += x
	}
	return math.Expm1(2*delta) * sum * vmax
}

// formatPeerBound returns the float64 step on the keys, values and query as
// peer p stores and reads them, and how far p's step may be from it per
// context element, given p's arithmetic: score errors δ_s ≤ p.ScoreRel·Σ|k̂ĥ|
// move each weight by a factor within e^(±2·max δ), plus p.WeightAbs·max w;
// the output is off by p.OutRel·max|v̂| and the context's float32 sum by
// (S+4)·u per term.
func formatPeerBound(p *FormatStep, keys kernels.Matrix, h []float32) (ctx, bound []float64) {
	k := p.Widen(keys)
	v := k
	hq := p.Widen(kernels.Matrix{Rows: 1, Cols: len(h), Stride: len(h), Data: h}).Data
	S, d := k.Rows, k.Cols
	kw, vw := make([][]float64, S), make([][]float64, S)
	var delta, vmax float64
	for s := range S {
		kw[s], vw[s] = make([]float64, d), make([]float64, d)
		var prod float64
		for j := range d {
			kw[s][j], vw[s][j] = float64(k.Data[s*k.Stride+j]), float64(v.Data[s*v.Stride+j])
			prod += math.Abs(kw[s][j] * float64(hq[j]))
			vmax = max(vmax, math.Abs(vw[s][j]))
		}
		delta = max(delta, p.ScoreRel*prod)
	}
	w := make([]float64, S)
	mx := math.Inf(-1)
	for s := range S {
		for j := range d {
			w[s] += kw[s][j] * float64(hq[j])
		}
		mx = max(mx, w[s])
	}
	var sum, wmax float64
	for s := range w {
		w[s] = math.Exp(w[s] - mx)
		sum += w[s]
	}
	ctx = make([]float64, d)
	for s := range w {
		w[s] /= sum
		wmax = max(wmax, w[s])
		for j := range ctx {
			ctx[j] += w[s] * vw[s][j]
		}
	}
	e := math.Expm1(2 * delta)
	wsum := 1 + e + float64(S)*p.WeightAbs*wmax
	bound = make([]float64, d)
	for j := range bound {
		var a, b float64
		for s := range S {
			a += w[s] * math.Abs(vw[s][j])
			b += math.Abs(vw[s][j])
		}
		bound[j] = e*a + p.WeightAbs*wmax*b + p.OutRel*vmax + wsum*vmax*float64(S+4)*0x1p-24
	}
	return ctx, bound
}
