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

// logSoftmax takes Max, then on rows with a finite maximum Σ e^(x−m) in one
// pass and (x − m) − ln Σ in another; other rows (NaN, ±Inf) go to fallback.
func logSoftmax(dst, x []float32) {
	if active == Generic || len(x) == 0 {
		fallback.LogSoftmax(dst, x)
		return
	}
	m := maxOf(x)
	if m-m != 0 { // ±Inf or NaN
		fallback.LogSoftmax(dst, x)
		return
	}
	var s float32
	if active == AVX512 {
		s = expSumAVX512(x, m)
	} else {
		s = expSumAVX2(x, m)
	}
	l := fallback.Ln(s)
	if active == AVX512 {
		shift2AVX512(dst, x, m, l)
	} else {
		shift2AVX2(dst, x, m, l)
	}
}

// addConstTo is dst = (x − (−c)) − 0, the same bits as x + c.
func addConstTo(dst []float32, c float32, x []float32) {
	switch active {
	case AVX512:
		shift2AVX512(dst, x, -c, 0)
	case AVX2:
		shift2AVX2(dst, x, -c, 0)
	default:
		fallback.AddConstTo(dst, c, x)
	}
}

// firstAbove is TopK's scan: the smallest i with !(x[i] ≤ t), or len(x).
func firstAbove(x []float32, t float32) int {
	switch active {
	case AVX512:
		return firstAboveAVX512(x, t)
	case AVX2:
		return firstAboveAVX2(x, t)
	}
	return firstAboveBlocks(x, t)
}
