//go:build purego || !amd64

package kernels

import "github.com/heedml/heed/fallback"

// On other architectures (arm64 included, for now) and with purego the
// reduced-precision family runs the pure-Go kernels.

func toBF16(dst []uint16, src []float32)   { fallback.BF16s(dst, src) }
func fromBF16(dst []float32, src []uint16) { fallback.FromBF16s(dst, src) }
func toF16(dst []uint16, src []float32)    { fallback.F16s(dst, src) }
func fromF16(dst []float32, src []uint16)  { fallback.FromF16s(dst, src) }

func matVecBF16(dst []float32, a []uint16, lda int, x []float32) {
	fallback.MatVecBF16(dst, a, lda, x)
}

func matVecF16(dst []float32, a []uint16, lda int, x []float32) {
	fallback.MatVecF16(dst, a, lda, x)
}

func matTVecBF16(dst []float32, a []uint16, lda int, x []float32) {
	fallback.MatTVecBF16(dst, a, lda, x)
}

func matTVecF16(dst []float32, a []uint16, lda int, x []float32) {
	fallback.MatTVecF16(dst, a, lda, x)
}

func matVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	fallback.MatVecQ8(dst, a, lda, x)
}

func matTVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	fallback.MatTVecQ8(dst, a, lda, x)
}

func expShift(w, s []float32, m float32) float32 { return expShiftGo(w, s, m) }
