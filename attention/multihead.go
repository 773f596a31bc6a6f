package attention

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/heedml/heed/internal/inuse"
	"github.com/heedml/heed/kernels"
)

// Workspace is caller-owned scratch space for [MultiHead] and [GroupedQuery].
// It holds the keys and values of the KV heads packed once per call for the
// matrix products (about S·(d_k + d_h) floats per KV head, rounded up to the
// micro-kernel's panels; a call on one goroutine packs as many KV heads at a
// time as fit 256 KiB, at least one, and reuses the space); for each
// goroutine a call uses (at most GOMAXPROCS), one block of scores, the
// running max and sum of its queries and the packing buffer of the products'
// left operands, about
// bq·(bk + max(d_k, bk)) + 2·bq floats for blocks of bq queries and bk keys
// (192 and 512: attention/DESIGN.md), never the T×S scores; and d_h floats
// shared by them. A call with T·S ≤ 3072, which runs without tiles, holds one
// head's T×S scores instead. The backward ([MultiHeadBackward]) keeps its
// own share, described there. It grows to the largest call seen and is then
// reused, so calls allocate nothing. The zero value is ready to use; a
// Workspace is not safe for concurrent use.
type Workspace struct {
	tiles []tileScratch // one per goroutine
	// packK and packV hold the blocks of keys and values of the current
	// phase's KV heads, packed once per call for the products: block b of
	// KV head kv0+j at j·kblocks+b, its keys transposed (d_k×bk) and its
	// values as they are (bk×d_h).
	packK, packV []kernels.PackedB
	// finite[j] reports, when causal, that every value of block packV[j] is
	// finite: its product may then take keys some rows do not see (their
	// weights are 0).
	finite       []bool
	zeros        []float32 // d_h zeros: Dot(row, zeros) is NaN for a row that is not finite
	small        []float32 // the T×S scores of one head on the direct route (T·S small)
	out, q, k, v kernels.Matrix
	heads, group int // query heads, query heads per KV head
	T, S, bq, bk int
	qblocks      int
	kvHeads      int
	kblocks      int
	kv0, kv1     int // the KV heads of the current phase
	diag         int // rows per product on a block of keys the mask cuts
	causal       bool
	alpha        float32
	lse          []float32    // MultiHeadTrain, GroupedQueryTrain: heads×T logsumexps, else nil
	next         atomic.Int64 // the next job: a head and a block of queries
	wg           sync.WaitGroup
	busy         inuse.Flag // in race builds: a call is running

	back mhBackward // MultiHeadBackward, GroupedQueryBackward (multihead_backward.go)
}

// tileScratch is one goroutine's share of a Workspace.
type tileScratch struct {
	gemm     kernels.GemmScratch
	scores   []float32 // bq×bk
	max, sum []float32 // bq: running max and Σ e^(score−max) of each query
	// mOld and add (bq each) are a group's maxima before its block and
	// the block's sums of weights (kernels.OnlineSoftmaxBand).
	mOld, add []float32
}

// Masking says which keys each query of MultiHead and GroupedQuery attends
// to.
type Masking uint8

const (
	// Unmasked: every query attends to every key.
	Unmasked Masking = iota
	// Causal: query t attends to the keys s ≤ t + S − T (its own position
	// and before, the last query to the last key).
	Causal
)

// MultiHead sets out to multi-head scaled dot-product attention of the queries
// q (T×d), keys k (S×d) and values v (S×d_v) with the given number of heads.
// Head i uses the column blocks Q_i = q[:, i·d_k:(i+1)·d_k], K_i likewise
// (d_k = d/heads) and V_i = v[:, i·d_h:(i+1)·d_h] (d_h = d_v/heads), read in
// place through the strides, and writes its block O_i of out (T×d_v):
//
//	O_i = softmax(Q_i K_iᵀ / √d_k + M) · V_i
//
// where, when mask is Causal, M[t][s] = −∞ for s > t + S − T (query t sees
// the keys up to its own position, the last query the last key), and M = 0
// when it is Unmasked. A query that sees no key (T > S, Causal) gets a zero
// output.
//
// The attention is tiled: for a block of queries, the scores against one
// block of keys at a time are formed by a matrix product, folded into a
// running maximum m and sum l = Σ e^(score−m) per query, and their weights'
// product with the block of values added to the output rows, which are scaled
// by e^(m_old−m) when the maximum rises; each row is divided by its l at the
// end. Blocks of keys that no query of the block sees are skipped, and on a
// block the causal mask cuts, the queries go in groups, each against the keys
// its last query sees, with the products' tiles past the mask's staircase
// left out (kernels.GemmScratch.GemmPackedBand). A call with T·S ≤ 3072 is
// not tiled: each head's scores are one product, and each query's softmax
// and context one pass over the values of the keys it sees (Attend's route),
// within the bounds below.
//
// Accuracy: each output row is within the bound of the scaled-dot context of
// Memory.Attend for that row of Q_i against the n keys it sees, with two
// changes for the b ≤ ⌈n/bk⌉ blocks of keys it meets (the block sizes are in
// attention/DESIGN.md): a weight's relative error
// (|x_s−max| + n + 4)·u from the softmax becomes (|x_s−max| + 2n + 6b + 4)·u,
// and the context's γ_{n+1} becomes γ_{n+2b+2} (u = 2⁻²⁴,
// γ_j = j·u/(1−j·u)). The terms: per block, one rounding of the subtraction
// of the running max and ≤ 4u of the exponential; for every later block
// where the max rises, the factor e^(m_old−m) (rounded once) and one
// rounding each of the scaled sum and the scaled output; the products' own
// γ_{k+1} per block; the final division (two roundings).
//
// Special values follow Attend's: a NaN score makes the row NaN; keys scoring
// +Inf share the weight 1 equally; −Inf scores get weight 0; the output is the
// weighted sum as written over the keys the query sees (a NaN or infinite
// value times a weight of 0 is NaN), while keys it does not see never enter
// it, whatever their values.
//
// Only out's T×d_v elements are written. ws
// holds the scratch space; nil allocates it, otherwise nothing is allocated
// once ws has grown. The work is spread over the package's worker goroutines
// by (head, block of queries); MultiHead returns when all are done. It panics
// unless heads ≥ 1 divides d and d_v, k and v have the same rows, q and k the
// same columns, and out is T×d_v; and if out overlaps q, k or v, or mask is
// not a Masking.
func MultiHead(out, q, k, v kernels.Matrix, heads int, mask Masking, ws *Workspace) {
	const name = "MultiHead"
	checkMatrix(name, "q", q)
	checkMatrix(name, "k", k)
	checkMatrix(name, "v", v)
	checkMatrix(name, "out", out)
	switch {
	case heads < 1:
		panicf("%s: %d heads", name, heads)
	case q.Cols != k.Cols || k.Rows != v.Rows:
		panicf("%s: q is %d×%d, k is %d×%d, v is %d×%d; want q T×d, k S×d, v S×d_v", name, q.Rows, q.Cols, k.Rows, k.Cols, v.Rows, v.Cols)
	case q.Cols%heads != 0 || v.Cols%heads != 0:
		panicf("%s: %d heads do not divide d=%d and d_v=%d", name, heads, q.Cols, v.Cols)
	case out.Rows != q.Rows || out.Cols != v.Cols:
		panicf("%s: out is %d×%d, want T×d_v = %d×%d", name, out.Rows, out.Cols, q.Rows, v.Cols)
	}
	checkMultiHeadArgs(name, out, q, k, v, mask)
	ws.attend(out, nil, q, k, v, heads, heads, mask == Causal)
}

// GroupedQuery is [MultiHead] with fewer key/value heads than query heads
// (grouped-query attention; kvHeads = 1 is multi-query attention). q is
// T×(heads·d_k), k is S×(kvHeads·d_k), v is S×(kvHeads·d_h) and out is
// T×(heads·d_h); query head i uses KV head i/(heads/kvHeads), so consecutive
// query heads share a KV head:
//
//	O_i = softmax(Q_i K_jᵀ / √d_k + M) · V_j,   j = i/(heads/kvHeads)
//
// with Q_i = q[:, i·d_k:(i+1)·d_k], K_j = k[:, j·d_k:(j+1)·d_k],
// V_j = v[:, j·d_h:(j+1)·d_h] and O_i = out[:, i·d_h:(i+1)·d_h]. Mask,
// accuracy, special values, aliasing, allocation and concurrency are
// MultiHead's; GroupedQuery(out, q, k, v, h, h, mask, ws) is
// MultiHead(out, q, k, v, h, mask, ws). It panics, before any work, unless
// kvHeads ≥ 1 divides heads and the shapes agree, and as MultiHead does.
func GroupedQuery(out, q, k, v kernels.Matrix, heads, kvHeads int, mask Masking, ws *Workspace) {
	const name = "GroupedQuery"
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
	checkMultiHeadArgs(name, out, q, k, v, mask)
	ws.attend(out, nil, q, k, v, heads, kvHeads, mask == Causal)
}

// checkMultiHeadArgs panics if out overlaps an input or mask is not a Masking.
func checkMultiHeadArgs(name string, out, q, k, v kernels.Matrix, mask Masking) {
	if mask > Causal {
		panicf("%s: mask %d is not a Masking", name, mask)
	}
	o := span(&out)
	checkDisjoint(name, "out", o, "q", span(&q))
	checkDisjoint(name, "out", o, "k", span(&k))
	checkDisjoint(name, "out", o, "v", span(&v))
}

// attend runs a validated call; lse, unless nil, gets the logsumexp of
// each head's rows (heads×T).
func (ws *Workspace) attend(out kernels.Matrix, lse []float32, q, k, v kernels.Matrix, heads, kvHeads int, causal bool) {
	if ws == nil {
		ws = new(Workspace)
	}
	ws.busy.Enter("attention.Workspace")
	defer ws.busy.Exit()
	T, S := q.Rows, k.Rows
	if T == 0 || out.Cols == 0 && lse == nil {
		return
	}
	dk, dh := q.Cols/heads, v.Cols/kvHeads
	p := multiHeadPlan(T, S, dk, dh, heads, kvHeads, lse != nil)
	if p.direct {
		ws.direct(out, q, k, v, heads, kvHeads, causal)
		return
	}
	bq, bk, parts, phaseHeads := p.bq, p.bk, p.parts, p.phaseHeads
	qblocks, kblocks := (T+bq-1)/bq, (S+bk-1)/bk
	if n := phaseHeads * kblocks; len(ws.packK) < n {
		ws.packK = append(ws.packK, make([]kernels.PackedB, n-len(ws.packK))...)
		ws.packV = append(ws.packV, make([]kernels.PackedB, n-len(ws.packV))...)
		ws.finite = append(ws.finite, make([]bool, n-len(ws.finite))...)
	}
	if len(ws.tiles) < parts {
		ws.tiles = append(ws.tiles, make([]tileScratch, parts-len(ws.tiles))...)
	}
	for i := range ws.tiles[:parts] {
		t := &ws.tiles[i]
		t.scores = grow(t.scores, bq*bk)
		t.max = grow(t.max, bq)
		t.sum = grow(t.sum, bq)
		t.mOld = grow(t.mOld, bq)
		t.add = grow(t.add, bq)
	}
	if causal {
		ws.zeros = grow(ws.zeros, v.Cols/kvHeads)
		clear(ws.zeros)
	}
	ws.out, ws.q, ws.k, ws.v, ws.lse = out, q, k, v, lse
	ws.heads, ws.group, ws.T, ws.S, ws.bq, ws.bk = heads, heads/kvHeads, T, S, bq, bk
	ws.qblocks, ws.causal = qblocks, causal
	ws.kvHeads, ws.kblocks, ws.diag = kvHeads, kblocks, p.diag
	ws.alpha = float32(1 / math.Sqrt(float64(dk)))
	// Pack every block of keys and values of a phase once, then run the
	// phase's jobs.
	for kv0 := 0; kv0 < kvHeads; kv0 += phaseHeads {
		ws.kv0, ws.kv1 = kv0, min(kvHeads, kv0+phaseHeads)
		ws.next.Store(0)
		runParallel((*wsPacker)(ws), min(parts, (ws.kv1-kv0)*kblocks), &ws.wg)
		ws.next.Store(0)
		runParallel(ws, min(parts, (ws.kv1-kv0)*ws.group*qblocks), &ws.wg)
	}
	ws.out, ws.q, ws.k, ws.v, ws.lse = kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, nil
}

// run takes the phase's jobs until none is left: with h the phase's query
// heads from h0, job j is head h0 + j mod h of query block qblocks−1−j/h,
// the blocks with the most keys first (when causal).
func (ws *Workspace) run(p int) {
	t := &ws.tiles[p]
	h0, h := ws.kv0*ws.group, (ws.kv1-ws.kv0)*ws.group
	jobs := int64(h * ws.qblocks)
	for {
		j := ws.next.Add(1) - 1
		if j >= jobs {
			return
		}
		ws.block(t, h0+int(j)%h, ws.qblocks-1-int(j)/h)
	}
}

// wsPacker is a Workspace whose parts pack the blocks of keys and values.
type wsPacker Workspace

// run takes the phase's packing jobs until none is left: job j packs block
// j mod kblocks of KV head kv0 + j/kblocks into slot j.
func (p *wsPacker) run(int) {
	ws := (*Workspace)(p)
	dk, dh := ws.k.Cols/ws.kvHeads, ws.v.Cols/ws.kvHeads
	jobs := int64((ws.kv1 - ws.kv0) * ws.kblocks)
	for {
		j := ws.next.Add(1) - 1
		if j >= jobs {
			return
		}
		kv, b := ws.kv0+int(j)/ws.kblocks, int(j)%ws.kblocks
		s0, s1 := b*ws.bk, min(ws.S, (b+1)*ws.bk)
		ws.packK[j].Pack(kernels.Trans, rows(cols(ws.k, kv*dk, (kv+1)*dk), s0, s1))
		vb := rows(cols(ws.v, kv*dh, (kv+1)*dh), s0, s1)
		ws.packV[j].Pack(kernels.NoTrans, vb)
		if ws.causal {
			// Keys a query does not see must not enter its output even
			// when their values are not finite (0·Inf): on the diagonal,
			// such a block takes each row's visible keys one row at a time.
			// The rows were just read, so the check reads them in cache.
			ws.finite[j] = true
			for s := range vb.Rows {
				if kernels.Dot(row(vb, s), ws.zeros) != 0 {
					ws.finite[j] = false
					break
				}
			}
		}
	}
}

// seen returns how many keys query t sees.
func (ws *Workspace) seen(t int) int {
	if !ws.causal {
		return ws.S
	}
	return min(ws.S, max(0, t+ws.S-ws.T+1))
}

// block computes the output rows of query block qb for head i.
func (ws *Workspace) block(t *tileScratch, i, qb int) {
	heads := ws.heads
	dk, dh := ws.q.Cols/heads, ws.out.Cols/heads
	kv := i / ws.group
	t0, t1 := qb*ws.bq, min(ws.T, (qb+1)*ws.bq)
	h := t1 - t0
	qi := rows(cols(ws.q, i*dk, (i+1)*dk), t0, t1)
	vi := cols(ws.v, kv*dh, (kv+1)*dh)
	oi := rows(cols(ws.out, i*dh, (i+1)*dh), t0, t1)
	mx, sum := t.max[:h], t.sum[:h]
	ninf := float32(math.Inf(-1))
	// When every row sees the first key, the products of the first block
	// of keys set the output rows (β = 0) instead of adding to them, so the
	// rows are not cleared first.
	set := !ws.causal || ws.T <= ws.S
	for r := range h {
		if !set {
			clear(row(oi, r))
		}
		mx[r], sum[r] = ninf, 0
	}
	last := ws.seen(t1 - 1) // keys seen by the last query
	for s0 := 0; s0 < last; s0 += ws.bk {
		s1 := min(last, s0+ws.bk)
		j := (kv-ws.kv0)*ws.kblocks + s0/ws.bk
		pk, pv := &ws.packK[j], &ws.packV[j]
		beta := float32(1)
		if set && s0 == 0 {
			beta = 0
		}
		// Rows before lo see no key of this block (causal): they are left
		// out of both products.
		lo := 0
		if ws.causal {
			lo = min(h-1, max(0, s0+ws.T-ws.S-t0))
		}
		for r0 := lo; r0 < h; {
			// Rows r0…r1−1 against the keys s0…s0+w−1 their last row sees:
			// all remaining rows when row r0 sees the whole block, else
			// ws.diag rows.
			r1 := h
			if ws.seen(t0+r0) < s1 {
				r1 = min(h, r0+ws.diag)
			}
			w := min(s1, ws.seen(t0+r1-1)) - s0
			sc := kernels.Matrix{Rows: r1 - r0, Cols: w, Stride: ws.bk, Data: t.scores[:(r1-r0-1)*ws.bk+w]}
			// cut: row r0 does not see every key of the products, and row
			// r0+i sees the first d+i of them (the staircase of the mask),
			// so the products leave out the tiles past it.
			cut := s0+w > ws.seen(t0+r0)
			d := t0 + r0 + ws.S - ws.T + 1 - s0
			if cut {
				t.gemm.GemmPackedBand(kernels.NoTrans, ws.alpha, rows(qi, r0, r1), pk, 0, sc, d, kernels.BandColumns)
			} else {
				t.gemm.GemmPacked(kernels.NoTrans, ws.alpha, rows(qi, r0, r1), pk, 0, sc)
			}
			// Row r sees min(w, max(0, d+r−r0)) keys of the group's w
			// (all w when not causal).
			lim := w
			if ws.causal {
				lim = d
			}
			copy(t.mOld, mx[r0:r1])
			kernels.OnlineSoftmaxBand(sc, lim, mx[r0:r1], t.add)
			for r := r0; r < r1; r++ {
				rescale(t.mOld[r-r0], mx[r], t.add[r-r0], &sum[r], row(oi, r))
			}
			switch {
			case !cut:
				t.gemm.GemmPacked(kernels.NoTrans, 1, sc, pv, beta, rows(oi, r0, r1))
			case ws.finite[j]:
				t.gemm.GemmPackedBand(kernels.NoTrans, 1, sc, pv, beta, rows(oi, r0, r1), d, kernels.BandInner)
			default:
				// Some values are not finite: a query's output takes only
				// the keys it sees.
				for r := r0; r < r1; r++ {
					if beta == 0 {
						clear(row(oi, r))
					}
					if n := min(w, max(0, ws.seen(t0+r)-s0)); n > 0 {
						kernels.MatTVecAdd(row(oi, r), rows(vi, s0, s0+n), row(sc, r-r0)[:n])
					}
				}
			}
			r0 = r1
		}
	}
	for r := range h {
		if l := sum[r]; l != 0 {
			kernels.Scale(row(oi, r), float32(1/float64(l)), row(oi, r))
		}
	}
	if ws.lse != nil {
		lse := ws.lse[i*ws.T+t0 : i*ws.T+t1]
		for r := range h {
			lse[r] = logSumExp(mx[r], sum[r])
		}
	}
}

// logSumExp returns m + ln l, the logsumexp of a row whose running max is m
// and sum l = Σ e^(x−m), rounded once from float64: −Inf when l = 0 (the
// row saw no key, or only scores of −Inf), NaN when m is NaN, +Inf when m
// is +Inf.
func logSumExp(m, l float32) float32 {
	if l == 0 {
		return float32(math.Inf(-1))
	}
	return float32(float64(m) + math.Log(float64(l)))
}

// rescale folds a query's block into its running sum l and output row o, once
// kernels.OnlineSoftmaxBand has turned the block's scores into weights
// e^(x−m) against the new max m (from mOld) with sum add: o, accumulated
// against mOld, is scaled by e^(mOld−m) when the max rises, and
// l = l·e^(mOld−m) + add. Special values: a NaN max makes l and o NaN;
// while every score so far is −Inf, l stays 0 and o zero.
func rescale(mOld, m, add float32, l *float32, o []float32) {
	switch {
	case m == mOld:
		*l += add
	case math.IsInf(float64(mOld), -1):
		*l = add // o is still zero
	default:
		f := float32(math.Exp(float64(mOld) - float64(m)))
		kernels.Scale(o, f, o)
		*l = *l*f + add
	}
}
