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

func matTVec(dst, a []float32, lda int, x []float32) { fallback.MatTVec(dst, a, lda, x) }

func matVecBatch(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int) {
	fallback.MatVecBatch(d, ldd, a, lda, x, ldx, rows, cols, batch)
}
