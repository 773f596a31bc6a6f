package rnn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/heedml/heed/kernels"

	"github.com/heedml/heed/internal/allocs"
)

// lstmOracle returns the float64 step of an LSTM for one sequence and the
// bounds of TestLSTM (the pre-activations within Gemm's or Dot's bound over
// In+H+2 terms, then the nonlinearities and the update).
func lstmOracle(w kernels.Matrix, b, x, h, c []float32) (wantH, wantC, tolH, tolC []float64) {
	In, H := len(x), len(h)
	xh := append(slices.Clone(x), h...)
	wantH, wantC, tolH, tolC = make([]float64, H), make([]float64, H), make([]float64, H), make([]float64, H)
	for j := range H {
		var pre, abs [4]float64
		for gi := range 4 {
			pre[gi], abs[gi] = row64(w, gi*H+j, 0, In+H, xh)
			pre[gi] += float64(b[gi*H+j])
			abs[gi] += math.Abs(float64(b[gi*H+j]))
		}
		i, f, g, o := sig64(pre[0]), sig64(pre[1]), math.Tanh(pre[2]), sig64(pre[3])
		cj := f*float64(c[j]) + i*g
		wantC[j], wantH[j] = cj, o*math.Tanh(cj)
		e := gamma(In+H+2) * max(abs[0], abs[1], abs[2], abs[3])
		tolC[j] = (e+8*u)*(math.Abs(float64(c[j]))+1) + 4*u*math.Abs(cj)
		tolH[j] = tolC[j] + e + 8*u
	}
	return
}

// gruOracle is lstmOracle for a GRU (TestGRU's bounds).
func gruOracle(w kernels.Matrix, bx, bh, x, h []float32) (want, tol []float64) {
	In, H := len(x), len(h)
	xh := append(slices.Clone(x), h...)
	want, tol = make([]float64, H), make([]float64, H)
	for j := range H {
		pr, ar := row64(w, j, 0, In+H, xh)
		pz, az := row64(w, H+j, 0, In+H, xh)
		px, ax := row64(w, 2*H+j, 0, In, x)
		ph, ah := row64(w, 2*H+j, In, In+H, h)
		r := sig64(pr + float64(bx[j]) + float64(bh[j]))
		z := sig64(pz + float64(bx[H+j]) + float64(bh[H+j]))
		n := math.Tanh(px + float64(bx[2*H+j]) + r*(ph+float64(bh[2*H+j])))
		want[j] = (1-z)*n + z*float64(h[j])
		e := gamma(In+H+3) * (max(ar, az) + ax + ah + 3)
		tol[j] = 2*e + 16*u*(1+math.Abs(float64(h[j])))
	}
	return
}

func within(t *testing.T, what string, got []float32, want, tol []float64) {
	t.Helper()
	for j := range got {
		if d := math.Abs(float64(got[j]) - want[j]); !(d <= tol[j]) {
			t.Fatalf("%s[%d] = %v, want %v ± %.3g", what, j, got[j], want[j], tol[j])
		}
	}
}

// TestStepBatch checks StepBatch against the float64 oracle row by row (its
// product sums in another order than Step's MatVec, so the bits may differ
// from B single Steps; both are within the same bound), in place and not,
// for several batch sizes and row strides, under every ISA (the weights are
// packed again when the ISA changes).
func TestStepBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	prev := kernels.Active()
	defer kernels.Use(prev)
	for _, sh := range shapes {
		H, In := sh.hidden, sh.in
		l := NewLSTM(In, H, randMatrix(rng, 4*H, In+H, sh.pad, 0.5), randVec(rng, 4*H, 0.5))
		g := NewGRU(In, H, randMatrix(rng, 3*H, In+H, sh.pad, 0.5), randVec(rng, 3*H, 0.5), randVec(rng, 3*H, 0.5))
		for _, isa := range testISAs(t) {
			if err := kernels.Use(isa); err != nil {
				t.Fatal(err)
			}
			for _, B := range []int{1, 3, 32, 2} {
				pad := B % 3
				x, h := randMatrix(rng, B, In, pad, 1), randMatrix(rng, B, H, pad+1, 1)
				c := randMatrix(rng, B, H, pad, 2)
				hOut, cOut := randMatrix(rng, B, H, 2, 1), randMatrix(rng, B, H, 0, 1)
				h0 := slices.Clone(h.Data)
				l.StepBatch(hOut, cOut, x, h, c)
				for b := range B {
					wantH, wantC, tolH, tolC := lstmOracle(l.w, l.b, x.Row(b), h.Row(b), c.Row(b))
					within(t, isa.String()+" LSTM h'", hOut.Row(b), wantH, tolH)
					within(t, isa.String()+" LSTM c'", cOut.Row(b), wantC, tolC)
				}
				// In place: the same bits as out of place.
				l.StepBatch(h, c, x, h, c)
				for b := range B {
					same(t, isa, "LSTM h' in place", h.Row(b), hOut.Row(b))
					same(t, isa, "LSTM c' in place", c.Row(b), cOut.Row(b))
				}
				copy(h.Data, h0)
				g.StepBatch(hOut, x, h)
				for b := range B {
					want, tol := gruOracle(g.w, g.bx, g.bh, x.Row(b), h.Row(b))
					within(t, isa.String()+" GRU h'", hOut.Row(b), want, tol)
				}
				g.StepBatch(h, x, h)
				for b := range B {
					same(t, isa, "GRU h' in place", h.Row(b), hOut.Row(b))
				}
			}
		}
	}
}

func TestStepBatchAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(11, 12))
	H, In, B := 64, 32, 32
	l := NewLSTM(In, H, randMatrix(rng, 4*H, In+H, 0, 0.5), randVec(rng, 4*H, 0.5))
	g := NewGRU(In, H, randMatrix(rng, 3*H, In+H, 0, 0.5), randVec(rng, 3*H, 0.5), randVec(rng, 3*H, 0.5))
	x, h, c := randMatrix(rng, B, In, 0, 1), randMatrix(rng, B, H, 0, 1), randMatrix(rng, B, H, 0, 1)
	l.StepBatch(h, c, x, h, c) // packs W, grows the workspace
	g.StepBatch(h, x, h)
	if a := allocs.Count(10, func() { l.StepBatch(h, c, x, h, c) }); a != 0 {
		t.Errorf("LSTM.StepBatch allocates %d times", a)
	}
	if a := allocs.Count(10, func() { g.StepBatch(h, x, h) }); a != 0 {
		t.Errorf("GRU.StepBatch allocates %d times", a)
	}
	// A smaller batch reuses the workspace.
	x3, h3, c3 := randMatrix(rng, 3, In, 0, 1), randMatrix(rng, 3, H, 0, 1), randMatrix(rng, 3, H, 0, 1)
	if a := allocs.Count(10, func() { l.StepBatch(h3, c3, x3, h3, c3); g.StepBatch(h3, x3, h3) }); a != 0 {
		t.Errorf("StepBatch with a smaller batch allocates %d times", a)
	}
}

func TestStepBatchPanics(t *testing.T) {
	w := kernels.Matrix{Rows: 8, Cols: 5, Stride: 5, Data: make([]float32, 40)}
	l := NewLSTM(3, 2, w, make([]float32, 8))
	m := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	mustPanic(t, "heed/rnn: LSTM.StepBatch: in=3, hidden=2 but x is 4×3 (stride 3, len 12), h 4×2 (stride 2, len 8), c 3×2 (stride 2, len 6), hOut 4×2 (stride 2, len 8), cOut 4×2 (stride 2, len 8); want x B×3, the others B×2",
		func() { l.StepBatch(m(4, 2), m(4, 2), m(4, 3), m(4, 2), m(3, 2)) })
	short := kernels.Matrix{Rows: 4, Cols: 2, Stride: 2, Data: make([]float32, 7)}
	mustPanic(t, "heed/rnn: LSTM.StepBatch: in=3, hidden=2 but x is 4×3 (stride 3, len 12), h 4×2 (stride 2, len 7), c 4×2 (stride 2, len 8), hOut 4×2 (stride 2, len 8), cOut 4×2 (stride 2, len 8); want x B×3, the others B×2",
		func() { l.StepBatch(m(4, 2), m(4, 2), m(4, 3), short, m(4, 2)) })
	g := NewGRU(3, 2, kernels.Matrix{Rows: 6, Cols: 5, Stride: 5, Data: make([]float32, 30)}, make([]float32, 6), make([]float32, 6))
	mustPanic(t, "heed/rnn: GRU.StepBatch: in=3, hidden=2 but x is 2×4 (stride 4, len 8), h 2×2 (stride 2, len 4), hOut 2×2 (stride 2, len 4); want x B×3, the others B×2",
		func() { g.StepBatch(m(2, 2), m(2, 4), m(2, 2)) })
	// B = 0 does nothing.
	l.StepBatch(m(0, 2), m(0, 2), m(0, 3), m(0, 2), m(0, 2))
	g.StepBatch(m(0, 2), m(0, 3), m(0, 2))
}
