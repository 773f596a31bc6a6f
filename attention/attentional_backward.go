package attention

import "github.com/heedml/heed/kernels"

// ApplyMany sets row b of dst (B×d_out) to tanh(W_c[c_b; h_b]) for row b of
// c (B×d_c) and of h (B×d_h): Apply for every row, as two matrix products
// (dst = C·W_cᵀ[:, :d_c] + H·W_cᵀ[:, d_c:], kernels.Gemm) and a Tanh per
// row. Before the tanh each element is within γ_{d_c+d_h+2}·Σ_i|W_c,ji·x_i|
// of its exact value (x = [c_b; h_b]), and Tanh adds its 2 ULP. It panics
// unless the shapes are as above, and if dst overlaps c, h or W_c. It
// allocates nothing once Gemm's buffers are warm; the products may run on
// kernels' worker goroutines and return when they are done.
func (a *Attentional) ApplyMany(dst, c, h kernels.Matrix) {
	const name = "Attentional"
	checkMatrix(name, "dst", dst)
	checkMatrix(name, "c", c)
	checkMatrix(name, "h", h)
	dout, dh := a.wc.Rows, a.wc.Cols-a.dc
	if c.Rows != dst.Rows || h.Rows != dst.Rows || c.Cols != a.dc || h.Cols != dh || dst.Cols != dout {
		panicf("%s: ApplyMany: Wc is %d×%d with context length %d; dst is %d×%d, c %d×%d, h %d×%d, want B×%d, B×%d, B×%d",
			name, a.wc.Rows, a.wc.Cols, a.dc, dst.Rows, dst.Cols, c.Rows, c.Cols, h.Rows, h.Cols, dout, a.dc, dh)
	}
	d := span(&dst)
	checkDisjoint(name, "dst", d, "c", span(&c))
	checkDisjoint(name, "dst", d, "h", span(&h))
	checkDisjoint(name, "dst", d, "Wc", span(&a.wc))
	a.busy.Enter("attention.Attentional")
	defer a.busy.Exit()
	if dst.Rows == 0 || dout == 0 {
		return
	}
	kernels.Gemm(kernels.NoTrans, kernels.Trans, 1, c, cols(a.wc, 0, a.dc), 0, dst)
	kernels.Gemm(kernels.NoTrans, kernels.Trans, 1, h, cols(a.wc, a.dc, a.wc.Cols), 1, dst)
	for b := range dst.Rows {
		r := row(dst, b)
		kernels.Tanh(r, r)
	}
}

// ApplyBackward is the backward of Apply: given dout, the gradient of the
// output out = tanh(z), z = W_c·x, x = [c; h], that Apply gave for c and h,
// it adds
//
//	dz = dout∘(1 − out²),  dW_c += dz·xᵀ,  dc += W_c[:, :d_c]ᵀ·dz,  dh += W_c[:, d_c:]ᵀ·dz
//
// to dwc (d_out×(d_c+d_h); empty: not wanted), dc and dh (nil: not wanted).
// Error bound: each dz_i is within 3u·|dout_i|·(1 + out_i²) of its value
// for the out given, plus 2·|dout_i·out_i|·δout_i where out_i is δout_i from
// the exact tanh(z_i) (u = 2⁻²⁴); each element of dW_c then within
// |x_j|·δdz_i + u·|dz_i·x_j|, and each of dc and dh within
// Σ_i|W_c,ij|·δdz_i + γ_{d_out+2}·Σ_i|W_c,ij·dz_i|, plus one rounding of
// the addition to the buffer. NaN and infinities propagate as the formulas
// give them. The buffers must not overlap each other or an input (dout,
// out, c, h, W_c); it panics if they do, naming them, and unless the
// lengths are as above. It allocates nothing once its scratch has grown
// and kernels.Gemm's buffers are warm.
func (a *Attentional) ApplyBackward(dwc kernels.Matrix, dc, dh, dout, out, c, h []float32) {
	const name = "Attentional"
	n := a.wc.Rows
	if len(dout) != n || len(out) != n || len(c) != a.dc || len(h) != a.wc.Cols-a.dc ||
		dc != nil && len(dc) != a.dc || dh != nil && len(dh) != len(h) {
		panicf("%s: ApplyBackward: Wc is %d×%d with context length %d; got len(dout)=%d, len(out)=%d, len(c)=%d, len(h)=%d, len(dc)=%d, len(dh)=%d, want %d, %d, %d, %d, %d or nil, %d or nil",
			name, a.wc.Rows, a.wc.Cols, a.dc, len(dout), len(out), len(c), len(h), len(dc), len(dh), n, n, a.dc, a.wc.Cols-a.dc, a.dc, a.wc.Cols-a.dc)
	}
	a.checkBackward("ApplyBackward", dwc, dc, dh, dout, out, c, h)
	a.busy.Enter("attention.Attentional")
	defer a.busy.Exit()
	a.dz = grow(a.dz, n)
	dz := a.dz
	kernels.TanhBackward(dz, out, dout)
	if wanted(dwc) {
		outerAdd(cols(dwc, 0, a.dc), 1, dz, c)
		outerAdd(cols(dwc, a.dc, a.wc.Cols), 1, dz, h)
	}
	if dc != nil && n > 0 {
		kernels.MatTVecAdd(dc, cols(a.wc, 0, a.dc), dz)
	}
	if dh != nil && n > 0 {
		kernels.MatTVecAdd(dh, cols(a.wc, a.dc, a.wc.Cols), dz)
	}
}

// ApplyManyBackward is the backward of ApplyMany: row b of dout, out, c and
// h (B rows each) is one ApplyBackward, the gradients of W_c summed over
// the rows, each product one matrix product over all rows (dZ·W_c for dc
// and dh, dZᵀ·[C H] for dW_c). Each element is within ApplyBackward's bound
// for its row, with the sum over the B rows of dW_c adding
// γ_{B+2}·Σ_b|dz_bi·x_bj|. dwc, dc and dh (B×d_c, B×d_h) may be empty: not
// wanted. Aliasing, panics and allocation are ApplyBackward's; the products
// may run on kernels' worker goroutines as Gemm does.
func (a *Attentional) ApplyManyBackward(dwc, dc, dh, dout, out, c, h kernels.Matrix) {
	const name = "Attentional"
	for _, x := range [...]struct {
		n string
		m kernels.Matrix
	}{{"dwc", dwc}, {"dc", dc}, {"dh", dh}, {"dout", dout}, {"out", out}, {"c", c}, {"h", h}} {
		checkMatrix(name, x.n, x.m)
	}
	B, n, dhl := dout.Rows, a.wc.Rows, a.wc.Cols-a.dc
	if dout.Cols != n || out.Rows != B || out.Cols != n || c.Rows != B || c.Cols != a.dc || h.Rows != B || h.Cols != dhl ||
		!emptyOr(dc, B, a.dc) || !emptyOr(dh, B, dhl) {
		panicf("%s: ApplyManyBackward: Wc is %d×%d with context length %d; dout is %d×%d, out %d×%d, c %d×%d, h %d×%d, dc %d×%d, dh %d×%d; want B×%d, B×%d, B×%d, B×%d, empty or B×%d, empty or B×%d",
			name, a.wc.Rows, a.wc.Cols, a.dc, dout.Rows, dout.Cols, out.Rows, out.Cols, c.Rows, c.Cols, h.Rows, h.Cols, dc.Rows, dc.Cols, dh.Rows, dh.Cols,
			n, n, a.dc, dhl, a.dc, dhl)
	}
	a.checkBackward("ApplyManyBackward", dwc, span(&dc), span(&dh), span(&dout), span(&out), span(&c), span(&h))
	a.busy.Enter("attention.Attentional")
	defer a.busy.Exit()
	if B == 0 || n == 0 {
		return
	}
	dz := scratchMat(&a.dz, B, n)
	for b := range B {
		kernels.TanhBackward(row(dz, b), row(out, b), row(dout, b))
	}
	if wanted(dwc) {
		kernels.Gemm(kernels.Trans, kernels.NoTrans, 1, dz, c, 1, cols(dwc, 0, a.dc))
		kernels.Gemm(kernels.Trans, kernels.NoTrans, 1, dz, h, 1, cols(dwc, a.dc, a.wc.Cols))
	}
	if wanted(dc) {
		kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, dz, cols(a.wc, 0, a.dc), 1, dc)
	}
	if wanted(dh) {
		kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, dz, cols(a.wc, a.dc, a.wc.Cols), 1, dh)
	}
}

// checkBackward panics unless dwc is empty or W_c's shape, and if a
// gradient buffer overlaps another or an input.
func (a *Attentional) checkBackward(fn string, dwc kernels.Matrix, dc, dh, dout, out, c, h []float32) {
	const name = "Attentional"
	checkMatrix(name, "dwc", dwc)
	if !emptyOr(dwc, a.wc.Rows, a.wc.Cols) {
		panicf("%s: %s: dwc is %d×%d, want empty or %d×%d (Wc)", name, fn, dwc.Rows, dwc.Cols, a.wc.Rows, a.wc.Cols)
	}
	outs := [...]namedSpan{{"dwc", span(&dwc)}, {"dc", dc}, {"dh", dh}}
	ins := [...]namedSpan{{"dout", dout}, {"out", out}, {"c", c}, {"h", h}, {"Wc", span(&a.wc)}}
	checkSpans(name, fn, outs[:], ins[:])
}
