//go:build goexperiment.simd && amd64

package bench

import (
	"github.com/ajroetker/go-highway/hwy"
	"github.com/ajroetker/go-highway/hwy/contrib/nn"
	"github.com/heedml/heed/kernels"
)

// go-highway's decode steps on stored caches: nn.SDPA on its Float16 and
// BFloat16 types (query, keys, values, scores and output all in the 16-bit
// type), and nn.QuantizedSDPA, which takes float32 keys and values and
// quantises them (and the query and the weights) to uint8 per tensor on every
// call.
var highwayFormats = map[Kernel]*FormatStep{
	DecodeF16:  highwaySDPA16(hwy.Float32ToFloat16, hwy.Float16ToFloat32, 0x1p-11),
	DecodeBF16: highwaySDPA16(hwy.Float32ToBFloat16, hwy.BFloat16ToFloat32, 0x1p-8),
	DecodeQ8: {
		Note: "nn.QuantizedSDPA on float32 keys and values (it quantises query, keys, values and weights to uint8 per tensor, allocating, on every call)",
		Bind: func(keys []kernels.Matrix) func(i int, h, weights, ctx []float32) {
			type cache struct{ k, v []float32 }
			cs := make([]cache, len(keys))
			for m, km := range keys {
				cs[m] = cache{k: dense32(km), v: dense32(km)}
			}
			S, d := keys[0].Rows, keys[0].Cols
			return func(i int, h, weights, ctx []float32) {
				nn.QuantizedSDPA(h, cs[i].k, cs[i].v, nil, ctx, 1, S, d, 1)
			}
		},
		Widen: affine8,
		// Exact int32 products scaled once in float32; the weights quantised
		// to uint8 over [min w, max w], half a step each (and e^x's error);
		// the output scaled once in float32.
		ScoreRel: 4 * 0x1p-24, WeightAbs: 1.0/510 + 1e-4, OutRel: 4 * 0x1p-24,
	},
}

func init() { highwayFormats[DecodeQ8Q8] = highwayFormats[DecodeQ8] }

// highwaySDPA16 is nn.SDPA on a 16-bit type T whose unit roundoff is u.
func highwaySDPA16[T hwy.Float16 | hwy.BFloat16](to func(float32) T, from func(T) float32, u float64) *FormatStep {
	widen := func(a kernels.Matrix) kernels.Matrix {
		out := kernels.Matrix{Rows: a.Rows, Cols: a.Cols, Stride: a.Cols, Data: make([]float32, a.Rows*a.Cols)}
		for r := range a.Rows {
			for j, x := range a.Row(r) {
				out.Data[r*a.Cols+j] = from(to(x))
			}
		}
		return out
	}
	narrow := func(dst []T, a kernels.Matrix) {
		for r := range a.Rows {
			for j, x := range a.Row(r) {
				dst[r*a.Cols+j] = to(x)
			}
		}
	}
	return &FormatStep{
		Note: "nn.SDPA with query, keys, values, scores and output in its 16-bit type (the query converted each step, the output widened)",
		Bind: func(keys []kernels.Matrix) func(i int, h, weights, ctx []float32) {
			type cache struct{ k, v []T }
			cs := make([]cache, len(keys))
			for m, km := range keys {
				cs[m] = cache{k: make([]T, km.Rows*km.Cols), v: make([]T, km.Rows*km.Cols)}
				narrow(cs[m].k, km)
				narrow(cs[m].v, km)
			}
			S, d := keys[0].Rows, keys[0].Cols
			q, scores, out := make([]T, d), make([]T, S), make([]T, d)
			one := to(1)
			return func(i int, h, weights, ctx []float32) {
				for j, x := range h {
					q[j] = to(x)
				}
				nn.SDPA(q, cs[i].k, cs[i].v, nil, scores, out, 1, S, d, one)
				for j, x := range out {
					ctx[j] = from(x)
				}
			}
		},
		Widen: widen,
		// Products summed in float32, each score rounded to T; the weights
		// stored in T (and e^x's error); the output rounded to T.
		ScoreRel: u + 130*0x1p-24, WeightAbs: u + 1e-4, OutRel: u,
	}
}

// dense32 returns a copy of a's elements, row after row.
func dense32(a kernels.Matrix) []float32 {
	out := make([]float32, 0, a.Rows*a.Cols)
	for r := range a.Rows {
		out = append(out, a.Row(r)...)
	}
	return out
}

// affine8 returns a quantised to uint8 over its whole range as
// nn.QuantizeAffine does, dequantised.
func affine8(a kernels.Matrix) kernels.Matrix {
	x := dense32(a)
	q := make([]uint8, len(x))
	scale, zp := nn.QuantizeAffine(x, q, len(x))
	for i, v := range q {
		x[i] = float32(int32(v)-int32(zp)) * scale
	}
	return kernels.Matrix{Rows: a.Rows, Cols: a.Cols, Stride: a.Cols, Data: x}
}
