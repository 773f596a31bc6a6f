//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func axpy(alpha float32, x, y []float32) {
	switch active {
	case AVX512:
		axpyAVX512(alpha, x, y)
	case AVX2:
		axpyAVX2(alpha, x, y)
	default:
		fallback.Axpy(alpha, x, y)
	}
}

func scale(alpha float32, x []float32) {
	switch active {
	case AVX512:
		scaleAVX512(alpha, x)
	case AVX2:
		scaleAVX2(alpha, x)
	default:
		fallback.Scale(alpha, x)
	}
}

func sum(x []float32) float32 {
	switch active {
	case AVX512:
		return sumAVX512(x)
	case AVX2:
		return sumAVX2(x)
	}
	return fallback.Sum(x)
}

func maxOf(x []float32) float32 {
	switch active {
	case AVX512:
		return maxAVX512(x)
	case AVX2:
		return maxAVX2(x)
	}
	return fallback.Max(x)
}
