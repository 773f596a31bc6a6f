//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func dot(x, y []float32) float32 {
	if active == NEON {
		return dotNEON(x, y)
	}
	return fallback.Dot(x, y)
}
