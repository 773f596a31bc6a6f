//go:build !purego

package kernels

// lnOne returns ln s through the Log kernel of the active ISA: fallback.Ln's
// bits (TestLogSameBits) for a fraction of the time its emulated FMAs take,
// which at small n was a third of LogSoftmax's.
func lnOne(s float32) float32 {
	v := [1]float32{s}
	log(v[:], v[:])
	return v[0]
}
