//go:build purego || !(amd64 || arm64)

package kernels

import "github.com/heedml/heed/fallback"

// useVNNI has no effect here: the Q8Q8 kernels are Go.
var useVNNI = false

func matVecQ8Q8(dst []float32, a []Q8Block, lda int, x []Q8Block) {
	matVecQ8Q8Go(dst, a, lda, x)
}

func decodeStepQ8Q8Asm(ctx, scores []float32, k, v stored, st *SoftmaxState) (int, bool) {
	return 0, true
}

func toQ8Blocks(dst []Q8Block, src []float32) { fallback.QuantizeQ8(dst, src) }

func vnniActive() bool { return false }
