package bench

import (
	"slices"

	"github.com/heedml/heed/bench/internal/roof"
	"github.com/heedml/heed/kernels"
)

// ceilingLoops returns the streaming loops this CPU runs (as decided by heed's
// own ISA detection; the ceiling is the best of them: on Zen 4 the AVX2 loop
// streams from memory faster than the AVX-512 one, on Zen 5 four streams
// faster than two), the block their lengths
// must be a multiple of, and the FMA probe's variants it runs (fmaLoops).
func ceilingLoops() (name string, streams []func([]float32) float32, block int, fmas []fmaLoop) {
	isas := kernels.Supported()
	switch {
	case slices.Contains(isas, kernels.AVX512):
		return "avx2 and avx512 asm", []func([]float32) float32{roof.StreamAVX2, roof.StreamAVX512, roof.Stream4AVX2, roof.Stream4AVX512}, 128, fmaLoops(true)
	case slices.Contains(isas, kernels.AVX2):
		return "avx2 asm", []func([]float32) float32{roof.StreamAVX2, roof.Stream4AVX2}, 64, fmaLoops(false)
	}
	return genericLoops()
}

// fmaLoops returns the FMA probe's variants (roof.FMAs) that AVX2 runs, or
// with avx512 every one: YMM and ZMM, 8 to 30 accumulators.
func fmaLoops(avx512 bool) []fmaLoop {
	var out []fmaLoop
	for _, f := range roof.FMAs {
		if !f.AVX512 || avx512 {
			out = append(out, fmaLoop{f.Name, f.Run, f.FlopsPerIter()})
		}
	}
	return out
}
