//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

// Dot returns Σ x[i]·y[i]. It panics if len(x) != len(y).
// Error ≤ γₙ·Σ|x[i]·y[i]|; a NaN or an Inf in either input propagates as in
// IEEE arithmetic (Inf·0 = NaN).
//
// Dot is defined per architecture so that its ISA switch calls the assembly
// directly: one call level, also through a func value.
func Dot(x, y []float32) float32 {
	checkSameLen("Dot", "x", "y", len(x), len(y))
	if active == NEON {
		return dotNEON(x, y)
	}
	return fallback.Dot(x, y)
}
