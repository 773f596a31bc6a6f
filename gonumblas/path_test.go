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

	for _, tA := range transposes {
		for _, tB := range transposes {
			aT, bT := tA == blas.Trans, tB == blas.Trans
			am := kernels.Matrix{Rows: m, Cols: k, Stride: k + 1}
			if aT {
				am = kernels.Matrix{Rows: k, Cols: m, Stride: m}
			}
			bm := kernels.Matrix{Rows: k, Cols: n, Stride: n}
			if bT {
				bm = kernels.Matrix{Rows: n, Cols: k, Stride: k + 2}
			}
			am.Data = randMat(r, am.Rows, am.Cols, am.Stride)
			bm.Data = randMat(r, bm.Rows, bm.Cols, bm.Stride)
			c := randMat(r, m, n, n)
			for _, ab := range [][2]float32{{1, 0}, {-0.5, 2}} {
				gc, wc := append([]float32(nil), c...), append([]float32(nil), c...)
				impl.Sgemm(tA, tB, m, n, k, ab[0], am.Data, am.Stride, bm.Data, bm.Stride, ab[1], gc, n)
				kernels.Gemm(aT, bT, ab[0], am, bm, ab[1], kernels.Matrix{Rows: m, Cols: n, Stride: n, Data: wc})
				checkf(t, sameSlice(gc, wc) < 0, "Sgemm %c%c α=%v β=%v is not kernels.Gemm", tA, tB, ab[0], ab[1])
			}
		}
	}
}
