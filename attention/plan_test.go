package attention

import (
	"runtime"
	"testing"

	"github.com/heedml/heed/kernels"
)

// setTuning applies f to the package's thresholds for the rest of tb (its
// subtests included) and restores them when tb ends.
func setTuning(tb testing.TB, f func(t *tuning)) {
	tb.Helper()
	old := tune
	f(&tune)
	tb.Cleanup(func() { tune = old })
}

// setProcs sets GOMAXPROCS to n for the rest of tb and restores it when tb
// ends.
func setProcs(tb testing.TB, n int) {
	tb.Helper()
	old := runtime.GOMAXPROCS(n)
	tb.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// forceSplit makes every step of at least 2·rows keys split, on 3 goroutines.
func forceSplit(tb testing.TB, rows int) {
	tb.Helper()
	setTuning(tb, func(t *tuning) { t.splitMinRows, t.splitMinWork = rows, 0 })
	setProcs(tb, 3)
}

// TestPlan checks the route and parameters each call takes: small work stays
// on the caller's goroutine, large work spreads over GOMAXPROCS, long steps
// whose values are the keys run in L2-sized parts unless they stream (a
// dot-product score), and the context pass fits its block.
func TestPlan(t *testing.T) {
	setProcs(t, 4)
	for _, c := range []struct{ work, n, want int }{
		{0, 10, 1}, {tune.batchMinWork - 1, 10, 1}, {tune.batchMinWork, 10, 4}, {tune.batchMinWork, 3, 3}, {1 << 30, 1, 1},
	} {
		if got := batchWorkers(c.work, c.n); got != c.want {
			t.Errorf("batchWorkers(%d, %d) = %d, want %d", c.work, c.n, got, c.want)
		}
	}
	for _, c := range []struct{ work, heads, want int }{
		{0, 8, 1}, {tune.multiHeadMinWork - 1, 8, 1}, {tune.multiHeadMinWork, 8, 4}, {tune.multiHeadMinWork, 2, 2},
	} {
		if got := multiHeadWorkers(c.work, c.heads); got != c.want {
			t.Errorf("multiHeadWorkers(%d, %d) = %d, want %d", c.work, c.heads, got, c.want)
		}
	}
	const (
		dot = iota
		cosine
		additive
	)
	for _, c := range []struct {
		procs, S, d int
		sep         bool // separate values: no chunks, no stream
		sc          int
		masked      bool // a mask (all attended): no stream
		c           call
		want        plan
	}{
		// Single steps below the split thresholds.
		{4, 128, 64, false, dot, false, callAttend, plan{route: routePanel}},
		{4, 256, 64, false, dot, false, callAttend, plan{route: routePanel}},
		{4, 257, 64, false, dot, false, callAttend, plan{route: routeStream}},
		{4, 257, 64, true, dot, false, callAttend, plan{route: routeBlocked, block: 256}},
		{4, 257, 64, false, dot, true, callAttend, plan{route: routeBlocked, block: 256}},
		{4, 257, 64, false, dot, false, callPlain, plan{route: routeBlocked, block: 256}},
		{4, 1024, 256, false, dot, false, callAttend, plan{route: routeStream}},
		{4, 2047, 1024, false, dot, false, callAttend, plan{route: routeStream}},
		{4, 2048, 64, false, dot, false, callAttend, plan{route: routeStream}},
		{4, 128, 64, false, dot, false, callScores, plan{route: routeScores}},
		// Split across goroutines, or into L2-sized chunks.
		{4, 2047, 1024, false, cosine, false, callAttend, plan{route: routeSplit, block: 16, parts: 32, workers: 4}},
		{4, 2047, 1024, false, cosine, false, callStep, plan{route: routeBlocked, block: 16}},
		{4, 2047, 1024, true, cosine, false, callAttend, plan{route: routeBlocked, block: 16}},
		{4, 2048, 128, false, dot, false, callAttend, plan{route: routeSplit, block: 128, parts: 2, workers: 2, stream: true}},
		{4, 8192, 256, false, dot, false, callAttend, plan{route: routeSplit, block: 64, parts: 8, workers: 4, stream: true}},
		{4, 8192, 256, false, cosine, false, callAttend, plan{route: routeSplit, block: 64, parts: 32, workers: 4}},
		{4, 8192, 256, true, dot, false, callAttend, plan{route: routeSplit, block: 64, parts: 8, workers: 4}},
		{4, 8192, 256, false, additive, false, callAttend, plan{route: routeSplit, block: 64, parts: 8, workers: 4}},
		{4, 100000, 4, false, dot, false, callAttend, plan{route: routeSplit, block: 4096, parts: 16, workers: 4, stream: true}},
		{4, 100000, 2, false, dot, false, callAttend, plan{route: routeStream}},
		{1, 8192, 256, false, dot, false, callAttend, plan{route: routeStream}},
		{1, 8192, 256, false, cosine, false, callAttend, plan{route: routeSplit, block: 64, parts: 32, workers: 1}},
		{1, 8192, 256, true, cosine, false, callAttend, plan{route: routeBlocked, block: 64}},
		{1, 1025, 256, false, cosine, false, callAttend, plan{route: routeSplit, block: 64, parts: 5, workers: 1}},
		{1, 1025, 256, false, dot, false, callAttend, plan{route: routeStream}},
		// Many queries: the first call after Reset, then Vᵀ.
		{4, 100, 8, false, dot, false, callMany, plan{route: routeManyBlocked, block: 512, kblock: 4096}},
		{4, 100, 8, false, additive, false, callMany, plan{route: routeManyBlocked, block: 512, kblock: 512}},
	} {
		if testing.Short() && c.sc == additive && c.S*c.d > 1<<20 {
			// Under emulation: NewMemory's projection of 8192 keys takes
			// seconds there, and the plan is Go the native run checks.
			continue
		}
		runtime.GOMAXPROCS(c.procs)
		keys := kernels.Matrix{Rows: c.S, Cols: c.d, Stride: c.d, Data: make([]float32, c.S*c.d)}
		values := keys
		if c.sep {
			values = kernels.Matrix{Rows: c.S, Cols: c.d, Stride: c.d, Data: make([]float32, c.S*c.d)}
		}
		sc := [...]Scorer{dot: Dot(), cosine: Cosine(), additive: Additive(zeros(c.d, 1), zeros(c.d, c.d), make([]float32, c.d))}[c.sc]
		m := NewMemory(sc, keys, values)
		if c.masked {
			mask := make([]bool, c.S)
			for s := range mask {
				mask[s] = true
			}
			m.SetMask(mask)
		}
		got := m.plan(c.c, 3)
		if c.c != callMany {
			got = m.plan(c.c, 1)
		}
		if fast := m.panel(); c.c == callAttend && fast != (got.route == routePanel && !c.masked) {
			t.Errorf("procs=%d S=%d d=%d separate values %v %s masked %v: panel %v for plan %+v", c.procs, c.S, c.d, c.sep, sc, c.masked, fast, got)
		}
		if got != c.want {
			t.Errorf("procs=%d S=%d d=%d separate values %v %s masked %v call %d: %+v, want %+v", c.procs, c.S, c.d, c.sep, sc, c.masked, c.c, got, c.want)
		}
	}
	// The routes that depend on the Memory's state rather than its shape.
	m := newSelfMemory(Dot(), zeros(10, 4))
	w, cx, q := zeros(3, 10), zeros(3, 4), zeros(3, 4)
	m.AttendMany(w, cx, q)
	if got := m.plan(callMany, 3).route; got != routeManyTransposed {
		t.Errorf("second AttendMany: route %v, want %v", got, routeManyTransposed)
	}
	// Many queries: contexts by one Gemm, on the first call and later ones
	// (with a SIMD ISA: fallback.Gemm is slower than the other routes).
	for _, first := range []bool{true, false} {
		if kernels.Active() == kernels.Generic {
			mm := newSelfMemory(Dot(), zeros(10, 4))
			if p := mm.plan(callMany, 1000); p.route != routeManyBlocked || p.keysT {
				t.Errorf("generic AttendMany of 1000 queries: %+v, want the blocked route", p)
			}
			break
		}
		mm := newSelfMemory(Dot(), zeros(10, 4))
		if !first {
			mm.AttendMany(w, cx, q)
		}
		for _, c := range []struct {
			B    int
			want route
		}{{tune.manyGemmMin - 1, map[bool]route{true: routeManyBlocked, false: routeManyTransposed}[first]}, {tune.manyGemmMin, routeManyGemm}, {1000, routeManyGemm}} {
			if got := mm.plan(callMany, c.B).route; got != c.want {
				t.Errorf("AttendMany of %d queries (first call %v): route %v, want %v", c.B, first, got, c.want)
			}
		}
		// Many queries take their scores over the packed Kᵀ, first and
		// later calls, except Bahdanau's (they read K = H̄W₂ᵀ).
		if got := mm.plan(callMany, tune.manyGemmMin).keysT; !got {
			t.Errorf("AttendMany of %d queries (first call %v): keysT %v", tune.manyGemmMin, first, got)
		}
		ma := newSelfMemory(Additive(zeros(4, 4), zeros(4, 4), make([]float32, 4)), zeros(10, 4))
		if !first {
			ma.AttendMany(w, cx, q)
		}
		if p := ma.plan(callMany, tune.manyGemmMin); p.route != routeManyGemm || p.keysT {
			t.Errorf("Bahdanau AttendMany of %d queries (first call %v): %+v, want the Gemm route without Kᵀ", tune.manyGemmMin, first, p)
		}
	}
	for _, c := range []struct {
		valid int
		mask  []bool
		c     call
		want  route
	}{
		{0, nil, callAttend, routeNone}, {0, nil, callScores, routeNone}, {0, nil, callMany, routeNone},
		{10, make([]bool, 10), callMany, routeNone}, {5, []bool{9: true}, callMany, routeNone},
		{10, []bool{9: true}, callMany, routeManyTransposed},
		{10, make([]bool, 10), callAttend, routePanel}, // found while scoring
	} {
		m.SetValid(c.valid)
		m.SetMask(c.mask)
		if got := m.plan(c.c, 3).route; got != c.want {
			t.Errorf("valid %d mask %v call %d: route %v, want %v", c.valid, c.mask, c.c, got, c.want)
		}
	}
}

func zeros(r, c int) kernels.Matrix {
	return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
}

// allocRuns is how many calls an allocation test counts over: n, or 2 with
// -short (the emulated CI runs, where each call is slow). allocs.Count
// returns the total, so one allocation in any of them shows.
func allocRuns(n int) int {
	if testing.Short() {
		return 2
	}
	return n
}

// TestMultiHeadBackPlan checks the backward's split: one goroutine below
// multiHeadBackMin, else whole KV heads when they share evenly among the
// goroutines or are at least four per goroutine, else blocks of keys.
func TestMultiHeadBackPlan(t *testing.T) {
	setProcs(t, 4)
	for _, c := range []struct {
		T, heads, kv, parts int
		byKeys              bool
	}{
		{8, 1, 1, 1, false},     // small: one goroutine
		{512, 8, 8, 4, false},   // 8 KV heads share evenly among 4
		{512, 8, 2, 4, true},    // 2 KV heads: blocks of keys (4 of 128)
		{512, 6, 3, 4, true},    // 3 KV heads do not share evenly
		{512, 16, 16, 4, false}, // many KV heads
		{512, 17, 17, 4, false}, // at least four per goroutine
		{200, 1, 1, 2, true},    // two blocks of keys: two goroutines
		{4096, 1, 1, 4, true},   // one head: blocks of keys
		{512, 32, 1, 4, true},   // multi-query: blocks of keys
		{100, 16, 16, 4, false}, // above the threshold, heads enough
	} {
		r := multiHeadBackPlan(c.T, c.T, 64, 64, c.heads, c.kv)
		if r.parts != c.parts || r.byKeys != c.byKeys {
			t.Errorf("T=%d heads=%d kv=%d: %d parts, byKeys=%v; want %d, %v", c.T, c.heads, c.kv, r.parts, r.byKeys, c.parts, c.byKeys)
		}
	}
}
