//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func additiveScore(dst, k []float32, ldk int, q, v []float32) {
	fallback.AdditiveScore(dst, k, ldk, q, v)
}
