package bench

import (
	"slices"

	"github.com/heedml/heed/bench/internal/roof"
	"github.com/heedml/heed/kernels"
)

// ceilingLoops returns the streaming loops this CPU runs (as decided by heed's
// own ISA detection; the ceiling is the best of them: on Zen 4 the AVX2 loop
// streams from memory faster than the AVX-512 one), the block their lengths
// must be a multiple of, and the widest FMA loop with its flops per iteration.
func ceilingLoops() (name string, streams []func([]float32) float32, block int, fma func(int, float32) float32, flopsPerIter int) {
	isas := kernels.Supported()
	switch {
	case slices.Contains(isas, kernels.AVX512):
		return "avx2 and avx512 asm", []func([]float32) float32{roof.StreamAVX2, roof.StreamAVX512}, 128, roof.FMAAVX512, 12 * 16 * 2
	case slices.Contains(isas, kernels.AVX2):
		return "avx2 asm", []func([]float32) float32{roof.StreamAVX2}, 64, roof.FMAAVX2, 12 * 8 * 2
	}
	return genericLoops()
}
