//go:build !purego

package kernels

import (
	"github.com/heedml/heed/internal/fallback"
	"github.com/klauspost/cpuid/v2"
)

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
	checkAxpyArgs(x, y)
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
	fallback.SkinnyNT(d, ldd, a, lda, x, ldx, rows, cols, batch, skinnyPanel(1, lda))
}

// skinnyL2 is the L2 size the skinny products are placed by: 1 MiB.
func skinnyL2() int { return 1 << 20 }

// skinnyFrom is skinnyBytes: L2.
func skinnyFrom() int { return skinnyL2() }

// skinnyNTTakes reports whether MatVecBatch of batch rows of X against the
// rows×cols A at stride lda reads A in panels (skinnyNT): NEON, 2 ≤ batch ≤
// skinnyMaxRows, A beyond skinnyBytes.
func skinnyNTTakes(rows, cols, lda, batch int) bool {
	return active == NEON && batch >= 2 && batch <= skinnyMaxRows && skinnySpan(rows, cols, lda)
}

// skinnyNT sets D = X·Aᵀ for the rows×cols A, batch×cols X and batch×rows D
// (α = 1 and β = 0 only): panels of A of skinnyPanel rows, each through
// matVecBatchNEON (two rows of X per pass over the panel), so that A comes
// from memory once and each panel from L2 for the other passes.
func skinnyNT(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int, alpha, beta float32) {
	if alpha != 1 || beta != 0 {
		panic("heed/kernels: skinnyNT on NEON takes α = 1, β = 0 only")
	}
	p := skinnyPanel(1, lda)
	for r0 := 0; r0 < rows; r0 += p {
		n := min(p, rows-r0)
		matVecBatchNEON(d[r0:], ldd, a[r0*lda:], lda, x, ldx, n, cols, batch)
	}
}

func skinnyNN(d []float32, ldd int, x []float32, ldx int, w []float32, ldw int, batch, k, n int, alpha, beta float32) {
	panic("heed/kernels: skinnyNN has no kernel here")
}

// skinny reports false: Gemm keeps its micro-kernel route on arm64.
func (g *gemmOp) skinny(split bool) bool { return false }

func exp(dst, x []float32) {
	checkExpArgs(dst, x)
	if active == NEON {
		expNEON(dst, x)
		return
	}
	fallback.Exp(dst, x)
}

func tanh(dst, x []float32) {
	checkTanhArgs(dst, x)
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
	checkSoftmaxArgs(dst, x)
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

// The reduced-precision family (lowprec.go, lowprec_decode.go);
// kernels/DESIGN.md ("Reduced-precision formats") explains the routes. The NEON kernels take whole vectors of 8 (whole blocks
// of 32 for Q8); fallback, or the Go tails of lowprec_decode.go, the rest.

// lowVec returns the number of leading elements of n that the NEON kernels of
// the reduced-precision family take: whole vectors of 8, none on Generic.
func lowVec(n int) int {
	if active == NEON {
		return n &^ 7
	}
	return 0
}

func toBF16(dst []uint16, src []float32) {
	n := lowVec(len(src))
	if n > 0 {
		toBF16NEON(dst[:n], src[:n])
	}
	fallback.BF16s(dst[n:], src[n:])
}

func fromBF16(dst []float32, src []uint16) {
	n := lowVec(len(src))
	if n > 0 {
		fromBF16NEON(dst[:n], src[:n])
	}
	fallback.FromBF16s(dst[n:], src[n:])
}

func toF16(dst []uint16, src []float32) {
	n := lowVec(len(src))
	if n > 0 {
		toF16NEON(dst[:n], src[:n])
	}
	fallback.F16s(dst[n:], src[n:])
}

func fromF16(dst []float32, src []uint16) {
	n := lowVec(len(src))
	if n > 0 {
		fromF16NEON(dst[:n], src[:n])
	}
	fallback.FromF16s(dst[n:], src[n:])
}

// fromQ8 is FromQ8: whole blocks in NEON, the last partial one in Go.
func fromQ8(dst []float32, src []Q8Block) {
	n := 0
	if active == NEON {
		n = len(dst) &^ (Q8BlockLen - 1)
	}
	if n > 0 {
		fromQ8NEON(dst[:n], q8Bytes(src))
	}
	fallback.DequantizeQ8(dst[n:], fq8(src[n/Q8BlockLen:]))
}

// The decode kernels below take len(dst) ≥ 1 rows (columns for the
// transposed products) and len(x) ≥ 1 columns (rows).

func matVecBF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(x))
	if n == 0 {
		fallback.MatVecBF16(dst, a, lda, x)
		return
	}
	matVecBF16NEON(dst, a, lda, x[:n])
	if n < len(x) {
		matVecHalfTail(dst, a, lda, x, n, fallback.Float32FromBF16)
	}
}

func matVecF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(x))
	if n == 0 {
		fallback.MatVecF16(dst, a, lda, x)
		return
	}
	matVecF16NEON(dst, a, lda, x[:n])
	if n < len(x) {
		matVecHalfTail(dst, a, lda, x, n, fallback.Float32FromF16)
	}
}

func matTVecBF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(dst))
	if n > 0 {
		matTVecBF16NEON(dst[:n], a, lda, x)
	}
	if n < len(dst) {
		fallback.MatTVecBF16(dst[n:], a[n:], lda, x)
	}
}

func matTVecF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(dst))
	if n > 0 {
		matTVecF16NEON(dst[:n], a, lda, x)
	}
	if n < len(dst) {
		fallback.MatTVecF16(dst[n:], a[n:], lda, x)
	}
}

// q8Whole returns the number of leading columns of n in whole 32-value blocks
// that the NEON Q8 kernels take.
func q8Whole(n int) int {
	if active == NEON {
		return n &^ (Q8BlockLen - 1)
	}
	return 0
}

func matVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	n := q8Whole(len(x))
	if n == 0 {
		fallback.MatVecQ8(dst, fq8(a), lda, x)
		return
	}
	matVecQ8NEON(dst, q8Bytes(a), lda, x[:n])
	if n < len(x) {
		matVecQ8Tail(dst, a, lda, x, n)
	}
}

func matTVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	n := q8Whole(len(dst))
	if n > 0 {
		matTVecQ8NEON(dst[:n], q8Bytes(a), lda, x)
	}
	if n < len(dst) {
		fallback.MatTVecQ8(dst[n:], fq8(a[n/Q8BlockLen:]), lda, x)
	}
}

// expShift sets w[i] = e^(s[i]−m) and returns Σ w[i], for s[i] ≤ m, none NaN:
// Softmax's exp-and-sum pass on NEON when m is finite.
func expShift(w, s []float32, m float32) float32 {
	if active == NEON && m-m == 0 {
		return expShiftSumNEON(w[:len(s)], s, m)
	}
	return expShiftGo(w, s, m)
}

func decodeStepAsm(ctx, scores []float32, k, v Stored, h []float32, st *SoftmaxState) (int, bool) {
	return 0, true
}

// The decoder-step families: Sigmoid, Log, LogSoftmax, AddConstTo and TopK's
// scan in NEON.

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

// firstAbove is TopK's scan: the smallest i with !(x[i] ≤ t), or len(x).
func firstAbove(x []float32, t float32) int {
	if active == NEON {
		return firstAboveNEON(x, t)
	}
	return firstAboveBlocks(x, t)
}

// The element-wise kernels.

func scaleTo(dst []float32, alpha float32, x []float32) {
	checkScaleArgs(dst, x)
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

// The fused recurrent-cell passes (rnncell.go).

func lstmCell(hOut, cOut, gates, b, c []float32) {
	if active == NEON {
		lstmCellNEON(hOut, cOut, gates, b, c)
		return
	}
	fallback.LSTMCell(hOut, cOut, gates, b, c)
}

func gruCell(hOut, gates, nh, bx, bh, h []float32) {
	if active == NEON {
		gruCellNEON(hOut, gates, nh, bx, bh, h)
		return
	}
	fallback.GRUCell(hOut, gates, nh, bx, bh, h)
}

// The reduced-precision kernels with the query in 8-bit blocks (lowprec_q8q8.go).

// hasIntDot reports whether the CPU has the integer dot-product instruction
// the Q8Q8 kernel needs on top of NEON: the dot-product extension
// (FEAT_DotProd: SDOT; cpuid's ASIMDDP, the asimddp hwcap on Linux).
var hasIntDot = cpuid.CPU.Supports(cpuid.ASIMDDP)

// useIntDot selects the SDOT kernel of Q8Q8 when the ISA is NEON; tests
// clear and set it to run both paths on a CPU that has SDOT.
var useIntDot = hasIntDot

// intDotActive reports whether the Q8Q8 scores run the SDOT kernel: the CPU
// has it and the ISA is NEON.
func intDotActive() bool { return useIntDot && active == NEON }

// matVecQ8Q8 is MatVecQ8Q8 past its checks: matVecQ8Q8NEON where SDOT runs
// (the same bits as matVecQ8Q8Go), else matVecQ8Q8Go.
func matVecQ8Q8(dst []float32, a []Q8Block, lda int, x []Q8Block) {
	if intDotActive() {
		matVecQ8Q8NEON(dst, q8Bytes(a), lda, q8Bytes(x))
		return
	}
	matVecQ8Q8Go(dst, a, lda, x)
}

// decodeStepQ8Q8Asm takes no rows on arm64: the step is composed in Go
// (decodeStep), its scores by matVecQ8Q8.
func decodeStepQ8Q8Asm(ctx, scores []float32, k, v Stored, st *SoftmaxState) (int, bool) {
	return 0, true
}

func toQ8Blocks(dst []Q8Block, src []float32) { fallback.QuantizeQ8(fq8(dst), src) }

// TopK's scan (topk.go).

// spanMaxima sets dst[j] to the largest element of span j of x (topKSpan
// elements each, len(x) ≥ topKSpan·len(dst)) and reports whether any element
// of those spans is NaN, in which case dst holds no meaningful maxima.
func spanMaxima(dst, x []float32) bool {
	_ = x[:len(dst)*topKSpan] // the kernel does not check len(x)
	if active == NEON {
		return spanMaxNEON(dst, x)
	}
	return spanMaxGo(dst, x)
}

// The online softmax (onlinesoftmax.go).

// onlineSoftmax is two NEON passes: Max (NaN when x holds one), then, for a
// finite m' = max(m, max x), Softmax's exp pass (expShiftSumNEON: x − m' and
// Exp, summed). Other rows and ISAs return softmaxSpecial, leaving the row to
// onlineSoftmaxGo. m is not NaN.
func onlineSoftmax(x []float32, m float32) (float32, float32, int) {
	if active != NEON {
		return 0, 0, softmaxSpecial
	}
	mx := max(m, Max(x))
	if mx-mx != 0 { // ±Inf or NaN
		return 0, 0, softmaxSpecial
	}
	return mx, expShiftSumNEON(x, x, mx), softmaxDone
}

// onlineSoftmaxBand has no kernel here: OnlineSoftmaxBand takes the rows one
// by one.
func onlineSoftmaxBand(Matrix, int, []float32, []float32) (int, bool) { return 0, false }

// matVecBatchGemmBatch returns 0: MatVecBatch keeps its batch kernel here
// (Gemm's threshold has not been measured on this ISA).
func matVecBatchGemmBatch() int { return 0 }

// The recurrent cells' training passes (rnntrain.go).

func lstmCellTrain(hOut, cOut, act, gates, b, c []float32) {
	if active == NEON {
		lstmCellTrainNEON(hOut, cOut, act, gates, b, c)
		return
	}
	fallback.LSTMCellTrain(hOut, cOut, act, gates, b, c)
}

func lstmCellBackward(dGates, dcPrev, act, cPrev, dh, dc []float32) {
	if active == NEON {
		lstmCellBackwardNEON(dGates, dcPrev, act, cPrev, dh, dc)
		return
	}
	fallback.LSTMCellBackward(dGates, dcPrev, act, cPrev, dh, dc)
}

func gruCellTrain(hOut, act, gates, nh, bx, bh, h []float32) {
	if active == NEON {
		gruCellTrainNEON(hOut, act, gates, nh, bx, bh, h)
		return
	}
	fallback.GRUCellTrain(hOut, act, gates, nh, bx, bh, h)
}

func gruCellBackward(dGx, dGh, dhPrev, act, h, dh []float32) {
	if active == NEON {
		gruCellBackwardNEON(dGx, dGh, dhPrev, act, h, dh)
		return
	}
	fallback.GRUCellBackward(dGx, dGh, dhPrev, act, h, dh)
}

// The backward kernels (backward.go, additive_backward.go) in NEON.

// softmaxBackwardRows is SoftmaxBackwardRows for rows, cols ≥ 1.
func softmaxBackwardRows(dx, y, dy []float32, rows, cols, ldx, ldy, lddy int) {
	if active == NEON {
		softmaxBackwardNEON(dx, y, dy, rows, cols, ldx, ldy, lddy)
		return
	}
	softmaxBackwardRowsGo(dx, y, dy, rows, cols, ldx, ldy, lddy)
}

// logSoftmaxBackwardRows is LogSoftmaxBackwardRows for rows, cols ≥ 1.
func logSoftmaxBackwardRows(dx, y, dy []float32, rows, cols, ldx, ldy, lddy int) {
	if active == NEON {
		logSoftmaxBackwardNEON(dx, y, dy, rows, cols, ldx, ldy, lddy)
		return
	}
	logSoftmaxBackwardRowsGo(dx, y, dy, rows, cols, ldx, ldy, lddy)
}

func tanhBackward(dx, y, dy []float32) {
	if active == NEON {
		tanhBackwardNEON(dx, y, dy)
		return
	}
	fallback.TanhBackward(dx, y, dy)
}

func sigmoidBackward(dx, y, dy []float32) {
	if active == NEON {
		sigmoidBackwardNEON(dx, y, dy)
		return
	}
	fallback.SigmoidBackward(dx, y, dy)
}

// softmaxRecompute is SoftmaxRecompute for rows, cols ≥ 1 and d within
// [−rows, cols].
func softmaxRecompute(p, s []float32, rows, cols, ldp, lds, d int, scale float32, lse []float32) {
	if active == NEON {
		softmaxRecomputeNEON(p, s, rows, cols, ldp, lds, d, scale, lse)
		return
	}
	fallback.SoftmaxRecompute(p, ldp, s, lds, rows, cols, scale, lse, d)
}

// softmaxBackwardBlock is SoftmaxBackwardBlock for rows, cols ≥ 1.
func softmaxBackwardBlock(ds, p, dp []float32, rows, cols, ldds, ldp, lddp int, delta []float32) {
	if active == NEON {
		softmaxBackwardBlockNEON(ds, p, dp, rows, cols, ldds, ldp, lddp, delta)
		return
	}
	fallback.SoftmaxBackwardBlock(ds, ldds, p, ldp, dp, lddp, rows, cols, delta)
}

// additiveScoreBackward is AdditiveScoreBackwardAdd for k.Rows, k.Cols ≥ 1;
// dk nil skips the key gradient.
func additiveScoreBackward(dq, dv, dk []float32, lddk int, k []float32, ldk int, q, v, ds []float32) {
	switch {
	case active == NEON && dk != nil:
		additiveScoreBackwardNEON(dq, dv, dk, lddk, k, ldk, q, v, ds)
	case active == NEON:
		additiveScoreBackwardNoDKNEON(dq, dv, k, ldk, q, v, ds)
	default:
		fallback.AdditiveScoreBackwardAdd(dq, dv, dk, lddk, k, ldk, q, v, ds)
	}
}

// The loss over the vocabulary and the optimizer steps (crossentropy.go,
// optim.go).

func crossEntropyExp(dst, x []float32, t int, m, scale, shift float32) (sum, dsum, et float32) {
	if active == NEON {
		return crossEntropyExpNEON(dst, x, t, m, scale, shift)
	}
	return fallback.CrossEntropyExp(dst, x, t, m, scale, shift)
}

func adamStep(p, g, m, v []float32, k *adamConsts) {
	if active == NEON {
		adamStepNEON(p, g, m, v, k.lr, k.b1, k.c1, k.b2, k.c2, k.rs, k.eps, k.wd, k.mode)
		return
	}
	fallback.AdamStep(p, g, m, v, k.lr, k.b1, k.c1, k.b2, k.c2, k.rs, k.eps, k.wd, k.mode)
}

func sgdStep(p, g, b []float32, lr, mu, wd float32, mode int) {
	if active == NEON {
		sgdStepNEON(p, g, b, lr, mu, wd, mode)
		return
	}
	fallback.SGDStep(p, g, b, lr, mu, wd, mode)
}

// skinnyPackedL2 reports whether GemmPacked's skinny route prefetches into
// L2: it has no kernels here (gemmMicro.skinny is empty).
func skinnyPackedL2() bool { return false }

// stepPassesFor reports whether a step in format f over keys and values of
// bytes bytes goes in two passes: never here.
func stepPassesFor(f Format, bytes int) bool { return false }
