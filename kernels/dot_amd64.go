//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

// dot checks len(x) == len(y) for Dot, which inlines to a call of dot.
func dot(x, y []float32) float32 {
	checkSameLen("Dot", "x", "y", len(x), len(y))
	switch active {
	case AVX512:
		return dotAVX512(x, y)
	case AVX2:
		return dotAVX2(x, y)
	}
	return fallback.Dot(x, y)
}
