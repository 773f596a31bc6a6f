//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func softmax(dst, x []float32) {
	var st int
	switch active {
	case AVX512:
		st = softmaxAVX512(dst, x)
	case AVX2:
		st = softmaxAVX2(dst, x)
	default:
		fallback.Softmax(dst, x)
		return
	}
	if st != softmaxDone {
		softmaxFinish(st, dst, x)
	}
}
