package attention

import (
	"sync"
	"sync/atomic"
)

// Batch runs one attention step for each of several independent sequences,
// of any lengths (a batch of decoders). When the batch is large enough to gain
// (about 128K multiply-adds in all) the steps are spread over
// GOMAXPROCS goroutines, each taking the next sequence as it finishes one, so
// long and short sequences balance; otherwise they run on the caller's
// goroutine. The zero Batch is ready to use; it keeps its synchronisation
// state, so a call allocates nothing. A Batch is not safe for concurrent use.
type Batch struct {
	mems                       []*Memory
	weights, contexts, queries [][]float32
	next                       atomic.Int64
	wg                         sync.WaitGroup
}

// batchMinWork is the total work (multiply-adds) below which a Batch runs on
// one goroutine: a hand-off to another goroutine costs a few microseconds.
var batchMinWork = 1 << 17

// Attend sets, for each i, weights[i] and contexts[i] as mems[i].Attend(
// weights[i], contexts[i], queries[i]) would (each sequence's own scorer, mask
// and valid length; long sequences are not split further). The Memories must
// be distinct. Every shape is checked before any work; it panics on the first
// mismatch, naming the sequence.
func (b *Batch) Attend(mems []*Memory, weights, contexts, queries [][]float32) {
	if len(weights) != len(mems) || len(contexts) != len(mems) || len(queries) != len(mems) {
		panicf("Batch: %d memories but %d weights, %d contexts, %d queries", len(mems), len(weights), len(contexts), len(queries))
	}
	work := 0
	for i, m := range mems {
		if m == nil {
			panicf("Batch: memory %d is nil", i)
		}
		checkBatchStep(m, i, weights[i], contexts[i], queries[i])
		work += m.valid * (m.keys.Cols + m.values.Cols)
	}
	parts := batchParts(work, len(mems))
	if parts <= 1 {
		for i, m := range mems {
			m.attend(weights[i], contexts[i], queries[i])
		}
		return
	}
	b.mems, b.weights, b.contexts, b.queries = mems, weights, contexts, queries
	b.next.Store(0)
	runParallel(b, parts, &b.wg)
	b.mems, b.weights, b.contexts, b.queries = nil, nil, nil, nil
}

// batchParts returns how many goroutines a batch of n sequences with the given
// total work uses: one below batchMinWork, else up to GOMAXPROCS.
func batchParts(work, n int) int {
	if work < batchMinWork {
		return 1
	}
	return min(procs(), n)
}

// run takes sequences until none is left.
func (b *Batch) run(int) {
	for {
		i := int(b.next.Add(1) - 1)
		if i >= len(b.mems) {
			return
		}
		b.mems[i].attend(b.weights[i], b.contexts[i], b.queries[i])
	}
}

// checkBatchStep is Memory.checkStep with the sequence's index in the message.
func checkBatchStep(m *Memory, i int, weights, context, query []float32) {
	if len(query) != m.QueryDim() || len(weights) != m.keys.Rows || len(context) != m.values.Cols {
		panicf("Batch: sequence %d (%s, S=%d): len(weights)=%d, len(context)=%d, len(query)=%d; want %d, %d, %d",
			i, m.sc, m.keys.Rows, len(weights), len(context), len(query), m.keys.Rows, m.values.Cols, m.QueryDim())
	}
}
