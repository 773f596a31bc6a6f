package attention

import (
	"math"
	"sync"

	"github.com/heedml/heed/kernels"
)

// Workspace is caller-owned scratch space for [MultiHead]: it grows to the
// largest scores seen (T×S floats per goroutine used, at most GOMAXPROCS) and
// is then reused, so calls allocate nothing. The zero value is ready to use; a
// Workspace is not safe for concurrent use.
type Workspace struct {
	scores             []float32 // parts×T×S
	out, q, k, v       kernels.Matrix
	heads, parts, T, S int
	causal             bool
	wg                 sync.WaitGroup
}

// MultiHead sets out to multi-head scaled dot-product attention of the queries
// q (T×d), keys k (S×d) and values v (S×d_v) with the given number of heads.
// Head i uses the column blocks Q_i = q[:, i·d_k:(i+1)·d_k], K_i likewise
// (d_k = d/heads) and V_i = v[:, i·d_h:(i+1)·d_h] (d_h = d_v/heads), read in
// place through the strides, and writes its block O_i of out (T×d_v):
//
//	O_i = softmax(Q_i K_iᵀ / √d_k + M) · V_i
//
// where, if causal, M[t][s] = −∞ for s > t + S − T (query t sees the keys up to
// its own position, the last query the last key), and M = 0 otherwise. A query
// that sees no key (T > S, causal) gets a zero output. Each output row is
// within Memory.Attend's context bound for the scaled-dot step of that row of
// Q_i against the keys it sees (n = their number), and special values follow
// Attend's. Only out's T×d_v elements are written; out must not overlap the
// inputs. ws holds the scores; nil allocates them, otherwise nothing is
// allocated once ws has grown. The heads may run concurrently on the
// package's worker goroutines; MultiHead returns when all are done. It panics
// unless heads ≥ 1 divides d and d_v, k and v have the same rows, q and k the
// same columns, and out is T×d_v.
func MultiHead(out, q, k, v kernels.Matrix, heads int, causal bool, ws *Workspace) {
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
	if ws == nil {
		ws = new(Workspace)
	}
	T, S := q.Rows, k.Rows
	parts := multiHeadWorkers(T*S*(q.Cols+v.Cols), heads)
	ws.scores = grow(ws.scores, parts*T*S)
	ws.out, ws.q, ws.k, ws.v = out, q, k, v
	ws.heads, ws.parts, ws.T, ws.S, ws.causal = heads, parts, T, S, causal
	runParallel(ws, parts, &ws.wg)
	ws.out, ws.q, ws.k, ws.v = kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}
}

// run computes heads p, p+parts, p+2·parts, … with its own T×S scores.
func (ws *Workspace) run(p int) {
	T, S, q, k, v, out := ws.T, ws.S, ws.q, ws.k, ws.v, ws.out
	dk, dh := q.Cols/ws.heads, v.Cols/ws.heads
	scores := kernels.Matrix{Rows: T, Cols: S, Stride: S, Data: ws.scores[p*T*S : (p+1)*T*S]}
	scale := float32(1 / math.Sqrt(float64(dk)))
	for i := p; i < ws.heads; i += ws.parts {
		qi, ki := cols(q, i*dk, (i+1)*dk), cols(k, i*dk, (i+1)*dk)
		vi, oi := cols(v, i*dh, (i+1)*dh), cols(out, i*dh, (i+1)*dh)
		kernels.MatVecBatch(scores, ki, qi)
		for t := range T {
			n := S
			if ws.causal {
				n = min(S, max(0, t+S-T+1))
			}
			o := row(oi, t)
			clear(o)
			if n == 0 {
				continue
			}
			x := row(scores, t)[:n]
			kernels.Scale(scale, x)
			kernels.SoftmaxMatTVec(o, rows(vi, 0, n), x)
		}
	}
}
