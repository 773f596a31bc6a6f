//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func matVec(dst, a []float32, lda int, x []float32) {
	switch active {
	case AVX512:
		matVecAVX512(dst, a, lda, x)
		return
	case AVX2:
		matVecAVX2(dst, a, lda, x)
		return
	}
	fallback.MatVec(dst, a, lda, x)
}

// The AVX2 matTVec and matVecBatch kernels need at least one full vector of
// columns (their tails reload the last full vector); narrower matrices go to
// the fallback, which is as fast for them.

func matTVec(dst, a []float32, lda int, x []float32) {
	switch {
	case active == AVX512:
		matTVecAVX512(dst, a, lda, x)
		return
	case active == AVX2 && len(dst) >= 8:
		matTVecAVX2(dst, a, lda, x)
		return
	}
	fallback.MatTVec(dst, a, lda, x)
}

func matVecBatch(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int) {
	switch {
	case active == AVX512:
		matVecBatchAVX512(d, ldd, a, lda, x, ldx, rows, cols, batch)
		return
	case active == AVX2 && cols >= 8:
		matVecBatchAVX2(d, ldd, a, lda, x, ldx, rows, cols, batch)
		return
	}
	fallback.MatVecBatch(d, ldd, a, lda, x, ldx, rows, cols, batch)
}
