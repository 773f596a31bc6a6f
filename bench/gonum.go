package bench

import (
	"runtime"

	"github.com/heedml/heed/kernels"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// gonum's float32 BLAS (pure Go with its own amd64 assembly for the level-1
// loops). It has no float32 e^x, tanh or softmax. Its Gemm splits large
// products over goroutines, so the batched product is listed twice: "gonum"
// calls Gemv per vector, "gonum-gemm" calls Gemm.
func init() {
	register(200, &Impl{
		Name: "gonum",
		Note: map[Kernel]string{
			MatTVec:     "blas32.Gemv(Trans, 1, A, x, 1, dst)",
			MatVecBatch: "blas32.Gemv(NoTrans, 1, A, x_b, 0, d_b) per vector",
		},
		Dot: func(x, y []float32) float32 {
			return blas32.Dot(vec32(x), vec32(y))
		},
		MatVec: func(dst []float32, a kernels.Matrix, x []float32) {
			blas32.Gemv(blas.NoTrans, 1, gen32(a), vec32(x), 0, vec32(dst))
		},
		MatTVec: func(dst []float32, a kernels.Matrix, x []float32) {
			blas32.Gemv(blas.Trans, 1, gen32(a), vec32(x), 1, vec32(dst))
		},
		MatVecBatch: func(dst, a, x kernels.Matrix) {
			ga := gen32(a)
			for b := 0; b < x.Rows; b++ {
				blas32.Gemv(blas.NoTrans, 1, ga, vec32(x.Row(b)), 0, vec32(dst.Row(b)))
			}
		},
	})
	register(201, &Impl{
		Name: "gonum-gemm", Parallel: true, Threads: runtime.GOMAXPROCS(0),
		Note: map[Kernel]string{MatVecBatch: "blas32.Gemm(NoTrans, Trans, 1, X, A, 0, D); goroutines over GOMAXPROCS for large products"},
		MatVecBatch: func(dst, a, x kernels.Matrix) {
			blas32.Gemm(blas.NoTrans, blas.Trans, 1, gen32(x), gen32(a), 0, gen32(dst))
		},
	})
}

func vec32(x []float32) blas32.Vector { return blas32.Vector{N: len(x), Inc: 1, Data: x} }

// gen32 views a as gonum's matrix: kernels.Matrix has blas32.General's layout,
// so the two convert directly.
func gen32(a kernels.Matrix) blas32.General { return blas32.General(a) }
