//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func exp(dst, x []float32)  { fallback.Exp(dst, x) }
func tanh(dst, x []float32) { fallback.Tanh(dst, x) }
