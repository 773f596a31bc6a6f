package gonumblas

import (
	"math"
	"testing"

	"github.com/heedml/heed/kernels"
	"gonum.org/v1/gonum/blas"
)

// TestHeedPath checks that calls with unit increments run heed's kernels, not
// gonum's: each result must equal, bit for bit, what the kernels compute.
// (The tests against gonum would pass if every call fell through.)
func TestHeedPath(t *testing.T) { eachISA(t, testHeedPath) }

func testHeedPath(t *testing.T) {
	r := newRand(12)
	const m, n, k = 37, 45, 29
	x, y := randVec(r, n, 1), randVec(r, n, 1)
	checkf(t, same(impl.Sdot(n, x, 1, y, 1), kernels.Dot(x, y)), "Sdot is not kernels.Dot")

	got, want := append([]float32(nil), y...), append([]float32(nil), y...)
	impl.Saxpy(n, -1.5, x, 1, got, 1)
	kernels.Axpy(-1.5, x, want)
	checkf(t, sameSlice(got, want) < 0, "Saxpy is not kernels.Axpy")

	nrm := float32(math.Sqrt(float64(kernels.Dot(x, x))))
	checkf(t, same(impl.Snrm2(n, x, 1), nrm), "Snrm2 is not √Dot(x, x)")

	a := randMat(r, m, n, n)
	gy, wy := make([]float32, m), make([]float32, m)
	impl.Sgemv(blas.NoTrans, m, n, 1, a, n, x, 1, 0, gy, 1)
	kernels.MatVec(wy, kernels.Matrix{Rows: m, Cols: n, Stride: n, Data: a}, x)
	checkf(t, sameSlice(gy, wy) < 0, "Sgemv NoTrans is not kernels.MatVec")

	xm := randVec(r, m, 1)
	gy, wy = append([]float32(nil), y...), append([]float32(nil), y...)
	impl.Sgemv(blas.Trans, m, n, 1, a, n, xm, 1, 1, gy, 1)
	kernels.MatTVec(wy, kernels.Matrix{Rows: m, Cols: n, Stride: n, Data: a}, xm)
	checkf(t, sameSlice(gy, wy) < 0, "Sgemv Trans is not kernels.MatTVec")

	ga, wa := append([]float32(nil), a...), append([]float32(nil), a...)
	impl.Sger(m, n, 0.5, xm, 1, y, 1, ga, n)
	for i := range m {
		kernels.Axpy(0.5*xm[i], y, wa[i*n:(i+1)*n])
	}
	checkf(t, sameSlice(ga, wa) < 0, "Sger is not kernels.Axpy per row")

	// C = A·Bᵀ is MatVecBatch as it stands; C = A·B is the same after B is
	// transposed.
	am, bt := randMat(r, m, k, k), randMat(r, n, k, k)
	gc, wc := make([]float32, m*n), make([]float32, m*n)
	impl.Sgemm(blas.NoTrans, blas.Trans, m, n, k, 1, am, k, bt, k, 0, gc, n)
	kernels.MatVecBatch(kernels.Matrix{Rows: m, Cols: n, Stride: n, Data: wc},
		kernels.Matrix{Rows: n, Cols: k, Stride: k, Data: bt}, kernels.Matrix{Rows: m, Cols: k, Stride: k, Data: am})
	checkf(t, sameSlice(gc, wc) < 0, "Sgemm NoTrans·Trans is not kernels.MatVecBatch")
	b := make([]float32, k*n)
	for i := range n {
		for l := range k {
			b[l*n+i] = bt[i*k+l]
		}
	}
	clear(gc)
	impl.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, am, k, b, n, 0, gc, n)
	checkf(t, sameSlice(gc, wc) < 0, "Sgemm NoTrans·NoTrans is not kernels.MatVecBatch on Bᵀ")
}
