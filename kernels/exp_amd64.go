//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func exp(dst, x []float32) {
	switch active {
	case AVX512:
		expAVX512(dst, x)
	case AVX2:
		expAVX2(dst, x)
	default:
		fallback.Exp(dst, x)
	}
}

func tanh(dst, x []float32) {
	switch active {
	case AVX512:
		tanhAVX512(dst, x)
	case AVX2:
		tanhAVX2(dst, x)
	default:
		fallback.Tanh(dst, x)
	}
}
