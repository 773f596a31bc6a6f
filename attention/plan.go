package attention

import "github.com/heedml/heed/kernels"

// Every routing decision of the package is made in this file: Memory.plan
// names the route of a Memory call (panel recognises its most common
// route without planning, quantisesQuery whether a Q8Q8 step quantises its
// query), batchWorkers the goroutines of a Batch, multiHeadPlan the route,
// blocks, goroutines and phases of a MultiHead or GroupedQuery call.
// DESIGN.md explains each route and each threshold, with the benchmark that
// places it.

// tuning holds the thresholds that choose a route. Tests override them with
// setTuning.
type tuning struct {
	contextBlock     int // bytes of values per MatTVec of a context pass; the most SoftmaxMatTVecAdd takes in one call
	streamMin        int // bytes of values above which a step that can stream takes one DotSoftmaxMatTVec pass
	chunkBytes       int // bytes of keys per part of a long step whose score pass reads the values
	splitMinRows     int // keys per part, at least, of a step split across goroutines
	splitMinWork     int // multiply-adds, at least, of a step split across goroutines
	manyBlock        int // bytes of keys, K or values per block of AttendMany's block loops
	manyGemmMin      int // queries, at least, of an AttendMany whose contexts (and General's projections) are one Gemm
	manyWidenMin     int // queries, at least, of an AttendMany on 16-bit stored keys that widens blocks (else a step per query)
	manyWidenQ8Min   int // the same for Q8 (and Q8Q8)
	batchMinWork     int // multiply-adds, at least, of a Batch spread over goroutines
	multiHeadMinWork int // multiply-adds, at least, of a MultiHead call spread over goroutines
	multiHeadDirect  int // T·S, at most, of a MultiHead call computed without tiles (multihead_direct.go)
	multiHeadPhase   int // bytes, at most, of the packed keys and values of a single-goroutine MultiHead phase (at least one KV head; 0: one phase)
	multiHeadBackMin int // multiply-adds, at least, of a MultiHead backward spread over goroutines
}

var tune = tuning{
	contextBlock:     64 << 10,
	streamMin:        64 << 10,
	chunkBytes:       256 << 10,
	splitMinRows:     1024,
	splitMinWork:     1 << 19,
	manyBlock:        16 << 10,
	manyGemmMin:      64,
	manyWidenMin:     4,
	manyWidenQ8Min:   5,
	batchMinWork:     1 << 17,
	multiHeadMinWork: 1 << 18,
	multiHeadDirect:  48 * 64,
	multiHeadPhase:   256 << 10,
	multiHeadBackMin: 1 << 20,
}

// route names how a call runs.
type route uint8

const (
	routeNone           route = iota // no key attended: zero weights and context
	routeScores                      // Scores: the raw scores, masked
	routePanel                       // scores, then one SoftmaxMatTVecAdd (softmax and context)
	routeBlocked                     // scores, Softmax, then MatTVec per block of values, the last block first
	routeStream                      // one DotSoftmaxMatTVec pass (scores, running softmax and context)
	routeSplit                       // parts of the keys, each with its own max, sum and context, merged exactly
	routeManyBlocked                 // AttendMany: MatVecBatch scores; MatTVec per query on each block of values
	routeManyTransposed              // AttendMany: MatVecBatch scores; one MatVecBatch over the cached Vᵀ
	routeManyGemm                    // AttendMany: scores by one Gemm (GemmPacked over the packed Kᵀ but for Bahdanau); contexts W·V by one Gemm
	routeManySteps                   // AttendMany on stored keys and values, few queries: one Attend step per query
	routeManyWidened                 // AttendMany on stored keys and values: each block of rows widened to float32, then MatVecBatch scores; MatTVec per query or one Gemm per block
)

var routeNames = [...]string{
	routeNone:           "none",
	routeScores:         "scores",
	routePanel:          "panel",
	routeBlocked:        "blocked",
	routeStream:         "stream",
	routeSplit:          "split",
	routeManyBlocked:    "many/blocked",
	routeManyTransposed: "many/transposed",
	routeManyGemm:       "many/gemm",
	routeManySteps:      "many/steps",
	routeManyWidened:    "many/widened",
}

func (r route) String() string { return routeNames[r] }

// call is what a Memory is asked for; it limits the routes a plan may take.
type call uint8

const (
	callAttend call = iota // Attend: any single-query route
	callStep               // one step on the caller's goroutine: no split (Batch, a split step redone)
	callPlain              // a step without the streaming pass (a streamed step whose score is not finite)
	callScores             // Scores
	callMany               // AttendMany
)

// plan is the route of one call and its parameters.
type plan struct {
	route   route
	block   int  // routeBlocked, routeSplit, routeMany*: rows of values per context block
	kblock  int  // routeMany*: rows of K per Bahdanau score block
	keysT   bool // routeManyGemm: scores by one GemmPacked over the packed Kᵀ
	gemm    bool // routeManyWidened: each block's contexts (and General's projections) by one Gemm
	parts   int  // routeSplit: parts of the keys
	workers int  // routeSplit: goroutines running the parts (1: in turn on the caller's)
	stream  bool // routeSplit: each part is one DotSoftmaxMatTVec pass
}

// plan returns the route of call c with B queries (1 for single-query calls)
// on the Memory's current state. Its arguments are already validated.
func (m *Memory) plan(c call, B int) plan {
	t := &tune
	if c == callMany && B > 1 && m.narrow() {
		if !m.anyAttended() {
			return plan{route: routeNone}
		}
		// Stored keys and values: with few queries each streams the stored
		// rows itself; with more, blocks of rows are widened once into a
		// float32 scratch of about contextBlock bytes, used by every query.
		if B < t.manyWidenMin || m.st.f == Q8 && B < t.manyWidenQ8Min {
			return plan{route: routeManySteps}
		}
		w := max(1, m.keys.Cols, m.values.Cols)
		return plan{route: routeManyWidened, block: blockRows(t.contextBlock, w), gemm: B >= t.manyGemmMin && kernels.Active() != kernels.Generic}
	}
	if c == callMany && B > 1 {
		if !m.anyAttended() {
			return plan{route: routeNone}
		}
		p := plan{route: routeManyTransposed, block: blockRows(t.manyBlock, m.values.Stride), kblock: blockRows(t.manyBlock, m.proj.Stride)}
		switch {
		case B >= t.manyGemmMin && kernels.Active() != kernels.Generic: // fallback.Gemm is slower than its MatVecBatch
			p.route = routeManyGemm
			p.keysT = m.sc.kind != kindAdditive // Kᵀ packed by the first call pays on it already
		case !m.many: // the first call of a sequence: Vᵀ not built
			p.route = routeManyBlocked
		}
		return p
	}
	n := m.valid
	if n == 0 {
		return plan{route: routeNone}
	}
	if c == callScores {
		return plan{route: routeScores}
	}
	vr := m.valueRowBytes()
	if c == callAttend {
		if parts := m.splitParts(n); parts > 1 {
			return plan{route: routeSplit, block: max(1, t.contextBlock/vr), parts: parts, workers: min(procs(), parts), stream: m.streams()}
		}
	}
	vb := n * vr // bytes of the attended values
	if m.narrow() {
		// Stored keys and values: the format's streaming step reads each row
		// once at any length; no panel kernel takes them.
		if c != callPlain && m.streams() {
			return plan{route: routeStream}
		}
		return plan{route: routeBlocked, block: max(1, t.contextBlock/vr)}
	}
	if c != callPlain && vb > t.streamMin && m.streams() {
		return plan{route: routeStream}
	}
	if vb <= t.contextBlock {
		return plan{route: routePanel}
	}
	return plan{route: routeBlocked, block: max(1, t.contextBlock/vr)}
}

// keyRowBytes returns the bytes a key row occupies in memory: its stride in
// float32, its row in a narrow format.
func (m *Memory) keyRowBytes() int {
	if m.narrow() {
		return m.st.f.rowBytes(m.keys.Cols)
	}
	return 4 * m.keys.Stride
}

// valueRowBytes returns the bytes a value row occupies in memory, at least 1
// (4 for float32, as blockRows counts).
func (m *Memory) valueRowBytes() int {
	if m.narrow() {
		return max(1, m.st.f.rowBytes(m.values.Cols))
	}
	return 4 * max(1, m.values.Stride)
}

// panel reports, without planning, whether plan(callAttend) is routePanel
// with every key attended (no mask, valid length S): such a step is on the
// panel route when it is too short to split or stream (or chunk) and its
// values fit a context block. Attend runs it directly; TestPlan checks that
// the two agree.
func (m *Memory) panel() bool {
	n, t := m.valid, &tune
	return m.mask == nil && n == m.keys.Rows && n > 0 && n < 2*t.splitMinRows &&
		n*m.values.Stride*4 <= min(t.contextBlock, t.streamMin) && n*m.keyRowBytes() <= 4*t.chunkBytes && !m.narrow()
}

// blockRows returns the rows of a matrix with the given stride that fit in
// bytes: at least one.
func blockRows(bytes, stride int) int { return max(1, bytes/(4*max(stride, 1))) }

// streams reports whether a step's context can be formed in the same pass
// over the keys as its scores (DotSoftmaxMatTVec, or a narrow format's, which
// takes keys and values apart): the values are the keys or are stored in a
// narrow format, the score is the keys' dot product with the prepared query
// (Dot, ScaledDot, General), and no key is masked.
func (m *Memory) streams() bool {
	k := m.sc.kind
	return (m.sameValues || m.narrow()) && m.mask == nil && (k == kindDot || k == kindScaled || k == kindGeneral)
}

// splitParts returns how many parts the n attended keys of a step are split
// into: 1 (no split) for short sequences; on several processors at most four
// parts per processor, each of at least splitMinRows keys; and, when the score
// pass reads the values (they are the keys, the scorer is not Additive, and
// the step does not stream) and more than four chunks of them are attended,
// enough parts for each to stay within a chunk, also on one processor.
func (m *Memory) splitParts(n int) int {
	t := &tune
	parts := 1
	if m.sameValues && m.sc.kind != kindAdditive && !m.streams() { // Additive scores read K, not the keys
		if b := n * m.keyRowBytes(); b > 4*t.chunkBytes {
			parts = min(n, (b+t.chunkBytes-1)/t.chunkBytes)
		}
	}
	if n < 2*t.splitMinRows || n*(m.keys.Cols+m.values.Cols) < t.splitMinWork {
		return parts
	}
	p := procs() // after the cheap tests: it takes the scheduler's lock
	if p < 2 {
		return parts
	}
	return max(parts, min(4*p, n/t.splitMinRows))
}

// anyAttended reports whether any key of the Memory is attended.
func (m *Memory) anyAttended() bool {
	n := m.valid
	if n == 0 || m.mask == nil {
		return n > 0
	}
	for _, ok := range m.mask[:n] {
		if ok {
			return true
		}
	}
	return false
}

// batchWorkers returns how many goroutines a Batch of n sequences with the
// given total work (multiply-adds) uses: one below batchMinWork, else up to
// GOMAXPROCS.
func batchWorkers(work, n int) int {
	if work < tune.batchMinWork {
		return 1
	}
	return min(procs(), n)
}

// multiHeadWorkers returns how many goroutines a MultiHead call of the given
// work uses: one below multiHeadMinWork, else up to GOMAXPROCS.
func multiHeadWorkers(work, heads int) int {
	if work < tune.multiHeadMinWork {
		return 1
	}
	return min(procs(), heads)
}

// tileSize holds the blocks of the tiled attention: queries per block
// (rows), keys per block (keys) and, on a block of keys that the causal mask
// cuts, the queries per product (diag), each against the keys its last query
// sees. Tests shrink them to cross block boundaries on small inputs;
// attention/DESIGN.md has the measurements.
var tileSize = struct{ rows, keys, diag int }{rows: 192, keys: 512, diag: 96}

// multiHeadRoute is the route of a MultiHead or GroupedQuery call.
type multiHeadRoute struct {
	direct     bool // T·S ≤ multiHeadDirect: no tiles (multihead_direct.go)
	bq, bk     int  // tiled: queries and keys per block
	diag       int  // tiled: queries per product on a block of keys the causal mask cuts
	parts      int  // tiled: goroutines (multiHeadWorkers)
	phaseHeads int  // tiled: KV heads packed per phase (all of them on several goroutines)
}

// multiHeadPlan returns the route of a call of T queries against S keys with
// heads query heads of d_k columns over kvHeads KV heads of d_h value
// columns. On one goroutine the KV heads go in phases: each packs the blocks
// of as many KV heads as fit tune.multiHeadPhase into the same slots, then
// runs the jobs of their query heads, so the packed blocks are written and
// read in cache. Several goroutines take one phase: a barrier per phase would
// leave them idle.
//
// A training forward (train: the logsumexps wanted) is always tiled: the
// direct route forms no running max and sum.
func multiHeadPlan(T, S, dk, dh, heads, kvHeads int, train bool) multiHeadRoute {
	if T*S <= tune.multiHeadDirect && !train {
		return multiHeadRoute{direct: true}
	}
	r := multiHeadRoute{bq: max(1, tileSize.rows), bk: max(1, tileSize.keys), diag: max(1, tileSize.diag)}
	qblocks, kblocks := (T+r.bq-1)/r.bq, (S+r.bk-1)/r.bk
	r.parts = multiHeadWorkers(T*S*(heads*dk+heads*dh), heads*qblocks)
	r.phaseHeads = kvHeads
	if per := kblocks * r.bk * (dk + dh) * 4; r.parts == 1 && tune.multiHeadPhase > 0 {
		r.phaseHeads = max(1, min(kvHeads, tune.multiHeadPhase/per))
	}
	return r
}

// quantisesQuery reports whether a step on the Memory's stored keys
// quantises its prepared query of length dq into 8-bit blocks for the
// scores (Q8Q8): on keys of at most 32·q8q8MaxBlocks elements, where the
// integer dot-product kernels run (kernels.Q8Q8Native); otherwise Q8Q8 takes
// the float32 query as Q8 does.
func (m *Memory) quantisesQuery(dq int) bool {
	return m.st.q8q8 && dq <= 32*q8q8MaxBlocks && kernels.Q8Q8Native()
}

// backTileSize holds the blocks of the MultiHead backward: queries per tile
// (rows), keys per job's block (keys) and, on a tile the causal mask cuts,
// the keys per product of the gradients of the keys and values (diag), each
// against the queries that see its first key. Tests shrink them;
// BACKWARD.md has the measurements.
var backTileSize = struct{ rows, keys, diag int }{rows: 128, keys: 128, diag: 32}

// multiHeadBackRoute is the route of a MultiHead or GroupedQuery backward.
type multiHeadBackRoute struct {
	bq, bk int  // queries per tile, keys per block
	diag   int  // keys per product of dK and dV on a tile the mask cuts
	parts  int  // goroutines
	byKeys bool // jobs are the blocks of keys of one KV head at a time (else whole KV heads)
}

// multiHeadBackPlan returns the route of a backward of T queries against S
// keys with heads query heads of d_k columns over kvHeads KV heads of d_h
// value columns. Below tune.multiHeadBackMin multiply-adds (of the five
// products, causal or not) it runs on the calling goroutine. Above, each
// job owns the rows of dK and dV it writes: a whole KV head (its query heads'
// rows of dQ too) when the KV heads share evenly among the goroutines or are
// many (at least four per goroutine); else the KV heads go one after
// another, each split by blocks of keys, and every goroutine but the first
// adds its share of the KV head's dQ into its own T×(group·d_k) buffer,
// summed into dQ after the KV head.
func multiHeadBackPlan(T, S, dk, dh, heads, kvHeads int) multiHeadBackRoute {
	r := multiHeadBackRoute{bq: max(1, backTileSize.rows), bk: max(1, backTileSize.keys), diag: max(1, backTileSize.diag), parts: 1}
	if T*S*heads*(2*dk+3*dh) < tune.multiHeadBackMin {
		return r
	}
	kblocks := (S + r.bk - 1) / r.bk
	r.parts = min(procs(), kvHeads*kblocks)
	if r.parts > 1 && kvHeads%r.parts != 0 && kvHeads < 4*r.parts {
		r.byKeys = true
		r.parts = min(r.parts, kblocks)
	} else {
		r.parts = min(r.parts, kvHeads)
	}
	return r
}
