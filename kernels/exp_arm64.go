//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func exp(dst, x []float32) {
	if active == NEON {
		expNEON(dst, x)
		return
	}
	fallback.Exp(dst, x)
}

func tanh(dst, x []float32) {
	if active == NEON {
		tanhNEON(dst, x)
		return
	}
	fallback.Tanh(dst, x)
}
