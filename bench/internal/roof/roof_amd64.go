// Package roof holds the hand-written amd64 loops that measure the machine's
// ceilings: read-only streaming (bandwidth) and FMA throughput. They are
// measurement loops, not kernels, so asmgen does not generate them. Callers
// must check the CPU supports the ISA first.
package roof

// StreamAVX512 returns the sum of x, whose length must be a multiple of 128,
// reading its two halves as two concurrent streams with eight accumulators.
//
//go:noescape
func StreamAVX512(x []float32) float32

// StreamAVX2 is StreamAVX512 with 256-bit loads; len(x) must be a multiple of 64.
//
//go:noescape
func StreamAVX2(x []float32) float32

// FMAAVX512 runs iters × 12 independent 16-lane FMAs (384 flops per
// iteration) and returns lane 0 of the twelve accumulators' sum.
func FMAAVX512(iters int, a float32) float32

// FMAAVX2 runs iters × 12 independent 8-lane FMAs (192 flops per iteration)
// and returns lane 0 of the twelve accumulators' sum.
func FMAAVX2(iters int, a float32) float32
