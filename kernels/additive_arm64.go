//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func additiveScore(dst, k []float32, ldk int, q, v []float32) {
	if active == NEON && len(q) > 0 {
		additiveScoreNEON(dst, k, ldk, q, v)
		return
	}
	fallback.AdditiveScore(dst, k, ldk, q, v)
}
