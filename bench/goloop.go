package bench

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// The plain Go loops a user would write without a library: one float32
// accumulator, and the float64 math package for e^x and tanh.
func init() {
	register(100, &Impl{
		Name: "goloop",
		Note: map[Kernel]string{
			Exp: "float32(math.Exp(float64(x))) per element", Tanh: "float32(math.Tanh(float64(x))) per element",
		},
		Dot: loopDot,
		MatVec: func(dst []float32, a kernels.Matrix, x []float32) {
			for r := range dst {
				dst[r] = loopDot(a.Row(r), x)
			}
		},
		MatTVec: func(dst []float32, a kernels.Matrix, x []float32) {
			for r, w := range x {
				row := a.Row(r)
				for c := range dst {
					dst[c] += w * row[c]
				}
			}
		},
		MatVecBatch: func(dst, a, x kernels.Matrix) {
			for b := 0; b < x.Rows; b++ {
				xb, db := x.Row(b), dst.Row(b)
				for r := range db {
					db[r] = loopDot(a.Row(r), xb)
				}
			}
		},
		Exp: func(dst, x []float32) {
			for i, v := range x {
				dst[i] = float32(math.Exp(float64(v)))
			}
		},
		Tanh: func(dst, x []float32) {
			for i, v := range x {
				dst[i] = float32(math.Tanh(float64(v)))
			}
		},
		Softmax: func(dst, x []float32) {
			m := float32(math.Inf(-1))
			for _, v := range x {
				m = max(m, v)
			}
			var s float32
			for i, v := range x {
				e := float32(math.Exp(float64(v - m)))
				dst[i] = e
				s += e
			}
			inv := 1 / s
			for i := range dst {
				dst[i] *= inv
			}
		},
		Additive: func(dst []float32, k kernels.Matrix, q, v []float32) {
			for s := range dst {
				row := k.Row(s)
				var acc float32
				for i, vi := range v {
					acc += vi * float32(math.Tanh(float64(q[i]+row[i])))
				}
				dst[s] = acc
			}
		},
	})
}

func loopDot(x, y []float32) float32 {
	var s float32
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}
