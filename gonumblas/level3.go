package gonumblas

import (
	"github.com/heedml/heed/kernels"
	"gonum.org/v1/gonum/blas"
)

// Sgemm sets C = α·op(A)·op(B) + β·C, op(A) m×k, op(B) k×n, C m×n, all
// row-major, op(X) = X for NoTrans and Xᵀ for Trans or ConjTrans
// (blas.Float32Level3). m, n, k ≥ 1 with m·n·k ≥ 128, α ≠ 0, valid arguments
// and C disjoint from A and B run heed's kernels.Gemm, which splits products of
// 2²² multiply-adds (about 161³) and more over GOMAXPROCS goroutines, as gonum's Sgemm splits
// large ones; every other call is gonum's. β = 0 does not read C.
func (impl Implementation) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	aT, bT := isTrans(tA), isTrans(tB)
	aRows, aCols := m, k
	if aT {
		aRows, aCols = k, m
	}
	bRows, bCols := k, n
	if bT {
		bRows, bCols = n, k
	}
	if !validTrans(tA) || !validTrans(tB) || m < 1 || n < 1 || k < 1 || alpha == 0 ||
		!fits(len(a), aRows, aCols, lda) || !fits(len(b), bRows, bCols, ldb) || !fits(len(c), m, n, ldc) ||
		m*n < gemmMinWork && m*n*k < gemmMinWork { // m·n·k < 128; m·n first, so nothing overflows
		impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	as, bs, cs := span(a, aRows, aCols, lda), span(b, bRows, bCols, ldb), span(c, m, n, ldc)
	if overlap(cs, as) || overlap(cs, bs) {
		impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemm(aT, bT, m, n, k, alpha, as, lda, bs, ldb, beta, cs, ldc)
}

// fits reports whether a rows×cols matrix with leading dimension ld, rows and
// cols ≥ 1, is valid by gonum's rules and lies within l elements.
func fits(l, rows, cols, ld int) bool {
	return ld >= cols && l >= cols && (l-cols)/ld >= rows-1
}

// gemm sets C = α·op(A)·op(B) + β·C for arguments Sgemm has validated: sizes
// ≥ 1, α ≠ 0, C disjoint from A and B; a, b and c hold exactly the stored
// matrices. It is the one place that chooses heed's kernel.
func gemm(aT, bT bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ar, ac := m, k
	if aT {
		ar, ac = k, m
	}
	br, bc := k, n
	if bT {
		br, bc = n, k
	}
	kernels.Gemm(trans(aT), trans(bT), alpha,
		kernels.Matrix{Rows: ar, Cols: ac, Stride: lda, Data: a},
		kernels.Matrix{Rows: br, Cols: bc, Stride: ldb, Data: b},
		beta, kernels.Matrix{Rows: m, Cols: n, Stride: ldc, Data: c})
}

// trans returns the kernels.Transpose that t names.
func trans(t bool) kernels.Transpose {
	if t {
		return kernels.Trans
	}
	return kernels.NoTrans
}
