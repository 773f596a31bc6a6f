//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func softmax(dst, x []float32) { fallback.Softmax(dst, x) }
