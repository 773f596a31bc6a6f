package bench

import (
	"github.com/heedml/heed/kernels"
	"github.com/tphakala/simd/f32"
)

// tphakala/simd's f32 (AVX2/AVX-512 and NEON assembly).
func init() {
	register(400, &Impl{
		Name: "tphakala",
		Note: map[Kernel]string{
			MatVec:      "f32.DotProductStrided(dst, A, x, rows, cols, stride)",
			MatTVec:     "f32.AddScaled(dst, x[r], row r) per row",
			MatVecBatch: "f32.DotProductStrided per vector",
			Softmax:     "f32.Max, AddScalar(−max), ExpInPlace, Sum, Scale",
			Additive:    "per row: f32.Add(tmp, q, row), TanhInPlace(tmp), DotProduct(tmp, v)",
		},
		// Exp documents "about 7e-6" maximum relative error (measured 7.3e-6);
		// Tanh documents a "fast approximation" (measured 1.7e-4 relative,
		// near 0). These, not heed's 2 ULP, bound their results, and Exp's
		// bounds Softmax, which is built on it.
		Tol:    map[Kernel]float64{Exp: 1e-5, Tanh: 2e-4, Softmax: 1e-5},
		Format: map[Kernel]*FormatStep{DecodeF16: tphakalaF16, DecodeQ8: tphakalaQ8, DecodeQ8Q8: tphakalaQ8},
		Dot:    f32.DotProduct,
		MatVec: func(dst []float32, a kernels.Matrix, x []float32) {
			f32.DotProductStrided(dst, a.Data, x, a.Rows, a.Cols, a.Stride)
		},
		MatTVec: func(dst []float32, a kernels.Matrix, x []float32) {
			for r, w := range x {
				f32.AddScaled(dst, w, a.Row(r))
			}
		},
		MatVecBatch: func(dst, a, x kernels.Matrix) {
			for b := 0; b < x.Rows; b++ {
				f32.DotProductStrided(dst.Row(b), a.Data, x.Row(b), a.Rows, a.Cols, a.Stride)
			}
		},
		Exp:     f32.Exp,
		Tanh:    f32.Tanh,
		Softmax: tphSoftmax,
		Additive: func(dst []float32, k kernels.Matrix, q, v []float32) {
			tmp := scratch(&tphTmp, len(q))
			for s := range dst {
				f32.Add(tmp, q, k.Row(s))
				f32.TanhInPlace(tmp)
				dst[s] = f32.DotProduct(tmp, v)
			}
		},
	})
}

var tphTmp []float32

// tphSoftmax is the softmax a tphakala/simd user composes from f32's kernels.
func tphSoftmax(dst, x []float32) {
	m := f32.Max(x)
	f32.AddScalar(dst, x, -m)
	f32.ExpInPlace(dst)
	f32.Scale(dst, dst, 1/f32.Sum(dst))
}
