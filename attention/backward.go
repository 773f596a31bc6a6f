package attention

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// Grads holds the gradients the backward of a [Memory] step adds to, bound to
// caller-owned buffers: the backward calls accumulate (+=) into them, so a
// framework zeroes them once per training step and may run many steps'
// backward into the same buffers. A field left empty (a zero Matrix, a nil
// slice) is not wanted: it is neither computed nor written.
//
//	Keys    S×d_k   ∂L/∂keys: the encoder states h̄_s (for Additive through the cached K = H̄W₂ᵀ);
//	                when the values are the keys (one matrix), ∂L/∂values adds in here too
//	Values  S×d_v   ∂L/∂values, separate values only (must be empty when the values are the keys)
//	W       d_q×d_k General's W
//	W1      d_a×d_q Additive's W₁
//	W2      d_a×d_k Additive's W₂
//	V       d_a     Additive's v
//
// Fields a scorer does not have (W for all but General; W1, W2 and V for all
// but Additive) must be empty.
type Grads struct {
	Keys, Values kernels.Matrix
	W            kernels.Matrix
	W1, W2       kernels.Matrix
	V            []float32
}

// backScratch is the scratch space of a Memory's backward calls.
type backScratch struct {
	ds    []float32 // B×n: the weights' gradient, then the scores'
	a, b  []float32 // B×d temporaries (projected or unit queries, their gradients)
	c     []float32 // B×n: Cosine's recomputed scores
	vec   []float32 // a d-vector
	vec2  []float32 // another
	col   []float32 // n: Cosine's per-key factors
	dka   []float32 // Additive: n×d_a, the gradient of K
	dqa   []float32 // Additive: B×d_a, the gradient of W₁h
	dva   []float32 // Additive: d_a, v's gradient when Grads.V is not wanted
	norms []float64 // Cosine: B query norms
}

// AttendBackward is the backward of [Memory.Attend] for query h: given the
// gradients dcontext of the context (length d_v) and, unless nil, dweights of
// the weights (length S) that the step for h produced, it adds to dquery
// (unless nil, length of the query) and to the buffers of g (nil: none) the
// gradients of the loss with respect to the query, the keys, the values and
// the scorer's parameters. weights must be the weights Attend (or
// AttendMany) gave for h on this Memory with its current mask and valid
// length; nothing else is kept between the forward and the backward: what
// the scorer needs is recomputed (Wᵀh, W₁h, the unit query and the cosine
// scores; Bahdanau's t_s = tanh(W₁h + K_s) inside the fused pass, never
// stored).
//
// With α the weights, dα_s = value_s·dcontext + dweights_s and
// ds = α∘(dα − ⟨α, dα⟩) the gradient of the scores over the attended keys:
//
//	values   dV_s += α_s·dcontext
//	Dot      dh += Σ_s ds_s·h̄_s                 dh̄_s += ds_s·h
//	Scaled   as Dot with ds/√d
//	General  u = Wᵀh, du = Σ_s ds_s·h̄_s:  dh += W·du, dW += h·duᵀ, dh̄_s += ds_s·u
//	Cosine   with ĥ = h/‖h‖, x_s the cosine:  dh += Σ_s ds_s·(h̄_s/‖h̄_s‖ − x_s·ĥ)/‖h‖,
//	         dh̄_s += ds_s·(ĥ − x_s·h̄_s/‖h̄_s‖)/‖h̄_s‖   (zero query or key: 0)
//	Additive g_s = ds_s·v∘(1 − t_s²), dq = Σ_s g_s:  dh += W₁ᵀdq, dW₁ += dq·hᵀ,
//	         dv += Σ_s ds_s·t_s, dK_s = g_s:  dW₂ += dKᵀH̄, dh̄ += dK·W₂
//
// Masks and valid length: keys beyond the valid length are neither read nor
// written; masked keys get ds_s = 0 exactly (their dweights ignored), so they
// add nothing but zeros to their rows of the key and value gradients (as in
// the forward, their keys and values are multiplied by 0 and should be
// finite). A step with no attended key adds nothing at all. The query's
// gradient of Cosine is taken as 0 for a zero query, where the score is the
// constant 0.
//
// Error bound (u = 2⁻²⁴, γ_n = n·u/(1−n·u)): let δα_s be Attend's bound on
// the weights, E_s = Σ_j|v_sj·dcontext_j| + |dweights_s| and μ = ⟨α, dα⟩
// over the n attended keys. To first order (the tests evaluate the same
// chain with its second-order terms), each computed ds_s is within
//
//	δds_s = δα_s·(|dα_s| + |μ| + δμ) + α_s·(γ_{d_v+2}·E_s + δμ) + 2u·α_s·|dα_s − μ|
//	δμ    = Σ_s (δα_s + α_s)·γ_{d_v+2}·E_s + Σ_s δα_s·|dα_s| + γ_{n+2}·Σ_s α_s·|dα_s|
//
// of its exact value, and each element of a gradient is within the
// propagation of these errors (and of the recomputed quantities' own: the
// scores' bound for Cosine, γ_{d+2}·Σ|terms| for W₁h and K, 2 ULP for tanh)
// through its formula above, plus γ_{m+2}·Σ|terms| for each sum of m terms
// it takes and one rounding of the final addition to the buffer. BACKWARD.md
// writes these out per scorer; the tests check every gradient of every
// scorer against a float64 evaluation within them.
//
// Special values: a NaN or infinite input makes the gradients it enters NaN
// or infinite as the formulas give them. Results may differ in the last bits
// between ISAs, within the bound.
//
// The gradient buffers must not overlap each other or any input (h,
// weights, dcontext, dweights, the Memory's keys and values, the scorer's
// weights); it panics if they do, naming them, and unless every length and
// shape is as above. AttendBackward allocates nothing once the Memory's
// backward scratch has grown (the first call of a size may allocate it) and
// kernels.Gemm's buffers are warm. It panics on a Memory whose keys and values are stored in
// a format narrower than float32. A Memory is not safe for concurrent use.
func (m *Memory) AttendBackward(g *Grads, dquery, dweights, dcontext, weights, h []float32) {
	const fn = "AttendBackward"
	S := m.keys.Rows
	name := m.sc.String()
	if qd := m.QueryDim(); len(h) != qd || dquery != nil && len(dquery) != qd {
		panicf("%s: %s: len(query)=%d, len(dquery)=%d, want %d (dquery may be nil)", name, fn, len(h), len(dquery), qd)
	}
	if len(weights) != S || dweights != nil && len(dweights) != S {
		panicf("%s: %s: len(weights)=%d, len(dweights)=%d, want S=%d (dweights may be nil)", name, fn, len(weights), len(dweights), S)
	}
	if len(dcontext) != m.values.Cols {
		panicf("%s: %s: len(dcontext)=%d, want d_v=%d", name, fn, len(dcontext), m.values.Cols)
	}
	m.checkGrads(fn, g, dquery, dweights, dcontext, weights, h)
	m.busy.Enter("attention.Memory")
	defer m.busy.Exit()
	if !m.anyAttended() {
		return
	}
	n := m.valid
	bw := &m.bw
	bw.ds = grow(bw.ds, n)
	ds := bw.ds
	alpha := weights[:n]
	kernels.MatVec(ds, rows(m.values, 0, n), dcontext)
	if dweights != nil {
		kernels.Add(ds, ds, dweights[:n])
	}
	m.maskGrad(ds)
	kernels.SoftmaxBackward(ds, alpha, ds)
	if dV := m.valuesGrad(g); dV.Rows > 0 {
		outerAdd(rows(dV, 0, n), 1, alpha, dcontext)
	}
	m.scoresBackward(g, dquery, ds, h)
}

// AttendManyBackward is the backward of [Memory.AttendMany]: row b of
// dcontext (B×d_v), of dweights (B×S; empty: none) and of weights (B×S, the
// forward's) with row b of queries (B×d_q) is one AttendBackward step, and
// the steps' gradients are summed: row b of dqueries (B×d_q; empty: not
// wanted) gets query b's, and g's buffers the sum over the queries. Its
// products are matrix products over all queries at once (kernels.Gemm): the
// weights' gradient dcontext·Vᵀ, dV += αᵀ·dcontext, and per scorer dK +=
// dSᵀ·Q (Q the queries as the scorer prepares them), dQ += dS·K, General's
// dW += Qᵀ·dU, Additive's dW₁ += dQᵀ·H, dW₂ += dKᵀ·H̄ and dH̄ += dK·W₂ — each
// one product per call. Bahdanau's fused pass runs over blocks of K for
// every query in turn, adding each query's rows into one S×d_a gradient of
// K: the B×S×d_a tensor of the t_s is never formed.
//
// Each row's gradients are within AttendBackward's bound for that query,
// with the sums over the queries adding γ_{B+2}·Σ_b|terms| to the key,
// value and parameter gradients. Masks, special values, aliasing, panics,
// allocation and concurrency are AttendBackward's, with matrices in place
// of vectors; the products may run on kernels' worker goroutines as Gemm
// does, and return when they are done.
func (m *Memory) AttendManyBackward(g *Grads, dqueries, dweights, dcontext, weights, queries kernels.Matrix) {
	const fn = "AttendManyBackward"
	name := m.sc.String()
	checkMatrix(name, "dqueries", dqueries)
	checkMatrix(name, "dweights", dweights)
	checkMatrix(name, "dcontext", dcontext)
	checkMatrix(name, "weights", weights)
	checkMatrix(name, "queries", queries)
	B, S, dv, qd := queries.Rows, m.keys.Rows, m.values.Cols, m.QueryDim()
	if queries.Cols != qd || weights.Rows != B || weights.Cols != S || dcontext.Rows != B || dcontext.Cols != dv ||
		!emptyOr(dqueries, B, qd) || !emptyOr(dweights, B, S) {
		panicf("%s: %s: queries is %d×%d, weights %d×%d, dcontext %d×%d, dqueries %d×%d, dweights %d×%d; want queries B×%d, weights B×%d, dcontext B×%d, dqueries empty or B×%d, dweights empty or B×%d",
			name, fn, queries.Rows, queries.Cols, weights.Rows, weights.Cols, dcontext.Rows, dcontext.Cols,
			dqueries.Rows, dqueries.Cols, dweights.Rows, dweights.Cols, qd, S, dv, qd, S)
	}
	m.checkGrads(fn, g, span(&dqueries), span(&dweights), span(&dcontext), span(&weights), span(&queries))
	m.busy.Enter("attention.Memory")
	defer m.busy.Exit()
	if B == 0 || !m.anyAttended() {
		return
	}
	n := m.valid
	bw := &m.bw
	ds := scratchMat(&bw.ds, B, n)
	beta := float32(0)
	if dweights.Rows > 0 {
		for b := range B {
			copy(row(ds, b), row(dweights, b)[:n])
		}
		beta = 1
	}
	kernels.Gemm(kernels.NoTrans, kernels.Trans, 1, dcontext, rows(m.values, 0, n), beta, ds)
	alpha := cols(weights, 0, n)
	for b := range B {
		m.maskGrad(row(ds, b))
	}
	kernels.SoftmaxBackwardRows(ds, alpha, ds)
	if dV := m.valuesGrad(g); dV.Rows > 0 {
		kernels.Gemm(kernels.Trans, kernels.NoTrans, 1, alpha, dcontext, 1, rows(dV, 0, n))
	}
	m.scoresBackwardMany(g, dqueries, ds, queries)
}

// checkGrads panics unless the Memory can run a backward, g's buffers have
// the shapes Grads states, and no gradient buffer overlaps another or an
// input (dq the query gradient; dw, dc, w, q the other arguments' spans).
func (m *Memory) checkGrads(fn string, g *Grads, dq, dw, dc, w, q []float32) {
	name := m.sc.String()
	if m.narrow() {
		panicf("%s: %s: the keys and values are stored as %s; the backward needs float32", name, fn, m.Format())
	}
	var gr Grads
	if g != nil {
		gr = *g
	}
	S, dk, dvc := m.keys.Rows, m.keys.Cols, m.values.Cols
	checkMatrix(name, "Grads.Keys", gr.Keys)
	checkMatrix(name, "Grads.Values", gr.Values)
	checkMatrix(name, "Grads.W", gr.W)
	checkMatrix(name, "Grads.W1", gr.W1)
	checkMatrix(name, "Grads.W2", gr.W2)
	if !emptyOr(gr.Keys, S, dk) {
		panicf("%s: %s: Grads.Keys is %d×%d, want empty or S×d_k = %d×%d", name, fn, gr.Keys.Rows, gr.Keys.Cols, S, dk)
	}
	if m.sameValues && !isEmpty(gr.Values) {
		panicf("%s: %s: the values are the keys: their gradient adds into Grads.Keys, and Grads.Values (%d×%d) must be empty", name, fn, gr.Values.Rows, gr.Values.Cols)
	}
	if !emptyOr(gr.Values, S, dvc) {
		panicf("%s: %s: Grads.Values is %d×%d, want empty or S×d_v = %d×%d", name, fn, gr.Values.Rows, gr.Values.Cols, S, dvc)
	}
	sc := &m.sc
	var w1, w2 kernels.Matrix
	switch sc.kind {
	case kindGeneral:
		w1 = sc.w
		if !emptyOr(gr.W, sc.w.Rows, sc.w.Cols) {
			panicf("%s: %s: Grads.W is %d×%d, want empty or %d×%d (W)", name, fn, gr.W.Rows, gr.W.Cols, sc.w.Rows, sc.w.Cols)
		}
	case kindAdditive:
		w1, w2 = sc.w, sc.w2
		if !emptyOr(gr.W1, sc.w.Rows, sc.w.Cols) || !emptyOr(gr.W2, sc.w2.Rows, sc.w2.Cols) || gr.V != nil && len(gr.V) != len(sc.v) {
			panicf("%s: %s: Grads.W1 is %d×%d, Grads.W2 %d×%d, len(Grads.V)=%d; want each empty or W1 %d×%d, W2 %d×%d, len(V)=%d",
				name, fn, gr.W1.Rows, gr.W1.Cols, gr.W2.Rows, gr.W2.Cols, len(gr.V), sc.w.Rows, sc.w.Cols, sc.w2.Rows, sc.w2.Cols, len(sc.v))
		}
	}
	if sc.kind != kindGeneral && !isEmpty(gr.W) {
		panicf("%s: %s: Grads.W is %d×%d but the scorer has no W", name, fn, gr.W.Rows, gr.W.Cols)
	}
	if sc.kind != kindAdditive && (!isEmpty(gr.W1) || !isEmpty(gr.W2) || len(gr.V) != 0) {
		panicf("%s: %s: Grads.W1, W2 or V set but the scorer has no W1, W2, v", name, fn)
	}
	outs := [...]namedSpan{
		{"dquery", dq}, {"Grads.Keys", span(&gr.Keys)}, {"Grads.Values", span(&gr.Values)},
		{"Grads.W", span(&gr.W)}, {"Grads.W1", span(&gr.W1)}, {"Grads.W2", span(&gr.W2)}, {"Grads.V", gr.V},
	}
	ins := [...]namedSpan{
		{"dweights", dw}, {"dcontext", dc}, {"weights", w}, {"query", q},
		{"keys", span(&m.keys)}, {"values", span(&m.values)}, {"W", span(&w1)}, {"W2", span(&w2)}, {"v", sc.v},
	}
	if sc.kind == kindAdditive {
		ins[6].name = "W1"
	}
	if m.st != nil { // stored keys and values: the Memory's own buffers
		ins[4].s, ins[5].s = nil, nil
	}
	checkSpans(name, fn, outs[:], ins[:])
}

// namedSpan is an argument's elements and its name in panic messages.
type namedSpan struct {
	name string
	s    []float32
}

// checkSpans panics, naming mech, the call fn (unless "") and the pair, if
// two of outs overlap or one of outs overlaps one of ins.
func checkSpans(mech, fn string, outs, ins []namedSpan) {
	for i, o := range outs {
		for _, p := range outs[i+1:] {
			if overlaps(o.s, p.s) {
				overlapPanic(mech, fn, o.name, p.name)
			}
		}
		for _, p := range ins {
			if overlaps(o.s, p.s) {
				overlapPanic(mech, fn, o.name, p.name)
			}
		}
	}
}

// overlapPanic panics: a is an output that overlaps b.
func overlapPanic(mech, fn, a, b string) {
	if fn == "" {
		panicf("%s: %s overlaps %s", mech, a, b)
	}
	panicf("%s: %s: %s overlaps %s", mech, fn, a, b)
}

// isEmpty reports whether m has no elements.
func isEmpty(m kernels.Matrix) bool { return m.Rows == 0 || m.Cols == 0 }

// emptyOr reports whether m is empty (not wanted) or r×c.
func emptyOr(m kernels.Matrix, r, c int) bool {
	return m.Rows == 0 && m.Cols == 0 || m.Rows == r && m.Cols == c
}

// wanted reports whether a gradient buffer is to be computed: it is not
// empty.
func wanted(m kernels.Matrix) bool { return m.Rows > 0 && m.Cols > 0 }

// valuesGrad returns the buffer the values' gradient adds to: Grads.Keys
// when the values are the keys, else Grads.Values (either may be empty).
func (m *Memory) valuesGrad(g *Grads) kernels.Matrix {
	if g == nil {
		return kernels.Matrix{}
	}
	if m.sameValues {
		if wanted(g.Keys) {
			return g.Keys
		}
		return kernels.Matrix{}
	}
	if wanted(g.Values) {
		return g.Values
	}
	return kernels.Matrix{}
}

// keysGrad returns rows [0, n) of Grads.Keys, or an empty matrix when it is
// not wanted.
func keysGrad(g *Grads, n int) kernels.Matrix {
	if g == nil || !wanted(g.Keys) {
		return kernels.Matrix{}
	}
	return rows(g.Keys, 0, n)
}

// maskGrad sets to 0 the elements of x (keys [0, len(x))) that the mask
// excludes.
func (m *Memory) maskGrad(x []float32) {
	if m.mask == nil {
		return
	}
	for s, ok := range m.mask[:len(x)] {
		if !ok {
			x[s] = 0
		}
	}
}

// scratchMat returns an r×c matrix on *buf (grown if needed), its contents
// unspecified.
func scratchMat(buf *[]float32, r, c int) kernels.Matrix {
	*buf = grow(*buf, r*c)
	return kernels.Matrix{Rows: r, Cols: c, Stride: max(c, 1), Data: (*buf)[:r*c]}
}

// zeroMat is scratchMat cleared.
func zeroMat(buf *[]float32, r, c int) kernels.Matrix {
	x := scratchMat(buf, r, c)
	clear(x.Data)
	return x
}

// vecMat returns x as a 1×len(x) matrix.
func vecMat(x []float32) kernels.Matrix {
	return kernels.Matrix{Rows: 1, Cols: len(x), Stride: len(x), Data: x}
}

// outerAdd adds α·x·yᵀ to c (len(x)×len(y)): one product of inner
// dimension 1.
func outerAdd(c kernels.Matrix, alpha float32, x, y []float32) {
	if len(x) == 0 || len(y) == 0 {
		return
	}
	kernels.Gemm(kernels.Trans, kernels.NoTrans, alpha, vecMat(x), vecMat(y), 1, c)
}

// scoresBackward adds the gradients of one query's scores ds (keys
// [0, len(ds)), masked ones 0) to dh (unless nil) and g's buffers; ds may be
// overwritten.
func (m *Memory) scoresBackward(g *Grads, dh, ds, h []float32) {
	n := len(ds)
	keys := rows(m.keys, 0, n)
	dK := keysGrad(g, n)
	bw := &m.bw
	switch m.sc.kind {
	case kindScaled:
		kernels.Scale(ds, float32(1/math.Sqrt(float64(m.keys.Cols))), ds)
		fallthrough
	case kindDot:
		if dh != nil {
			kernels.MatTVecAdd(dh, keys, ds)
		}
		if dK.Rows > 0 {
			outerAdd(dK, 1, ds, h)
		}
	case kindGeneral:
		u := m.prepareQuery(h)
		if dK.Rows > 0 {
			outerAdd(dK, 1, ds, u)
		}
		if dh == nil && (g == nil || !wanted(g.W)) {
			return
		}
		bw.vec = grow(bw.vec, len(u))
		du := bw.vec
		kernels.MatTVec(du, keys, ds)
		if dh != nil {
			bw.vec2 = grow(bw.vec2, len(h))
			kernels.MatVec(bw.vec2, m.sc.w, du)
			kernels.Add(dh, dh, bw.vec2)
		}
		if g != nil && wanted(g.W) {
			outerAdd(g.W, 1, h, du)
		}
	case kindCosine:
		m.cosineBackward(g, dh, ds, h)
	case kindAdditive:
		m.additiveBackward(g, vecMat(dh), vecMat(ds), vecMat(h))
	}
}

// scoresBackwardMany is scoresBackward for B queries (rows of q) with the
// scores' gradients ds (B×n): the products over all queries at once.
func (m *Memory) scoresBackwardMany(g *Grads, dq, ds, q kernels.Matrix) {
	n, B := ds.Cols, ds.Rows
	keys := rows(m.keys, 0, n)
	dK := keysGrad(g, n)
	bw := &m.bw
	switch m.sc.kind {
	case kindDot, kindScaled:
		alpha := float32(1)
		if m.sc.kind == kindScaled {
			alpha = float32(1 / math.Sqrt(float64(m.keys.Cols)))
		}
		if wanted(dq) {
			kernels.Gemm(kernels.NoTrans, kernels.NoTrans, alpha, ds, keys, 1, dq)
		}
		if dK.Rows > 0 {
			kernels.Gemm(kernels.Trans, kernels.NoTrans, alpha, ds, q, 1, dK)
		}
	case kindGeneral:
		w := m.sc.w
		wantW := g != nil && wanted(g.W)
		if dK.Rows > 0 {
			u := scratchMat(&bw.a, B, w.Cols)
			kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, q, w, 0, u)
			kernels.Gemm(kernels.Trans, kernels.NoTrans, 1, ds, u, 1, dK)
		}
		if !wanted(dq) && !wantW {
			return
		}
		du := scratchMat(&bw.b, B, w.Cols)
		kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, ds, keys, 0, du)
		if wanted(dq) {
			kernels.Gemm(kernels.NoTrans, kernels.Trans, 1, du, w, 1, dq)
		}
		if wantW {
			kernels.Gemm(kernels.Trans, kernels.NoTrans, 1, q, du, 1, g.W)
		}
	case kindCosine:
		m.cosineBackwardMany(g, dq, ds, q)
	case kindAdditive:
		m.additiveBackward(g, dq, ds, q)
	}
}

// additiveBackward adds Bahdanau's gradients for the queries h (rows) with
// the scores' gradients ds (B×n) to dq (unless empty) and g's buffers.
func (m *Memory) additiveBackward(g *Grads, dq, ds, h kernels.Matrix) {
	sc := &m.sc
	B, n, da := ds.Rows, ds.Cols, sc.w.Rows
	bw := &m.bw
	dK := keysGrad(g, n)
	wantW1 := g != nil && wanted(g.W1)
	wantW2 := g != nil && wanted(g.W2)
	var qa kernels.Matrix
	if B == 1 {
		qa = vecMat(m.prepareQuery(row(h, 0)))
	} else {
		qa = scratchMat(&bw.a, B, da)
		kernels.MatVecBatch(qa, sc.w, h)
	}
	dqa := zeroMat(&bw.dqa, B, da)
	dv := []float32(nil)
	if g != nil && g.V != nil {
		dv = g.V
	} else {
		bw.dva = grow(bw.dva, da)
		dv = bw.dva
	}
	var dka kernels.Matrix
	if dK.Rows > 0 || wantW2 {
		dka = zeroMat(&bw.dka, n, da)
	}
	// Blocks of K for every query in turn, as the forward scores them.
	blk := blockRows(tune.manyBlock, m.proj.Stride)
	for lo := 0; lo < n; lo += blk {
		hi := min(n, lo+blk)
		k := rows(m.proj, lo, hi)
		var dk kernels.Matrix
		if dka.Rows > 0 {
			dk = rows(dka, lo, hi)
		}
		for b := range B {
			kernels.AdditiveScoreBackwardAdd(row(dqa, b), dv, dk, k, row(qa, b), sc.v, row(ds, b)[lo:hi])
		}
	}
	if wanted(dq) {
		if B == 1 {
			kernels.MatTVecAdd(row(dq, 0), sc.w, row(dqa, 0))
		} else {
			kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, dqa, sc.w, 1, dq)
		}
	}
	if wantW1 {
		kernels.Gemm(kernels.Trans, kernels.NoTrans, 1, dqa, h, 1, g.W1)
	}
	if wantW2 {
		kernels.Gemm(kernels.Trans, kernels.NoTrans, 1, dka, rows(m.keys, 0, n), 1, g.W2)
	}
	if dK.Rows > 0 {
		kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, dka, sc.w2, 1, dK)
	}
}
