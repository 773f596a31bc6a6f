//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func axpy(alpha float32, x, y []float32) { fallback.Axpy(alpha, x, y) }
func scale(alpha float32, x []float32)   { fallback.Scale(alpha, x) }
func sum(x []float32) float32            { return fallback.Sum(x) }
func maxOf(x []float32) float32          { return fallback.Max(x) }
