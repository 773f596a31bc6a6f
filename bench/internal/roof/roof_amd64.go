// Package roof holds the amd64 loops that measure the machine's
// ceilings: read-only streaming (bandwidth) and FMA throughput. They are
// measurement loops, not kernels, so asmgen does not generate them: the
// streaming loops are written by hand (roof_amd64.s), the FMA loops by
// gen_fma.go (fma_amd64.s), one per register width and accumulator count, as
// the peak needs a count that covers the FMA latency × throughput of the
// CPU at hand. Callers must check the CPU supports the ISA first.
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

// Stream4AVX512 is StreamAVX512 reading x's four quarters as four concurrent
// streams; len(x) must be a multiple of 128.
//
//go:noescape
func Stream4AVX512(x []float32) float32

// Stream4AVX2 is Stream4AVX512 with 256-bit loads; len(x) must be a
// multiple of 64.
//
//go:noescape
func Stream4AVX2(x []float32) float32

// FMA is one FMA-throughput loop (fma_amd64.s, written by gen_fma.go): Run
// performs iters × Accs independent FMAs of Lanes float32 lanes, their
// multiplicands (both a) in registers, and returns the sum of every lane of
// the accumulators, iters × Accs × Lanes × a² (exact for small counts).
type FMA struct {
	Name   string // the register width and accumulators, "zmm×24"
	Lanes  int    // 8 (YMM) or 16 (ZMM)
	Accs   int    // independent accumulators: FMAs in flight
	AVX512 bool   // needs AVX-512 (F, DQ, VL; kernels.AVX512 has them): ZMM, or YMM registers beyond Y15; else AVX2 and FMA
	Run    func(iters int, a float32) float32
}

// FlopsPerIter is the floating-point operations of one iteration of Run.
func (f FMA) FlopsPerIter() int { return 2 * f.Lanes * f.Accs }

//go:generate go run gen_fma.go
