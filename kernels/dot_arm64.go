//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

// dot checks len(x) == len(y) for Dot, which inlines to a call of dot.
func dot(x, y []float32) float32 {
	checkSameLen("Dot", "x", "y", len(x), len(y))
	if active == NEON {
		return dotNEON(x, y)
	}
	return fallback.Dot(x, y)
}
