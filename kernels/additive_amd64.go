//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func additiveScore(dst, k []float32, ldk int, q, v []float32) {
	switch active {
	case AVX512:
		additiveScoreAVX512(dst, k, ldk, q, v)
		return
	case AVX2:
		additiveScoreAVX2(dst, k, ldk, q, v)
		return
	}
	fallback.AdditiveScore(dst, k, ldk, q, v)
}
