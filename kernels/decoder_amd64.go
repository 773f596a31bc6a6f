//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

// Dispatch of the decoder-step families on amd64 (Sigmoid, Log, LogSoftmax).

func sigmoid(dst, x []float32) {
	switch active {
	case AVX512:
		sigmoidAVX512(dst, x)
	case AVX2:
		sigmoidAVX2(dst, x)
	default:
		fallback.Sigmoid(dst, x)
	}
}

func log(dst, x []float32) {
	switch active {
	case AVX512:
		logAVX512(dst, x)
	case AVX2:
		logAVX2(dst, x)
	default:
		fallback.Log(dst, x)
	}
}

func logSoftmax(dst, x []float32) { fallback.LogSoftmax(dst, x) }
