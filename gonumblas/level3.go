package gonumblas

import (
	"github.com/heedml/heed/kernels"
	"gonum.org/v1/gonum/blas"
)

// Sgemm sets C = α·op(A)·op(B) + β·C, op(A) m×k, op(B) k×n, C m×n, all
// row-major, op(X) = X for NoTrans and Xᵀ for Trans or ConjTrans
// (blas.Float32Level3). m, n, k ≥ 1, α ≠ 0, valid arguments and C disjoint
// from A and B run heed's kernels (see gemm); every other call is gonum's.
// β = 0 does not read C.
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
		!fits(len(a), aRows, aCols, lda) || !fits(len(b), bRows, bCols, ldb) || !fits(len(c), m, n, ldc) {
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

// gemmRowBlock is how many rows of C gemm computes into scratch at a time
// when β ≠ 0.
const gemmRowBlock = 64

// gemm sets C = α·op(A)·op(B) + β·C for arguments Sgemm has validated: sizes
// ≥ 1, α ≠ 0, C disjoint from A and B. It is the one place that chooses heed's
// kernel. It writes op(A), scaled by α as gonum scales it, and op(B)ᵀ as rows
// of length k into pooled scratch where they are not already so, and forms
// C = X·Wᵀ with MatVecBatch; β ≠ 0 goes through a scratch block of rows.
func gemm(aT, bT bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	x := kernels.Matrix{Rows: m, Cols: k, Stride: lda, Data: a}
	if aT || alpha != 1 {
		buf := getBuf(m * k)
		defer putBuf(buf)
		if aT {
			transpose(*buf, k, a, lda, k, m)
		} else {
			for i := range m {
				copy((*buf)[i*k:(i+1)*k], a[i*lda:i*lda+k])
			}
		}
		if alpha != 1 {
			kernels.Scale(alpha, *buf)
		}
		x = kernels.Matrix{Rows: m, Cols: k, Stride: k, Data: *buf}
	}
	w := kernels.Matrix{Rows: n, Cols: k, Stride: ldb, Data: b}
	if !bT {
		buf := getBuf(n * k)
		defer putBuf(buf)
		transpose(*buf, k, b, ldb, k, n)
		w = kernels.Matrix{Rows: n, Cols: k, Stride: k, Data: *buf}
	}
	if beta == 0 {
		kernels.MatVecBatch(kernels.Matrix{Rows: m, Cols: n, Stride: ldc, Data: c}, w, x)
		return
	}
	rb := min(gemmRowBlock, m)
	buf := getBuf(rb * n)
	defer putBuf(buf)
	for i0 := 0; i0 < m; i0 += rb {
		r := min(rb, m-i0)
		t := kernels.Matrix{Rows: r, Cols: n, Stride: n, Data: (*buf)[:r*n]}
		kernels.MatVecBatch(t, w, kernels.Matrix{Rows: r, Cols: k, Stride: x.Stride, Data: x.Data[i0*x.Stride:]})
		for i := range r {
			row := c[(i0+i)*ldc : (i0+i)*ldc+n]
			if beta != 1 {
				kernels.Scale(beta, row)
			}
			kernels.Axpy(1, t.Data[i*n:(i+1)*n], row)
		}
	}
}

// transpose sets dst[j·ldd+i] = src[i·lds+j] for i < rows, j < cols.
func transpose(dst []float32, ldd int, src []float32, lds int, rows, cols int) {
	const tile = 16
	for i0 := 0; i0 < rows; i0 += tile {
		i1 := min(i0+tile, rows)
		for j0 := 0; j0 < cols; j0 += tile {
			j1 := min(j0+tile, cols)
			for i := i0; i < i1; i++ {
				for j, v := range src[i*lds+j0 : i*lds+j1] {
					dst[(j0+j)*ldd+i] = v
				}
			}
		}
	}
}
