//go:build !purego

package kernels

import (
	"github.com/heedml/heed/fallback"
	"github.com/klauspost/cpuid/v2"
)

// hasVNNI reports whether the CPU has AVX512_VNNI (VPDPBUSD on EVEX
// vectors), which the Q8Q8 kernels need on top of the AVX-512 ISA.
var hasVNNI = cpuid.CPU.Supports(cpuid.AVX512VNNI)

// useVNNI selects the VPDPBUSD kernels of Q8Q8 when the ISA is AVX-512; tests
// clear it to run the Go path on a CPU that has them.
var useVNNI = hasVNNI

func vnniActive() bool { return useVNNI && active == AVX512 }

func matVecQ8Q8(dst []float32, a []Q8Block, lda int, x []Q8Block) {
	if vnniActive() {
		matVecQ8Q8AVX512(dst, q8Bytes(a), lda, q8Bytes(x))
		return
	}
	matVecQ8Q8Go(dst, a, lda, x)
}

// decodeStepQ8Q8Asm is decodeStepAsm for the keys k (with the quantised query
// k.hq) and values v in 8-bit blocks: the fused kernel over the leading whole
// blocks of eight rows, when VPDPBUSD is there and len(ctx) is a multiple of
// 32.
func decodeStepQ8Q8Asm(ctx, scores []float32, k, v stored, st *SoftmaxState) (int, bool) {
	n := len(scores) &^ 7
	if n == 0 || len(k.hq) == 0 || len(ctx) == 0 || len(ctx)%Q8BlockLen != 0 || !vnniActive() {
		return 0, true
	}
	kb, kl := k.bytes()
	vb, vl := v.bytes()
	hb := q8Bytes(k.hq)
	var r int
	pf := decodeStepPrefetch(n, kl+vl)
	switch {
	case zmm() && pf:
		st.Max, st.Sum, r = decodeStepQ8Q8PFAVX512Z(ctx, scores[:n], kb, kl, vb, vl, hb, st.Max, st.Sum)
	case zmm():
		st.Max, st.Sum, r = decodeStepQ8Q8AVX512Z(ctx, scores[:n], kb, kl, vb, vl, hb, st.Max, st.Sum)
	case pf:
		st.Max, st.Sum, r = decodeStepQ8Q8PFAVX512(ctx, scores[:n], kb, kl, vb, vl, hb, st.Max, st.Sum)
	default:
		st.Max, st.Sum, r = decodeStepQ8Q8AVX512(ctx, scores[:n], kb, kl, vb, vl, hb, st.Max, st.Sum)
	}
	return n, r == 0
}

// fromQ8 is FromQ8 with the sizes checked: the whole blocks by the
// ISA's kernel, the last partial one in Go (the same product, bit for bit).
func fromQ8(dst []float32, src []Q8Block) {
	n := 0
	if active == AVX512 || active == AVX2 {
		n = len(dst) &^ (Q8BlockLen - 1)
	}
	switch {
	case n > 0 && active == AVX512:
		fromQ8AVX512(dst[:n], q8Bytes(src))
	case n > 0:
		fromQ8AVX2(dst[:n], q8Bytes(src))
	}
	fallback.DequantizeQ8(dst[n:], src[n/Q8BlockLen:])
}

// toQ8Blocks is ToQ8 with the sizes checked: the whole blocks by the ISA's
// kernel, the last partial one in Go (the same bits).
func toQ8Blocks(dst []Q8Block, src []float32) {
	n := 0
	if active == AVX512 || active == AVX2 {
		n = len(src) &^ (Q8BlockLen - 1)
	}
	switch {
	case n > 0 && active == AVX512:
		toQ8AVX512(q8Bytes(dst), src[:n])
	case n > 0:
		toQ8AVX2(q8Bytes(dst), src[:n])
	}
	fallback.QuantizeQ8(dst[n/Q8BlockLen:], src[n:])
}
