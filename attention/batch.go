package attention

import (
	"sync"
	"sync/atomic"

	"github.com/heedml/heed/internal/inuse"
)

// Batch runs one attention step for each of several independent sequences,
// of any lengths (a batch of decoders). The steps may run concurrently on the
// package's worker goroutines; Attend returns when all are done. The zero
// Batch is ready to use; it keeps its synchronisation state, so a call
// allocates nothing. A Batch is not safe for concurrent use.
type Batch struct {
	mems                       []*Memory
	weights, contexts, queries [][]float32
	next                       atomic.Int64
	wg                         sync.WaitGroup
	busy                       inuse.Flag // in race builds: a call is running
}

// Attend sets, for each i, weights[i] and contexts[i] to the step
// mems[i].Attend(weights[i], contexts[i], queries[i]) defines (each
// sequence's own scorer, mask and valid length), within Memory.Attend's error
// bound. No slice may overlap another or a Memory's matrices. Every shape is
// checked before any work; it panics on the first mismatch, naming the
// sequence, if a sequence's slices overlap each other or its Memory's
// matrices (as Attend does; overlaps between different sequences' slices are
// not detected), and if a Memory appears twice, naming both sequences.
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
	checkDistinct(mems)
	b.busy.Enter("attention.Batch")
	defer b.busy.Exit()
	if inuse.Enabled {
		entered := 0
		defer func() {
			for _, m := range mems[:entered] {
				m.busy.Exit()
			}
		}()
		for _, m := range mems {
			m.busy.Enter("attention.Memory")
			entered++
		}
	}
	workers := batchWorkers(work, len(mems))
	if workers <= 1 {
		for i, m := range mems {
			m.step(m.plan(callStep, 1), weights[i], contexts[i], queries[i])
		}
		return
	}
	b.mems, b.weights, b.contexts, b.queries = mems, weights, contexts, queries
	b.next.Store(0)
	runParallel(b, workers, &b.wg)
	b.mems, b.weights, b.contexts, b.queries = nil, nil, nil, nil
}

// run takes sequences until none is left.
func (b *Batch) run(int) {
	for {
		i := int(b.next.Add(1) - 1)
		if i >= len(b.mems) {
			return
		}
		m := b.mems[i]
		m.step(m.plan(callStep, 1), b.weights[i], b.contexts[i], b.queries[i])
	}
}

// checkDistinct panics if a Memory appears twice in mems, naming the two
// sequences. It marks each Memory with its index (no allocation, one pass) and
// clears every mark before it returns or panics.
func checkDistinct(mems []*Memory) {
	for i, m := range mems {
		if j := m.batchMark - 1; j >= 0 {
			for _, m := range mems[:i] {
				m.batchMark = 0
			}
			panicf("Batch: sequences %d and %d are the same Memory", j, i)
		}
		m.batchMark = i + 1
	}
	for _, m := range mems {
		m.batchMark = 0
	}
}

// checkBatchStep is Memory.checkStep with the sequence's index in the message.
func checkBatchStep(m *Memory, i int, weights, context, query []float32) {
	if len(query) != m.QueryDim() || len(weights) != m.keys.Rows || len(context) != m.values.Cols {
		panicf("Batch: sequence %d (%s, S=%d): len(weights)=%d, len(context)=%d, len(query)=%d; want %d, %d, %d",
			i, m.sc, m.keys.Rows, len(weights), len(context), len(query), m.keys.Rows, m.values.Cols, m.QueryDim())
	}
	if p, q := m.outputOverlap("weights", weights, "context", context, "query", query); p != "" {
		panicf("Batch: sequence %d: %s overlaps %s", i, p, q)
	}
}
