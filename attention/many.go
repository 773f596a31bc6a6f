package attention

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// AttendMany runs B attention steps against the Memory in one call: row b of
// queries (B×d_q) gives row b of weights (B×S) and of context (B×d_v), each
// the step Attend defines for that query (masks and special values included)
// and within Attend's error bound of the exact step. It computes the scores
// and sums in another order than Attend, so a row need not equal Attend's
// result bit for bit: the two differ by at most the sum of their bounds.
//
// With many queries the scores and the contexts are each one matrix product
// (kernels.Gemm, kernels.GemmPacked), which may run on kernels' worker
// goroutines and returns when they are done, over Kᵀ and the values
// (Bahdanau's scores are not a product). The first call since the keys
// changed packs neither for later: its products read the keys (packing
// each panel of Kᵀ as it goes) and the values where they are; a later call
// packs both once into kernels.PackedB operands the Memory keeps and reuses
// them. With fewer queries (but B > 1) a later call (an AttendMany with
// B > 1 has run since NewMemory, Reset or Append) reads a Vᵀ cache. The call
// that first needs a cache builds it (S·d_k or S·d_v copies, allocating if
// the buffer is too small); a change of the keys (Reset, Append) drops them.
//
// On keys and values stored in a narrower Format (NewEmptyMemory, NewMemoryFormat)
// a few queries run as Attend steps in turn (then each row is Attend's
// result, and a long step may split over the worker goroutines as Attend
// does). More queries share the reads: the stored rows are read twice (keys,
// then values), a block at a time widened into a float32 scratch the Memory
// keeps (about 64 KiB, at least one row) that every query then uses, the
// contexts of many queries by one Gemm per block; no Kᵀ or Vᵀ cache is
// built. Either way each row is within the bound the Format states for
// Attend: Attend's bound for the float32 step on the stored values, plus the
// storage rounding (the scores' term Σ_i|k̂_si − k_si|·|q_i| as part of E, the
// context's Σ_s α_s·|v̂_sj − v_sj|); a Q8 value, widened as kernels.FromQ8
// does, is Scale·Q rounded once to float32, which that bound covers.
//
// Beyond building a cache, AttendMany allocates nothing once its query
// scratch (B rows of the projected or scaled queries), the widening scratch
// of a stored Memory and kernels.Gemm's packing buffers are warm. weights and
// context must not overlap each other, queries, or the Memory's matrices. It
// panics unless the three matrices have B rows and the widths above. A Memory
// is not safe for concurrent use.
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
	m.checkOutputs("weights", span(&weights), "context", span(&context), "queries", span(&queries))
	m.busy.Enter("attention.Memory")
	defer m.busy.Exit()
	if B == 0 {
		return
	}
	if B == 1 { // no reads to share: a plain step, without building Vᵀ
		m.step(m.plan(callStep, 1), row(weights, 0), row(context, 0), row(queries, 0))
		return
	}
	p := m.plan(callMany, B)
	if p.route == routeManySteps {
		for b := range B {
			m.step(m.plan(callAttend, 1), row(weights, b), row(context, b), row(queries, b))
		}
		return
	}
	if p.route == routeNone {
		for b := range B {
			clear(row(weights, b))
			clear(row(context, b))
		}
		return
	}
	n := m.valid
	for b := range B {
		clear(row(weights, b)[n:])
	}
	first := !m.many
	if first { // the first call since the keys changed: the packed caches are stale
		m.packKOK, m.packVOK = false, false
	}
	scores := cols(weights, 0, n)
	m.manyScores(scores, queries, p)
	for b := range B {
		x := row(scores, b)
		m.applyMask(x, 0)
		kernels.Softmax(x, x)
	}
	m.many = true
	switch p.route {
	case routeManyWidened:
		m.widenedContext(context, scores, p)
		return
	case routeManyGemm:
		if first {
			// The first call reads the values where they are: packing
			// them would read and write them all once more for one
			// product. Later calls pack them once and reuse them.
			var v kernels.PackedB
			v.Ref(m.values)
			kernels.GemmPacked(kernels.NoTrans, 1, scores, &v, 0, context)
			return
		}
		kernels.GemmPacked(kernels.NoTrans, 1, scores, m.packedValues(), 0, context)
		return
	case routeManyBlocked:
		m.manyContext(context, scores, p.block)
		return
	}
	m.transposeValues()
	kernels.MatVecBatch(context, cols(m.valT, 0, n), scores)
}

// manyContext sets row b of context to the w-weighted sum of the values for
// each row b of w (B×n), blk rows of values at a time, each block used by every
// query in turn.
func (m *Memory) manyContext(context, w kernels.Matrix, blk int) {
	n := w.Cols
	for b := range w.Rows {
		clear(row(context, b))
	}
	for lo := 0; lo < n; lo += blk {
		hi := min(n, lo+blk)
		v := rows(m.values, lo, hi)
		for b := range w.Rows {
			kernels.MatTVecAdd(row(context, b), v, row(w, b)[lo:hi])
		}
	}
}

// manyScores sets row b of scores (B×n) to the scores of keys [0, n) against
// query b; Bahdanau scores are taken kblk rows of K at a time, each block
// scored for every query in turn.
func (m *Memory) manyScores(scores, queries kernels.Matrix, p plan) {
	kblk := p.kblock
	B, n, dk := queries.Rows, scores.Cols, m.keys.Cols
	switch m.sc.kind {
	case kindDot:
		m.queryKeys(scores, queries, p)
	case kindCosine:
		qm := m.manyBuf(B, dk)
		for b := range B {
			unitQuery(row(qm, b), row(queries, b))
		}
		m.queryKeys(scores, qm, p)
		for b := range B {
			m.cosineScores(row(scores, b), row(qm, b), 0)
		}
	case kindScaled:
		qm := m.manyBuf(B, dk)
		scale := float32(1 / math.Sqrt(float64(dk)))
		for b := range B {
			q := row(qm, b)
			copy(q, row(queries, b))
			kernels.Scale(q, scale, q)
		}
		m.queryKeys(scores, qm, p)
	case kindGeneral:
		qm := m.manyBuf(B, dk)
		if p.route == routeManyGemm || p.gemm {
			kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, queries, m.sc.w, 0, qm)
		} else {
			for b := range B {
				u := row(qm, b)
				clear(u)
				kernels.MatTVecAdd(u, m.sc.w, row(queries, b))
			}
		}
		m.queryKeys(scores, qm, p)
	case kindAdditive:
		qm := m.manyBuf(B, m.sc.w.Rows)
		kernels.MatVecBatch(qm, m.sc.w, queries)
		for lo := 0; lo < n; lo += kblk {
			hi := min(n, lo+kblk)
			k := rows(m.proj, lo, hi)
			for b := range B {
				kernels.AdditiveScore(row(scores, b)[lo:hi], k, row(qm, b), m.sc.v)
			}
		}
	}
}

// queryKeys sets scores (B×n) to q·keysᵀ for keys [0, n): when the plan says
// so (p.keysT), one Gemm against the keys on the first call since they
// changed and one GemmPacked over the packed Kᵀ on later calls; one
// MatVecBatch over each widened block of stored keys (routeManyWidened); else
// one MatVecBatch.
func (m *Memory) queryKeys(scores, q kernels.Matrix, p plan) {
	n := scores.Cols
	switch {
	case p.route == routeManyWidened:
		for lo := 0; lo < n; lo += p.block {
			hi := min(n, lo+p.block)
			kernels.MatVecBatch(cols(scores, lo, hi), m.st.widened(&m.st.k, lo, hi), q)
		}
	case p.keysT && !m.many:
		// The first call since the keys changed: Gemm packs each panel of
		// Kᵀ just before its tiles into a buffer that stays in cache, where
		// packing all of Kᵀ for later calls would write it all once more.
		kernels.Gemm(kernels.NoTrans, kernels.Trans, 1, q, rows(m.keys, 0, n), 0, scores)
	case p.keysT:
		kernels.GemmPacked(kernels.NoTrans, 1, q, m.packedKeys(), 0, scores)
	default:
		kernels.MatVecBatch(scores, rows(m.keys, 0, n), q)
	}
}

// widenedContext sets row b of context to the w-weighted sum of the stored
// values for each row b of w (B×n), p.block rows of values at a time, each
// block widened to float32 once and used by every query: by one Gemm per
// block that adds to the context (p.gemm), else by MatTVec per query.
func (m *Memory) widenedContext(context, w kernels.Matrix, p plan) {
	n := w.Cols
	for b := range w.Rows {
		clear(row(context, b))
	}
	vs := m.storedValues()
	for lo := 0; lo < n; lo += p.block {
		hi := min(n, lo+p.block)
		v := m.st.widened(vs, lo, hi)
		if p.gemm {
			kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, cols(w, lo, hi), v, 1, context)
			continue
		}
		for b := range w.Rows {
			kernels.MatTVecAdd(row(context, b), v, row(w, b)[lo:hi])
		}
	}
}

// packedKeys returns Kᵀ (d_k×S) packed for kernels.GemmPacked, packing it
// unless it is current.
func (m *Memory) packedKeys() *kernels.PackedB {
	if !m.packKOK {
		m.packK.Pack(kernels.Trans, m.keys)
		m.packKOK = true
	}
	return &m.packK
}

// packedValues returns the values (S×d_v) packed for kernels.GemmPacked,
// packing them unless they are current.
func (m *Memory) packedValues() *kernels.PackedB {
	if !m.packVOK {
		m.packV.Pack(kernels.NoTrans, m.values)
		m.packVOK = true
	}
	return &m.packV
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
