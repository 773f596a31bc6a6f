//go:build !purego

package kernels

import (
	"github.com/heedml/heed/fallback"
	"github.com/klauspost/cpuid/v2"
)

// This file is the amd64 dispatch: CPU detection, and for each kernel the
// switch on the active ISA that calls the generated assembly (stubs in
// *_stub_amd64.go) or package fallback. kernels/DESIGN.md explains the
// routes.

func detect() []ISA {
	isas := []ISA{Generic}
	if !cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.BMI2) {
		return isas
	}
	isas = append(isas, AVX2)
	if cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512DQ, cpuid.AVX512VL) {
		isas = append(isas, AVX512)
	}
	return isas
}

// l2Bytes returns the size of one core's L2 cache, or 1 MiB if cpuid cannot
// tell.
func l2Bytes() int {
	if n := cpuid.CPU.Cache.L2; n > 0 {
		return n
	}
	return 1 << 20
}

func dot(x, y []float32) float32 {
	switch active {
	case AVX512:
		return dotAVX512(x, y)
	case AVX2:
		return dotAVX2(x, y)
	}
	return fallback.Dot(x, y)
}

func axpy(alpha float32, x, y []float32) {
	switch active {
	case AVX512:
		axpyAVX512(alpha, x, y)
	case AVX2:
		axpyAVX2(alpha, x, y)
	default:
		fallback.Axpy(alpha, x, y)
	}
}

func scale(alpha float32, x []float32) {
	switch active {
	case AVX512:
		scaleAVX512(alpha, x)
	case AVX2:
		scaleAVX2(alpha, x)
	default:
		fallback.Scale(alpha, x)
	}
}

func sum(x []float32) float32 {
	switch active {
	case AVX512:
		return sumAVX512(x)
	case AVX2:
		return sumAVX2(x)
	}
	return fallback.Sum(x)
}

func maxOf(x []float32) float32 {
	switch active {
	case AVX512:
		return maxAVX512(x)
	case AVX2:
		return maxAVX2(x)
	}
	return fallback.Max(x)
}

func matVec(dst, a []float32, lda int, x []float32) {
	switch active {
	case AVX512:
		matVecAVX512(dst, a, lda, x)
	case AVX2:
		matVecAVX2(dst, a, lda, x)
	default:
		fallback.MatVec(dst, a, lda, x)
	}
}

// The AVX2 matTVec, matVecBatch and softmaxMatTVec kernels need at least one
// full vector (8) of columns: their tails reload the last full vector.

func matTVec(dst, a []float32, lda int, x []float32) {
	switch {
	case active == AVX512:
		matTVecAVX512(dst, a, lda, x)
	case active == AVX2 && len(dst) >= 8:
		matTVecAVX2(dst, a, lda, x)
	default:
		fallback.MatTVec(dst, a, lda, x)
	}
}

func matVecBatch(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int) {
	switch {
	case active == AVX512:
		matVecBatchAVX512(d, ldd, a, lda, x, ldx, rows, cols, batch)
	case active == AVX2 && cols >= 8:
		matVecBatchAVX2(d, ldd, a, lda, x, ldx, rows, cols, batch)
	default:
		fallback.MatVecBatch(d, ldd, a, lda, x, ldx, rows, cols, batch)
	}
}

func exp(dst, x []float32) {
	switch active {
	case AVX512:
		expAVX512(dst, x)
	case AVX2:
		expAVX2(dst, x)
	default:
		fallback.Exp(dst, x)
	}
}

func tanh(dst, x []float32) {
	switch active {
	case AVX512:
		tanhAVX512(dst, x)
	case AVX2:
		tanhAVX2(dst, x)
	default:
		fallback.Tanh(dst, x)
	}
}

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

// softmaxMatTVec is SoftmaxMatTVec for len(x) ≥ 1 and len(dst) ≥ 1. A row
// whose max is not finite or that holds a NaN is finished by the Go softmax
// and then given its context.
func softmaxMatTVec(dst, a []float32, lda int, x []float32) {
	var st int
	switch {
	case active == AVX512:
		st = softmaxMatTVecAVX512(dst, a, lda, x)
	case active == AVX2 && len(dst) >= 8:
		st = softmaxMatTVecAVX2(dst, a, lda, x)
	default:
		softmax(x, x)
		matTVec(dst, a, lda, x)
		return
	}
	if st != softmaxDone {
		softmaxFinish(st, x, x)
		matTVec(dst, a, lda, x)
	}
}

func additiveScore(dst, k []float32, ldk int, q, v []float32) {
	switch active {
	case AVX512:
		additiveScoreAVX512(dst, k, ldk, q, v)
	case AVX2:
		additiveScoreAVX2(dst, k, ldk, q, v)
	default:
		fallback.AdditiveScore(dst, k, ldk, q, v)
	}
}

// dotSoftmaxFarBytes is the span of A beyond which DotSoftmaxMatTVec takes
// its far kernel (scores row by row, no software prefetch): this core's L2.
var dotSoftmaxFarBytes = l2Bytes()

// dotSoftmaxKernel, when not kernelBySpan, makes DotSoftmaxMatTVec take that
// kernel at every size (for tests).
var dotSoftmaxKernel = kernelBySpan

const (
	kernelBySpan = iota // far beyond dotSoftmaxFarBytes or for rows 4 KiB apart
	kernelNear
	kernelFar
)

// dotSoftmaxFar reports whether DotSoftmaxMatTVec takes its far kernel for n
// rows of stride lda: when they span more than dotSoftmaxFarBytes, or are a
// multiple of 4 KiB apart (rows that share L1 sets).
func dotSoftmaxFar(n, lda int) bool {
	switch dotSoftmaxKernel {
	case kernelNear:
		return false
	case kernelFar:
		return true
	}
	return n*lda*4 > dotSoftmaxFarBytes || lda%1024 == 0
}

// dotSoftmaxMatTVec is DotSoftmaxMatTVec for len(scores) ≥ 1 and len(ctx) ≥ 1:
// the assembly for the whole blocks of eight rows when the columns are whole
// vectors of 8, dotSoftmaxRows for the rest.
func dotSoftmaxMatTVec(ctx, scores, a []float32, lda int, h []float32, st *SoftmaxState) bool {
	n := 0
	if (active == AVX2 || active == AVX512) && len(ctx)%8 == 0 {
		n = len(scores) &^ 7
		if n > 0 {
			kernel := dotSoftmaxMatTVecAVX2
			switch far := dotSoftmaxFar(n, lda); {
			case active == AVX512 && far:
				kernel = dotSoftmaxMatTVecFarAVX512
			case active == AVX512:
				kernel = dotSoftmaxMatTVecAVX512
			case far:
				kernel = dotSoftmaxMatTVecFarAVX2
			}
			var r int
			st.Max, st.Sum, r = kernel(ctx, scores[:n], a, lda, h, st.Max, st.Sum)
			if r != 0 {
				return false
			}
		}
		if n == len(scores) {
			return true
		}
	}
	return dotSoftmaxRows(ctx, scores[n:], a[n*lda:], lda, h, st)
}

// The GEMM micro-kernels of each ISA, with blocking sizes from this CPU's
// caches (kernels/GEMM.md gives the tile shapes' measurements).
var (
	gemmAVX2   = newGemmMicro(6, 16, gemmMicroAVX2, gemmMicroRowsAVX2)
	gemmAVX512 = newGemmMicro(6, 64, gemmMicroAVX512, gemmMicroRowsAVX512)
)

func newGemmMicro(mr, nr int, kern func(k int, a, b, c *float32, ldc int, alpha, beta float32),
	rows func(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32)) *gemmMicro {
	mk := &gemmMicro{mr: mr, nr: nr, kern: kern, rows: rows}
	l1, l2, l3 := cpuid.CPU.Cache.L1D, cpuid.CPU.Cache.L2, cpuid.CPU.Cache.L3
	if l1 <= 0 {
		l1 = 32 << 10
	}
	if l2 <= 0 {
		l2 = 1 << 20
	}
	if l3 <= 0 {
		l3 = 8 << 20
	}
	mk.gemmBlocking(l1, l2, l3)
	return mk
}

// gemmMicroFor returns the micro-kernel of isa, or nil for the fallback.
func gemmMicroFor(isa ISA) *gemmMicro {
	switch isa {
	case AVX512:
		return gemmAVX512
	case AVX2:
		return gemmAVX2
	}
	return nil
}
