//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func axpy(alpha float32, x, y []float32) {
	if active == NEON {
		axpyNEON(alpha, x, y)
		return
	}
	fallback.Axpy(alpha, x, y)
}

func scale(alpha float32, x []float32) {
	if active == NEON {
		scaleNEON(alpha, x)
		return
	}
	fallback.Scale(alpha, x)
}

func sum(x []float32) float32 {
	if active == NEON {
		return sumNEON(x)
	}
	return fallback.Sum(x)
}

func maxOf(x []float32) float32 {
	if active == NEON {
		return maxOfNEON(x)
	}
	return fallback.Max(x)
}
