package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/kernels"

	"github.com/heedml/heed/internal/allocs"
)

// TestAttentional checks h̃ = tanh(W_c[c; h]) against float64: the product is
// within γ_n·Σ|W·x| and Tanh adds 2 ULP (≤ 4u relative).
func TestAttentional(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, sh := range [][3]int{{1, 1, 0}, {1, 0, 1}, {3, 2, 5}, {16, 8, 8}, {33, 17, 64}} {
			checkAttentional(t, rng, sh[0], sh[1], sh[2])
		}
	})
}

// checkAttentional checks one random d_out×(d_c+d_h) Attentional.Apply.
func checkAttentional(t *testing.T, rng *rand.Rand, dout, dc, dh int) {
	t.Helper()
	wc := randMat(rng, dout, dc+dh, 3)
	c, h, dst := randVec(rng, dc), randVec(rng, dh), make([]float32, dout)
	a := NewAttentional(wc, dc)
	a.Apply(dst, c, h)
	x := append(append([]float32{}, c...), h...)
	for i := range dout {
		var z, abs float64
		for j := range dc + dh {
			p := at(wc, i, j) * float64(x[j])
			z += p
			abs += math.Abs(p)
		}
		want := math.Tanh(z)
		bound := gamma(dc+dh)*abs + 4*u*math.Abs(want) + float64(dc+dh)*eta
		if err := math.Abs(float64(dst[i]) - want); !(err <= bound) {
			t.Fatalf("d_out=%d d_c=%d d_h=%d: dst[%d] = %v, want %v ± %.3g", dout, dc, dh, i, dst[i], want, bound)
		}
	}
}

// TestPanics checks that wrong shapes panic before any work, naming the
// mechanism and the sizes.
func TestPanics(t *testing.T) {
	m := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	v := make([]float32, 8)
	keys := m(5, 4)
	add := Additive(m(3, 2), m(3, 4), v[:3])
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/attention: Bahdanau: W1 is 3×2 and W2 is 2×4 but len(v)=3; want both with len(v) rows", func() { Additive(m(3, 2), m(2, 4), v[:3]) }},
		{"heed/attention: Bahdanau: keys have 5 columns, want 4 (the scorer's key length)", func() { newSelfMemory(add, m(2, 5)) }},
		{"heed/attention: Luong general: keys have 4 columns, want 3 (the scorer's key length)", func() { NewMemory(General(m(2, 3)), keys, keys) }},
		{"heed/attention: Luong dot: keys have 5 rows but values have 4", func() { NewMemory(Dot(), keys, m(4, 4)) }},
		{"heed/attention: cosine: keys is 5×4 with stride 4: len(Data)=19 < 20", func() {
			newSelfMemory(Cosine(), kernels.Matrix{Rows: 5, Cols: 4, Stride: 4, Data: make([]float32, 19)})
		}},
		{"heed/attention: Bahdanau: len(query)=4, want 2", func() { NewMemory(add, keys, keys).Attend(v[:5], v[:4], v[:4]) }},
		{"heed/attention: Luong dot: len(weights)=4, want S=5", func() { NewMemory(Dot(), keys, keys).Attend(v[:4], v[:4], v[:4]) }},
		{"heed/attention: Luong dot: len(context)=3, want d_v=4", func() { NewMemory(Dot(), keys, keys).Attend(v[:5], v[:3], v[:4]) }},
		{"heed/attention: Luong dot: len(scores)=4, want S=5", func() { NewMemory(Dot(), keys, keys).Scores(v[:4], v[:4]) }},
		{"heed/attention: cosine: len(query)=3, want 4", func() { NewMemory(Cosine(), keys, keys).Scores(v[:5], v[:3]) }},
		{"heed/attention: scaled dot: valid length 6 out of range [0, 5]", func() { NewMemory(ScaledDot(), keys, keys).SetValid(6) }},
		{"heed/attention: scaled dot: len(mask)=4, want S=5", func() { NewMemory(ScaledDot(), keys, keys).SetMask(make([]bool, 4)) }},
		{"heed/attention: Luong dot: queries is 2×4, weights 2×5, context 3×4; want queries B×4, weights B×5, context B×4", func() {
			NewMemory(Dot(), keys, keys).AttendMany(m(2, 5), m(3, 4), m(2, 4))
		}},
		{"heed/attention: Batch: 1 memories but 1 weights, 0 contexts, 1 queries", func() {
			new(Batch).Attend([]*Memory{NewMemory(Dot(), keys, keys)}, [][]float32{v[:5]}, nil, [][]float32{v[:4]})
		}},
		{"heed/attention: Batch: sequence 1 (Luong dot, S=5): len(weights)=5, len(context)=4, len(query)=3; want 5, 4, 4", func() {
			d := NewMemory(Dot(), keys, keys)
			f := func(n int) []float32 { return make([]float32, n) }
			new(Batch).Attend([]*Memory{d, NewMemory(Dot(), keys, keys)}, [][]float32{f(5), f(5)}, [][]float32{f(4), f(4)}, [][]float32{f(4), f(3)})
		}},
		{"heed/attention: Luong dot: weights overlaps context", func() {
			buf := make([]float32, 12)
			NewMemory(Dot(), keys, keys).Attend(buf[:5], buf[4:8], make([]float32, 4))
		}},
		{"heed/attention: Luong dot: context overlaps query", func() {
			buf := make([]float32, 12)
			NewMemory(Dot(), keys, keys).Attend(make([]float32, 5), buf[:4], buf[2:6])
		}},
		{"heed/attention: Luong dot: weights overlaps keys", func() {
			NewMemory(Dot(), keys, keys).Attend(keys.Data[:5], make([]float32, 4), make([]float32, 4))
		}},
		{"heed/attention: Luong dot: scores overlaps query", func() {
			buf := make([]float32, 12)
			NewMemory(Dot(), keys, keys).Scores(buf[:5], buf[1:5])
		}},
		{"heed/attention: Luong dot: weights overlaps context", func() {
			w := m(2, 5)
			NewMemory(Dot(), keys, keys).AttendMany(w, kernels.Matrix{Rows: 2, Cols: 4, Stride: 4, Data: w.Data[2:10]}, m(2, 4))
		}},
		{"heed/attention: Batch: sequence 0: weights overlaps context", func() {
			buf := make([]float32, 12)
			new(Batch).Attend([]*Memory{NewMemory(Dot(), keys, keys)}, [][]float32{buf[:5]}, [][]float32{buf[3:7]}, [][]float32{make([]float32, 4)})
		}},
		{"heed/attention: HeadCache: Attend: out overlaps query", func() {
			buf := make([]float32, 16)
			NewHeadCache(Float32, 2, 1, 4, 4, 4).Attend(buf[:8], buf[4:12])
		}},
		{"heed/attention: MultiHead: out overlaps q", func() {
			q := m(4, 8)
			MultiHead(kernels.Matrix{Rows: 4, Cols: 8, Stride: 8, Data: q.Data}, q, m(4, 8), m(4, 8), 2, Unmasked, nil)
		}},
		{"heed/attention: MultiHead: mask 2 is not a Masking", func() { MultiHead(m(4, 8), m(4, 8), m(4, 8), m(4, 8), 2, 2, nil) }},
		{"heed/attention: Attentional: context length 5 out of range [0, 4] for Wc 2×4", func() { NewAttentional(m(2, 4), 5) }},
		{"heed/attention: Attentional: Wc is 2×4 with context length 1; got len(dst)=2, len(c)=1, len(h)=2, want 2, 1, 3", func() {
			NewAttentional(m(2, 4), 1).Apply(v[:2], v[:1], v[:2])
		}},
	} {
		mustPanic(t, c.want, c.f)
	}
}

// TestNoAllocs checks that steps, many-query calls, batches (also when spread
// over goroutines), split steps, multi-head calls and the attentional state
// allocate nothing once their buffers exist.
func TestNoAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(13, 14))
	keys := randMat(rng, 64, 16, 0)
	var mems []*Memory
	for _, k := range allKinds {
		sc, _, _ := newScorer(rng, k, 16, 16, 16)
		mems = append(mems, NewMemory(sc, keys, keys))
	}
	w, c, h := make([]float32, 64), make([]float32, 16), randVec(rng, 16)
	ws, cs, hs := make([][]float32, len(mems)), make([][]float32, len(mems)), make([][]float32, len(mems))
	for i := range mems {
		ws[i], cs[i], hs[i] = make([]float32, 64), make([]float32, 16), h
	}
	wm, cm, qm := randMat(rng, 8, 64, 0), randMat(rng, 8, 16, 0), randMat(rng, 8, 16, 0)
	var b Batch
	var mh Workspace
	att := NewAttentional(randMat(rng, 8, 32, 0), 16)
	calls := map[string]func(){
		"Batch": func() { b.Attend(mems, ws, cs, hs) },
		"MultiHead": func() {
			MultiHead(cm, qm, keys, keys, 4, Causal, &mh)
		},
		"Attentional": func() { att.Apply(c[:8], c, h) },
	}
	for _, m := range mems {
		calls["Attend "+m.sc.String()] = func() { m.Attend(w, c, h) }
		calls["AttendMany "+m.sc.String()] = func() { m.AttendMany(wm, cm, qm) }
		calls["AttendMany/gemm "+m.sc.String()] = func() {
			old := tune.manyGemmMin
			tune.manyGemmMin = 2
			m.AttendMany(wm, cm, qm)
			tune.manyGemmMin = old
		}
		calls["Scores "+m.sc.String()] = func() { m.Scores(w, h) }
	}
	run := func(t *testing.T) {
		forEachISA(t, func(t *testing.T) {
			for name, f := range calls {
				// allocs.Count warms up with two calls: AttendMany builds its
				// packed caches on its second call since the keys changed,
				// which may allocate them.
				if got := allocs.Count(allocRuns(20), f); got != 0 {
					t.Errorf("%s allocates %d times in the measured calls", name, got)
				}
			}
		})
	}
	t.Run("serial", run)
	t.Run("parallel", func(t *testing.T) {
		forceSplit(t, 8)
		setTuning(t, func(t *tuning) { t.batchMinWork, t.multiHeadMinWork = 0, 0 })
		if mems[0].plan(callAttend, 1).route != routeSplit {
			t.Fatal("the step is not split")
		}
		run(t)
	})
	t.Run("streamed", func(t *testing.T) { // values are the keys: one pass, serial and split
		setTuning(t, func(t *tuning) { t.streamMin = 0 })
		if p := mems[0].plan(callAttend, 1); p.route != routeStream {
			t.Fatalf("the step does not stream: %+v", p)
		}
		run(t)
		forceSplit(t, 8)
		if p := mems[0].plan(callAttend, 1); !p.stream {
			t.Fatalf("the split step does not stream: %+v", p)
		}
		run(t)
	})
}

// TestBatchDuplicate checks that a Batch given the same Memory twice panics,
// naming both sequences, before any work, on one goroutine and spread over
// several, and that the Memories are usable afterwards.
func TestBatchDuplicate(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprint("parallel=", parallel), func(t *testing.T) {
			if parallel {
				setTuning(t, func(t *tuning) { t.batchMinWork = 0 })
				setProcs(t, 3)
			}
			rng := rand.New(rand.NewPCG(15, 16))
			keys := randMat(rng, 50, 8, 0)
			a, b := NewMemory(Dot(), keys, keys), NewMemory(Cosine(), keys, keys)
			h := randVec(rng, 8)
			for _, c := range []struct {
				mems []*Memory
				want string
			}{
				{[]*Memory{a, a}, "heed/attention: Batch: sequences 0 and 1 are the same Memory"},
				{[]*Memory{a, b, a}, "heed/attention: Batch: sequences 0 and 2 are the same Memory"},
				{[]*Memory{b, a, a, b}, "heed/attention: Batch: sequences 1 and 2 are the same Memory"},
			} {
				n := len(c.mems)
				w, cx, q := make([][]float32, n), make([][]float32, n), make([][]float32, n)
				for i := range n {
					w[i], cx[i], q[i] = make([]float32, 50), make([]float32, 8), h
					w[i][0], cx[i][0] = 7, 7
				}
				var bt Batch
				mustPanic(t, c.want, func() { bt.Attend(c.mems, w, cx, q) })
				for i := range n {
					if w[i][0] != 7 || cx[i][0] != 7 {
						t.Fatalf("%s: sequence %d written before the panic", c.want, i)
					}
				}
			}
			// No mark is left behind: distinct Memories still run.
			var bt Batch
			w, cx := [][]float32{make([]float32, 50), make([]float32, 50)}, [][]float32{make([]float32, 8), make([]float32, 8)}
			bt.Attend([]*Memory{a, b}, w, cx, [][]float32{h, h})
		})
	}
}

// newSelfMemory is NewMemory with the keys as the values.
func newSelfMemory(sc Scorer, keys kernels.Matrix) *Memory { return NewMemory(sc, keys, keys) }

// newSelfMemoryFormat is NewMemoryFormat with the keys as the values.
func newSelfMemoryFormat(sc Scorer, f Format, keys kernels.Matrix) *Memory {
	return NewMemoryFormat(sc, f, keys, keys)
}
