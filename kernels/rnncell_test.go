package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/heedml/heed/internal/fallback"

	"github.com/heedml/heed/internal/allocs"
)

// lstmComposed is the LSTM update as rnn composed it from whole-vector
// kernels before LSTMCell: the reference LSTMCell must match bit for bit on
// the active ISA. gates is not modified (a copy is).
func lstmComposed(hOut, cOut, gates, b, c []float32) {
	H := len(c)
	g := slices.Clone(gates)
	Add(g, g, b)
	Sigmoid(g[:2*H], g[:2*H]) // i, f
	Tanh(g[2*H:3*H], g[2*H:3*H])
	Sigmoid(g[3*H:], g[3*H:]) // o
	ig, fg, gg, og := g[:H:H], g[H:2*H:2*H], g[2*H:3*H:3*H], g[3*H:4*H:4*H]
	Mul(ig, ig, gg)
	Mul(cOut, fg, c)
	Add(cOut, cOut, ig)
	Tanh(fg, cOut)
	Mul(hOut, og, fg)
}

// gruComposed is the GRU update as rnn composed it before GRUCell (gates and
// nh are copied, not modified).
func gruComposed(hOut, gates, nh, bx, bh, h []float32) {
	H := len(h)
	s, q := slices.Clone(gates), slices.Clone(nh)
	Add(s, s, bx)
	Add(s[:2*H], s[:2*H], bh[:2*H])
	Sigmoid(s[:2*H], s[:2*H])
	r, z, n := s[:H:H], s[H:2*H:2*H], s[2*H:3*H:3*H]
	Add(q, q, bh[2*H:3*H])
	Mul(q, r, q)
	Add(n, n, q)
	Tanh(n, n)
	Sub(q, h, n)
	Mul(q, z, q)
	Add(hOut, n, q)
}

// sameBits reports whether a and b have the same bits, or are both NaN (a
// NaN's payload is unspecified).
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// cellLengths are every length through three AVX-512 vectors and one, then
// larger hidden sizes.
var cellLengths = append(lengths(49)[:50], 127, 128, 129, 512, 1000, 1023)

// randIn returns n values uniform in [−s, s).
func randIn(rng *rand.Rand, n int, s float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((rng.Float64()*2 - 1) * s)
	}
	return v
}

// lstmCellErr returns the error bounds, against the float64 oracle, of
// LSTMCell's c' and h' at position j, and the oracle's values. Each
// pre-activation x = g + b rounds once (u·|x|), which moves σ by at most
// |x|·u/4 and tanh by |x|·u; σ and tanh add 2 ULP (≤ 4u relative) and at
// most 2⁻¹²⁶ where σ flushes; the products and the sum of c' round once
// each, o·tanh(c') once, and tanh(c') moves by at most c”s error.
// Second-order terms are covered by the factor 1+8u.
func lstmCellErr(gates, b, c []float32, j int) (wantC, wantH, tolC, tolH float64) {
	H := len(c)
	var v, e [4]float64
	for k := range 4 {
		x := float64(gates[k*H+j]) + float64(b[k*H+j])
		if k == 2 {
			v[k] = math.Tanh(x)
			e[k] = math.Abs(x)*u + 4*u*math.Abs(v[k])
		} else {
			v[k] = 1 / (1 + math.Exp(-x))
			e[k] = math.Abs(x)*u/4 + 4*u*v[k] + 0x1p-126
		}
	}
	i, f, g, o := v[0], v[1], v[2], v[3]
	ei, ef, eg, eo := e[0], e[1], e[2], e[3]
	cj := float64(c[j])
	wantC = f*cj + i*g
	tolC = (ef*math.Abs(cj) + ei*math.Abs(g) + eg*i + ei*eg +
		2*u*(math.Abs(f*cj)+math.Abs(i*g)) + u*math.Abs(wantC)) * (1 + 8*u)
	t := math.Tanh(wantC)
	wantH = o * t
	et := tolC + 4*u*math.Abs(t)
	tolH = (eo*math.Abs(t) + o*et + eo*et + u*math.Abs(wantH)) * (1 + 8*u)
	return wantC, wantH, tolC, tolH
}

// gruCellErr returns the error bound, against the float64 oracle, of
// GRUCell's h' at position j, and the oracle's value, by the same steps as
// lstmCellErr: r and z from two rounded bias sums, the n argument from a
// rounded product and three rounded sums, then h − n, z·(h − n) and the final
// sum rounded once each.
func gruCellErr(gates, nh, bx, bh, h []float32, j int) (want, tol float64) {
	H := len(h)
	var v, e [2]float64
	for k := range 2 {
		x := float64(gates[k*H+j]) + float64(bx[k*H+j]) + float64(bh[k*H+j])
		ax := math.Abs(float64(gates[k*H+j])+float64(bx[k*H+j])) + math.Abs(x) // the two roundings
		v[k] = 1 / (1 + math.Exp(-x))
		e[k] = ax*u/4 + 4*u*v[k] + 0x1p-126
	}
	r, z, er, ez := v[0], v[1], e[0], e[1]
	q := float64(nh[j]) + float64(bh[2*H+j])
	xn0 := float64(gates[2*H+j]) + float64(bx[2*H+j])
	xn := xn0 + r*q
	// |Δ argument|: its sums' roundings, the product's and r's error.
	ea := u*(math.Abs(xn0)+math.Abs(q)*r+math.Abs(xn)) + u*math.Abs(r*q) + er*math.Abs(q)*(1+u)
	n := math.Tanh(xn)
	en := ea + 4*u*math.Abs(n)
	hj := float64(h[j])
	want = n + z*(hj-n)
	d := math.Abs(hj - n)
	tol = (en + ez*d + z*(en+u*d) + ez*en + u*z*d + u*math.Abs(want)) * (1 + 8*u)
	return want, tol
}

func TestLSTMCell(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 5))
	forEachISA(t, func(t *testing.T) {
		for _, H := range cellLengths {
			// Pre-activations over [−12, 12) reach the saturated ranges of σ
			// and tanh; c over [−6, 6).
			gates, b, c := randIn(rng, 4*H, 10), randIn(rng, 4*H, 2), randIn(rng, H, 6)
			gates0 := slices.Clone(gates)
			hOut, cOut := make([]float32, H), make([]float32, H)
			LSTMCell(hOut, cOut, gates, b, c)
			if !slices.Equal(gates, gates0) {
				t.Fatalf("H=%d: gates modified", H)
			}
			wantH, wantC := make([]float32, H), make([]float32, H)
			lstmComposed(wantH, wantC, gates, b, c)
			fbH, fbC := make([]float32, H), make([]float32, H)
			fallback.LSTMCell(fbH, fbC, gates, b, c)
			for j := range H {
				for _, p := range []struct {
					what            string
					got, comp, fall float32
				}{{"c'", cOut[j], wantC[j], fbC[j]}, {"h'", hOut[j], wantH[j], fbH[j]}} {
					if !sameBits(p.got, p.comp) || !sameBits(p.got, p.fall) {
						t.Fatalf("H=%d: %s[%d] = %v [%#x], composition %v [%#x], fallback %v [%#x]", H, p.what, j,
							p.got, math.Float32bits(p.got), p.comp, math.Float32bits(p.comp), p.fall, math.Float32bits(p.fall))
					}
				}
				ec, eh, tc, th := lstmCellErr(gates, b, c, j)
				if d := math.Abs(float64(cOut[j]) - ec); !(d <= tc) {
					t.Fatalf("H=%d: c'[%d] = %v, want %v ± %.3g (error %.3g)", H, j, cOut[j], ec, tc, d)
				}
				if d := math.Abs(float64(hOut[j]) - eh); !(d <= th) {
					t.Fatalf("H=%d: h'[%d] = %v, want %v ± %.3g (error %.3g)", H, j, hOut[j], eh, th, d)
				}
			}
			// In place: cOut = c.
			cc := slices.Clone(c)
			LSTMCell(hOut, cc, gates, b, cc)
			for j := range H {
				if !sameBits(cc[j], cOut[j]) || !sameBits(hOut[j], wantH[j]) {
					t.Fatalf("H=%d in place: c'[%d] = %v, h'[%d] = %v; want %v, %v", H, j, cc[j], j, hOut[j], cOut[j], wantH[j])
				}
			}
		}
	})
}

func TestGRUCell(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 6))
	forEachISA(t, func(t *testing.T) {
		for _, H := range cellLengths {
			gates, nh := randIn(rng, 3*H, 8), randIn(rng, H, 8)
			bx, bh, h := randIn(rng, 3*H, 2), randIn(rng, 3*H, 2), randIn(rng, H, 2)
			gates0, nh0 := slices.Clone(gates), slices.Clone(nh)
			hOut := make([]float32, H)
			GRUCell(hOut, gates, nh, bx, bh, h)
			if !slices.Equal(gates, gates0) || !slices.Equal(nh, nh0) {
				t.Fatalf("H=%d: gates or nh modified", H)
			}
			want, fb := make([]float32, H), make([]float32, H)
			gruComposed(want, gates, nh, bx, bh, h)
			fallback.GRUCell(fb, gates, nh, bx, bh, h)
			for j := range H {
				if !sameBits(hOut[j], want[j]) || !sameBits(hOut[j], fb[j]) {
					t.Fatalf("H=%d: h'[%d] = %v [%#x], composition %v [%#x], fallback %v [%#x]", H, j,
						hOut[j], math.Float32bits(hOut[j]), want[j], math.Float32bits(want[j]), fb[j], math.Float32bits(fb[j]))
				}
				e, tol := gruCellErr(gates, nh, bx, bh, h, j)
				if d := math.Abs(float64(hOut[j]) - e); !(d <= tol) {
					t.Fatalf("H=%d: h'[%d] = %v, want %v ± %.3g (error %.3g)", H, j, hOut[j], e, tol, d)
				}
			}
			// In place: hOut = h.
			hh := slices.Clone(h)
			GRUCell(hh, gates, nh, bx, bh, hh)
			for j := range H {
				if !sameBits(hh[j], hOut[j]) {
					t.Fatalf("H=%d in place: h'[%d] = %v, want %v", H, j, hh[j], hOut[j])
				}
			}
		}
	})
}

// TestCellSpecialMix puts the harness's special values (NaN, ±Inf, ±0,
// subnormals, ±MaxFloat32) at random places of every operand: the fused pass
// must still give the composition's bits (NaN for NaN).
func TestCellSpecialMix(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 7))
	mix := func(s []float32) {
		for i := range s {
			if rng.IntN(4) == 0 {
				s[i] = specials[rng.IntN(len(specials))]
			}
		}
	}
	forEachISA(t, func(t *testing.T) {
		for _, H := range []int{1, 7, 8, 9, 16, 17, 33, 100} {
			for range 20 {
				gates, b, c := randIn(rng, 4*H, 10), randIn(rng, 4*H, 2), randIn(rng, H, 6)
				mix(gates)
				mix(b)
				mix(c)
				hOut, cOut, wantH, wantC := make([]float32, H), make([]float32, H), make([]float32, H), make([]float32, H)
				LSTMCell(hOut, cOut, gates, b, c)
				lstmComposed(wantH, wantC, gates, b, c)
				for j := range H {
					if !sameBits(cOut[j], wantC[j]) || !sameBits(hOut[j], wantH[j]) {
						t.Fatalf("LSTMCell H=%d: c'[%d], h'[%d] = %v, %v; composition %v, %v (gates %v, b %v, c %v)", H, j, j,
							cOut[j], hOut[j], wantC[j], wantH[j],
							[]float32{gates[j], gates[H+j], gates[2*H+j], gates[3*H+j]},
							[]float32{b[j], b[H+j], b[2*H+j], b[3*H+j]}, c[j])
					}
				}
				g3, nh := randIn(rng, 3*H, 8), randIn(rng, H, 8)
				bx, bh, h := randIn(rng, 3*H, 2), randIn(rng, 3*H, 2), randIn(rng, H, 2)
				for _, s := range [][]float32{g3, nh, bx, bh, h} {
					mix(s)
				}
				got, want := make([]float32, H), make([]float32, H)
				GRUCell(got, g3, nh, bx, bh, h)
				gruComposed(want, g3, nh, bx, bh, h)
				for j := range H {
					if !sameBits(got[j], want[j]) {
						t.Fatalf("GRUCell H=%d: h'[%d] = %v, composition %v", H, j, got[j], want[j])
					}
				}
			}
		}
	})
}

func TestLSTMCellSpecial(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	th1 := []float32{1}
	Tanh(th1, th1)
	s2 := []float32{2}
	Sigmoid(s2, s2)
	cases := []struct {
		name  string
		g     [4]float32 // i, f, g, o pre-activations (bias 0)
		c     float32
		wantC float32 // NaN: want NaN
		wantH float32
	}{
		{"NaN i", [4]float32{nan, 0, 0, 0}, 1, nan, nan},
		{"NaN c", [4]float32{1, -inf, 1, 1}, nan, nan, nan},
		{"NaN o", [4]float32{inf, -inf, inf, nan}, 3, 1, nan},
		{"saturated", [4]float32{inf, -inf, inf, inf}, 7, 1, th1[0]},
		{"f=0, c=Inf", [4]float32{0, -inf, 0, 0}, inf, nan, nan},
		{"f=1, c=Inf", [4]float32{-inf, inf, 0, 2}, inf, inf, s2[0]},
		{"i=0, g=NaN", [4]float32{-inf, inf, nan, inf}, 2, nan, nan},
	}
	forEachISA(t, func(t *testing.T) {
		for _, cs := range cases {
			for _, H := range []int{1, 8, 17} {
				gates, b, c := make([]float32, 4*H), make([]float32, 4*H), make([]float32, H)
				for k := range 4 {
					for j := range H {
						gates[k*H+j] = cs.g[k]
					}
				}
				for j := range c {
					c[j] = cs.c
				}
				hOut, cOut := make([]float32, H), make([]float32, H)
				LSTMCell(hOut, cOut, gates, b, c)
				for j := range H {
					if !sameBits(cOut[j], cs.wantC) || !sameBits(hOut[j], cs.wantH) {
						t.Fatalf("%s, H=%d: c'[%d], h'[%d] = %v, %v; want %v, %v", cs.name, H, j, j, cOut[j], hOut[j], cs.wantC, cs.wantH)
					}
				}
			}
		}
	})
}

func TestGRUCellSpecial(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	cases := []struct {
		name  string
		g     [3]float32 // r, z, W_nx·x (biases 0)
		nh, h float32
		want  float32 // NaN: want NaN
	}{
		{"NaN r", [3]float32{nan, 0, 0}, 1, 1, nan},
		{"NaN h", [3]float32{0, 0, 0}, 1, nan, nan},
		{"NaN nh, r=0", [3]float32{-inf, 0, 0}, nan, 1, nan},
		{"r=0, nh=Inf", [3]float32{-inf, 0, 0}, inf, 1, nan},
		{"n=1, z=½", [3]float32{0, 0, inf}, 0, 0, 0.5},
		{"z=1", [3]float32{0, inf, 0}, 0, 0.25, 0.25},
		{"z=0, n=−1", [3]float32{1, -inf, -inf}, 5, 3, -1},
	}
	forEachISA(t, func(t *testing.T) {
		for _, cs := range cases {
			for _, H := range []int{1, 8, 17} {
				gates := make([]float32, 3*H)
				for k := range 3 {
					for j := range H {
						gates[k*H+j] = cs.g[k]
					}
				}
				nh, h := make([]float32, H), make([]float32, H)
				for j := range h {
					nh[j], h[j] = cs.nh, cs.h
				}
				hOut := make([]float32, H)
				GRUCell(hOut, gates, nh, make([]float32, 3*H), make([]float32, 3*H), h)
				for j := range H {
					if !sameBits(hOut[j], cs.want) {
						t.Fatalf("%s, H=%d: h'[%d] = %v, want %v", cs.name, H, j, hOut[j], cs.want)
					}
				}
			}
		}
	})
}

func TestCellPanics(t *testing.T) {
	f := func(n int) []float32 { return make([]float32, n) }
	mustPanic(t, "heed/kernels: LSTMCell: len(c)=2, len(hOut)=2, len(cOut)=2, len(gates)=7, len(b)=8; want len(hOut)=len(cOut)=len(c) and len(gates)=len(b)=4·len(c)",
		func() { LSTMCell(f(2), f(2), f(7), f(8), f(2)) })
	mustPanic(t, "heed/kernels: LSTMCell: len(c)=2, len(hOut)=3, len(cOut)=2, len(gates)=8, len(b)=8; want len(hOut)=len(cOut)=len(c) and len(gates)=len(b)=4·len(c)",
		func() { LSTMCell(f(3), f(2), f(8), f(8), f(2)) })
	mustPanic(t, "heed/kernels: GRUCell: len(h)=2, len(hOut)=2, len(gates)=6, len(nh)=1, len(bx)=6, len(bh)=6; want len(hOut)=len(nh)=len(h) and len(gates)=len(bx)=len(bh)=3·len(h)",
		func() { GRUCell(f(2), f(6), f(1), f(6), f(6), f(2)) })
	mustPanic(t, "heed/kernels: GRUCell: len(h)=2, len(hOut)=2, len(gates)=6, len(nh)=2, len(bx)=6, len(bh)=5; want len(hOut)=len(nh)=len(h) and len(gates)=len(bx)=len(bh)=3·len(h)",
		func() { GRUCell(f(2), f(6), f(2), f(6), f(5), f(2)) })
	// Empty is fine.
	LSTMCell(nil, nil, nil, nil, nil)
	GRUCell(nil, nil, nil, nil, nil, nil)
}

func TestCellAllocs(t *testing.T) {
	const H = 100
	gates, b, c, hOut, cOut := make([]float32, 4*H), make([]float32, 4*H), make([]float32, H), make([]float32, H), make([]float32, H)
	forEachISA(t, func(t *testing.T) {
		for name, f := range map[string]func(){
			"LSTMCell": func() { LSTMCell(hOut, cOut, gates, b, c) },
			"GRUCell":  func() { GRUCell(hOut, gates[:3*H], c, b[:3*H], b[H:], cOut) },
		} {
			if a := allocs.Count(10, f); a != 0 {
				t.Errorf("%s allocates %d times in the measured calls", name, a)
			}
		}
	})
}
