package bench

import (
	"runtime"

	"github.com/heedml/heed/kernels"
	"github.com/viterin/vek/vek32"
)

// viterin/vek's vek32 (AVX2 assembly; no AVX-512, no tanh). Its MatMul splits
// large products over every CPU, so it is listed twice: "vek" composes the
// matrix kernels from its single-threaded Dot, "vek-matmul" calls MatMul.
func init() {
	register(300, &Impl{
		Name: "vek",
		Note: map[Kernel]string{
			MatVec:      "vek32.Dot per row",
			MatTVec:     "vek32.MatMul_Into(tmp, xᵀ, A) (1×rows·rows×cols, single-threaded at m=1) then vek32.Add_Inplace(dst, tmp); for a strided A (multi-head column blocks), MulNumber_Into and Add_Inplace per row",
			MatVecBatch: "vek32.Dot per row per vector",
			Softmax:     "vek32.Max, SubNumber_Into, Exp_Inplace, Sum, MulNumber_Inplace",
		},
		// Exp's assembly covers multiples of 8; the rest goes through
		// chewxy/math32.Exp, measured up to 3.3e-7 relative here. Its
		// Softmax is built on that Exp.
		Tol: map[Kernel]float64{Exp: 1e-6, Softmax: 1e-6},
		Dot: vek32.Dot,
		MatVec: func(dst []float32, a kernels.Matrix, x []float32) {
			for r := range dst {
				dst[r] = vek32.Dot(a.Row(r), x)
			}
		},
		MatTVec: func(dst []float32, a kernels.Matrix, x []float32) {
			tmp := scratch(&vekTmp, len(dst))
			if !dense(a) {
				for r, w := range x {
					vek32.MulNumber_Into(tmp, a.Row(r), w)
					vek32.Add_Inplace(dst, tmp)
				}
				return
			}
			vek32.MatMul_Into(tmp, x, contiguous(a), a.Rows)
			vek32.Add_Inplace(dst, tmp)
		},
		MatVecBatch: func(dst, a, x kernels.Matrix) {
			for b := 0; b < x.Rows; b++ {
				xb, db := x.Row(b), dst.Row(b)
				for r := range db {
					db[r] = vek32.Dot(a.Row(r), xb)
				}
			}
		},
		Exp: func(dst, x []float32) { vek32.Exp_Into(dst, x) },
		Softmax: func(dst, x []float32) {
			m := vek32.Max(x)
			vek32.SubNumber_Into(dst, x, m)
			vek32.Exp_Inplace(dst)
			vek32.MulNumber_Inplace(dst, 1/vek32.Sum(dst))
		},
	})
	register(301, &Impl{
		Name: "vek-matmul", Parallel: true, Threads: runtime.NumCPU(),
		Note: map[Kernel]string{
			MatVec:      "vek32.MatMul_Into(dst, A, x) (A·x as rows×cols·cols×1); goroutines over all CPUs when rows·cols ≥ 100000",
			MatVecBatch: "vek32.MatMul_Into per vector",
		},
		MatVec: func(dst []float32, a kernels.Matrix, x []float32) {
			vek32.MatMul_Into(dst, contiguous(a), x, a.Cols)
		},
		MatVecBatch: func(dst, a, x kernels.Matrix) {
			for b := 0; b < x.Rows; b++ {
				vek32.MatMul_Into(dst.Row(b), contiguous(a), x.Row(b), a.Cols)
			}
		},
	})
}

var vekTmp []float32

// scratch returns (*buf)[:n], growing it as needed: compositions that need a
// temporary reuse one per peer (the benchmarks run one call at a time).
func scratch(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return (*buf)[:n]
}

// dense reports whether a's rows are contiguous (Stride = Cols).
func dense(a kernels.Matrix) bool { return a.Rows <= 1 || a.Stride == a.Cols }

// contiguous returns a's elements as one rows×cols slice; peers that take a
// dense matrix need Stride = Cols, which every benchmark input has.
func contiguous(a kernels.Matrix) []float32 {
	if a.Rows > 1 && a.Stride != a.Cols {
		panic("bench: peer needs a dense matrix (stride = cols)")
	}
	return a.Data[:a.Rows*a.Cols]
}
