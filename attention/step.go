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
// directly into weights. Up to 64 KiB of values, one SoftmaxMatTVec then
// turns them into the weights and forms the context: for up to 64 (AVX2) or
// 128 (AVX-512) values per key, after a max pass over the scores, one pass
// computes the exponentials eight keys at a time and adds those keys' values,
// held in registers, then scales the weights and the context by 1/Σ. Longer
// values take the softmax in place and then transposed matrix-vector passes
// (MatTVec) over blocks of 64 KiB of values, the last block first: when the
// values are the keys, the blocks the score pass read last are still in L2.
//
// Long steps are split into contiguous parts of the keys, each part keeping
// its own max m_p, sum l_p = Σ e^(score−m_p) and unnormalised context, merged
// exactly at the end (the flash-decoding rule): with M = max m_p and
// L = Σ_p l_p·e^(m_p−M), part p's weights and context are scaled by
// e^(m_p−M)/L and the contexts summed. For S in the thousands with
// GOMAXPROCS > 1 the parts (a few per goroutine, taken dynamically so that a
// descheduled goroutine's share is picked up by the others) run on GOMAXPROCS
// goroutines.
//
// When the values are the keys, the score is a dot product (Dot, ScaledDot,
// General), no key is masked and the values exceed 64 KiB, each part (the
// whole step on one processor) is one streaming pass (DotSoftmaxMatTVec):
// eight keys' scores, their exponentials against the running max (rescaling
// what came before when it rises) and their rows added to the context while
// they are in L1, so that the keys are read from L3 or memory once. The
// weights are then the softmax of the scores, and the context is scaled by
// the pass's 1/Σ. A score that is not finite sends the step to the rules
// above on one goroutine. Other steps whose values are the keys, and whose
// scorer reads them (all but Additive), are split into parts of at most
// 256 KiB of keys once those attended exceed 1 MiB, on one processor too: a
// part's context pass then finds its keys in L2.
//
// It panics unless len(h) is the query length, len(weights) = S and
// len(context) = d_v. weights and context must not overlap each other, h, or
// the Memory's matrices.
func (m *Memory) Attend(weights, context, h []float32) {
	n := m.valid
	if m.sc.kind == kindDot && m.mask == nil && n == len(weights) && n == m.keys.Rows && n > 0 &&
		len(h) == m.keys.Cols && len(context) == m.values.Cols && n < 2*splitMinRows &&
		n*m.values.Stride*4 <= streamMin { // no split, no stream: see splitParts and attend
		// The common Luong dot step, validated and without the general
		// path's dispatch: MatVec, then SoftmaxMatTVec.
		kernels.MatVec(weights, m.keys, h)
		clear(context)
		m.softmaxContext(context, weights)
		return
	}
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
	clear(context)
	x := weights[:n]
	clear(weights[n:])
	if n == 0 {
		return
	}
	qv := m.prepareQuery(h)
	if m.streams() && n*m.values.Stride*4 > streamMin {
		if st, ok := m.stream(context, x, qv, 0); ok {
			kernels.Softmax(x, x)
			kernels.Scale(1/st.Sum, context)
			return
		}
		clear(context) // a score is not finite: the softmax's rules below
	}
	m.rowScores(x, qv, 0)
	if !m.applyMask(x, 0) {
		clear(x)
		return
	}
	m.softmaxContext(context, x)
}

// softmaxContext sets the scores x of the first len(x) keys to their softmax
// and adds the x-weighted sum of their values to ctx: in one call
// (SoftmaxMatTVec) when the values fit in one of addContext's blocks, else the
// softmax and then addContext.
func (m *Memory) softmaxContext(ctx, x []float32) {
	if len(x)*m.values.Stride <= contextBlock/4 {
		v := m.values
		if len(x) != v.Rows { // masked or padded: the first len(x) keys
			v = rows(v, 0, len(x))
		}
		kernels.SoftmaxMatTVec(ctx, v, x)
		return
	}
	kernels.Softmax(x, x)
	m.addContext(ctx, x, 0)
}

// contextBlock is the number of bytes of values addContext reads per call
// (a variable so that tests can force blocks).
var contextBlock = 64 << 10

// addContext adds to ctx the x-weighted sum of the values of keys [lo,
// lo+len(x)). The score pass has just read the keys in order, so when the
// values are the keys the last ones read are still in L2: the values are
// taken in blocks from the last, each block one MatTVec (accumulating into ctx
// in a different order, within MatTVec's bound).
func (m *Memory) addContext(ctx, x []float32, lo int) {
	hi := lo + len(x)
	if len(x)*m.values.Stride <= contextBlock/4 {
		kernels.MatTVec(ctx, rows(m.values, lo, hi), x)
		return
	}
	blk := max(1, contextBlock/(4*m.values.Stride))
	for hi-lo > blk {
		kernels.MatTVec(ctx, rows(m.values, hi-blk, hi), x[hi-blk-lo:hi-lo])
		hi -= blk
	}
	kernels.MatTVec(ctx, rows(m.values, lo, hi), x[:hi-lo])
}

// Split thresholds: a part has at least splitMinRows keys and the step at
// least splitMinWork multiply-adds. Variables so that tests can force splits.
var (
	splitMinRows = 1024
	splitMinWork = 1 << 19
)

// chunkBytes is the size of keys a part of a long step holds at most when the
// values are the keys (a variable so that tests can force chunks): small
// enough that the context pass finds the part's keys still in L2, where the
// score pass left them, rather than reading them again from L3 or memory.
var chunkBytes = 256 << 10

// splitParts returns how many parts a step's keys are split into: 1 (no
// split) for short sequences; on several processors at most four parts per
// processor, each of at least splitMinRows keys; and, when the score pass
// reads the values (they are the keys, and the scorer is not Additive) and
// more than four parts' chunkBytes of them are attended, at least
// enough parts for each to stay within chunkBytes, also on one processor
// (where the parts run in turn).
func (m *Memory) splitParts() int {
	n := m.valid
	parts := 1
	if m.sameValues && m.sc.kind != kindAdditive && !m.streams() { // Additive scores read K, not the keys
		if b := n * m.keys.Stride * 4; b > 4*chunkBytes {
			parts = min(n, (b+chunkBytes-1)/chunkBytes)
		}
	}
	if n < 2*splitMinRows || n*(m.keys.Cols+m.values.Cols) < splitMinWork {
		return parts
	}
	p := procs() // after the cheap tests: it takes the scheduler's lock
	if p < 2 {
		return parts
	}
	return max(parts, min(4*p, n/splitMinRows))
}

// streamMin is the bytes of values above which a step that streams takes one
// pass over the keys (a variable so that tests can force or prevent it): from
// there the pass saves more than its rescalings cost.
var streamMin = 64 << 10

// streams reports whether the step's context can be formed in the same pass
// over the keys as its scores (DotSoftmaxMatTVec): the values are the keys,
// the score is the keys' dot product with the prepared query (Dot, ScaledDot,
// General), and no key is masked.
func (m *Memory) streams() bool {
	k := m.sc.kind
	return m.sameValues && m.mask == nil && (k == kindDot || k == kindScaled || k == kindGeneral)
}

// stream runs DotSoftmaxMatTVec over keys [lo, lo+len(x)) from the empty
// state: the scores in x, their unnormalised context added to ctx.
func (m *Memory) stream(ctx, x, qv []float32, lo int) (kernels.SoftmaxState, bool) {
	st := kernels.SoftmaxState{Max: float32(math.Inf(-1))}
	ok := kernels.DotSoftmaxMatTVec(ctx, x, rows(m.keys, lo, lo+len(x)), qv, &st)
	return st, ok
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
	var st kernels.SoftmaxState
	streamed := m.streams()
	if streamed {
		var ok bool
		if st, ok = m.stream(ctx, x, s.qv, lo); !ok {
			s.max[p] = float32(math.NaN()) // the merge redoes the step serially
			return
		}
		s.max[p] = st.Max
	} else {
		m.rowScores(x, s.qv, lo)
		if !m.applyMask(x, lo) {
			clear(x)
			return
		}
		s.max[p] = kernels.Max(x)
	}
	mp := s.max[p]
	if math.IsNaN(float64(mp)) || math.IsInf(float64(mp), 0) {
		return // the merge redoes the step serially
	}
	kernels.Axpy(-mp, s.ones[:len(x)], x)
	kernels.Exp(x, x)
	s.sum[p] = kernels.Sum(x)
	if streamed {
		kernels.Scale(s.sum[p]/st.Sum, ctx) // relative to the weights' sum
		return
	}
	m.addContext(ctx, x, lo)
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
