package attention

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/heedml/heed/kernels"
)

// partStatus is what a part of a split step reports to the merge.
type partStatus uint8

const (
	partDone  partStatus = iota // weights hold e^(score−m_p); max, sum and context are set
	partEmpty                   // no key of the part is attended, or every score is −Inf: weights 0, nothing to merge
	partRedo                    // a score is NaN or +Inf, or a streamed score is not finite: redo the step serially
)

// splitter is the state of a split step (flash decoding): each part of the
// keys keeps its own max m_p, sum l_p = Σ e^(score−m_p) and unnormalised
// context, merged exactly at the end.
type splitter struct {
	m       *Memory
	p       plan
	weights []float32
	qv      []float32
	next    atomic.Int64 // the next part to take
	ones    []float32    // all 1: Axpy(−m, ones, x) subtracts m from x
	ctx     []float32    // parts×d_v unnormalised partial contexts
	max     []float32    // m_p
	sum     []float32    // l_p
	status  []partStatus
	wg      sync.WaitGroup
}

// bounds returns the key range of part p.
func (s *splitter) bounds(p int) (lo, hi int) {
	n := s.m.valid
	return p * n / s.p.parts, (p + 1) * n / s.p.parts
}

// run takes parts until none is left.
func (s *splitter) run(int) {
	for {
		p := int(s.next.Add(1) - 1)
		if p >= s.p.parts {
			return
		}
		s.status[p] = s.part(p)
	}
}

// part scores part p and leaves e^(score−m_p) in its weights, m_p, l_p and the
// unnormalised context Σ e^(score−m_p)·value_s.
func (s *splitter) part(p int) partStatus {
	m := s.m
	lo, hi := s.bounds(p)
	x := s.weights[lo:hi]
	dv := m.values.Cols
	ctx := s.ctx[p*dv : (p+1)*dv]
	clear(ctx)
	var st kernels.SoftmaxState
	if s.p.stream {
		var ok bool
		if st, ok = m.stream(ctx, x, s.qv, lo); !ok {
			return partRedo
		}
		s.max[p] = st.Max
	} else {
		m.rowScores(x, s.qv, lo)
		if !m.applyMask(x, lo) {
			clear(x)
			return partEmpty
		}
		s.max[p] = kernels.Max(x)
	}
	mp := s.max[p]
	switch {
	case math.IsNaN(float64(mp)) || math.IsInf(float64(mp), 1):
		return partRedo
	case math.IsInf(float64(mp), -1):
		clear(x)
		return partEmpty
	}
	kernels.Axpy(-mp, s.ones[:len(x)], x)
	kernels.Exp(x, x)
	s.sum[p] = kernels.Sum(x)
	if s.p.stream {
		kernels.Scale(ctx, s.sum[p]/st.Sum, ctx) // relative to the weights' sum
		return partDone
	}
	m.addContext(ctx, x, lo, s.p.block)
	return partDone
}

// attendSplit is a step along a routeSplit plan.
func (m *Memory) attendSplit(p plan, weights, context, h []float32) {
	s := &m.split
	n, dv := m.valid, m.values.Cols
	s.m, s.p, s.weights = m, p, weights
	s.qv = m.prepareQuery(h)
	chunk := (n + p.parts - 1) / p.parts
	if len(s.ones) < chunk {
		s.ones = grow(s.ones, chunk)
		for i := range s.ones {
			s.ones[i] = 1
		}
	}
	s.ctx = grow(s.ctx, p.parts*dv)
	s.max = grow(s.max, p.parts)
	s.sum = grow(s.sum, p.parts)
	s.status = grow(s.status, p.parts)
	clear(weights[n:])
	s.next.Store(0)
	runParallel(s, p.workers, &s.wg)
	s.weights, s.qv = nil, nil

	mx, any := float32(math.Inf(-1)), false
	for i, st := range s.status {
		switch st {
		case partRedo:
			m.step(m.plan(callStep, 1), weights, context, h) // NaN or +Inf scores: the softmax's special rules
			return
		case partDone:
			mx, any = max(mx, s.max[i]), true
		}
	}
	clear(context)
	if !any {
		clear(weights)
		return
	}
	var total float64
	for i, st := range s.status {
		if st == partDone {
			total += float64(s.sum[i]) * math.Exp(float64(s.max[i])-float64(mx))
		}
	}
	for i, st := range s.status {
		if st != partDone {
			continue // its weights are 0
		}
		lo, hi := s.bounds(i)
		f := float32(math.Exp(float64(s.max[i])-float64(mx)) / total)
		kernels.Scale(weights[lo:hi], f, weights[lo:hi])
		kernels.Axpy(f, s.ctx[i*dv:(i+1)*dv], context)
	}
}
