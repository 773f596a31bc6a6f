package rnn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/heedml/heed/kernels"

	"github.com/heedml/heed/internal/allocs"
)

const u = 1.0 / (1 << 24)

func sig64(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// randMatrix returns a rows×cols matrix with stride cols+pad, entries in
// [−s, s).
func randMatrix(rng *rand.Rand, rows, cols, pad int, s float64) kernels.Matrix {
	m := kernels.Matrix{Rows: rows, Cols: cols, Stride: cols + pad, Data: make([]float32, (rows-1)*(cols+pad)+cols)}
	for i := range m.Data {
		m.Data[i] = float32((rng.Float64()*2 - 1) * s)
	}
	return m
}

func randVec(rng *rand.Rand, n int, s float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((rng.Float64()*2 - 1) * s)
	}
	return v
}

// row64 returns W[r]·v + b in float64 over columns [c0, c1), and Σ|terms|.
func row64(w kernels.Matrix, r, c0, c1 int, v []float32) (s, abs float64) {
	for k := c0; k < c1; k++ {
		p := float64(w.Data[r*w.Stride+k]) * float64(v[k-c0])
		s += p
		abs += math.Abs(p)
	}
	return s, abs
}

// gamma returns γₙ.
func gamma(n int) float64 { return float64(n) * u / (1 - float64(n)*u) }

var shapes = []struct{ in, hidden, pad int }{
	{0, 1, 0}, {1, 1, 0}, {3, 5, 1}, {16, 8, 0}, {33, 17, 3}, {64, 128, 0}, {100, 31, 5},
}

func TestLSTM(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sh := range shapes {
		H, In := sh.hidden, sh.in
		w := randMatrix(rng, 4*H, In+H, sh.pad, 0.5)
		b := randVec(rng, 4*H, 0.5)
		cell := NewLSTM(In, H, w, b)
		x, h, c := randVec(rng, In, 1), randVec(rng, H, 1), randVec(rng, H, 2)
		xh := append(append([]float32(nil), x...), h...)
		hOut, cOut := make([]float32, H), make([]float32, H)
		for _, inPlace := range []bool{false, true} {
			hh, cc := hOut, cOut
			if inPlace {
				hh, cc = append([]float32(nil), h...), append([]float32(nil), c...)
			}
			hIn, cIn := h, c
			if inPlace {
				hIn, cIn = hh, cc
			}
			// Oracle before the step (in place overwrites the inputs).
			wantH, wantC, tolH, tolC := make([]float64, H), make([]float64, H), make([]float64, H), make([]float64, H)
			for j := 0; j < H; j++ {
				var pre, abs [4]float64
				for gi := 0; gi < 4; gi++ {
					pre[gi], abs[gi] = row64(w, gi*H+j, 0, In+H, xh)
					pre[gi] += float64(b[gi*H+j])
					abs[gi] += math.Abs(float64(b[gi*H+j]))
				}
				i, f, g, o := sig64(pre[0]), sig64(pre[1]), math.Tanh(pre[2]), sig64(pre[3])
				cj := f*float64(c[j]) + i*g
				wantC[j] = cj
				wantH[j] = o * math.Tanh(cj)
				// Pre-activation errors (Dot's bound) pass through σ' ≤ ¼,
				// tanh' ≤ 1; each activation adds 2 ULP, the update a few
				// roundings.
				e := gamma(In+H+2) * max(abs[0], abs[1], abs[2], abs[3])
				tolC[j] = (e+8*u)*(math.Abs(float64(c[j]))+1) + 4*u*math.Abs(cj)
				tolH[j] = tolC[j] + e + 8*u
			}
			cell.Step(hh, cc, x, hIn, cIn)
			for j := 0; j < H; j++ {
				if d := math.Abs(float64(cc[j]) - wantC[j]); !(d <= tolC[j]) {
					t.Fatalf("in=%d H=%d inPlace=%v: c'[%d] = %v, want %v ± %.3g", In, H, inPlace, j, cc[j], wantC[j], tolC[j])
				}
				if d := math.Abs(float64(hh[j]) - wantH[j]); !(d <= tolH[j]) {
					t.Fatalf("in=%d H=%d inPlace=%v: h'[%d] = %v, want %v ± %.3g", In, H, inPlace, j, hh[j], wantH[j], tolH[j])
				}
			}
		}
	}
}

func TestGRU(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range shapes {
		H, In := sh.hidden, sh.in
		w := randMatrix(rng, 3*H, In+H, sh.pad, 0.5)
		bx, bh := randVec(rng, 3*H, 0.5), randVec(rng, 3*H, 0.5)
		cell := NewGRU(In, H, w, bx, bh)
		x, h := randVec(rng, In, 1), randVec(rng, H, 1)
		xh := append(append([]float32(nil), x...), h...)
		want, tol := make([]float64, H), make([]float64, H)
		for j := 0; j < H; j++ {
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
		for _, inPlace := range []bool{false, true} {
			hOut, hIn := make([]float32, H), h
			if inPlace {
				hOut = append([]float32(nil), h...)
				hIn = hOut
			}
			cell.Step(hOut, x, hIn)
			for j := range hOut {
				if d := math.Abs(float64(hOut[j]) - want[j]); !(d <= tol[j]) {
					t.Fatalf("in=%d H=%d inPlace=%v: h'[%d] = %v, want %v ± %.3g", In, H, inPlace, j, hOut[j], want[j], tol[j])
				}
			}
		}
	}
}

// TestGRURounding checks that GRU.Step rounds each operation of its update
// once: against the same kernels for the products and nonlinearities and a
// scalar update whose explicit conversions forbid fused multiply-adds, the
// bits must agree on every architecture.
func TestGRURounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sh := range shapes {
		H, In := sh.hidden, sh.in
		w := randMatrix(rng, 3*H, In+H, sh.pad, 0.5)
		bx, bh := randVec(rng, 3*H, 0.5), randVec(rng, 3*H, 0.5)
		x, h := randVec(rng, In, 1), randVec(rng, H, 1)
		xh := append(append([]float32(nil), x...), h...)
		s, nh := make([]float32, 3*H), make([]float32, H)
		kernels.MatVec(s[:2*H], kernels.Matrix{Rows: 2 * H, Cols: In + H, Stride: w.Stride, Data: w.Data}, xh)
		nRows := w.Data[2*H*w.Stride:]
		kernels.MatVec(s[2*H:], kernels.Matrix{Rows: H, Cols: In, Stride: w.Stride, Data: nRows}, x)
		kernels.MatVec(nh, kernels.Matrix{Rows: H, Cols: H, Stride: w.Stride, Data: nRows[In:]}, h)
		for j := range s {
			s[j] = float32(s[j] + bx[j])
			if j < 2*H {
				s[j] = float32(s[j] + bh[j])
			}
		}
		kernels.Sigmoid(s[:2*H], s[:2*H])
		r, z, n := s[:H], s[H:2*H], s[2*H:]
		for j := range n {
			n[j] = float32(n[j] + float32(r[j]*float32(nh[j]+bh[2*H+j])))
		}
		kernels.Tanh(n, n)
		want := make([]float32, H)
		for j := range want {
			want[j] = float32(n[j] + float32(z[j]*float32(h[j]-n[j])))
		}
		got := make([]float32, H)
		NewGRU(In, H, w, bx, bh).Step(got, x, h)
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("in=%d H=%d: h'[%d] = %v, want %v (each operation rounded once)", In, H, j, got[j], want[j])
			}
		}
	}
}

func TestAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(5, 6))
	H, In := 64, 32
	l := NewLSTM(In, H, randMatrix(rng, 4*H, In+H, 0, 0.5), randVec(rng, 4*H, 0.5))
	g := NewGRU(In, H, randMatrix(rng, 3*H, In+H, 0, 0.5), randVec(rng, 3*H, 0.5), randVec(rng, 3*H, 0.5))
	x, h, c := randVec(rng, In, 1), randVec(rng, H, 1), randVec(rng, H, 1)
	if a := allocs.Count(10, func() { l.Step(h, c, x, h, c) }); a != 0 {
		t.Errorf("LSTM.Step allocates %d times", a)
	}
	if a := allocs.Count(10, func() { g.Step(h, x, h) }); a != 0 {
		t.Errorf("GRU.Step allocates %d times", a)
	}
}

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if r := recover(); r != want {
			t.Fatalf("panic %v; want %q", r, want)
		}
	}()
	f()
}

func TestPanics(t *testing.T) {
	w := kernels.Matrix{Rows: 8, Cols: 5, Stride: 5, Data: make([]float32, 40)}
	mustPanic(t, "heed/rnn: NewLSTM: in=3, hidden=2: w is 8×5 (stride 5, len 40), len(b)=7; want w 8×5, len(b)=8",
		func() { NewLSTM(3, 2, w, make([]float32, 7)) })
	l := NewLSTM(3, 2, w, make([]float32, 8))
	mustPanic(t, "heed/rnn: LSTM.Step: in=3, hidden=2 but len(x)=2, len(h)=2, len(c)=2, len(hOut)=2, len(cOut)=2",
		func() {
			l.Step(make([]float32, 2), make([]float32, 2), make([]float32, 2), make([]float32, 2), make([]float32, 2))
		})
	mustPanic(t, "heed/rnn: NewGRU: in=3, hidden=2: w is 8×5 (stride 5, len 40), len(bx)=6, len(bh)=6; want w 6×5, len(bx)=len(bh)=6",
		func() { NewGRU(3, 2, w, make([]float32, 6), make([]float32, 6)) })
	g := NewGRU(3, 2, kernels.Matrix{Rows: 6, Cols: 5, Stride: 5, Data: make([]float32, 30)}, make([]float32, 6), make([]float32, 6))
	mustPanic(t, "heed/rnn: GRU.Step: in=3, hidden=2 but len(x)=3, len(h)=1, len(hOut)=2",
		func() { g.Step(make([]float32, 2), make([]float32, 3), make([]float32, 1)) })
}

// TestSameAsComposed checks that the fused steps give the bits of the
// composition of whole-vector kernels they replace (compose_test.go), on
// every ISA this CPU supports, in place and not (NaN for NaN).
func TestSameAsComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	prev := kernels.Active()
	defer kernels.Use(prev)
	for _, isa := range testISAs(t) {
		if err := kernels.Use(isa); err != nil {
			t.Fatal(err)
		}
		for _, sh := range shapes {
			H, In := sh.hidden, sh.in
			l := NewLSTM(In, H, randMatrix(rng, 4*H, In+H, sh.pad, 2), randVec(rng, 4*H, 2))
			g := NewGRU(In, H, randMatrix(rng, 3*H, In+H, sh.pad, 2), randVec(rng, 3*H, 2), randVec(rng, 3*H, 2))
			x, h, c := randVec(rng, In, 1), randVec(rng, H, 1), randVec(rng, H, 4)
			wantH, wantC, gotH, gotC := make([]float32, H), make([]float32, H), make([]float32, H), make([]float32, H)
			l.StepComposed(wantH, wantC, x, h, c)
			l.Step(gotH, gotC, x, h, c)
			same(t, isa, "LSTM h'", gotH, wantH)
			same(t, isa, "LSTM c'", gotC, wantC)
			hh, cc := slices.Clone(h), slices.Clone(c)
			l.Step(hh, cc, x, hh, cc)
			same(t, isa, "LSTM h' in place", hh, wantH)
			same(t, isa, "LSTM c' in place", cc, wantC)
			g.StepComposed(wantH, x, h)
			g.Step(gotH, x, h)
			same(t, isa, "GRU h'", gotH, wantH)
			hh = slices.Clone(h)
			g.Step(hh, x, hh)
			same(t, isa, "GRU h' in place", hh, wantH)
		}
	}
}

func same(t *testing.T, isa kernels.ISA, what string, got, want []float32) {
	t.Helper()
	for j := range got {
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) && !(got[j] != got[j] && want[j] != want[j]) {
			t.Fatalf("%v: %s[%d] = %v, composed %v", isa, what, j, got[j], want[j])
		}
	}
}
