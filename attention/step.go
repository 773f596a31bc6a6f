package attention

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/heedml/heed/kernels"
)

// Attend runs one attention step for query h: it sets weights (length S) to
//
//	α = softmax(score(h, h̄_s))   over the attended keys, 0 elsewhere,
//
// and context (length d_v) to c = Σ_s α_s·value_s. Both are written into the
// caller's slices; nothing is allocated. A fully masked query (valid length 0,
// or a mask excluding every valid key) gets all-zero weights and context.
//
// The scores are computed in one matrix-vector pass (MatVec or AdditiveScore)
// directly into weights, the softmax runs in place, and one transposed
// matrix-vector pass forms the context. For long sequences (S in the
// thousands, with GOMAXPROCS > 1) the keys are split into contiguous parts
// (a few per goroutine, taken dynamically so that a descheduled goroutine's
// share is picked up by the others) scored on GOMAXPROCS goroutines, each part
// keeping its own max m_p, sum
// l_p = Σ e^(score−m_p) and unnormalised context; the parts are then merged
// exactly (the flash-decoding rule): with M = max m_p and
// L = Σ_p l_p·e^(m_p−M), part p's weights and context are scaled by
// e^(m_p−M)/L and the contexts summed.
//
// It panics unless len(h) is the query length, len(weights) = S and
// len(context) = d_v. weights and context must not overlap each other, h, or
// the Memory's matrices.
func (m *Memory) Attend(weights, context, h []float32) {
	m.checkStep(weights, context, h)
	if parts := m.splitParts(); parts > 1 {
		m.attendSplit(weights, context, h, parts)
		return
	}
	m.attend(weights, context, h)
}

// Scores sets dst (length S) to the raw scores score(h, h̄_s) of the step for
// query h, before the softmax: −Inf for masked and padding keys. It panics
// unless len(h) is the query length and len(dst) = S.
func (m *Memory) Scores(dst, h []float32) {
	if qd := m.QueryDim(); len(h) != qd {
		panicf("%s: len(query)=%d, want %d", m.sc, len(h), qd)
	}
	if len(dst) != m.keys.Rows {
		panicf("%s: len(scores)=%d, want S=%d", m.sc, len(dst), m.keys.Rows)
	}
	n := m.valid
	for i := n; i < len(dst); i++ {
		dst[i] = float32(math.Inf(-1))
	}
	if n > 0 {
		m.rowScores(dst[:n], m.prepareQuery(h), 0)
		m.applyMask(dst[:n], 0)
	}
}

// attend is a step on the calling goroutine, for validated arguments.
func (m *Memory) attend(weights, context, h []float32) {
	n := m.valid
	x := weights[:n]
	clear(weights[n:])
	clear(context)
	if n == 0 {
		return
	}
	qv := m.prepareQuery(h)
	m.rowScores(x, qv, 0)
	if !m.applyMask(x, 0) {
		clear(x)
		return
	}
	kernels.Softmax(x, x)
	kernels.MatTVec(context, rows(m.values, 0, n), x)
}

// Split thresholds: a part has at least splitMinRows keys and the step at
// least splitMinWork multiply-adds. Variables so that tests can force splits.
var (
	splitMinRows = 1024
	splitMinWork = 1 << 19
)

// splitParts returns how many parts a step's keys are split into: 1 (no
// split) on one processor or for short sequences, else at most four per
// processor, each of at least splitMinRows keys.
func (m *Memory) splitParts() int {
	n := m.valid
	if n < 2*splitMinRows || n*(m.keys.Cols+m.values.Cols) < splitMinWork {
		return 1
	}
	p := procs() // after the cheap tests: it takes the scheduler's lock
	if p < 2 {
		return 1
	}
	return min(4*p, n/splitMinRows)
}

// splitter is the state of a split step: one part per goroutine.
type splitter struct {
	m       *Memory
	weights []float32
	qv      []float32
	parts   int          // parts of the keys
	next    atomic.Int64 // the next part to take
	ones    []float32    // all 1: Axpy(−m, ones, x) subtracts m from x
	ctx     []float32    // parts×d_v unnormalised partial contexts
	max     []float32    // m_p, or −Inf for a fully masked part
	sum     []float32    // l_p
	wg      sync.WaitGroup
}

// bounds returns the key range of part p.
func (s *splitter) bounds(p int) (lo, hi int) {
	n := s.m.valid
	return p * n / s.parts, (p + 1) * n / s.parts
}

// run takes parts until none is left.
func (s *splitter) run(int) {
	for {
		p := int(s.next.Add(1) - 1)
		if p >= s.parts {
			return
		}
		s.part(p)
	}
}

// part scores part p and leaves e^(score−m_p) in its weights, m_p, l_p and the
// unnormalised context Σ e^(score−m_p)·value_s.
func (s *splitter) part(p int) {
	m := s.m
	lo, hi := s.bounds(p)
	x := s.weights[lo:hi]
	dv := m.values.Cols
	ctx := s.ctx[p*dv : (p+1)*dv]
	clear(ctx)
	s.max[p], s.sum[p] = float32(math.Inf(-1)), 0
	m.rowScores(x, s.qv, lo)
	if !m.applyMask(x, lo) {
		clear(x)
		return
	}
	mp := kernels.Max(x)
	s.max[p] = mp
	if math.IsNaN(float64(mp)) || math.IsInf(float64(mp), 0) {
		return // the merge redoes the step serially
	}
	kernels.Axpy(-mp, s.ones[:len(x)], x)
	kernels.Exp(x, x)
	s.sum[p] = kernels.Sum(x)
	kernels.MatTVec(ctx, rows(m.values, lo, hi), x)
}

// attendSplit is Attend with the keys split into parts (flash decoding).
func (m *Memory) attendSplit(weights, context, h []float32, parts int) {
	s := &m.split
	n, dv := m.valid, m.values.Cols
	s.m, s.weights, s.parts = m, weights, parts
	s.qv = m.prepareQuery(h)
	chunk := (n + parts - 1) / parts
	if len(s.ones) < chunk {
		s.ones = grow(s.ones, chunk)
		for i := range s.ones {
			s.ones[i] = 1
		}
	}
	s.ctx = grow(s.ctx, parts*dv)
	s.max = grow(s.max, parts)
	s.sum = grow(s.sum, parts)
	clear(weights[n:])
	s.next.Store(0)
	runParallel(s, min(procs(), parts), &s.wg)
	s.weights, s.qv = nil, nil

	mx := float32(math.Inf(-1))
	for _, mp := range s.max {
		if math.IsNaN(float64(mp)) || math.IsInf(float64(mp), 1) {
			m.attend(weights, context, h) // NaN or +Inf scores: the softmax's special rules
			return
		}
		mx = max(mx, mp)
	}
	clear(context)
	if math.IsInf(float64(mx), -1) {
		clear(weights)
		return
	}
	var total float64
	for p, mp := range s.max {
		total += float64(s.sum[p]) * math.Exp(float64(mp)-float64(mx))
	}
	for p, mp := range s.max {
		lo, hi := s.bounds(p)
		f := float32(math.Exp(float64(mp)-float64(mx)) / total)
		kernels.Scale(f, weights[lo:hi])
		kernels.Axpy(f, s.ctx[p*dv:(p+1)*dv], context)
	}
}
