package attention

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// direct computes a small MultiHead/GroupedQuery call (T·S ≤
// tune.multiHeadDirect) on the calling goroutine without tiles: for each
// head, the T×S scores by one MatVecBatch, then each query's scaled scores
// through one SoftmaxMatTVecAdd over the values of the keys it sees — Attend's
// panel route, query by query. On so small a problem the tiled route's
// packing and per-block folds cost more than the products. Its weights and
// context keep Attend's bounds, within the tiled bound MultiHead states, and
// its special values are the tiled route's.
func (ws *Workspace) direct(out, q, k, v kernels.Matrix, heads, kvHeads int, causal bool) {
	T, S := q.Rows, k.Rows
	dk, dh := q.Cols/heads, out.Cols/heads
	group := heads / kvHeads
	alpha := float32(1 / math.Sqrt(float64(dk)))
	ws.small = grow(ws.small, T*S)
	scores := kernels.Matrix{Rows: T, Cols: S, Stride: S, Data: ws.small[:T*S]}
	for i := range heads {
		kv := i / group
		qi, ki := cols(q, i*dk, (i+1)*dk), cols(k, kv*dk, (kv+1)*dk)
		vi, oi := cols(v, kv*dh, (kv+1)*dh), cols(out, i*dh, (i+1)*dh)
		if S > 0 {
			kernels.MatVecBatch(scores, ki, qi)
		}
		for t := range T {
			o := row(oi, t)
			clear(o)
			n := S
			if causal {
				n = min(S, max(0, t+S-T+1))
			}
			if n == 0 {
				continue
			}
			x := row(scores, t)[:n]
			kernels.Scale(x, alpha, x)
			kernels.SoftmaxMatTVecAdd(o, rows(vi, 0, n), x)
		}
	}
}
