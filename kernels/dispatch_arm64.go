//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

// This file is the arm64 dispatch: for each kernel the switch on the active
// ISA that calls the generated NEON assembly (stubs in *_stub_arm64.go) or
// package fallback. kernels/DESIGN.md explains the routes.

// detect reports NEON on every arm64 CPU: Advanced SIMD is mandatory in ARMv8-A.
func detect() []ISA { return []ISA{Generic, NEON} }

// defaultAVX512Width is irrelevant here: there is no AVX512.
func defaultAVX512Width() int { return 256 }

func dot(x, y []float32) float32 {
	if active == NEON {
		return dotNEON(x, y)
	}
	return fallback.Dot(x, y)
}

func axpy(alpha float32, x, y []float32) {
	if active == NEON {
		axpyNEON(alpha, x, y)
		return
	}
	fallback.Axpy(alpha, x, y)
}

func scale(alpha float32, x []float32) {
	if active == NEON {
		scaleNEON(alpha, x)
		return
	}
	fallback.Scale(alpha, x)
}

func sum(x []float32) float32 {
	if active == NEON {
		return sumNEON(x)
	}
	return fallback.Sum(x)
}

func maxOf(x []float32) float32 {
	if active == NEON {
		return maxOfNEON(x)
	}
	return fallback.Max(x)
}

func matVec(dst, a []float32, lda int, x []float32) {
	if active == NEON {
		matVecNEON(dst, a, lda, x)
		return
	}
	fallback.MatVec(dst, a, lda, x)
}

func matTVec(dst, a []float32, lda int, x []float32) {
	if active == NEON {
		matTVecNEON(dst, a, lda, x)
		return
	}
	fallback.MatTVec(dst, a, lda, x)
}

func matVecBatch(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int) {
	if active == NEON {
		matVecBatchNEON(d, ldd, a, lda, x, ldx, rows, cols, batch)
		return
	}
	fallback.MatVecBatch(d, ldd, a, lda, x, ldx, rows, cols, batch)
}

func exp(dst, x []float32) {
	if active == NEON {
		expNEON(dst, x)
		return
	}
	fallback.Exp(dst, x)
}

func tanh(dst, x []float32) {
	if active == NEON {
		tanhNEON(dst, x)
		return
	}
	fallback.Tanh(dst, x)
}

// softmax takes the NEON passes when the maximum is finite; a NaN, a +Inf or
// an all −Inf row (and the empty one) go to fallback, which defines their
// special values.
func softmax(dst, x []float32) {
	if active == NEON {
		if m := maxOfNEON(x); m-m == 0 {
			scaleNEON(1/expShiftSumNEON(dst, x, m), dst)
			return
		}
	}
	fallback.Softmax(dst, x)
}

// softmaxMatTVec is Softmax(x, x) then MatTVec(dst, A, x).
func softmaxMatTVec(dst, a []float32, lda int, x []float32) {
	softmax(x, x)
	matTVec(dst, a, lda, x)
}

func additiveScore(dst, k []float32, ldk int, q, v []float32) {
	if active == NEON && len(q) > 0 {
		additiveScoreNEON(dst, k, ldk, q, v)
		return
	}
	fallback.AdditiveScore(dst, k, ldk, q, v)
}

// dotSoftmaxMatTVec is DotSoftmaxMatTVec for len(scores) ≥ 1 and len(ctx) ≥ 1,
// a row at a time.
func dotSoftmaxMatTVec(ctx, scores, a []float32, lda int, h []float32, st *SoftmaxState) bool {
	return dotSoftmaxRows(ctx, scores, a, lda, h, st)
}

// gemmNEON is the NEON GEMM micro-kernel, 8×12. Its blocking assumes a 32 KiB
// L1d, 1 MiB L2 and 8 MiB L3 (arm64 has no portable way to read the cache
// sizes from user space).
var gemmNEON = func() *gemmMicro {
	mk := &gemmMicro{mr: 8, nr: 12, kern: gemmMicroNEON}
	mk.gemmBlocking(32<<10, 1<<20, 8<<20)
	return mk
}()

// gemmMicroFor returns the micro-kernel of isa, or nil for the fallback.
func gemmMicroFor(isa ISA) *gemmMicro {
	if isa == NEON {
		return gemmNEON
	}
	return nil
}

// The reduced-precision family: package fallback (no NEON kernels yet).

func toBF16(dst []uint16, src []float32)   { fallback.BF16s(dst, src) }
func fromBF16(dst []float32, src []uint16) { fallback.FromBF16s(dst, src) }
func toF16(dst []uint16, src []float32)    { fallback.F16s(dst, src) }
func fromF16(dst []float32, src []uint16)  { fallback.FromF16s(dst, src) }

func matVecBF16(dst []float32, a []uint16, lda int, x []float32) {
	fallback.MatVecBF16(dst, a, lda, x)
}

func matVecF16(dst []float32, a []uint16, lda int, x []float32) {
	fallback.MatVecF16(dst, a, lda, x)
}

func matTVecBF16(dst []float32, a []uint16, lda int, x []float32) {
	fallback.MatTVecBF16(dst, a, lda, x)
}

func matTVecF16(dst []float32, a []uint16, lda int, x []float32) {
	fallback.MatTVecF16(dst, a, lda, x)
}

func matVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	fallback.MatVecQ8(dst, a, lda, x)
}

func matTVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	fallback.MatTVecQ8(dst, a, lda, x)
}

func expShift(w, s []float32, m float32) float32 { return expShiftGo(w, s, m) }

func decodeStepAsm(ctx, scores []float32, k, v stored, h []float32, st *SoftmaxState) (int, bool) {
	return 0, true
}

// The decoder-step families: Sigmoid, Log, LogSoftmax and AddConstTo in NEON;
// TopK's scan pure Go.

func sigmoid(dst, x []float32) {
	if active == NEON {
		sigmoidNEON(dst, x)
		return
	}
	fallback.Sigmoid(dst, x)
}

func log(dst, x []float32) {
	if active == NEON {
		logNEON(dst, x)
		return
	}
	fallback.Log(dst, x)
}

// logSoftmax takes Max, then on rows with a finite maximum Σ e^(x−m) in one
// pass and (x − m) − ln Σ in another; other rows (NaN, ±Inf) go to fallback.
func logSoftmax(dst, x []float32) {
	if active != NEON || len(x) == 0 {
		fallback.LogSoftmax(dst, x)
		return
	}
	m := maxOfNEON(x)
	if m-m != 0 { // ±Inf or NaN
		fallback.LogSoftmax(dst, x)
		return
	}
	shift2NEON(dst, x, m, fallback.Ln(expSumNEON(x, m)))
}

func addConstTo(dst []float32, c float32, x []float32) {
	if active == NEON {
		addConstToNEON(dst, c, x)
		return
	}
	fallback.AddConstTo(dst, c, x)
}

func firstAbove(x []float32, t float32) int { return firstAboveBlocks(x, t) }

// The element-wise kernels.

func scaleTo(dst []float32, alpha float32, x []float32) {
	if active == NEON {
		scaleToNEON(dst, alpha, x)
		return
	}
	fallback.ScaleTo(dst, alpha, x)
}

func axpyTo(dst []float32, alpha float32, x, y []float32) {
	if active == NEON {
		axpyToNEON(dst, alpha, x, y)
		return
	}
	fallback.AxpyTo(dst, alpha, x, y)
}

func add(dst, x, y []float32) {
	if active == NEON {
		addNEON(dst, x, y)
		return
	}
	fallback.Add(dst, x, y)
}

func sub(dst, x, y []float32) {
	if active == NEON {
		subNEON(dst, x, y)
		return
	}
	fallback.Sub(dst, x, y)
}

func mul(dst, x, y []float32) {
	if active == NEON {
		mulNEON(dst, x, y)
		return
	}
	fallback.Mul(dst, x, y)
}

func div(dst, x, y []float32) {
	if active == NEON {
		divNEON(dst, x, y)
		return
	}
	fallback.Div(dst, x, y)
}
