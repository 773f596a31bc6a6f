//go:build !purego

package kernels

import (
	"github.com/heedml/heed/fallback"
	"github.com/klauspost/cpuid/v2"
)

// hasF16C reports whether the AVX2 kernels may use VCVTPH2PS/VCVTPS2PH (every
// AVX-512 CPU has them in EVEX form).
var hasF16C = cpuid.CPU.Supports(cpuid.F16C)

// lowVec returns the number of leading elements of n that the active ISA's
// kernels of the reduced-precision family take (f16 tells whether the kernel
// needs F16C): all of them on AVX-512, whole vectors of 8 on AVX2, none on
// other ISAs.
func lowVec(n int, f16 bool) int {
	switch {
	case active == AVX512:
		return n
	case active == AVX2 && (hasF16C || !f16):
		return n &^ 7
	}
	return 0
}

func toBF16(dst []uint16, src []float32) {
	n := lowVec(len(src), false)
	if n > 0 {
		if active == AVX512 {
			toBF16AVX512(dst[:n], src[:n])
		} else {
			toBF16AVX2(dst[:n], src[:n])
		}
	}
	fallback.BF16s(dst[n:], src[n:])
}

func fromBF16(dst []float32, src []uint16) {
	n := lowVec(len(src), false)
	if n > 0 {
		if active == AVX512 {
			fromBF16AVX512(dst[:n], src[:n])
		} else {
			fromBF16AVX2(dst[:n], src[:n])
		}
	}
	fallback.FromBF16s(dst[n:], src[n:])
}

func toF16(dst []uint16, src []float32) {
	n := lowVec(len(src), true)
	if n > 0 {
		if active == AVX512 {
			toF16AVX512(dst[:n], src[:n])
		} else {
			toF16AVX2(dst[:n], src[:n])
		}
	}
	fallback.F16s(dst[n:], src[n:])
}

func fromF16(dst []float32, src []uint16) {
	n := lowVec(len(src), true)
	if n > 0 {
		if active == AVX512 {
			fromF16AVX512(dst[:n], src[:n])
		} else {
			fromF16AVX2(dst[:n], src[:n])
		}
	}
	fallback.FromF16s(dst[n:], src[n:])
}

// The decode kernels below take len(dst) ≥ 1 rows (columns for the
// transposed products) and len(x) ≥ 1 columns (rows).

func matVecBF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(x), false)
	switch {
	case n > 0 && active == AVX512:
		matVecBF16AVX512(dst, a, lda, x)
		return
	case n > 0:
		matVecBF16AVX2(dst, a, lda, x[:n])
	default:
		clear(dst)
	}
	if n < len(x) {
		matVecHalfTail(dst, a, lda, x, n, fallback.Float32FromBF16)
	}
}

func matVecF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(x), true)
	switch {
	case n > 0 && active == AVX512:
		matVecF16AVX512(dst, a, lda, x)
		return
	case n > 0:
		matVecF16AVX2(dst, a, lda, x[:n])
	default:
		clear(dst)
	}
	if n < len(x) {
		matVecHalfTail(dst, a, lda, x, n, fallback.Float32FromF16)
	}
}

func matTVecBF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(dst), false)
	switch {
	case n > 0 && active == AVX512:
		matTVecBF16AVX512(dst, a, lda, x)
		return
	case n > 0:
		matTVecBF16AVX2(dst[:n], a, lda, x)
	}
	if n < len(dst) {
		fallback.MatTVecBF16(dst[n:], a[n:], lda, x)
	}
}

func matTVecF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(dst), true)
	switch {
	case n > 0 && active == AVX512:
		matTVecF16AVX512(dst, a, lda, x)
		return
	case n > 0:
		matTVecF16AVX2(dst[:n], a, lda, x)
	}
	if n < len(dst) {
		fallback.MatTVecF16(dst[n:], a[n:], lda, x)
	}
}

// q8Whole returns the number of leading columns of n in whole 32-value blocks
// that the active ISA's Q8 kernels take.
func q8Whole(n int) int {
	if active == AVX512 || active == AVX2 {
		return n &^ (Q8BlockLen - 1)
	}
	return 0
}

func matVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	n := q8Whole(len(x))
	switch {
	case active != AVX512 && active != AVX2:
		fallback.MatVecQ8(dst, a, lda, x)
		return
	case n > 0 && active == AVX512:
		matVecQ8AVX512(dst, q8Bytes(a), lda, x[:n])
	case n > 0:
		matVecQ8AVX2(dst, q8Bytes(a), lda, x[:n])
	default:
		clear(dst)
	}
	if n < len(x) {
		matVecQ8Tail(dst, a, lda, x, n)
	}
}

func matTVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	n := q8Whole(len(dst))
	switch {
	case n > 0 && active == AVX512:
		matTVecQ8AVX512(dst[:n], q8Bytes(a), lda, x)
	case n > 0:
		matTVecQ8AVX2(dst[:n], q8Bytes(a), lda, x)
	}
	if n < len(dst) {
		fallback.MatTVecQ8(dst[n:], a[n/Q8BlockLen:], lda, x)
	}
}

// expShift sets w[i] = e^(s[i]−m) and returns Σ w[i], for s[i] ≤ m, none NaN.
func expShift(w, s []float32, m float32) float32 {
	n := lowVec(len(s), false)
	sum := float32(0)
	if n > 0 {
		if active == AVX512 {
			return expShiftAVX512(w, s, m)
		}
		sum = expShiftAVX2(w[:n], s[:n], m)
	}
	return sum + expShiftGo(w[n:], s[n:], m)
}
