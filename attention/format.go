package attention

import (
	"math"
	"strconv"

	"github.com/heedml/heed/kernels"
)

// Format is how a Memory built by [NewEmptyMemory] or [NewMemoryFormat] stores its
// keys and values. The query, the accumulation, the weights and the context
// stay float32; a narrower format makes a step read fewer bytes.
//
// Accuracy: a step on stored keys and values computes, in float32, the step on
// the stored values x̂ within Attend's bound (with the scores' bound of the
// low-precision kernels: γ_d·Σ|h_i·k̂_si| for Dot, γ_{d+2} for Q8). Against the
// float32 keys and values that were stored, add the storage rounding: each
// score moves by at most Σ_i|k̂_si − k_si|·|q_i| (q the prepared query: h for
// Dot, h/√d for ScaledDot, Wᵀh for General), which enters the weights' bound
// as part of E, and each context element by Σ_s α_s·|v̂_sj − v_sj|, where per
// element
//
//	Float32   x̂ = x
//	BFloat16  |x̂ − x| ≤ 2⁻⁸·|x| + 2⁻¹³⁴
//	Float16   |x̂ − x| ≤ 2⁻¹¹·|x| + 2⁻²⁵  (|x| < 65520; from 65520 up x̂ = ±Inf)
//	Q8        |x̂ − x| ≤ Scale/2  (absolute: half the quantisation step of x's block of 32)
//	Q8Q8      as Q8
//
// Q8Q8 stores as Q8 and also rounds the query: the unmasked one-query step
// quantises the prepared query q once per call into 8-bit blocks q̂
// (kernels.ToQ8) and computes the scores k̂_s·q̂ by kernels.DotSoftmaxMatTVecQ8Q8
// (integer dot products: VPDPBUSD where the CPU has AVX512_VNNI, SDOT on arm64
// with the dot-product extension), so that each
// score moves by at most Σ_i|k̂_si|·Scale_q(i)/2 more (Scale_q(i) the scale
// of q's block holding i), which enters the weights' bound as part of E
// beside the storage rounding. Masked steps, AttendMany, keys longer than
// 512 and CPUs without those instructions (kernels.Q8Q8Native) take the float32
// query as Q8 does, within that bound.
//
// (see kernels.BF16, kernels.F16 and kernels.Q8Block for the exact formats).
// Special values: BFloat16 keeps ±Inf and NaN; Float16 keeps them and rounds
// magnitudes from 65520 up to ±Inf; a Q8 block of 32 elements holding a NaN
// or ±Inf reads as NaN in all its elements. A step then follows Attend's
// special-value rules on the stored values.
type Format uint8

const (
	Float32  Format = iota // float32: 4 bytes per element, stored as given
	BFloat16               // kernels.BF16: 2 bytes per element
	Float16                // kernels.F16 (IEEE binary16): 2 bytes per element
	Q8                     // kernels.Q8Block: 36 bytes per 32 elements of a row
	Q8Q8                   // Q8 storage, the query quantised to 8-bit blocks for the scores
)

var formatNames = [...]string{Float32: "float32", BFloat16: "bfloat16", Float16: "float16", Q8: "q8", Q8Q8: "q8q8"}

// String returns the format's name.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// rowBytes returns the bytes a row of cols elements occupies in format f.
func (f Format) rowBytes(cols int) int {
	switch f {
	case BFloat16, Float16:
		return 2 * cols
	case Q8, Q8Q8:
		return 36 * kernels.Q8Blocks(cols)
	}
	return 4 * cols
}

// stored is the reserved storage of a Memory's keys or values: cap rows of
// cols elements in one format (the slice of that format is the one set).
type stored struct {
	cols int
	f32  []float32
	bf16 []kernels.BF16
	f16  []kernels.F16
	q8   []kernels.Q8Block
}

// width returns the elements (blocks for Q8) per row.
func (s *stored) width(f Format) int {
	if f == Q8 {
		return kernels.Q8Blocks(s.cols)
	}
	return s.cols
}

// resize makes room for rows rows, keeping the first keep.
func (s *stored) resize(f Format, rows, keep int) {
	w := s.width(f)
	switch f {
	case Float32:
		s.f32 = resized(s.f32, rows*w, keep*w)
	case BFloat16:
		s.bf16 = resized(s.bf16, rows*w, keep*w)
	case Float16:
		s.f16 = resized(s.f16, rows*w, keep*w)
	case Q8:
		s.q8 = resized(s.q8, rows*w, keep*w)
	}
}

// resized returns a slice of length n holding buf[:keep], reallocated only
// when buf is too short.
func resized[T any](buf []T, n, keep int) []T {
	if len(buf) >= n {
		return buf
	}
	b := make([]T, n)
	copy(b, buf[:keep])
	return b
}

// set stores x (length cols) as row i.
func (s *stored) set(f Format, i int, x []float32) {
	w := s.width(f)
	switch f {
	case Float32:
		copy(s.f32[i*w:(i+1)*w], x)
	case BFloat16:
		kernels.ToBF16(s.bf16[i*w:(i+1)*w], x)
	case Float16:
		kernels.ToF16(s.f16[i*w:(i+1)*w], x)
	case Q8:
		kernels.ToQ8(s.q8[i*w:(i+1)*w], x)
	}
}

// f32Rows returns rows [0, n) of float32 storage as a matrix.
func (s *stored) f32Rows(n int) kernels.Matrix {
	return kernels.Matrix{Rows: n, Cols: s.cols, Stride: s.cols, Data: s.f32[:n*s.cols]}
}

// rowsOf returns rows [lo, hi) of narrow storage in format f as a
// kernels.Stored view.
func (s *stored) rowsOf(f Format, lo, hi int) kernels.Stored {
	switch f {
	case BFloat16:
		return kernels.StoredOf(hi-lo, s.cols, s.cols, s.bf16[lo*s.cols:hi*s.cols])
	case Float16:
		return kernels.StoredOf(hi-lo, s.cols, s.cols, s.f16[lo*s.cols:hi*s.cols])
	}
	w := kernels.Q8Blocks(s.cols)
	return kernels.StoredOf(hi-lo, s.cols, w, s.q8[lo*w:hi*w])
}

// store is the reserved storage of a Memory built by NewEmptyMemory or
// NewMemoryFormat.
type store struct {
	f    Format    // the storage format (Q8 for Q8Q8)
	q8q8 bool      // Q8Q8: the streaming step quantises the query
	cap  int       // rows reserved
	k, v stored    // v is unused when the values are the keys
	wide []float32 // AttendMany's scratch: one block of rows widened to float32
}

// widened returns rows [lo, hi) of s (the store's keys or values) widened to
// float32 in the store's scratch, which it overwrites (and grows if short).
func (st *store) widened(s *stored, lo, hi int) kernels.Matrix {
	c := s.cols
	st.wide = grow(st.wide, (hi-lo)*c)
	w := st.wide
	switch st.f {
	case BFloat16:
		kernels.FromBF16(w, s.bf16[lo*c:hi*c])
	case Float16:
		kernels.FromF16(w, s.f16[lo*c:hi*c])
	case Q8:
		nb := kernels.Q8Blocks(c)
		for r := lo; r < hi; r++ {
			kernels.FromQ8(w[(r-lo)*c:(r-lo+1)*c], s.q8[r*nb:(r+1)*nb])
		}
	default:
		copy(w, s.f32[lo*c:hi*c])
	}
	return kernels.Matrix{Rows: hi - lo, Cols: c, Stride: c, Data: w}
}

// NewEmptyMemory returns an empty Memory for keys of length dk and values of length
// dv stored in format f, with room for capacity keys: a key-value cache that
// grows by [Memory.Append], one key and one value per decode step, converted
// to f as they are appended. Its keys and values are always distinct (the
// self-attention case). It allocates the storage of capacity rows up front, so
// that Append and the steps that follow allocate nothing until the cache is
// full.
//
// The scorer must be Dot, ScaledDot or General (a score that is the keys' dot
// product with a prepared query); Cosine and Additive keep per-key caches that
// NewMemory builds, and panic here, as do dk, dv or capacity < 0, a General
// whose key length is not dk, or an unknown format.
func NewEmptyMemory(sc Scorer, f Format, dk, dv, capacity int) *Memory {
	m := &Memory{sc: sc}
	m.initStore("NewEmptyMemory", f, dk, dv, capacity, false)
	return m
}

// NewMemoryFormat returns a Memory holding keys (S×d_k) and values (S×d_v)
// converted once to format f, with capacity S: a later Append panics until
// [Memory.Grow] makes room. Unlike NewMemory it copies, also for Float32, so
// the matrices may change or be freed afterwards. When values is keys (the
// same matrix: Bahdanau's and Luong's encoder states), they are stored once
// and Append takes a nil value. It panics as NewEmptyMemory does, and as
// NewMemory does on shapes.
func NewMemoryFormat(sc Scorer, f Format, keys, values kernels.Matrix) *Memory {
	name := sc.String()
	checkMatrix(name, "keys", keys)
	checkMatrix(name, "values", values)
	shared := sameMatrix(keys, values)
	m := &Memory{sc: sc}
	m.initStore("NewMemoryFormat", f, keys.Cols, values.Cols, keys.Rows, shared)
	m.appendRows(keys, values)
	return m
}

// initStore makes m an empty stored Memory.
func (m *Memory) initStore(fn string, f Format, dk, dv, capacity int, shared bool) {
	name := m.sc.String()
	switch {
	case m.sc.kind != kindDot && m.sc.kind != kindScaled && m.sc.kind != kindGeneral:
		panicf("%s: %s: stored keys need a Dot, ScaledDot or General scorer", name, fn)
	case int(f) >= len(formatNames):
		panicf("%s: %s: unknown format %d", name, fn, int(f))
	case dk < 0 || dv < 0 || capacity < 0:
		panicf("%s: %s: d_k=%d, d_v=%d, capacity %d: negative size", name, fn, dk, dv, capacity)
	}
	if kd := m.sc.keyDim(); kd >= 0 && dk != kd {
		panicf("%s: keys have %d columns, want %d (the scorer's key length)", name, dk, kd)
	}
	st := &store{f: f, k: stored{cols: dk}, v: stored{cols: dv}}
	if f == Q8Q8 {
		st.f, st.q8q8 = Q8, true
	}
	m.st = st
	m.sameValues = shared
	m.q = grow(m.q, m.sc.projDim(dk))
	m.reserve(capacity)
	m.setLen(0)
}

// reserve makes room for capacity rows, keeping the stored ones.
func (m *Memory) reserve(capacity int) {
	st := m.st
	if capacity <= st.cap {
		return
	}
	if capacity > maxInt/max(1, st.f.rowBytes(max(st.k.cols, st.v.cols))) {
		panicf("%s: capacity %d of d_k=%d, d_v=%d: size overflows int", m.sc, capacity, st.k.cols, st.v.cols)
	}
	n := m.keys.Rows
	st.k.resize(st.f, capacity, n)
	if !m.sameValues {
		st.v.resize(st.f, capacity, n)
	}
	st.cap = capacity
	m.setLen(n)
}

// setLen makes the first n stored rows the Memory's keys and values.
func (m *Memory) setLen(n int) {
	st := m.st
	if st.f == Float32 {
		m.keys = st.k.f32Rows(n)
		if m.sameValues {
			m.values = m.keys
		} else {
			m.values = st.v.f32Rows(n)
		}
		return
	}
	// Narrow formats: the matrices give the shape only; their rows are read
	// through st (rows panics on the nil Data if a path forgets it).
	m.keys = kernels.Matrix{Rows: n, Cols: st.k.cols, Stride: st.k.cols}
	m.values = kernels.Matrix{Rows: n, Cols: st.v.cols, Stride: st.v.cols}
	if m.sameValues {
		m.values = m.keys
	}
}

// Format returns how the Memory stores its keys and values: Float32 for a
// Memory built by NewMemory.
func (m *Memory) Format() Format {
	if m.st == nil {
		return Float32
	}
	if m.st.q8q8 {
		return Q8Q8
	}
	return m.st.f
}

// Cap returns the number of keys the Memory holds room for: its reserved
// capacity if built by NewEmptyMemory or NewMemoryFormat, else Len.
func (m *Memory) Cap() int {
	if m.st == nil {
		return m.keys.Rows
	}
	return m.st.cap
}

// Append adds one key (length d_k) and its value (length d_v) after the last
// key, converted to the Memory's format; the keys already stored are not
// touched or re-read. If every key was attended (the valid length was Len),
// the new key is attended too; otherwise the valid length stays where
// SetValid put it. A mask that is set must cover the new key (a mask of Cap
// keys does); AttendMany's caches (Vᵀ, and the packed keys and values) are
// dropped.
//
// When the values are the keys (NewMemoryFormat with values the keys),
// value must be nil. Append copies key and value; it allocates nothing. It
// panics when the Memory is full (Len = Cap: call Grow first), when the Memory
// was built by NewMemory (its matrices are the caller's), on wrong lengths, or
// when the mask is shorter than the new length.
func (m *Memory) Append(key, value []float32) {
	m.busy.Enter("attention.Memory")
	defer m.busy.Exit()
	st, name := m.st, m.sc.String()
	if st == nil {
		panicf("%s: Append: the Memory references the caller's matrices (NewMemory): build it with NewEmptyMemory or NewMemoryFormat", name)
	}
	n := m.keys.Rows
	switch {
	case n == st.cap:
		panicf("%s: Append: cache full: %d keys of capacity %d (Grow reserves more)", name, n, st.cap)
	case len(key) != st.k.cols:
		panicf("%s: Append: len(key)=%d, want d_k=%d", name, len(key), st.k.cols)
	case m.sameValues && value != nil:
		panicf("%s: Append: the values are the keys: value must be nil, has length %d", name, len(value))
	case !m.sameValues && len(value) != st.v.cols:
		panicf("%s: Append: len(value)=%d, want d_v=%d", name, len(value), st.v.cols)
	case m.mask != nil && len(m.mask) <= n:
		panicf("%s: Append: the mask has %d keys, the Memory will have %d (set a mask of Cap keys, or none)", name, len(m.mask), n+1)
	}
	st.k.set(st.f, n, key)
	if !m.sameValues {
		st.v.set(st.f, n, value)
	}
	m.grew(n, n+1)
}

// grew makes rows [0, n1) the Memory's keys after rows [n0, n1) were stored.
func (m *Memory) grew(n0, n1 int) {
	m.setLen(n1)
	if m.valid == n0 {
		m.valid = n1
	}
	m.valTOK, m.many = false, false
}

// appendRows appends the rows of keys and values (shapes checked against
// the store here, capacity grown as needed).
func (m *Memory) appendRows(keys, values kernels.Matrix) {
	st, name := m.st, m.sc.String()
	if keys.Cols != st.k.cols || values.Cols != st.v.cols && !m.sameValues || values.Rows != keys.Rows {
		panicf("%s: keys are %d×%d and values %d×%d; want S×%d and S×%d", name, keys.Rows, keys.Cols, values.Rows, values.Cols, st.k.cols, st.v.cols)
	}
	n := m.keys.Rows
	m.reserve(n + keys.Rows)
	for i := range keys.Rows {
		st.k.set(st.f, n+i, keys.Data[i*keys.Stride:i*keys.Stride+keys.Cols])
		if !m.sameValues {
			st.v.set(st.f, n+i, values.Data[i*values.Stride:i*values.Stride+values.Cols])
		}
	}
	m.grew(n, n+keys.Rows)
}

// Grow reserves room for n more keys than Len, so that n Appends allocate
// nothing. It allocates new storage of Len+n rows and copies the stored ones
// when the capacity is short; a Memory whose mask is set keeps it, so set a
// longer mask before appending past its length. It panics if n < 0 or the
// Memory was built by NewMemory.
func (m *Memory) Grow(n int) {
	if m.st == nil {
		panicf("%s: Grow: the Memory references the caller's matrices (NewMemory)", m.sc)
	}
	if n < 0 {
		panicf("%s: Grow: n=%d < 0", m.sc, n)
	}
	if n > maxInt-m.keys.Rows {
		panicf("%s: Grow: %d keys and %d more overflow int", m.sc, m.keys.Rows, n)
	}
	m.reserve(m.keys.Rows + n)
}

// Truncate keeps the first n keys and values and drops the others (a
// rejected draft, a restarted sequence), keeping the capacity; the valid
// length becomes min(valid, n), or n if every key was attended. It allocates
// nothing. It panics unless 0 ≤ n ≤ Len, or if the Memory was built by
// NewMemory.
func (m *Memory) Truncate(n int) {
	if m.st == nil {
		panicf("%s: Truncate: the Memory references the caller's matrices (NewMemory)", m.sc)
	}
	if n < 0 || n > m.keys.Rows {
		panicf("%s: Truncate: %d out of range [0, %d]", m.sc, n, m.keys.Rows)
	}
	all := m.valid == m.keys.Rows
	m.setLen(n)
	if all || m.valid > n {
		m.valid = n
	}
	m.valTOK, m.many = false, false
}

// resetStored is Reset for a stored Memory: the keys and values replace the
// stored ones, converted, growing the capacity if needed.
func (m *Memory) resetStored(keys, values kernels.Matrix) {
	name := m.sc.String()
	checkMatrix(name, "keys", keys)
	checkMatrix(name, "values", values)
	if sameMatrix(keys, values) != m.sameValues {
		panicf("%s: Reset: a stored Memory keeps its values and keys shared or apart as built (shared: %v)", name, m.sameValues)
	}
	m.setLen(0)
	m.valid, m.mask = 0, nil
	m.appendRows(keys, values)
}

// narrow reports whether the keys and values are stored in a format other
// than float32: then they are read through m.st, never m.keys.Data.
func (m *Memory) narrow() bool { return m.st != nil && m.st.f != Float32 }

// matVec sets dst to the prepared query qv times keys [lo, lo+len(dst)).
func (m *Memory) matVec(dst, qv []float32, lo int) {
	hi := lo + len(dst)
	if !m.narrow() {
		kernels.MatVec(dst, rows(m.keys, lo, hi), qv)
		return
	}
	kernels.MatVecStored(dst, m.st.k.rowsOf(m.st.f, lo, hi), qv)
}

// matTVec adds to ctx the x-weighted sum of the values of keys [lo,
// lo+len(x)).
func (m *Memory) matTVec(ctx, x []float32, lo int) {
	hi := lo + len(x)
	if !m.narrow() {
		kernels.MatTVecAdd(ctx, rows(m.values, lo, hi), x)
		return
	}
	kernels.MatTVecStoredAdd(ctx, m.storedValues().rowsOf(m.st.f, lo, hi), x)
}

// storedValues returns the storage of the values.
func (m *Memory) storedValues() *stored {
	if m.sameValues {
		return &m.st.k
	}
	return &m.st.v
}

// streamNarrow is stream for narrow formats: one pass of the format's
// DotSoftmaxMatTVec over keys and values [lo, lo+len(x)).
func (m *Memory) streamNarrow(ctx, x, qv []float32, lo int) (kernels.SoftmaxState, bool) {
	st := kernels.SoftmaxState{Max: float32(math.Inf(-1))}
	hi := lo + len(x)
	f := m.st.f
	k, v := m.st.k.rowsOf(f, lo, hi), m.storedValues().rowsOf(f, lo, hi)
	if m.quantisesQuery(len(qv)) {
		var hb [q8q8MaxBlocks]kernels.Q8Block
		hq := hb[:kernels.Q8Blocks(len(qv))]
		kernels.ToQ8(hq, qv)
		return st, kernels.DotSoftmaxMatTVecQ8Q8(ctx, x, k, v, hq, &st)
	}
	return st, kernels.DotSoftmaxMatTVecStored(ctx, x, k, v, qv, &st)
}

// q8q8MaxBlocks is the most blocks of a Q8Q8 query quantised on the stack
// (keys of up to 512 elements); longer keys take the float32 query.
const q8q8MaxBlocks = 16
