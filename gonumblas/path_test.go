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
	kernels.MatTVecAdd(wy, kernels.Matrix{Rows: m, Cols: n, Stride: n, Data: a}, xm)
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
				kernels.Gemm(trans(aT), trans(bT), ab[0], am, bm, ab[1], kernels.Matrix{Rows: m, Cols: n, Stride: n, Data: wc})
				checkf(t, sameSlice(gc, wc) < 0, "Sgemm %c%c α=%v β=%v is not kernels.Gemm", tA, tB, ab[0], ab[1])
			}
		}
	}
}

// TestThresholds checks the size thresholds: Sgemv with m·n below 64 and Sgemm
// with m·n·k below 128 are gonum's bit for bit, and at the thresholds heed's.
func TestThresholds(t *testing.T) {
	gemvMinWork, gemmMinWork = 64, 128
	defer func() { gemvMinWork, gemmMinWork = 0, 0 }()
	r := newRand(14)
	for _, tc := range []struct {
		m, n int
		heed bool
	}{{1, 63, false}, {7, 9, false}, {63, 1, false}, {8, 8, true}, {1, 64, true}, {64, 1, true}} {
		a, x := randMat(r, tc.m, tc.n, tc.n), randVec(r, tc.n, 1)
		got, gonumY, heedY := make([]float32, tc.m), make([]float32, tc.m), make([]float32, tc.m)
		impl.Sgemv(blas.NoTrans, tc.m, tc.n, 1, a, tc.n, x, 1, 0, got, 1)
		ref.Sgemv(blas.NoTrans, tc.m, tc.n, 1, a, tc.n, x, 1, 0, gonumY, 1)
		kernels.MatVec(heedY, kernels.Matrix{Rows: tc.m, Cols: tc.n, Stride: tc.n, Data: a}, x)
		want := gonumY
		if tc.heed {
			want = heedY
		}
		checkf(t, sameSlice(got, want) < 0, "Sgemv %d×%d: not %s's (heed's route: %v)", tc.m, tc.n, map[bool]string{false: "gonum", true: "heed"}[tc.heed], tc.heed)
	}
	for _, tc := range []struct {
		m, n, k int
		heed    bool
	}{{5, 5, 5, false}, {1, 127, 1, false}, {2, 2, 31, false}, {127, 1, 1, false}, {1, 128, 1, true}, {4, 4, 8, true}, {8, 16, 1, true}} {
		a, b := randMat(r, tc.m, tc.k, tc.k), randMat(r, tc.k, tc.n, tc.n)
		got, gonumC, heedC := make([]float32, tc.m*tc.n), make([]float32, tc.m*tc.n), make([]float32, tc.m*tc.n)
		impl.Sgemm(blas.NoTrans, blas.NoTrans, tc.m, tc.n, tc.k, 1, a, tc.k, b, tc.n, 0, got, tc.n)
		ref.Sgemm(blas.NoTrans, blas.NoTrans, tc.m, tc.n, tc.k, 1, a, tc.k, b, tc.n, 0, gonumC, tc.n)
		kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, kernels.Matrix{Rows: tc.m, Cols: tc.k, Stride: tc.k, Data: a},
			kernels.Matrix{Rows: tc.k, Cols: tc.n, Stride: tc.n, Data: b}, 0, kernels.Matrix{Rows: tc.m, Cols: tc.n, Stride: tc.n, Data: heedC})
		want := gonumC
		if tc.heed {
			want = heedC
		}
		checkf(t, sameSlice(got, want) < 0, "Sgemm %d×%d×%d: not the expected route (heed's: %v)", tc.m, tc.n, tc.k, tc.heed)
	}
}
