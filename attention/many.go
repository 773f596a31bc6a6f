package attention

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// AttendMany runs B attention steps against the Memory in one call: row b of
// queries (B×d_q) gives row b of weights (B×S) and of context (B×d_v), exactly
// as Attend would. This is the call for teacher forcing or a beam search: the
// scores of all queries come from one kernels.MatVecBatch over the keys (for
// Bahdanau, q = W₁h for all queries from one MatVecBatch over W₁, then the
// fused score of every query on each L1-sized block of K in turn) and the
// contexts from one kernels.MatVecBatch over Vᵀ, so each key and value is read
// from memory once for several queries.
//
// Vᵀ is a per-sequence cache, built by the second AttendMany after NewMemory
// or Reset (S·d_v copies, allocating if the buffer is too small): the first
// call, all that teacher forcing makes, forms the contexts without it, one
// kernels.MatTVec per query on each L1-sized block of values in turn. It
// panics unless the three matrices have B rows and the widths above.
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
	if !m.many {
		// The first call of a sequence (teacher forcing makes only one):
		// cheaper without building Vᵀ.
		m.many = true
		m.manyContext(context, scores)
		return
	}
	m.transposeValues()
	kernels.MatVecBatch(context, cols(m.valT, 0, n), scores)
}

// manyBlock is the number of bytes of keys or values the block loops of
// AttendMany read per block: small enough to stay in L1 while every query
// uses them (a variable so that tests can force blocks).
var manyBlock = 16 << 10

// manyBlockRows returns the rows of a per-block loop over a with stride
// stride: at least one.
func manyBlockRows(stride int) int { return max(1, manyBlock/(4*max(stride, 1))) }

// manyContext sets row b of context to the w-weighted sum of the values for
// each row b of w (B×n), block by block of values, each block used by every
// query while it is in L1.
func (m *Memory) manyContext(context, w kernels.Matrix) {
	n := w.Cols
	for b := range w.Rows {
		clear(row(context, b))
	}
	blk := manyBlockRows(m.values.Stride)
	for lo := 0; lo < n; lo += blk {
		hi := min(n, lo+blk)
		v := rows(m.values, lo, hi)
		for b := range w.Rows {
			kernels.MatTVec(row(context, b), v, row(w, b)[lo:hi])
		}
	}
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
		// Block by block of K, each block scored for every query while it
		// is in L1.
		blk := manyBlockRows(m.proj.Stride)
		for lo := 0; lo < n; lo += blk {
			hi := min(n, lo+blk)
			k := rows(m.proj, lo, hi)
			for b := range B {
				kernels.AdditiveScore(row(scores, b)[lo:hi], k, row(qm, b), m.sc.v)
			}
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
	// The stride is a whole number of 64-byte lines plus one, so that the
	// rows MatVecBatch reads together do not all map to the same L1 sets.
	ld := (S+15)/16*16 + 16
	m.valT = kernels.Matrix{Rows: dv, Cols: S, Stride: ld, Data: grow(m.valT.Data, ld*dv)}
	transpose(m.valT.Data, ld, m.values)
	m.valTOK = true
}

// transpose sets t[j·ld+s] = v[s][j] for every element of v. Eight source
// rows at a time, each read sequentially: every step writes eight
// consecutive floats of one row of t.
func transpose(t []float32, ld int, v kernels.Matrix) {
	S, dv := v.Rows, v.Cols
	s := 0
	for ; s+8 <= S; s += 8 {
		r0, r1 := row(v, s)[:dv], row(v, s+1)[:dv]
		r2, r3 := row(v, s+2)[:dv], row(v, s+3)[:dv]
		r4, r5 := row(v, s+4)[:dv], row(v, s+5)[:dv]
		r6, r7 := row(v, s+6)[:dv], row(v, s+7)[:dv]
		for j := range r0 {
			d := t[j*ld+s : j*ld+s+8 : j*ld+s+8]
			d[0], d[1], d[2], d[3] = r0[j], r1[j], r2[j], r3[j]
			d[4], d[5], d[6], d[7] = r4[j], r5[j], r6[j], r7[j]
		}
	}
	for ; s < S; s++ {
		for j, x := range row(v, s)[:dv] {
			t[j*ld+s] = x
		}
	}
}
