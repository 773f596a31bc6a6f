package gonumblas

import (
	"github.com/heedml/heed/kernels"
	"gonum.org/v1/gonum/blas"
)

// Sgemv sets y = α·A·x + β·y (tA = NoTrans) or y = α·Aᵀ·x + β·y (Trans,
// ConjTrans) for the m×n row-major A (blas.Float32Level2). Unit increments
// with m·n ≥ 64, α ≠ 0, valid arguments and y disjoint from A and x run heed's
// MatVec or MatTVec; every other call is gonum's. β = 0 does not read y.
func (impl Implementation) Sgemv(tA blas.Transpose, m, n int, alpha float32, a []float32, lda int, x []float32, incX int, beta float32, y []float32, incY int) {
	lenX, lenY := n, m
	if isTrans(tA) {
		lenX, lenY = m, n
	}
	if !validTrans(tA) || m < 1 || n < 1 || lda < n || incX != 1 || incY != 1 ||
		len(x) < lenX || len(y) < lenY || len(a) < n || (len(a)-n)/lda < m-1 || alpha == 0 ||
		m*n < gemvMinWork {
		impl.Implementation.Sgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	as, xs, ys := span(a, m, n, lda), x[:lenX], y[:lenY]
	if overlap(ys, as) || overlap(ys, xs) {
		impl.Implementation.Sgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	mat := kernels.Matrix{Rows: m, Cols: n, Stride: lda, Data: as}
	if isTrans(tA) {
		gemvT(mat, alpha, xs, beta, ys)
		return
	}
	gemvN(mat, alpha, xs, beta, ys)
}

// gemvN sets y = α·A·x + β·y, rounding α·(A·x) as gonum does.
func gemvN(a kernels.Matrix, alpha float32, x []float32, beta float32, y []float32) {
	if beta == 0 {
		kernels.MatVec(y, a, x)
		if alpha != 1 {
			kernels.Scale(y, alpha, y)
		}
		return
	}
	buf := getBuf(len(y))
	t := *buf
	kernels.MatVec(t, a, x)
	if beta != 1 {
		kernels.Scale(y, beta, y)
	}
	kernels.Axpy(alpha, t, y)
	putBuf(buf)
}

// gemvT sets y = α·Aᵀ·x + β·y, scaling x by α first as gonum does.
func gemvT(a kernels.Matrix, alpha float32, x []float32, beta float32, y []float32) {
	switch beta {
	case 0:
		clear(y)
	case 1:
	default:
		kernels.Scale(y, beta, y)
	}
	if alpha == 1 {
		kernels.MatTVecAdd(y, a, x)
		return
	}
	buf := getBuf(len(x))
	t := *buf
	copy(t, x)
	kernels.Scale(t, alpha, t)
	kernels.MatTVecAdd(y, a, t)
	putBuf(buf)
}

// Sger sets A += α·x·yᵀ for the m×n row-major A (blas.Float32Level2). Unit
// increments with m, n ≥ 1, α ≠ 0, valid arguments and A disjoint from x and y
// run heed's Axpy on each row; every other call is gonum's.
func (impl Implementation) Sger(m, n int, alpha float32, x []float32, incX int, y []float32, incY int, a []float32, lda int) {
	if m < 1 || n < 1 || lda < n || incX != 1 || incY != 1 ||
		len(x) < m || len(y) < n || len(a) < n || (len(a)-n)/lda < m-1 || alpha == 0 {
		impl.Implementation.Sger(m, n, alpha, x, incX, y, incY, a, lda)
		return
	}
	as, xs, ys := span(a, m, n, lda), x[:m], y[:n]
	if overlap(as, xs) || overlap(as, ys) {
		impl.Implementation.Sger(m, n, alpha, x, incX, y, incY, a, lda)
		return
	}
	for i, xi := range xs {
		kernels.Axpy(alpha*xi, ys, as[i*lda:i*lda+n])
	}
}
