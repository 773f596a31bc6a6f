//go:build purego || !(amd64 || arm64)

package kernels

import "github.com/heedml/heed/internal/fallback"

// This file is the dispatch where no assembly exists (other architectures, or
// the purego build tag): every kernel is package fallback's.

func detect() []ISA { return []ISA{Generic} }

// defaultAVX512Width is irrelevant here: there is no AVX512.
func defaultAVX512Width() int { return 256 }

func dot(x, y []float32) float32 { return fallback.Dot(x, y) }
func axpy(alpha float32, x, y []float32) {
	checkAxpyArgs(x, y)
	fallback.Axpy(alpha, x, y)
}

func scale(alpha float32, x []float32)               { fallback.Scale(alpha, x) }
func sum(x []float32) float32                        { return fallback.Sum(x) }
func maxOf(x []float32) float32                      { return fallback.Max(x) }
func matVec(dst, a []float32, lda int, x []float32)  { fallback.MatVec(dst, a, lda, x) }
func matTVec(dst, a []float32, lda int, x []float32) { fallback.MatTVec(dst, a, lda, x) }
func matVecBatch(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int) {
	fallback.SkinnyNT(d, ldd, a, lda, x, ldx, rows, cols, batch, skinnyPanel(1, lda))
}

// skinnyL2 is the L2 size the skinny products are placed by: 1 MiB.
func skinnyL2() int { return 1 << 20 }

// skinnyFrom is skinnyBytes: L2.
func skinnyFrom() int { return skinnyL2() }

// skinnyNTTakes reports false: MatVecBatch's fallback reads A in panels
// itself, and Gemm keeps fallback.Gemm.
func skinnyNTTakes(rows, cols, lda, batch int) bool { return false }

func skinnyNT(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int, alpha, beta float32) {
	panic("heed/kernels: skinnyNT has no kernel here")
}

func skinnyNN(d []float32, ldd int, x []float32, ldx int, w []float32, ldw int, batch, k, n int, alpha, beta float32) {
	panic("heed/kernels: skinnyNN has no kernel here")
}

// skinny reports false: Gemm keeps fallback.Gemm.
func (g *gemmOp) skinny(split bool) bool { return false }
func exp(dst, x []float32) {
	checkExpArgs(dst, x)
	fallback.Exp(dst, x)
}

func tanh(dst, x []float32) {
	checkTanhArgs(dst, x)
	fallback.Tanh(dst, x)
}

func softmax(dst, x []float32) {
	checkSoftmaxArgs(dst, x)
	fallback.Softmax(dst, x)
}

// softmaxMatTVec is Softmax(x, x) then MatTVec(dst, A, x).
func softmaxMatTVec(dst, a []float32, lda int, x []float32) {
	softmax(x, x)
	matTVec(dst, a, lda, x)
}

func additiveScore(dst, k []float32, ldk int, q, v []float32) {
	fallback.AdditiveScore(dst, k, ldk, q, v)
}

// dotSoftmaxMatTVec is DotSoftmaxMatTVec for len(scores) ≥ 1 and len(ctx) ≥ 1,
// a row at a time.
func dotSoftmaxMatTVec(ctx, scores, a []float32, lda int, h []float32, st *SoftmaxState) bool {
	return dotSoftmaxRows(ctx, scores, a, lda, h, st)
}

// gemmMicroFor returns nil: Gemm uses the fallback on this build.
func gemmMicroFor(ISA) *gemmMicro { return nil }

// The reduced-precision family: package fallback.

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
	fallback.MatVecQ8(dst, fq8(a), lda, x)
}

func matTVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	fallback.MatTVecQ8(dst, fq8(a), lda, x)
}

func expShift(w, s []float32, m float32) float32 { return expShiftGo(w, s, m) }

func decodeStepAsm(ctx, scores []float32, k, v Stored, h []float32, st *SoftmaxState) (int, bool) {
	return 0, true
}

// The decoder-step families (Sigmoid, Log, LogSoftmax, AddConstTo, TopK's
// scan): pure Go.

func sigmoid(dst, x []float32)    { fallback.Sigmoid(dst, x) }
func log(dst, x []float32)        { fallback.Log(dst, x) }
func logSoftmax(dst, x []float32) { fallback.LogSoftmax(dst, x) }

func addConstTo(dst []float32, c float32, x []float32) { fallback.AddConstTo(dst, c, x) }

func firstAbove(x []float32, t float32) int { return firstAboveBlocks(x, t) }

// The element-wise kernels: pure Go.

func scaleTo(dst []float32, alpha float32, x []float32) {
	checkScaleArgs(dst, x)
	fallback.ScaleTo(dst, alpha, x)
}

func axpyTo(dst []float32, alpha float32, x, y []float32) { fallback.AxpyTo(dst, alpha, x, y) }
func add(dst, x, y []float32)                             { fallback.Add(dst, x, y) }
func sub(dst, x, y []float32)                             { fallback.Sub(dst, x, y) }
func mul(dst, x, y []float32)                             { fallback.Mul(dst, x, y) }
func div(dst, x, y []float32)                             { fallback.Div(dst, x, y) }

func lstmCell(hOut, cOut, gates, b, c []float32)   { fallback.LSTMCell(hOut, cOut, gates, b, c) }
func gruCell(hOut, gates, nh, bx, bh, h []float32) { fallback.GRUCell(hOut, gates, nh, bx, bh, h) }

// spanMaxima sets dst[j] to the largest element of span j of x (topKSpan
// elements each, len(x) ≥ topKSpan·len(dst)) and reports whether any element
// of those spans is NaN, in which case dst holds no meaningful maxima.
func spanMaxima(dst, x []float32) bool { return spanMaxGo(dst, x) }

// onlineSoftmax leaves every row to onlineSoftmaxGo (purego builds and
// ISAs without SIMD kernels).
func onlineSoftmax(x []float32, m float32) (float32, float32, int) {
	return 0, 0, softmaxSpecial
}

// onlineSoftmaxBand has no kernel here: OnlineSoftmaxBand takes the rows one
// by one.
func onlineSoftmaxBand(Matrix, int, []float32, []float32) (int, bool) { return 0, false }

// useIntDot has no effect here: the Q8Q8 kernels are Go.
var useIntDot = false

func matVecQ8Q8(dst []float32, a []Q8Block, lda int, x []Q8Block) {
	matVecQ8Q8Go(dst, a, lda, x)
}

func decodeStepQ8Q8Asm(ctx, scores []float32, k, v Stored, st *SoftmaxState) (int, bool) {
	return 0, true
}

func toQ8Blocks(dst []Q8Block, src []float32) { fallback.QuantizeQ8(fq8(dst), src) }

func intDotActive() bool { return false }

// fromQ8 is FromQ8 in Go (fallback) where no assembly kernel exists.
func fromQ8(dst []float32, src []Q8Block) { fallback.DequantizeQ8(dst, fq8(src)) }

// matVecBatchGemmBatch returns 0: MatVecBatch keeps its batch kernel here
// (Gemm's threshold has not been measured on this ISA).
func matVecBatchGemmBatch() int { return 0 }

// The recurrent cells' training passes (rnntrain.go).

func lstmCellTrain(hOut, cOut, act, gates, b, c []float32) {
	fallback.LSTMCellTrain(hOut, cOut, act, gates, b, c)
}

func lstmCellBackward(dGates, dcPrev, act, cPrev, dh, dc []float32) {
	fallback.LSTMCellBackward(dGates, dcPrev, act, cPrev, dh, dc)
}

func gruCellTrain(hOut, act, gates, nh, bx, bh, h []float32) {
	fallback.GRUCellTrain(hOut, act, gates, nh, bx, bh, h)
}

func gruCellBackward(dGx, dGh, dhPrev, act, h, dh []float32) {
	fallback.GRUCellBackward(dGx, dGh, dhPrev, act, h, dh)
}

// The backward kernels (backward.go, additive_backward.go): pure Go.

func softmaxBackwardRows(dx, y, dy []float32, rows, cols, ldx, ldy, lddy int) {
	softmaxBackwardRowsGo(dx, y, dy, rows, cols, ldx, ldy, lddy)
}

func logSoftmaxBackwardRows(dx, y, dy []float32, rows, cols, ldx, ldy, lddy int) {
	logSoftmaxBackwardRowsGo(dx, y, dy, rows, cols, ldx, ldy, lddy)
}

func tanhBackward(dx, y, dy []float32)    { fallback.TanhBackward(dx, y, dy) }
func sigmoidBackward(dx, y, dy []float32) { fallback.SigmoidBackward(dx, y, dy) }

func softmaxRecompute(p, s []float32, rows, cols, ldp, lds, d int, scale float32, lse []float32) {
	fallback.SoftmaxRecompute(p, ldp, s, lds, rows, cols, scale, lse, d)
}

func softmaxBackwardBlock(ds, p, dp []float32, rows, cols, ldds, ldp, lddp int, delta []float32) {
	fallback.SoftmaxBackwardBlock(ds, ldds, p, ldp, dp, lddp, rows, cols, delta)
}

func additiveScoreBackward(dq, dv, dk []float32, lddk int, k []float32, ldk int, q, v, ds []float32) {
	fallback.AdditiveScoreBackwardAdd(dq, dv, dk, lddk, k, ldk, q, v, ds)
}

// The loss over the vocabulary and the optimizer steps (crossentropy.go,
// optim.go): pure Go.

func crossEntropyExp(dst, x []float32, t int, m, scale, shift float32) (sum, dsum, et float32) {
	return fallback.CrossEntropyExp(dst, x, t, m, scale, shift)
}

func adamStep(p, g, m, v []float32, k *adamConsts) {
	fallback.AdamStep(p, g, m, v, k.lr, k.b1, k.c1, k.b2, k.c2, k.rs, k.eps, k.wd, k.mode)
}

func sgdStep(p, g, b []float32, lr, mu, wd float32, mode int) {
	fallback.SGDStep(p, g, b, lr, mu, wd, mode)
}

// skinnyPackedL2 reports whether GemmPacked's skinny route prefetches into
// L2: it has no kernels here (gemmMicro.skinny is empty).
func skinnyPackedL2() bool { return false }

// stepPassesFor reports whether a step in format f over keys and values of
// bytes bytes goes in two passes: never here.
func stepPassesFor(f Format, bytes int) bool { return false }
