package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/heedml/heed/kernels"
)

// TestMultiHead checks multi-head attention, with and without the causal
// mask, against the float64 oracle of each head (the scaled-dot oracle on the
// head's column blocks).
func TestMultiHead(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprint("parallel=", parallel), func(t *testing.T) {
			if parallel {
				setTuning(t, func(t *tuning) { t.multiHeadMinWork = 0 })
				setProcs(t, 3)
			}
			testMultiHead(t)
		})
	}
}

func testMultiHead(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		var ws Workspace
		for _, shape := range []struct{ T, S, d, dv, heads int }{
			{1, 1, 1, 1, 1}, {1, 5, 4, 6, 2}, {3, 3, 8, 8, 4}, {7, 5, 6, 3, 3},
			{4, 9, 12, 12, 1}, {16, 16, 32, 32, 4}, {5, 33, 9, 15, 3}, {2, 1, 2, 2, 2},
		} {
			for _, causal := range []bool{false, true} {
				q := randMat(rng, shape.T, shape.d, rng.IntN(3))
				k := randMat(rng, shape.S, shape.d, rng.IntN(3))
				v := randMat(rng, shape.S, shape.dv, rng.IntN(3))
				out := randMat(rng, shape.T, shape.dv, 2)
				MultiHead(out, q, k, v, shape.heads, causal, &ws)
				dk, dh := shape.d/shape.heads, shape.dv/shape.heads
				o := oracle{sc: ScaledDot()}
				for i := range shape.heads {
					qi, ki := cols(q, i*dk, (i+1)*dk), cols(k, i*dk, (i+1)*dk)
					vi, oi := cols(v, i*dh, (i+1)*dh), cols(out, i*dh, (i+1)*dh)
					for tq := range shape.T {
						att := make([]bool, shape.S)
						for s := range att {
							att[s] = !causal || s <= tq+shape.S-shape.T
						}
						// MultiHead returns no weights: checkStep checks the
						// weights of an equivalent Memory step (also against the
						// oracle) and MultiHead's output row as the context.
						weights := make([]float32, shape.S)
						m := NewMemory(ScaledDot(), ki, vi)
						m.SetMask(att)
						m.Attend(weights, make([]float32, dh), row(qi, tq))
						o.checkStep(t, fmt.Sprintf("%+v causal=%v head %d row %d", shape, causal, i, tq), weights, row(oi, tq), row(qi, tq), ki, vi, att)
					}
				}
				// Padding between rows of out is never written.
				for j := range len(out.Data) {
					if j%out.Stride >= out.Cols && !math.IsNaN(float64(out.Data[j])) {
						t.Fatalf("%+v: out padding %d written", shape, j)
					}
				}
			}
		}
	})
}

// TestMultiHeadPanics checks the shape errors.
func TestMultiHeadPanics(t *testing.T) {
	m := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	for _, c := range []struct {
		want         string
		out, q, k, v kernels.Matrix
		heads        int
	}{
		{"heed/attention: MultiHead: 0 heads", m(2, 4), m(2, 4), m(3, 4), m(3, 4), 0},
		{"heed/attention: MultiHead: q is 2×4, k is 3×5, v is 3×4; want q T×d, k S×d, v S×d_v", m(2, 4), m(2, 4), m(3, 5), m(3, 4), 2},
		{"heed/attention: MultiHead: 3 heads do not divide d=4 and d_v=6", m(2, 6), m(2, 4), m(3, 4), m(3, 6), 3},
		{"heed/attention: MultiHead: out is 2×5, want T×d_v = 2×4", m(2, 5), m(2, 4), m(3, 4), m(3, 4), 2},
		{"heed/attention: MultiHead: k is 3×4 with stride 2 < 4 columns", m(2, 4), m(2, 4), kernels.Matrix{Rows: 3, Cols: 4, Stride: 2, Data: make([]float32, 12)}, m(3, 4), 2},
	} {
		mustPanic(t, c.want, func() { MultiHead(c.out, c.q, c.k, c.v, c.heads, false, nil) })
	}
}

// mustPanic fails t unless f panics with exactly the message want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic; want %q", want)
		}
		if msg, _ := r.(string); msg != want {
			t.Fatalf("panic %q; want %q", r, want)
		}
	}()
	f()
}

// TestPoolShrinks checks that the workers a 64-head MultiHead started under
// GOMAXPROCS(64) exit once GOMAXPROCS is 1 and they are idle, and that the
// pool grows again for the next parallel call.
func TestPoolShrinks(t *testing.T) {
	old := pool.idle.Swap(int64(time.Millisecond))
	t.Cleanup(func() { pool.idle.Store(old) })
	setTuning(t, func(t *tuning) { t.multiHeadMinWork = 0 })
	setProcs(t, 64)
	rng := rand.New(rand.NewPCG(17, 18))
	const T, S, d, heads = 3, 4, 64, 64
	q, k := randMat(rng, T, d, 0), randMat(rng, S, d, 0)
	out := randMat(rng, T, d, 0)
	var ws Workspace
	before := runtime.NumGoroutine()
	MultiHead(out, q, k, k, heads, false, &ws)
	want := f32bits(out.Data)
	pool.mu.Lock()
	grown := pool.workers
	pool.mu.Unlock()
	if grown < heads-1 {
		t.Fatalf("%d workers after a %d-head call under GOMAXPROCS(64), want ≥ %d", grown, heads, heads-1)
	}
	runtime.GOMAXPROCS(1)
	// Every worker exits (the ones from earlier tests too): at most
	// `before` goroutines remain once they have, after a bounded wait.
	deadline := time.Now().Add(10 * time.Second)
	for {
		pool.mu.Lock()
		w := pool.workers
		pool.mu.Unlock()
		g := runtime.NumGoroutine()
		if w == 0 && g <= before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("under GOMAXPROCS(1): %d workers and %d goroutines remain (%d before the call)", w, g, before)
		}
		time.Sleep(5 * time.Millisecond)
	}
	runtime.GOMAXPROCS(4)
	clear(out.Data)
	MultiHead(out, q, k, k, heads, false, &ws)
	pool.mu.Lock()
	regrown := pool.workers
	pool.mu.Unlock()
	if same := slices.Equal(f32bits(out.Data), want); regrown != 3 || !same {
		t.Fatalf("after shrinking, under GOMAXPROCS(4): %d workers (want 3); output as before: %v", regrown, same)
	}
}
