package attention

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// AttendMany runs B attention steps against the Memory in one call: row b of
// queries (B×d_q) gives row b of weights (B×S) and of context (B×d_v), exactly
// as Attend would. This is the call for teacher forcing or a beam search: the
// scores of all queries come from one kernels.MatVecBatch over the keys (for
// Bahdanau, q = W₁h for all queries from one MatVecBatch over W₁, then one fused
// score pass per query) and the contexts from one kernels.MatVecBatch over
// Vᵀ, so each key and value is read once for several queries.
//
// Vᵀ is a per-sequence cache: the first AttendMany after NewMemory or Reset
// builds it (S·d_v copies, allocating if the buffer is too small). It panics
// unless the three matrices have B rows and the widths above.
func (m *Memory) AttendMany(weights, context, queries kernels.Matrix) {
	name := m.sc.String()
	checkMatrix(name, "weights", weights)
	checkMatrix(name, "context", context)
	checkMatrix(name, "queries", queries)
	B, S, dv, qd := queries.Rows, m.keys.Rows, m.values.Cols, m.QueryDim()
	if queries.Cols != qd || weights.Rows != B || weights.Cols != S || context.Rows != B || context.Cols != dv {
		panicf("%s: queries is %d×%d, weights %d×%d, context %d×%d; want queries B×%d, weights B×%d, context B×%d",
			name, queries.Rows, queries.Cols, weights.Rows, weights.Cols, context.Rows, context.Cols, qd, S, dv)
	}
	if B == 0 {
		return
	}
	if B == 1 { // no reads to share: a plain step, without building Vᵀ
		m.attend(row(weights, 0), row(context, 0), row(queries, 0))
		return
	}
	n := m.valid
	any := n > 0
	if any && m.mask != nil {
		any = false
		for _, ok := range m.mask[:n] {
			any = any || ok
		}
	}
	for b := range B {
		clear(row(weights, b)[n:])
	}
	if !any {
		for b := range B {
			clear(row(weights, b))
			clear(row(context, b))
		}
		return
	}
	scores := cols(weights, 0, n)
	m.manyScores(scores, queries)
	for b := range B {
		x := row(scores, b)
		m.applyMask(x, 0)
		kernels.Softmax(x, x)
	}
	m.transposeValues()
	kernels.MatVecBatch(context, cols(m.valT, 0, n), scores)
}

// manyScores sets row b of scores (B×n) to the scores of keys [0, n) against
// query b.
func (m *Memory) manyScores(scores, queries kernels.Matrix) {
	B, n, dk := queries.Rows, scores.Cols, m.keys.Cols
	keys := rows(m.keys, 0, n)
	switch m.sc.kind {
	case kindDot:
		kernels.MatVecBatch(scores, keys, queries)
	case kindCosine:
		kernels.MatVecBatch(scores, keys, queries)
		for b := range B {
			h, x := row(queries, b), row(scores, b)
			inv := float32(0)
			if nrm := math.Sqrt(float64(kernels.Dot(h, h))); nrm > 0 {
				inv = float32(1 / nrm)
			}
			for s, k := range m.invNorm[:n] {
				x[s] *= k * inv
			}
		}
	case kindScaled:
		qm := m.manyBuf(B, dk)
		scale := float32(1 / math.Sqrt(float64(dk)))
		for b := range B {
			q := row(qm, b)
			copy(q, row(queries, b))
			kernels.Scale(scale, q)
		}
		kernels.MatVecBatch(scores, keys, qm)
	case kindGeneral:
		qm := m.manyBuf(B, dk)
		for b := range B {
			u := row(qm, b)
			clear(u)
			kernels.MatTVec(u, m.sc.w, row(queries, b))
		}
		kernels.MatVecBatch(scores, keys, qm)
	case kindAdditive:
		qm := m.manyBuf(B, m.sc.w.Rows)
		kernels.MatVecBatch(qm, m.sc.w, queries)
		k := rows(m.proj, 0, n)
		for b := range B {
			kernels.AdditiveScore(row(scores, b), k, row(qm, b), m.sc.v)
		}
	}
}

// manyBuf returns a B×d scratch matrix owned by the Memory.
func (m *Memory) manyBuf(B, d int) kernels.Matrix {
	m.qm = grow(m.qm, B*d)
	return kernels.Matrix{Rows: B, Cols: d, Stride: d, Data: m.qm}
}

// transposeValues builds the Vᵀ cache (d_v×S) unless it is current.
func (m *Memory) transposeValues() {
	if m.valTOK {
		return
	}
	S, dv := m.values.Rows, m.values.Cols
	m.valT = kernels.Matrix{Rows: dv, Cols: S, Stride: S, Data: grow(m.valT.Data, S*dv)}
	// Sixteen rows at a time: each destination write fills a whole 64-byte
	// line of Vᵀ, and the sixteen source rows are read sequentially.
	t := m.valT.Data
	s := 0
	for ; s+16 <= S; s += 16 {
		var r [16][]float32
		for i := range r {
			r[i] = row(m.values, s+i)[:dv]
		}
		for j := range dv {
			d := t[j*S+s : j*S+s+16 : j*S+s+16]
			for i := range d {
				d[i] = r[i][j]
			}
		}
	}
	for ; s < S; s++ {
		for j, x := range row(m.values, s) {
			t[j*S+s] = x
		}
	}
	m.valTOK = true
}
