package rnn

import (
	"fmt"

	"github.com/heedml/heed/kernels"
)

// batchWork is a cell's state for StepBatch: the weights packed for
// kernels.GemmPacked (on the first StepBatch, and again when the active ISA
// has changed since, as the layout is the ISA's), the product's scratch, and
// the workspace, grown to the largest batch seen.
type batchWork struct {
	packed  []kernels.PackedB
	isa     kernels.ISA
	ready   bool
	scratch kernels.GemmScratch
	xh      []float32 // B × (In+H): [x h] row by row
	gates   []float32 // B × gate columns
	nh      []float32 // B × H (GRU: W_nh·h)
}

// pack packs, when needed, op(B) = wᵢᵀ for each block of w.
func (bw *batchWork) pack(ws ...kernels.Matrix) {
	if bw.ready && bw.isa == kernels.Active() {
		return
	}
	if bw.packed == nil {
		bw.packed = make([]kernels.PackedB, len(ws))
	}
	for i, w := range ws {
		bw.packed[i].Pack(kernels.Trans, w)
	}
	bw.isa, bw.ready = kernels.Active(), true
}

// grow returns s with length n, reallocated only if its capacity is short.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// valid reports whether m is a valid kernels.Matrix of rows×cols.
func valid(m kernels.Matrix, rows, cols int) bool {
	return m.Rows == rows && m.Cols == cols && rows >= 0 && cols >= 0 &&
		(rows <= 1 || m.Stride >= cols) && (rows == 0 || cols == 0 || len(m.Data) >= (rows-1)*m.Stride+cols)
}

// shape describes m for a panic message.
func shape(m kernels.Matrix) string {
	return fmt.Sprintf("%d×%d (stride %d, len %d)", m.Rows, m.Cols, m.Stride, len(m.Data))
}

// gather writes [x h] of every row into bw.xh and returns it as a B×(in+H)
// matrix.
func (bw *batchWork) gather(x, h kernels.Matrix, in, hidden int) kernels.Matrix {
	B, k := x.Rows, in+hidden
	bw.xh = grow(bw.xh, B*k)
	for b := range B {
		copy(bw.xh[b*k:], x.Row(b))
		copy(bw.xh[b*k+in:], h.Row(b))
	}
	return kernels.Matrix{Rows: B, Cols: k, Stride: k, Data: bw.xh}
}

// StepBatch advances B = x.Rows sequences by one step each: for every b < B
// it computes what Step(hOut.Row(b), cOut.Row(b), x.Row(b), h.Row(b),
// c.Row(b)) does, up to the summation order of the gate product. x is
// B×In and h, c, hOut and cOut are B×Hidden, any strides; hOut may be h and
// cOut may be c (in place, the same rows); it panics on any other overlap. It
// panics, naming the shapes, unless the matrices are valid and of those
// sizes.
//
// The gates of all B sequences come from one matrix product [x h]·Wᵀ
// (kernels.GemmScratch.GemmPacked, on the calling goroutine), then one
// kernels.LSTMCell pass per sequence. The first StepBatch packs W (a copy
// of 4H·(In+H) floats, kept by the cell; packed again if kernels.Use has
// changed the active ISA since) and grows a workspace of B·(In+5H) floats
// and the product's scratch; a later StepBatch with at most as many
// sequences allocates nothing.
//
// Accuracy: each gate pre-activation is within γ_{In+H+2}·(Σ|terms| + |bias|)
// of the exact value, Gemm's bound plus the bias sum, as Step's is with
// MatVec; the rest is Step's pass. The bits may differ from Step's, as the
// product's summation order does.
func (l *LSTM) StepBatch(hOut, cOut, x, h, c kernels.Matrix) {
	B, H := x.Rows, l.Hidden
	if !valid(x, B, l.In) || !valid(h, B, H) || !valid(c, B, H) || !valid(hOut, B, H) || !valid(cOut, B, H) {
		panic(fmt.Sprintf("heed/rnn: LSTM.StepBatch: in=%d, hidden=%d but x is %s, h %s, c %s, hOut %s, cOut %s; want x B×%d, the others B×%d",
			l.In, H, shape(x), shape(h), shape(c), shape(hOut), shape(cOut), l.In, H))
	}
	const call = "LSTM.StepBatch"
	ho, co := span(hOut), span(cOut)
	checkApart(call, "hOut", ho, "cOut", co)
	checkApart(call, "hOut", ho, "x", span(x))
	checkApart(call, "hOut", ho, "c", span(c))
	checkApart(call, "cOut", co, "x", span(x))
	checkApart(call, "cOut", co, "h", span(h))
	checkInPlace(call, "hOut", ho, "h", span(h))
	checkInPlace(call, "cOut", co, "c", span(c))
	l.busy.Enter("rnn.LSTM")
	defer l.busy.Exit()
	if B == 0 {
		return
	}
	bw := &l.batch
	bw.pack(l.w)
	xh := bw.gather(x, h, l.In, H)
	bw.gates = grow(bw.gates, B*4*H)
	g := kernels.Matrix{Rows: B, Cols: 4 * H, Stride: 4 * H, Data: bw.gates}
	bw.scratch.GemmPacked(kernels.NoTrans, 1, xh, &bw.packed[0], 0, g)
	for b := range B {
		kernels.LSTMCell(hOut.Row(b), cOut.Row(b), g.Row(b), l.b, c.Row(b))
	}
}

// StepBatch advances B = x.Rows sequences by one step each: for every b < B
// it computes what Step(hOut.Row(b), x.Row(b), h.Row(b)) does, up to the
// summation order of the products. x is B×In and h and hOut are B×Hidden,
// any strides; hOut may be h (in place, the same rows); it panics on any
// other overlap. It panics, naming the shapes, unless the matrices are valid and
// of those sizes.
//
// The products of all B sequences are three matrix products
// (kernels.GemmScratch.GemmPacked, on the calling goroutine): [x h]·W_rzᵀ,
// x·W_nxᵀ and h·W_nhᵀ; then one kernels.GRUCell pass per sequence. The
// first StepBatch packs W (a copy of 3H·(In+H) floats, kept by the cell;
// packed again if kernels.Use has changed the active ISA since) and grows a
// workspace of B·(In+5H) floats and the products' scratch; a later
// StepBatch with at most as many sequences allocates nothing.
//
// Accuracy: each product row is within Gemm's bound γₖ₊₁·Σ|terms| (k its
// length), as Step's is with MatVec; the rest is Step's pass. The bits may
// differ from Step's, as the products' summation order does.
func (g *GRU) StepBatch(hOut, x, h kernels.Matrix) {
	B, H, In := x.Rows, g.Hidden, g.In
	if !valid(x, B, In) || !valid(h, B, H) || !valid(hOut, B, H) {
		panic(fmt.Sprintf("heed/rnn: GRU.StepBatch: in=%d, hidden=%d but x is %s, h %s, hOut %s; want x B×%d, the others B×%d",
			In, H, shape(x), shape(h), shape(hOut), In, H))
	}
	checkApart("GRU.StepBatch", "hOut", span(hOut), "x", span(x))
	checkInPlace("GRU.StepBatch", "hOut", span(hOut), "h", span(h))
	g.busy.Enter("rnn.GRU")
	defer g.busy.Exit()
	if B == 0 {
		return
	}
	w := g.w
	nRows := w.Data[2*H*w.Stride:]
	bw := &g.batch
	bw.pack(kernels.Matrix{Rows: 2 * H, Cols: In + H, Stride: w.Stride, Data: w.Data},
		kernels.Matrix{Rows: H, Cols: In, Stride: w.Stride, Data: nRows},
		kernels.Matrix{Rows: H, Cols: H, Stride: w.Stride, Data: nRows[In:]})
	xh := bw.gather(x, h, In, H)
	bw.gates = grow(bw.gates, B*3*H)
	bw.nh = grow(bw.nh, B*H)
	s := kernels.Matrix{Rows: B, Cols: 3 * H, Stride: 3 * H, Data: bw.gates}
	nh := kernels.Matrix{Rows: B, Cols: H, Stride: H, Data: bw.nh}
	rz := kernels.Matrix{Rows: B, Cols: 2 * H, Stride: 3 * H, Data: bw.gates}
	nx := kernels.Matrix{Rows: B, Cols: H, Stride: 3 * H, Data: bw.gates[2*H:]}
	xs := kernels.Matrix{Rows: B, Cols: In, Stride: In + H, Data: bw.xh}
	hs := kernels.Matrix{Rows: B, Cols: H, Stride: In + H, Data: bw.xh[In:]}
	bw.scratch.GemmPacked(kernels.NoTrans, 1, xh, &bw.packed[0], 0, rz)
	bw.scratch.GemmPacked(kernels.NoTrans, 1, xs, &bw.packed[1], 0, nx) // zeros if In = 0
	bw.scratch.GemmPacked(kernels.NoTrans, 1, hs, &bw.packed[2], 0, nh)
	for b := range B {
		kernels.GRUCell(hOut.Row(b), s.Row(b), nh.Row(b), g.bx, g.bh, h.Row(b))
	}
}
