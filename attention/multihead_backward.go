package attention

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// MultiHeadTrain is [MultiHead] for training: it sets out as MultiHead
// does and lse (length heads·T) to the logsumexp of each head's rows of
// scaled scores, lse[i·T+t] = ln Σ_s e^(x_s) over the keys query t of head
// i sees (x_s = Q_i[t]·K_i[s]/√d_k), computed as m + ln l from the tiled
// softmax's running max m and sum l and rounded once: the state
// [MultiHeadBackward] needs with out. A query that sees no key, or whose
// scores are all −Inf, gets lse = −Inf; a NaN score gives NaN and a score
// of +Inf gives +Inf. It is always tiled (a small call does not take
// MultiHead's untiled route), so out may differ from MultiHead's in the last
// bits, within MultiHead's bound. The lse of a row is within
// E + (max_s|x_s − m| + 2n + 6b + 4)·u + u·|lse| of the exact logsumexp of
// the exact scores (E the largest error of a score, as in MultiHead's bound;
// m the largest score; n the keys the row sees in b blocks; u = 2⁻²⁴). lse must
// not overlap out, q, k or v; it panics if it does, unless
// len(lse) = heads·T, and as MultiHead does. Allocation and concurrency are
// MultiHead's.
func MultiHeadTrain(out kernels.Matrix, lse []float32, q, k, v kernels.Matrix, heads int, mask Masking, ws *Workspace) {
	const name = "MultiHeadTrain"
	checkMultiHeadShapes(name, out, q, k, v, heads, heads)
	checkMultiHeadArgs(name, out, q, k, v, mask)
	checkLSE(name, lse, q.Rows, heads, out, q, k, v)
	ws.attend(out, lse, q, k, v, heads, heads, mask == Causal)
}

// GroupedQueryTrain is [GroupedQuery] for training, as MultiHeadTrain is
// MultiHead's: out as GroupedQuery sets it, lse (heads·T) the logsumexp of
// each query head's rows.
func GroupedQueryTrain(out kernels.Matrix, lse []float32, q, k, v kernels.Matrix, heads, kvHeads int, mask Masking, ws *Workspace) {
	const name = "GroupedQueryTrain"
	checkGroupedQueryShapes(name, out, q, k, v, heads, kvHeads)
	checkMultiHeadArgs(name, out, q, k, v, mask)
	checkLSE(name, lse, q.Rows, heads, out, q, k, v)
	ws.attend(out, lse, q, k, v, heads, kvHeads, mask == Causal)
}

// MultiHeadBackward is the backward of [MultiHeadTrain] in the flash style:
// given dout (T×d_v), the gradient of the output out that MultiHeadTrain
// gave with lse for q, k, v, heads and mask, it adds to dq (T×d), dk (S×d)
// and dv (S×d_v) the gradients of the loss with respect to q, k and v (an
// empty one is not wanted). For each head, with P the softmax weights and
// D_t = Σ_j dout_tj·out_tj over the head's columns:
//
//	dV += Pᵀ·dO,  dP = dO·Vᵀ,  dS = P∘(dP − D),  dQ += dS·K/√d_k,  dK += dSᵀ·Q/√d_k
//
// No T×S matrix is formed: the keys go in blocks, each owned by one job that
// packs its keys and values once; for every block of queries that sees it,
// the scores are recomputed by a matrix product and P = e^(score − lse)
// from the saved logsumexp, and the five products run through the GEMM
// micro-kernels (kernels.GemmScratch), the tiles past the causal staircase
// left out. The workspace holds, per goroutine, two tiles of bq×bk floats,
// a tile's rows of q and dout (bq·(d_k + d_h)) and the block's packed keys
// and values (about 2·bk·d_k + bk·d_h floats; the blocks are in
// BACKWARD.md), and heads·T floats of D; when the plan
// splits a KV head's blocks of keys over goroutines, each goroutine but
// the first also holds T·(group·d_k) floats of dQ partial sums.
//
// Accuracy (u = 2⁻²⁴; to first order, the tests evaluate the same chain
// with its second-order terms): with δP_ts the error of a recomputed weight —
// P_ts·((e^{δx} − 1)) for δx = E + δlse + (|x| + |lse| + 4)·u, E the
// score's bound as the forward's and δlse MultiHeadTrain's bound on lse —
// and δD_t ≤ γ_{d_h+2}·Σ_j|dO_tj·O_tj| + Σ_j|dO_tj|·δO_tj (δO the forward's
// bound on out), each element of dV is within Σ_t (δP_ts·|dO_tj|) +
// γ_{n+2}·Σ_t (P_ts + δP_ts)·|dO_tj|, each dP_ts within γ_{d_h+2}·Σ_j|dO_tj·V_sj|,
// each dS_ts within δP_ts·|dP_ts − D_t| + P_ts·(δdP_ts + δD_t) + 2u·|dS_ts|
// and each element of dQ and dK within the propagation of δdS through
// their products plus γ_{m+3}·Σ|terms| for a product of m terms (the 1/√d_k
// one more rounding), plus one rounding of the addition to the buffer.
// BACKWARD.md writes the chain out; the tests check it against a float64
// evaluation.
//
// Special values: with finite q, k, v and dout the gradients are finite
// unless they overflow. A row whose forward was NaN (or saw a score of
// +Inf, lse = +Inf) makes the gradients it enters NaN: its head's dQ row,
// and the rows of dK and dV of the keys it sees. A NaN or infinity in q,
// k, v or dout may make NaN any gradient element its products reach,
// including, on a tile the causal mask cuts, those of keys or queries the
// mask keeps apart (a weight of 0 times an infinity). Rows that see no key,
// or whose scores are all −Inf (lse = −Inf), contribute nothing.
//
// dq, dk and dv must not overlap each other or an input (dout, out, lse,
// q, k, v); it panics if they do, and unless the shapes are MultiHead's,
// dq, dk and dv empty or shaped as q, k and v, dout as out and
// len(lse) = heads·T. ws holds the scratch space (nil allocates it);
// nothing is allocated once it has grown. Above a size the work is spread
// over the package's worker goroutines, by KV heads or by blocks of keys;
// the result may then differ in the last bits from one goroutine's, within
// the bound, and MultiHeadBackward returns when all are done.
func MultiHeadBackward(dq, dk, dv, dout, out kernels.Matrix, lse []float32, q, k, v kernels.Matrix, heads int, mask Masking, ws *Workspace) {
	const name = "MultiHeadBackward"
	checkMultiHeadShapes(name, out, q, k, v, heads, heads)
	checkMultiHeadArgs(name, out, q, k, v, mask)
	checkBackwardArgs(name, dq, dk, dv, dout, out, lse, q, k, v, heads)
	ws.backward(dq, dk, dv, dout, out, lse, q, k, v, heads, heads, mask == Causal)
}

// GroupedQueryBackward is the backward of [GroupedQueryTrain], as
// MultiHeadBackward is MultiHeadTrain's: the gradients of the KV heads sum
// over the query heads of their group (a job owns a KV head's rows of dk
// and dv and takes all its query heads). dq is T×(heads·d_k), dk
// S×(kvHeads·d_k), dv S×(kvHeads·d_h), dout T×(heads·d_h). Its contract is
// MultiHeadBackward's, the sums over a group's query heads adding
// γ_{group·n+2} in place of γ_{n+2} in dK's and dV's bounds.
func GroupedQueryBackward(dq, dk, dv, dout, out kernels.Matrix, lse []float32, q, k, v kernels.Matrix, heads, kvHeads int, mask Masking, ws *Workspace) {
	const name = "GroupedQueryBackward"
	checkGroupedQueryShapes(name, out, q, k, v, heads, kvHeads)
	checkMultiHeadArgs(name, out, q, k, v, mask)
	checkBackwardArgs(name, dq, dk, dv, dout, out, lse, q, k, v, heads)
	ws.backward(dq, dk, dv, dout, out, lse, q, k, v, heads, kvHeads, mask == Causal)
}

// checkMultiHeadShapes panics unless q, k, v and out fit MultiHead (heads =
// kvHeads) or GroupedQuery.
func checkMultiHeadShapes(name string, out, q, k, v kernels.Matrix, heads, kvHeads int) {
	checkMatrix(name, "q", q)
	checkMatrix(name, "k", k)
	checkMatrix(name, "v", v)
	checkMatrix(name, "out", out)
	switch {
	case kvHeads < 1 || heads < kvHeads || heads%kvHeads != 0:
		panicf("%s: %d KV heads do not divide %d heads", name, kvHeads, heads)
	case q.Cols%heads != 0 || v.Cols%kvHeads != 0:
		panicf("%s: q is %d×%d, v is %d×%d: %d heads do not divide d=%d or %d KV heads d_v=%d", name, q.Rows, q.Cols, v.Rows, v.Cols, heads, q.Cols, kvHeads, v.Cols)
	case k.Cols != q.Cols/heads*kvHeads || k.Rows != v.Rows:
		panicf("%s: q is %d×%d, k is %d×%d, v is %d×%d; want q T×(%d·d_k), k S×(%d·d_k), v S×(%d·d_h)", name, q.Rows, q.Cols, k.Rows, k.Cols, v.Rows, v.Cols, heads, kvHeads, kvHeads)
	case out.Rows != q.Rows || out.Cols != v.Cols/kvHeads*heads:
		panicf("%s: out is %d×%d, want T×(%d·d_h) = %d×%d", name, out.Rows, out.Cols, heads, q.Rows, v.Cols/kvHeads*heads)
	}
}

// checkGroupedQueryShapes is checkMultiHeadShapes for GroupedQuery's
// entry points.
func checkGroupedQueryShapes(name string, out, q, k, v kernels.Matrix, heads, kvHeads int) {
	checkMultiHeadShapes(name, out, q, k, v, heads, kvHeads)
}

// checkLSE panics unless len(lse) = heads·T, and if lse overlaps out, q, k
// or v.
func checkLSE(name string, lse []float32, T, heads int, out, q, k, v kernels.Matrix) {
	if len(lse) != heads*T {
		panicf("%s: len(lse)=%d, want heads·T = %d", name, len(lse), heads*T)
	}
	checkDisjoint(name, "lse", lse, "out", span(&out))
	checkDisjoint(name, "lse", lse, "q", span(&q))
	checkDisjoint(name, "lse", lse, "k", span(&k))
	checkDisjoint(name, "lse", lse, "v", span(&v))
}

// checkBackwardArgs panics unless the gradients are empty or shaped as
// their inputs, dout as out and len(lse) = heads·T, and if a gradient
// overlaps another or an input.
func checkBackwardArgs(name string, dq, dk, dv, dout, out kernels.Matrix, lse []float32, q, k, v kernels.Matrix, heads int) {
	checkMatrix(name, "dq", dq)
	checkMatrix(name, "dk", dk)
	checkMatrix(name, "dv", dv)
	checkMatrix(name, "dout", dout)
	if !emptyOr(dq, q.Rows, q.Cols) || !emptyOr(dk, k.Rows, k.Cols) || !emptyOr(dv, v.Rows, v.Cols) || dout.Rows != out.Rows || dout.Cols != out.Cols {
		panicf("%s: dq is %d×%d, dk %d×%d, dv %d×%d, dout %d×%d; want dq, dk, dv empty or as q %d×%d, k %d×%d, v %d×%d, and dout as out %d×%d",
			name, dq.Rows, dq.Cols, dk.Rows, dk.Cols, dv.Rows, dv.Cols, dout.Rows, dout.Cols, q.Rows, q.Cols, k.Rows, k.Cols, v.Rows, v.Cols, out.Rows, out.Cols)
	}
	if len(lse) != heads*q.Rows {
		panicf("%s: len(lse)=%d, want heads·T = %d", name, len(lse), heads*q.Rows)
	}
	outs := [...]namedSpan{{"dq", span(&dq)}, {"dk", span(&dk)}, {"dv", span(&dv)}}
	ins := [...]namedSpan{{"dout", span(&dout)}, {"out", span(&out)}, {"lse", lse}, {"q", span(&q)}, {"k", span(&k)}, {"v", span(&v)}}
	checkSpans(name, "", outs[:], ins[:])
}

// mhBackward is the state of a MultiHead backward call in its Workspace.
type mhBackward struct {
	parts []backScratchMH // one per goroutine
	delta []float32       // heads×T: D = rowsum(dO∘O)

	dq, dk, dv, dout, q, k, v kernels.Matrix
	lse                       []float32
	heads, group, kvHeads     int
	T, S, bq, bk, diag        int
	kblocks, nparts           int
	causal, byKeys            bool
	alpha                     float32
	kv                        int // byKeys: the KV head of the current phase
}

// backScratchMH is one goroutine's share of a backward.
type backScratchMH struct {
	gemm     kernels.GemmScratch
	s, dp    []float32       // bq×bk: scores then weights; the weights' gradient then the scores'
	kT, vT   kernels.PackedB // the block's keys and values, transposed
	kN       kernels.PackedB // the block's keys as they are (dQ += dS·K)
	qt, dot  []float32       // a tile's rows of Q and dO, copied contiguous (see contiguous)
	dqBuf    []float32       // byKeys, goroutines after the first: T×(group·d_k) of dQ
	dqm      kernels.Matrix  // the dQ this goroutine adds to (its query heads' columns from 0)
	dqOffset int             // column of dqm's first head in the caller's dq
}

// backward runs a validated MultiHead or GroupedQuery backward.
func (ws *Workspace) backward(dq, dk, dv, dout, out kernels.Matrix, lse []float32, q, k, v kernels.Matrix, heads, kvHeads int, causal bool) {
	if ws == nil {
		ws = new(Workspace)
	}
	ws.busy.Enter("attention.Workspace")
	defer ws.busy.Exit()
	T, S := q.Rows, k.Rows
	if T == 0 || S == 0 || !wanted(dq) && !wanted(dk) && !wanted(dv) {
		return
	}
	dkh, dh := q.Cols/heads, v.Cols/kvHeads
	p := multiHeadBackPlan(T, S, dkh, dh, heads, kvHeads)
	b := &ws.back
	b.dq, b.dk, b.dv, b.dout, b.q, b.k, b.v, b.lse = dq, dk, dv, dout, q, k, v, lse
	b.heads, b.kvHeads, b.group, b.T, b.S = heads, kvHeads, heads/kvHeads, T, S
	b.bq, b.bk, b.diag, b.kblocks, b.nparts = p.bq, p.bk, p.diag, (S+p.bk-1)/p.bk, p.parts
	b.causal, b.byKeys = causal, p.byKeys
	b.alpha = float32(1 / math.Sqrt(float64(dkh)))
	if len(b.parts) < p.parts {
		b.parts = append(b.parts, make([]backScratchMH, p.parts-len(b.parts))...)
	}
	for i := range b.parts[:p.parts] {
		t := &b.parts[i]
		t.s = grow(t.s, p.bq*p.bk)
		t.dp = grow(t.dp, p.bq*p.bk)
		t.qt = grow(t.qt, p.bq*dkh)
		t.dot = grow(t.dot, p.bq*dh)
	}
	// D = rowsum(dO∘O) for every head and row.
	b.delta = grow(b.delta, heads*T)
	for i := range heads {
		oi, doi := cols(out, i*dh, (i+1)*dh), cols(dout, i*dh, (i+1)*dh)
		d := b.delta[i*T : (i+1)*T]
		for t := range T {
			d[t] = kernels.Dot(row(doi, t), row(oi, t))
		}
	}
	if !b.byKeys {
		for i := range b.parts[:p.parts] {
			b.parts[i].dqm, b.parts[i].dqOffset = dq, 0
		}
		ws.next.Store(0)
		runParallel((*mhBackRunner)(ws), p.parts, &ws.wg)
	} else {
		gw := b.group * dkh
		for kv := range kvHeads {
			b.kv = kv
			for i := range b.parts[:p.parts] {
				t := &b.parts[i]
				t.dqm, t.dqOffset = kernels.Matrix{}, kv*gw
				if !wanted(dq) {
					continue
				}
				if i == 0 {
					t.dqm, t.dqOffset = cols(dq, kv*gw, (kv+1)*gw), kv*gw
					continue
				}
				t.dqm = zeroMat(&t.dqBuf, T, gw)
			}
			runParallel((*mhBackRunner)(ws), p.parts, &ws.wg)
			if wanted(dq) {
				dqg := cols(dq, kv*gw, (kv+1)*gw)
				for i := 1; i < p.parts; i++ {
					part := b.parts[i].dqm
					for t := range T {
						kernels.Add(row(dqg, t), row(dqg, t), row(part, t))
					}
				}
			}
		}
	}
	b.dq, b.dk, b.dv, b.dout, b.q, b.k, b.v, b.lse = kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, nil
	for i := range b.parts[:p.parts] {
		b.parts[i].dqm = kernels.Matrix{}
	}
}

// mhBackRunner is a Workspace whose parts run a backward's jobs.
type mhBackRunner Workspace

// run takes the jobs of part p: by KV heads, the next KV head not taken
// (each in full, its blocks of keys in turn); by keys, the blocks of the
// phase's KV head dealt to the parts in a fixed zigzag (part p takes blocks
// p, 2P−1−p, 2P+p, …), so that each part's sums of dQ are in a fixed order.
func (r *mhBackRunner) run(p int) {
	ws := (*Workspace)(r)
	b := &ws.back
	t := &b.parts[p]
	if b.byKeys {
		P := b.nparts
		for j := 0; ; j++ {
			kb := j*P + p
			if j%2 == 1 {
				kb = j*P + P - 1 - p
			}
			if kb >= b.kblocks {
				return
			}
			b.keyBlock(t, b.kv, kb)
		}
	}
	for {
		kv := int(ws.next.Add(1) - 1)
		if kv >= b.kvHeads {
			return
		}
		for kb := range b.kblocks {
			b.keyBlock(t, kv, kb)
		}
	}
}

// keyBlock adds the gradients of block kb of KV head kv's keys over every
// query head of its group and every block of queries that sees it.
func (b *mhBackward) keyBlock(t *backScratchMH, kv, kb int) {
	dkh, dh := b.q.Cols/b.heads, b.v.Cols/b.kvHeads
	s0, s1 := kb*b.bk, min(b.S, (kb+1)*b.bk)
	// The first query that sees key s0.
	first := 0
	if b.causal {
		first = max(0, s0+b.T-b.S)
	}
	if first >= b.T {
		return
	}
	kk := rows(cols(b.k, kv*dkh, (kv+1)*dkh), s0, s1)
	vv := rows(cols(b.v, kv*dh, (kv+1)*dh), s0, s1)
	t.kT.Pack(kernels.Trans, kk)
	t.vT.Pack(kernels.Trans, vv)
	if wanted(b.dq) {
		t.kN.Pack(kernels.NoTrans, kk)
	}
	var dkb, dvb kernels.Matrix
	if wanted(b.dk) {
		dkb = rows(cols(b.dk, kv*dkh, (kv+1)*dkh), s0, s1)
	}
	if wanted(b.dv) {
		dvb = rows(cols(b.dv, kv*dh, (kv+1)*dh), s0, s1)
	}
	for i := kv * b.group; i < (kv+1)*b.group; i++ {
		qi := cols(b.q, i*dkh, (i+1)*dkh)
		doi := cols(b.dout, i*dh, (i+1)*dh)
		var dqi kernels.Matrix
		if wanted(t.dqm) {
			c := i*dkh - t.dqOffset
			dqi = cols(t.dqm, c, c+dkh)
		}
		lse := b.lse[i*b.T : (i+1)*b.T]
		delta := b.delta[i*b.T : (i+1)*b.T]
		for t0 := first; t0 < b.T; t0 += b.bq {
			t1 := min(b.T, t0+b.bq)
			var dqt kernels.Matrix
			if dqi.Rows > 0 {
				dqt = rows(dqi, t0, t1)
			}
			q, dout := contiguous(t.qt, rows(qi, t0, t1)), contiguous(t.dot, rows(doi, t0, t1))
			b.tile(t, q, dout, dqt, dkb, dvb, lse[t0:t1], delta[t0:t1], t0, s0, s1-s0)
		}
	}
}

// tile adds the gradients of queries t0…t0+len(lse)−1 (q, dout, their dQ
// rows dq) against the w keys from s0 of the job's packed block: dQ to dq,
// dK and dV to the block's rows dk and dv (each unless empty).
func (b *mhBackward) tile(t *backScratchMH, q, dout, dq, dk, dv kernels.Matrix, lse, delta []float32, t0, s0, w int) {
	h := q.Rows
	// Row r sees the first d+r keys of the block (all of them when not
	// causal); keys past the last row's limit are seen by no row.
	d := w
	if b.causal {
		d = t0 + b.S - b.T + 1 - s0
		w = min(w, d+h-1)
	}
	cut := d < w
	sc := kernels.Matrix{Rows: h, Cols: w, Stride: b.bk, Data: t.s[:(h-1)*b.bk+w]}
	dp := kernels.Matrix{Rows: h, Cols: w, Stride: b.bk, Data: t.dp[:(h-1)*b.bk+w]}
	g := &t.gemm
	if cut {
		g.GemmPackedBand(kernels.NoTrans, b.alpha, q, &t.kT, 0, sc, d, kernels.BandColumns)
		kernels.SoftmaxRecompute(sc, sc, 1, lse, d)
		g.GemmPackedBand(kernels.NoTrans, 1, dout, &t.vT, 0, dp, d, kernels.BandColumns)
	} else {
		g.GemmPacked(kernels.NoTrans, b.alpha, q, &t.kT, 0, sc)
		kernels.SoftmaxRecompute(sc, sc, 1, lse, w)
		g.GemmPacked(kernels.NoTrans, 1, dout, &t.vT, 0, dp)
	}
	kernels.SoftmaxBackwardBlock(dp, sc, dp, delta)
	if cut { // the elements past the staircase were not computed: zero weights, zero gradients
		for r := range h {
			if n := max(0, d+r); n < w {
				clear(row(dp, r)[n:])
			}
		}
	}
	if dq.Rows > 0 {
		if cut {
			g.GemmPackedBand(kernels.NoTrans, b.alpha, dp, &t.kN, 1, dq, d, kernels.BandInner)
		} else {
			g.GemmPacked(kernels.NoTrans, b.alpha, dp, &t.kN, 1, dq)
		}
	}
	if dv.Rows == 0 && dk.Rows == 0 {
		return
	}
	// dV += Pᵀ·dO and dK += dSᵀ·Q/√d_k over the keys of the tile; on a cut
	// tile in groups of diag keys, each against the rows that see its first
	// key.
	step := w
	if cut {
		step = b.diag
	}
	for j0 := 0; j0 < w; j0 += step {
		j1 := min(w, j0+step)
		r0 := 0
		if cut {
			r0 = min(h, max(0, j0-d+1))
		}
		if r0 == h {
			break
		}
		if dv.Rows > 0 {
			g.Gemm(kernels.Trans, kernels.NoTrans, 1, rows(cols(sc, j0, j1), r0, h), rows(dout, r0, h), 1, rows(dv, j0, j1))
		}
		if dk.Rows > 0 {
			g.Gemm(kernels.Trans, kernels.NoTrans, b.alpha, rows(cols(dp, j0, j1), r0, h), rows(q, r0, h), 1, rows(dk, j0, j1))
		}
	}
}

// contiguous copies m into buf (at least m.Rows·m.Cols floats) with stride
// m.Cols and returns the copy. A head's rows of q and dout are a whole row
// of all heads apart, often a multiple of 4 KiB, at which the rows a
// product reads together fall on the same L1 sets and kernels.Gemm packs a
// B it would read in place; each tile's rows are read by four products, so
// the copy costs 1/(4·bk) of their reads (BACKWARD.md has the measurement).
func contiguous(buf []float32, m kernels.Matrix) kernels.Matrix {
	c := kernels.Matrix{Rows: m.Rows, Cols: m.Cols, Stride: max(1, m.Cols), Data: buf[:m.Rows*m.Cols]}
	for r := range m.Rows {
		copy(row(c, r), row(m, r))
	}
	return c
}
