package attention

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// Attend runs one attention step for query h: it sets weights (length S) to
//
//	α_s = softmax(score(h, h̄_s))   over the attended keys, 0 elsewhere,
//
// and context (length d_v) to c = Σ_s α_s·value_s, overwriting both. The
// attended keys are those below the valid length that the mask, if any,
// admits; a step with none gives all-zero weights and context.
//
// Special values follow kernels.Softmax: a NaN score makes every weight NaN;
// if any score is +Inf, the keys scoring +Inf share the weight 1 equally and
// the others get 0; a score of −Inf gets weight 0. The context is then the
// weighted sum as written (a NaN or infinite value times a weight of 0 is NaN).
//
// Error bound: let n be the number of attended keys, u = 2⁻²⁴, and E the
// largest absolute error of an attended score (each score carries the bound of
// the kernels that compute it: γ_d·Σ_i|h_i·h̄_si| for Dot, γ_d = d·u/(1−d·u)).
// Each weight is within
//
//	α_s·((e^{2E} − 1) + e^{2E}·(|score_s − max_s score_s| + 2E + 2n + 8)·u) + 2⁻¹²⁶
//
// of the softmax of the exact scores (δα_s), and each context element c_j
// within Σ_s δα_s·|v_sj| + γ_{2n+5}·Σ_s (α_s + δα_s)·|v_sj| + n·2⁻¹⁴⁹.
// Results may differ in the last bits between ISAs, GOMAXPROCS settings and
// sequence lengths, each within this bound.
//
// weights and context must not overlap each other, h, or the Memory's
// matrices. Attend allocates nothing once the Memory's scratch space has
// grown to the step (a long step's first call may allocate it). It panics
// unless len(h) is the query length, len(weights) = S and len(context) = d_v.
// A Memory is not safe for concurrent use; a long step may run parts of
// itself on the package's worker goroutines and returns when they are done.
func (m *Memory) Attend(weights, context, h []float32) {
	m.checkStep(weights, context, h)
	m.busy.Enter("attention.Memory")
	defer m.busy.Exit()
	if m.panel() {
		// The step of routePanel with every key attended, without planning:
		// the kernels scoreContext would run, on the same data.
		clear(context)
		m.rowScores(weights, m.prepareQuery(h), 0)
		kernels.SoftmaxMatTVecAdd(context, m.values, weights)
		return
	}
	m.step(m.plan(callAttend, 1), weights, context, h)
}

// Scores sets dst (length S) to the raw scores score(h, h̄_s) of the step for
// query h, before the softmax: −Inf for keys that are masked or beyond the
// valid length. Each attended score is within the bound of the kernels that
// compute it (see Attend). dst must not overlap h or the Memory's matrices.
// It allocates nothing. It panics unless len(h) is the query length and
// len(dst) = S.
func (m *Memory) Scores(dst, h []float32) {
	if qd := m.QueryDim(); len(h) != qd {
		panicf("%s: len(query)=%d, want %d", m.sc, len(h), qd)
	}
	if len(dst) != m.keys.Rows {
		panicf("%s: len(scores)=%d, want S=%d", m.sc, len(dst), m.keys.Rows)
	}
	m.checkOutputs("scores", dst, "scores", nil, "query", h)
	m.busy.Enter("attention.Memory")
	defer m.busy.Exit()
	n := m.valid
	for i := n; i < len(dst); i++ {
		dst[i] = float32(math.Inf(-1))
	}
	if m.plan(callScores, 1).route == routeScores {
		m.rowScores(dst[:n], m.prepareQuery(h), 0)
		m.applyMask(dst[:n], 0)
	}
}

// step runs a validated step along p.
func (m *Memory) step(p plan, weights, context, h []float32) {
	n := m.valid
	switch p.route {
	case routeNone:
		clear(weights)
		clear(context)
	case routeSplit:
		m.attendSplit(p, weights, context, h)
	case routeStream:
		clear(weights[n:])
		clear(context)
		x := weights[:n]
		if st, ok := m.stream(context, x, m.prepareQuery(h), 0); ok {
			kernels.Softmax(x, x)
			kernels.Scale(context, 1/st.Sum, context)
			return
		}
		m.step(m.plan(callPlain, 1), weights, context, h) // a score is not finite: the softmax's rules
	default: // routePanel, routeBlocked
		m.scoreContext(p, weights, context, h)
	}
}

// scoreContext is a step along routePanel or routeBlocked: the scores into
// the weights, then their softmax and the context.
func (m *Memory) scoreContext(p plan, weights, context, h []float32) {
	n := m.valid
	clear(weights[n:])
	clear(context)
	x := weights[:n]
	m.rowScores(x, m.prepareQuery(h), 0)
	if !m.applyMask(x, 0) {
		clear(x)
		return
	}
	if p.route == routePanel {
		v := m.values
		if n != v.Rows { // masked or padded: the first n keys
			v = rows(v, 0, n)
		}
		kernels.SoftmaxMatTVecAdd(context, v, x)
		return
	}
	kernels.Softmax(x, x)
	m.addContext(context, x, 0, p.block)
}

// addContext adds to ctx the x-weighted sum of the values of keys [lo,
// lo+len(x)), taken in blocks of blk rows from the last, each block one
// MatTVec.
func (m *Memory) addContext(ctx, x []float32, lo, blk int) {
	hi := lo + len(x)
	for hi-lo > blk {
		m.matTVec(ctx, x[hi-blk-lo:hi-lo], hi-blk)
		hi -= blk
	}
	m.matTVec(ctx, x[:hi-lo], lo)
}

// stream runs DotSoftmaxMatTVec over keys [lo, lo+len(x)) from the empty
// state: the scores in x, their unnormalised context added to ctx. It reports
// false when a score is not finite.
func (m *Memory) stream(ctx, x, qv []float32, lo int) (kernels.SoftmaxState, bool) {
	if m.narrow() {
		return m.streamNarrow(ctx, x, qv, lo)
	}
	st := kernels.SoftmaxState{Max: float32(math.Inf(-1))}
	ok := kernels.DotSoftmaxMatTVec(ctx, x, rows(m.keys, lo, lo+len(x)), qv, &st)
	return st, ok
}
