package attention

import (
	"math"

	"github.com/heedml/heed/internal/inuse"

	"github.com/heedml/heed/kernels"
)

// Memory is one sequence prepared for attention: its S keys (encoder states,
// the rows of an S×d_k matrix), its values (S×d_v, by default the keys
// themselves), an optional mask and valid length, the scorer's per-sequence
// caches (key norms for Cosine, K = H̄W₂ᵀ for Additive, Vᵀ and packed Kᵀ and
// values for AttendMany) and
// the scratch space of its calls. Build it once per sequence, or Reset it to
// reuse its buffers.
//
// NewMemory references the keys and values, not copies: they must not change
// while the Memory is in use (call Reset after changing them). NewEmptyMemory and
// NewMemoryFormat store them instead, in a chosen Format, with room reserved
// for Append. A Memory is not safe for concurrent use; distinct Memories are
// independent.
type Memory struct {
	sc     Scorer
	keys   kernels.Matrix
	values kernels.Matrix
	valid  int    // keys [valid, S) are padding
	mask   []bool // nil, or mask[s] reports whether key s is attended

	invNorm []float32      // Cosine: 1/‖h̄_s‖, or 0 for a zero or wide key (see cosine.go)
	wide    []int32        // Cosine: the wide keys, scored in float64
	proj    kernels.Matrix // Additive: K = H̄W₂ᵀ, S×d_a
	valT    kernels.Matrix // Vᵀ (d_v×S), built by the second AttendMany after Reset
	valTOK  bool
	// Kᵀ and the values packed for kernels.GemmPacked (AttendMany's Gemm
	// route; Kᵀ not for Bahdanau). Current only
	// while many is: AttendMany drops them when it finds many false, which
	// every change of the keys sets.
	packK, packV     kernels.PackedB
	packKOK, packVOK bool
	many             bool // AttendMany has run since Reset (or Append)

	sameValues bool // the values are the keys

	st *store // NewEmptyMemory, NewMemoryFormat: the stored keys and values (format.go); nil for NewMemory

	q  []float32 // a step's query-side vector (scaled or unit query, Wᵀh or W₁h)
	qm []float32 // AttendMany's projected queries

	split splitter

	bw backScratch // AttendBackward, AttendManyBackward (backward.go)

	batchMark int // while a Batch checks its Memories: 1 + the index of this one, else 0

	busy inuse.Flag // in race builds: a call is running
}

// NewMemory prepares keys (S×d_k) and values (S×d_v) for attention with sc:
// all keys attended, no mask. Pass the same matrix as keys and values when
// the values are the keys (Bahdanau's and Luong's encoder states): the steps
// then read it once. It allocates the Memory and the scorer's caches (S
// floats for Cosine, S×d_a for Additive). It panics if the shapes do not fit
// sc: General needs d_k = W.Cols, Additive d_k = W₂.Cols, and values must have
// S rows.
func NewMemory(sc Scorer, keys, values kernels.Matrix) *Memory {
	m := &Memory{sc: sc}
	m.Reset(keys, values)
	return m
}

// Reset prepares the Memory for another sequence with the same scorer, as
// NewMemory does, reusing its buffers (it allocates only when they are too
// small). It clears the mask, makes every key attended and drops the Vᵀ
// and packed caches. It panics as NewMemory does. On a Memory built by NewEmptyMemory or
// NewMemoryFormat, Reset stores keys and values in its format instead,
// replacing the stored ones and growing its capacity if needed (allocating
// then); the values are the keys only if they were at construction.
func (m *Memory) Reset(keys, values kernels.Matrix) {
	m.busy.Enter("attention.Memory")
	defer m.busy.Exit()
	if m.st != nil {
		m.resetStored(keys, values)
		return
	}
	name := m.sc.String()
	checkMatrix(name, "keys", keys)
	checkMatrix(name, "values", values)
	if values.Rows != keys.Rows {
		panicf("%s: keys have %d rows but values have %d", name, keys.Rows, values.Rows)
	}
	if dk := m.sc.keyDim(); dk >= 0 && keys.Cols != dk {
		panicf("%s: keys have %d columns, want %d (the scorer's key length)", name, keys.Cols, dk)
	}
	m.keys, m.values = keys, values
	m.sameValues = sameMatrix(keys, values)
	m.valid, m.mask, m.valTOK, m.packKOK, m.packVOK, m.many = keys.Rows, nil, false, false, false, false
	S := keys.Rows
	m.q = grow(m.q, m.sc.projDim(keys.Cols))
	switch m.sc.kind {
	case kindCosine:
		m.cosineKeys()
	case kindAdditive:
		da := m.sc.w2.Rows
		m.proj = kernels.Matrix{Rows: S, Cols: da, Stride: da, Data: grow(m.proj.Data, S*da)}
		kernels.MatVecBatch(m.proj, m.sc.w2, keys)
	}
}

// Len returns S, the number of keys.
func (m *Memory) Len() int { return m.keys.Rows }

// QueryDim returns the length of a query.
func (m *Memory) QueryDim() int { return m.sc.queryDim(m.keys.Cols) }

// ValueDim returns d_v, the length of a context.
func (m *Memory) ValueDim() int { return m.values.Cols }

// SetValid makes only the first n keys attended: keys [n, S) are padding and
// get weight 0 (and are not read). It panics unless 0 ≤ n ≤ S.
func (m *Memory) SetValid(n int) {
	if n < 0 || n > m.keys.Rows {
		panicf("%s: valid length %d out of range [0, %d]", m.sc, n, m.keys.Rows)
	}
	m.valid = n
}

// SetMask sets the boolean mask: key s is attended only if mask[s] (and s is
// below the valid length). nil clears it. The slice is referenced, so its
// contents may change between steps. Masked keys get weight exactly 0; their
// values are still multiplied by that 0 and should be finite. It panics unless
// mask is nil or has length S or Cap (a mask of Cap keys stays valid across
// Append).
func (m *Memory) SetMask(mask []bool) {
	if mask != nil && len(mask) != m.keys.Rows && len(mask) != m.Cap() {
		if m.st == nil {
			panicf("%s: len(mask)=%d, want S=%d", m.sc, len(mask), m.keys.Rows)
		}
		panicf("%s: len(mask)=%d, want S=%d or Cap=%d", m.sc, len(mask), m.keys.Rows, m.Cap())
	}
	m.mask = mask
}

// prepareQuery computes the query-side vector of a step and returns the vector
// the keys (or K) are multiplied with.
func (m *Memory) prepareQuery(h []float32) []float32 {
	switch m.sc.kind {
	case kindScaled:
		kernels.Scale(m.q, float32(1/math.Sqrt(float64(len(h)))), h)
		return m.q
	case kindCosine:
		unitQuery(m.q, h)
		return m.q
	case kindGeneral:
		clear(m.q)
		kernels.MatTVecAdd(m.q, m.sc.w, h)
		return m.q
	case kindAdditive:
		kernels.MatVec(m.q, m.sc.w, h)
		return m.q
	}
	return h
}

// rowScores sets dst to the scores of keys [lo, lo+len(dst)) against the
// prepared query vector qv. It only reads the Memory, so parts of one step may
// run concurrently.
func (m *Memory) rowScores(dst, qv []float32, lo int) {
	hi := lo + len(dst)
	switch m.sc.kind {
	case kindAdditive:
		kernels.AdditiveScore(dst, rows(m.proj, lo, hi), qv, m.sc.v)
	case kindCosine:
		kernels.MatVec(dst, rows(m.keys, lo, hi), qv)
		m.cosineScores(dst, qv, lo)
	default:
		m.matVec(dst, qv, lo)
	}
}

// applyMask sets to −Inf the scores x of keys [lo, lo+len(x)) that the mask
// excludes and reports whether any key is attended.
func (m *Memory) applyMask(x []float32, lo int) bool {
	if m.mask == nil {
		return len(x) > 0
	}
	any := false
	ninf := float32(math.Inf(-1))
	for i, ok := range m.mask[lo : lo+len(x)] {
		if ok {
			any = true
		} else {
			x[i] = ninf
		}
	}
	return any
}

// checkStep panics unless weights, context and query fit the Memory.
func (m *Memory) checkStep(weights, context, query []float32) {
	if qd := m.QueryDim(); len(query) != qd {
		panicf("%s: len(query)=%d, want %d", m.sc, len(query), qd)
	}
	if len(weights) != m.keys.Rows {
		panicf("%s: len(weights)=%d, want S=%d", m.sc, len(weights), m.keys.Rows)
	}
	if len(context) != m.values.Cols {
		panicf("%s: len(context)=%d, want d_v=%d", m.sc, len(context), m.values.Cols)
	}
	m.checkOutputs("weights", weights, "context", context, "query", query)
}

// checkOutputs panics if the outputs a and b of a call overlap each other,
// the input in, or the keys and values the Memory references (NewMemory),
// naming them.
func (m *Memory) checkOutputs(an string, a []float32, bn string, b []float32, in string, x []float32) {
	if p, q := m.outputOverlap(an, a, bn, b, in, x); p != "" {
		panicf("%s: %s overlaps %s", m.sc, p, q)
	}
}

// outputOverlap returns the names of the first pair checkOutputs finds
// overlapping, or "", "".
func (m *Memory) outputOverlap(an string, a []float32, bn string, b []float32, in string, x []float32) (string, string) {
	switch {
	case overlaps(a, b):
		return an, bn
	case overlaps(a, x):
		return an, in
	case overlaps(b, x):
		return bn, in
	case m.st != nil:
		return "", ""
	}
	k, v := span(&m.keys), span(&m.values)
	switch {
	case overlaps(a, k):
		return an, "keys"
	case overlaps(b, k):
		return bn, "keys"
	case overlaps(a, v):
		return an, "values"
	case overlaps(b, v):
		return bn, "values"
	}
	return "", ""
}

// sameMatrix reports whether a and b are the same matrix: the same shape and
// stride over the same first element (or both empty).
func sameMatrix(a, b kernels.Matrix) bool {
	if a.Rows != b.Rows || a.Cols != b.Cols {
		return false
	}
	if a.Rows == 0 || a.Cols == 0 {
		return true
	}
	return (a.Rows == 1 || a.Stride == b.Stride) && &a.Data[0] == &b.Data[0]
}
