//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func matVec(dst, a []float32, lda int, x []float32) {
	if active == NEON {
		matVecNEON(dst, a, lda, x)
		return
	}
	fallback.MatVec(dst, a, lda, x)
}

func matTVec(dst, a []float32, lda int, x []float32) {
	if active == NEON {
		matTVecNEON(dst, a, lda, x)
		return
	}
	fallback.MatTVec(dst, a, lda, x)
}

func matVecBatch(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int) {
	if active == NEON {
		matVecBatchNEON(d, ldd, a, lda, x, ldx, rows, cols, batch)
		return
	}
	fallback.MatVecBatch(d, ldd, a, lda, x, ldx, rows, cols, batch)
}
