package bench

import (
	"slices"

	"github.com/heedml/heed/kernels"
)

//go:noescape
func streamAVX512(x []float32) float32

//go:noescape
func streamAVX2(x []float32) float32

func fmaAVX512(iters int, a float32) float32

func fmaAVX2(iters int, a float32) float32

// ceilingLoops returns the widest streaming and FMA loops this CPU runs (as
// decided by heed's own ISA detection), their block in floats, and the flops
// per FMA-loop iteration.
func ceilingLoops() (name string, stream func([]float32) float32, block int, fma func(int, float32) float32, flopsPerIter int) {
	isas := kernels.Supported()
	switch {
	case slices.Contains(isas, kernels.AVX512):
		return "avx512 asm", streamAVX512, 128, fmaAVX512, 12 * 16 * 2
	case slices.Contains(isas, kernels.AVX2):
		return "avx2 asm", streamAVX2, 64, fmaAVX2, 12 * 8 * 2
	}
	return genericLoops()
}
