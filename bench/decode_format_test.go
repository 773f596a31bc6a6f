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
		case attention.Q8:
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

// TestDecodeFormat checks each stored-cache step (every heed ISA) against a
// float64 step on the keys as the format stores them, and the bytes it is
// credited with.
func TestDecodeFormat(t *testing.T) {
	defer kernelsUseDefault()
	for k, f := range formatKernels {
		const S = 300
		c := NewCase(k, S)
		// Bytes of one stored row of 128: 4 or 2 per element, 4 Q8 blocks of 36.
		rowBytes := map[attention.Format]int64{attention.Float32: 512, attention.BFloat16: 256, attention.Float16: 256, attention.Q8: 144}[f]
		if want := 2 * S * rowBytes; c.Bytes != want {
			t.Errorf("%v: %d bytes per step, want %d (keys and values)", k, c.Bytes, want)
		}
		a := c.attn
		kv := storedKeys(f, a.keys)
		sc := make([]float64, S)
		mx := math.Inf(-1)
		for s := range S {
			for j, x := range kv[s] {
				sc[s] += x * float64(a.h[j])
			}
			mx = max(mx, sc[s])
		}
		var sum float64
		for s := range sc {
			sc[s] = math.Exp(sc[s] - mx)
			sum += sc[s]
		}
		ctx := make([]float64, formatD)
		for s := range S {
			for j := range ctx {
				ctx[j] += sc[s] / sum * kv[s][j]
			}
		}
		ran := 0
		for _, im := range Impls() {
			if !im.Has(k) {
				continue
			}
			ran++
			if !im.Heed || im.Parallel {
				t.Errorf("%v: %s runs it: only heed's single-threaded steps should", k, im.Name)
			}
			im.enter()
			for i := range a.ctx {
				a.ctx[i] = float32(math.NaN())
			}
			c.Bind(im)(1)
			for j, want := range ctx {
				if d := math.Abs(float64(a.ctx[j]) - want); !(d <= 1e-4) {
					t.Fatalf("%v %s: context[%d] = %v, want %v (stored keys, float64)", k, im.Name, j, a.ctx[j], want)
				}
			}
		}
		if ran == 0 {
			t.Errorf("%v: no implementation runs it", k)
		}
	}
}
