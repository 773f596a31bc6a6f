package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/heedml/heed/internal/allocs"
	"github.com/heedml/heed/internal/fallback"
)

// trainLengths are every hidden size through four AVX-512 vector pairs and
// one (the pairs, the single vector and the tails of every ISA), then larger.
var trainLengths = append(lengths(129)[:130], 257, 512, 1000, 1023)

// sameAll fails t unless got and want have the same bits element by element
// (any NaN matches any NaN).
func sameAll(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for j := range want {
		if !sameBits(got[j], want[j]) {
			t.Fatalf("%s[%d] = %v [%#x], want %v [%#x]", what, j, got[j], math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
		}
	}
}

// outSlabs returns n-element slices at offset off (mod 16) of slabs of
// canaries, one per length, and a function that fails t if a canary changed.
func outSlabs(t *testing.T, off int, ns ...int) ([][]float32, func()) {
	s := make([][]float32, len(ns))
	oks := make([]func(), len(ns))
	for i, n := range ns {
		s[i], oks[i] = slab(t, n, (off+3*i)%16)
	}
	return s, func() {
		t.Helper()
		for _, ok := range oks {
			ok()
		}
	}
}

// lstmBackward64 is LSTMCellBackward's formulas in float64 on the float32
// inputs at position j, with the error bounds its doc states.
func lstmBackward64(act, cPrev, dh, dc []float32, j int) (want [5]float64, tol [5]float64) {
	H := len(cPrev)
	i, f, g, o, tc := float64(act[j]), float64(act[H+j]), float64(act[2*H+j]), float64(act[3*H+j]), float64(act[4*H+j])
	d, dcj, cp := float64(dh[j]), float64(dc[j]), float64(cPrev[j])
	dct := dcj + d*o*(1-tc*tc)
	E := u*math.Abs(dcj) + gamma(4)*math.Abs(d*o)
	g4 := gamma(4)
	// dGates i, f, g, o, then dcPrev.
	want[0], want[1], want[2], want[3], want[4] = dct*g*i*(1-i), dct*cp*f*(1-f), dct*i*(1-g*g), d*tc*o*(1-o), dct*f
	for k, F := range []float64{g * i, cp * f, i} {
		tol[k] = (1+g4)*math.Abs(F)*E + g4*math.Abs(dct*F)
	}
	tol[3] = g4 * math.Abs(d*tc*o)
	tol[4] = (1+u)*math.Abs(f)*E + u*math.Abs(dct*f)
	return want, tol
}

// gruBackward64 is GRUCellBackward's formulas in float64 at position j, with
// its doc's bounds: dar, daz, dan, dq, dhPrev.
func gruBackward64(act, h, dh []float32, j int) (want [5]float64, tol [5]float64) {
	H := len(h)
	r, z, n, q := float64(act[j]), float64(act[H+j]), float64(act[2*H+j]), float64(act[3*H+j])
	d, hj := float64(dh[j]), float64(h[j])
	dan := d * (1 - z) * (1 - n*n)
	want = [5]float64{dan * q * r * (1 - r), d * (hj - n) * z * (1 - z), dan, dan * r, d * z}
	tol = [5]float64{gamma(9) * math.Abs(d*q*r), gamma(5) * math.Abs(d*(hj-n)*z), gamma(5) * math.Abs(d),
		gamma(6) * math.Abs(d*r), u * math.Abs(d*z)}
	return want, tol
}

func checkWithin(t *testing.T, what string, H, j int, got float32, want, tol float64) {
	t.Helper()
	if d := math.Abs(float64(got) - want); !(d <= tol) {
		t.Fatalf("H=%d: %s[%d] = %v, want %v ± %.3g (error %.3g)", H, what, j, got, want, tol, d)
	}
}

func TestLSTMCellTrain(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 1))
	forEachISA(t, func(t *testing.T) {
		for _, H := range trainLengths {
			gates, b, c := randIn(rng, 4*H, 10), randIn(rng, 4*H, 2), randIn(rng, H, 6)
			gates0, b0, c0 := slices.Clone(gates), slices.Clone(b), slices.Clone(c)
			out, ok := outSlabs(t, H, H, H, 5*H)
			hOut, cOut, act := out[0], out[1], out[2]
			LSTMCellTrain(hOut, cOut, act, gates, b, c)
			ok()
			if !slices.Equal(gates, gates0) || !slices.Equal(b, b0) || !slices.Equal(c, c0) {
				t.Fatalf("H=%d: an input was modified", H)
			}
			wantH, wantC, wantA := make([]float32, H), make([]float32, H), make([]float32, 5*H)
			LSTMCell(wantH, wantC, gates, b, c) // the same bits as the cell, on this ISA
			sameAll(t, "h'", hOut, wantH)
			sameAll(t, "c'", cOut, wantC)
			fallback.LSTMCellTrain(wantH, wantC, wantA, gates, b, c)
			sameAll(t, "h' (fallback)", hOut, wantH)
			sameAll(t, "act", act, wantA)
			// act holds the composition's activations.
			g := slices.Clone(gates)
			Add(g, g, b)
			Sigmoid(g[:2*H], g[:2*H])
			Tanh(g[2*H:3*H], g[2*H:3*H])
			Sigmoid(g[3*H:], g[3*H:])
			sameAll(t, "act gates", act[:4*H], g)
			tc := make([]float32, H)
			Tanh(tc, cOut)
			sameAll(t, "act tanh(c')", act[4*H:], tc)
			// In place: cOut = c.
			cc := slices.Clone(c)
			LSTMCellTrain(hOut, cc, act, gates, b, cc)
			sameAll(t, "c' in place", cc, cOut)
			sameAll(t, "act in place", act, wantA)
		}
	})
}

func TestGRUCellTrain(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 2))
	forEachISA(t, func(t *testing.T) {
		for _, H := range trainLengths {
			gates, nh := randIn(rng, 3*H, 8), randIn(rng, H, 8)
			bx, bh, h := randIn(rng, 3*H, 2), randIn(rng, 3*H, 2), randIn(rng, H, 2)
			gates0, nh0, h0 := slices.Clone(gates), slices.Clone(nh), slices.Clone(h)
			out, ok := outSlabs(t, H, H, 4*H)
			hOut, act := out[0], out[1]
			GRUCellTrain(hOut, act, gates, nh, bx, bh, h)
			ok()
			if !slices.Equal(gates, gates0) || !slices.Equal(nh, nh0) || !slices.Equal(h, h0) {
				t.Fatalf("H=%d: an input was modified", H)
			}
			want, wantA := make([]float32, H), make([]float32, 4*H)
			GRUCell(want, gates, nh, bx, bh, h)
			sameAll(t, "h'", hOut, want)
			fallback.GRUCellTrain(want, wantA, gates, nh, bx, bh, h)
			sameAll(t, "h' (fallback)", hOut, want)
			sameAll(t, "act", act, wantA)
			// act holds the composition's r, z, n and q.
			s, q := slices.Clone(gates), slices.Clone(nh)
			Add(s, s, bx)
			Add(s[:2*H], s[:2*H], bh[:2*H])
			Sigmoid(s[:2*H], s[:2*H])
			Add(q, q, bh[2*H:])
			sameAll(t, "act r, z", act[:2*H], s[:2*H])
			sameAll(t, "act q", act[3*H:], q)
			for j := range H { // (gates + bx) + r·q, each rounded once
				s[2*H+j] = (gates[2*H+j] + bx[2*H+j]) + float32(s[j]*q[j])
			}
			Tanh(s[2*H:], s[2*H:])
			sameAll(t, "act n", act[2*H:3*H], s[2*H:])
			hh := slices.Clone(h)
			GRUCellTrain(hh, act, gates, nh, bx, bh, hh)
			sameAll(t, "h' in place", hh, hOut)
		}
	})
}

// lstmTrainInputs returns act from LSTMCellTrain on random pre-activations
// (so the gates lie in their ranges, some saturated), cPrev, dh and dc.
func lstmTrainInputs(rng *rand.Rand, H int) (act, cPrev, dh, dc []float32) {
	gates, b := randIn(rng, 4*H, 10), randIn(rng, 4*H, 2)
	cPrev, dh, dc = randIn(rng, H, 6), randIn(rng, H, 3), randIn(rng, H, 3)
	act = make([]float32, 5*H)
	fallback.LSTMCellTrain(make([]float32, H), make([]float32, H), act, gates, b, cPrev)
	return act, cPrev, dh, dc
}

// gruTrainInputs returns act from GRUCellTrain, h and dh.
func gruTrainInputs(rng *rand.Rand, H int) (act, h, dh []float32) {
	gates, nh := randIn(rng, 3*H, 8), randIn(rng, H, 8)
	bx, bh := randIn(rng, 3*H, 2), randIn(rng, 3*H, 2)
	h, dh = randIn(rng, H, 2), randIn(rng, H, 3)
	act = make([]float32, 4*H)
	fallback.GRUCellTrain(make([]float32, H), act, gates, nh, bx, bh, h)
	return act, h, dh
}

func TestLSTMCellBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 3))
	names := [5]string{"dGates i", "dGates f", "dGates g", "dGates o", "dcPrev"}
	forEachISA(t, func(t *testing.T) {
		for _, H := range trainLengths {
			act, cPrev, dh, dc := lstmTrainInputs(rng, H)
			in0 := slices.Concat(act, cPrev, dh, dc)
			out, ok := outSlabs(t, H, 4*H, H)
			dG, dcPrev := out[0], out[1]
			LSTMCellBackward(dG, dcPrev, act, cPrev, dh, dc)
			ok()
			if !slices.Equal(slices.Concat(act, cPrev, dh, dc), in0) {
				t.Fatalf("H=%d: an input was modified", H)
			}
			wantG, wantC := make([]float32, 4*H), make([]float32, H)
			fallback.LSTMCellBackward(wantG, wantC, act, cPrev, dh, dc)
			sameAll(t, "dGates", dG, wantG)
			sameAll(t, "dcPrev", dcPrev, wantC)
			for j := range H {
				want, tol := lstmBackward64(act, cPrev, dh, dc, j)
				got := [5]float32{dG[j], dG[H+j], dG[2*H+j], dG[3*H+j], dcPrev[j]}
				for k := range got {
					checkWithin(t, names[k], H, j, got[k], want[k], tol[k])
				}
			}
			// In place: dcPrev = dc.
			dd := slices.Clone(dc)
			LSTMCellBackward(dG, dd, act, cPrev, dh, dd)
			sameAll(t, "dcPrev in place", dd, wantC)
			sameAll(t, "dGates in place", dG, wantG)
		}
	})
}

func TestGRUCellBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 4))
	names := [5]string{"dar", "daz", "dan", "dq", "dhPrev"}
	forEachISA(t, func(t *testing.T) {
		for _, H := range trainLengths {
			act, h, dh := gruTrainInputs(rng, H)
			in0 := slices.Concat(act, h, dh)
			out, ok := outSlabs(t, H, 3*H, 3*H, H)
			dGx, dGh, dhPrev := out[0], out[1], out[2]
			GRUCellBackward(dGx, dGh, dhPrev, act, h, dh)
			ok()
			if !slices.Equal(slices.Concat(act, h, dh), in0) {
				t.Fatalf("H=%d: an input was modified", H)
			}
			wx, wh, wp := make([]float32, 3*H), make([]float32, 3*H), make([]float32, H)
			fallback.GRUCellBackward(wx, wh, wp, act, h, dh)
			sameAll(t, "dGx", dGx, wx)
			sameAll(t, "dGh", dGh, wh)
			sameAll(t, "dhPrev", dhPrev, wp)
			for j := range H {
				want, tol := gruBackward64(act, h, dh, j)
				got := [5]float32{dGx[j], dGx[H+j], dGx[2*H+j], dGh[2*H+j], dhPrev[j]}
				for k := range got {
					checkWithin(t, names[k], H, j, got[k], want[k], tol[k])
				}
				if !sameBits(dGh[j], dGx[j]) || !sameBits(dGh[H+j], dGx[H+j]) {
					t.Fatalf("H=%d: dGh's r, z at %d differ from dGx's", H, j)
				}
			}
			dd := slices.Clone(dh)
			GRUCellBackward(dGx, dGh, dd, act, h, dd)
			sameAll(t, "dhPrev in place", dd, wp)
			sameAll(t, "dGx in place", dGx, wx)
		}
	})
}

// TestCellBackwardFormulas checks the float64 formulas of lstmBackward64 and
// gruBackward64 (the kernels' contracts) against central finite differences
// of the float64 forward cells: L = Σ dh·h' + Σ dc·c'.
func TestCellBackwardFormulas(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 5))
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	lstm := func(a [4]float64, c float64) (h, cn float64) {
		cn = sig(a[1])*c + sig(a[0])*math.Tanh(a[2])
		return sig(a[3]) * math.Tanh(cn), cn
	}
	gru := func(ar, az, an0, q, h float64) float64 {
		r, z := sig(ar), sig(az)
		n := math.Tanh(an0 + r*q)
		return n + z*(h-n)
	}
	const eps = 1e-6
	near := func(what string, got, fd float64) {
		t.Helper()
		if math.Abs(got-fd) > 1e-7*(1+math.Abs(fd)) {
			t.Fatalf("%s: formula %v, finite differences %v", what, got, fd)
		}
	}
	for trial := range 200 {
		var a [4]float64
		for k := range a {
			a[k] = rng.Float64()*6 - 3
		}
		c, dh, dc := rng.Float64()*4-2, rng.NormFloat64(), rng.NormFloat64()
		L := func(a [4]float64, c float64) float64 { h, cn := lstm(a, c); return dh*h + dc*cn }
		_, cn := lstm(a, c)
		act := []float32{float32(sig(a[0])), float32(sig(a[1])), float32(math.Tanh(a[2])), float32(sig(a[3])), float32(math.Tanh(cn))}
		// The formulas in float64 against the finite differences, then
		// lstmBackward64 (on the float32 roundings) against the formulas.
		i, f, g, o, tc := sig(a[0]), sig(a[1]), math.Tanh(a[2]), sig(a[3]), math.Tanh(cn)
		dct := dc + dh*o*(1-tc*tc)
		formula := [5]float64{dct * g * i * (1 - i), dct * c * f * (1 - f), dct * i * (1 - g*g), dh * tc * o * (1 - o), dct * f}
		for k := range 4 {
			ap, am := a, a
			ap[k] += eps
			am[k] -= eps
			near("LSTM dGates", formula[k], (L(ap, c)-L(am, c))/(2*eps))
		}
		near("LSTM dcPrev", formula[4], (L(a, c+eps)-L(a, c-eps))/(2*eps))
		w, _ := lstmBackward64(act, []float32{float32(c)}, []float32{float32(dh)}, []float32{float32(dc)}, 0)
		for k := range w {
			if math.Abs(w[k]-formula[k]) > 1e-5*(1+math.Abs(formula[k])) {
				t.Fatalf("trial %d: lstmBackward64[%d] = %v, formula %v", trial, k, w[k], formula[k])
			}
		}

		ar, az, an0, q, h := rng.Float64()*6-3, rng.Float64()*6-3, rng.Float64()*4-2, rng.Float64()*4-2, rng.Float64()*2-1
		G := func(ar, az, an0, q, h float64) float64 { return dh * gru(ar, az, an0, q, h) }
		r, z := sig(ar), sig(az)
		n := math.Tanh(an0 + r*q)
		dan := dh * (1 - z) * (1 - n*n)
		gf := [5]float64{dan * q * r * (1 - r), dh * (h - n) * z * (1 - z), dan, dan * r, dh * z}
		near("GRU dar", gf[0], (G(ar+eps, az, an0, q, h)-G(ar-eps, az, an0, q, h))/(2*eps))
		near("GRU daz", gf[1], (G(ar, az+eps, an0, q, h)-G(ar, az-eps, an0, q, h))/(2*eps))
		near("GRU dan", gf[2], (G(ar, az, an0+eps, q, h)-G(ar, az, an0-eps, q, h))/(2*eps))
		near("GRU dq", gf[3], (G(ar, az, an0, q+eps, h)-G(ar, az, an0, q-eps, h))/(2*eps))
		near("GRU dhPrev", gf[4], (G(ar, az, an0, q, h+eps)-G(ar, az, an0, q, h-eps))/(2*eps))
		gact := []float32{float32(r), float32(z), float32(n), float32(q)}
		gw, _ := gruBackward64(gact, []float32{float32(h)}, []float32{float32(dh)}, 0)
		for k := range gw {
			if math.Abs(gw[k]-gf[k]) > 1e-5*(1+math.Abs(gf[k])) {
				t.Fatalf("trial %d: gruBackward64[%d] = %v, formula %v", trial, k, gw[k], gf[k])
			}
		}
	}
}

// TestCellTrainSpecialMix puts the harness's special values at random places
// of every operand of the four kernels: every ISA gives fallback's bits (NaN
// for NaN).
func TestCellTrainSpecialMix(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 6))
	mix := func(ss ...[]float32) {
		for _, s := range ss {
			for i := range s {
				if rng.IntN(4) == 0 {
					s[i] = specials[rng.IntN(len(specials))]
				}
			}
		}
	}
	forEachISA(t, func(t *testing.T) {
		for _, H := range []int{1, 7, 8, 9, 16, 17, 31, 32, 33, 100} {
			for trial := range 20 {
				if !sparseKeeps(H, trial, 5) {
					continue
				}
				gates, b, c := randIn(rng, 4*H, 10), randIn(rng, 4*H, 2), randIn(rng, H, 6)
				mix(gates, b, c)
				hO, cO, act := make([]float32, H), make([]float32, H), make([]float32, 5*H)
				wh, wc, wa := make([]float32, H), make([]float32, H), make([]float32, 5*H)
				LSTMCellTrain(hO, cO, act, gates, b, c)
				fallback.LSTMCellTrain(wh, wc, wa, gates, b, c)
				sameAll(t, "LSTMCellTrain h'", hO, wh)
				sameAll(t, "LSTMCellTrain c'", cO, wc)
				sameAll(t, "LSTMCellTrain act", act, wa)
				dh, dc := randIn(rng, H, 3), randIn(rng, H, 3)
				mix(act, dh, dc)
				dG, dcp, wG, wcp := make([]float32, 4*H), make([]float32, H), make([]float32, 4*H), make([]float32, H)
				LSTMCellBackward(dG, dcp, act, c, dh, dc)
				fallback.LSTMCellBackward(wG, wcp, act, c, dh, dc)
				sameAll(t, "LSTMCellBackward dGates", dG, wG)
				sameAll(t, "LSTMCellBackward dcPrev", dcp, wcp)

				g3, nh := randIn(rng, 3*H, 8), randIn(rng, H, 8)
				bx, bh, h := randIn(rng, 3*H, 2), randIn(rng, 3*H, 2), randIn(rng, H, 2)
				mix(g3, nh, bx, bh, h)
				gh, ga, wgh, wga := make([]float32, H), make([]float32, 4*H), make([]float32, H), make([]float32, 4*H)
				GRUCellTrain(gh, ga, g3, nh, bx, bh, h)
				fallback.GRUCellTrain(wgh, wga, g3, nh, bx, bh, h)
				sameAll(t, "GRUCellTrain h'", gh, wgh)
				sameAll(t, "GRUCellTrain act", ga, wga)
				mix(ga, dh)
				dx, dhh, dp := make([]float32, 3*H), make([]float32, 3*H), make([]float32, H)
				wx, whh, wp := make([]float32, 3*H), make([]float32, 3*H), make([]float32, H)
				GRUCellBackward(dx, dhh, dp, ga, h, dh)
				fallback.GRUCellBackward(wx, whh, wp, ga, h, dh)
				sameAll(t, "GRUCellBackward dGx", dx, wx)
				sameAll(t, "GRUCellBackward dGh", dhh, whh)
				sameAll(t, "GRUCellBackward dhPrev", dp, wp)
			}
		}
	})
}

// TestCellBackwardSpecial checks the special values the docs name: a
// saturated gate's pre-activation gets a zero gradient, or NaN where the
// gradient it multiplies is infinite; NaN reaches what reads it.
func TestCellBackwardSpecial(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	type lcase struct {
		name          string
		act           [5]float32 // i, f, g, o, tc
		cPrev, dh, dc float32
		want          [5]float32 // dGates i, f, g, o, dcPrev
	}
	lcases := []lcase{
		{"saturated", [5]float32{1, 0, 1, 1, 1}, 2, 3, 5, [5]float32{0, 0, 0, 0, 0}},
		{"saturated, dc=Inf", [5]float32{1, 0.5, 0.5, 0.5, 0}, 2, 1, inf, [5]float32{nan, inf, inf, 0, inf}},
		{"f=0, dc=Inf", [5]float32{0.5, 0, 0.5, 0.5, 0}, 2, 1, inf, [5]float32{inf, nan, inf, 0, nan}},
		{"NaN dh", [5]float32{0.5, 0.5, 0.5, 0.5, 0.5}, 1, nan, 1, [5]float32{nan, nan, nan, nan, nan}},
		{"NaN cPrev", [5]float32{0.5, 0.5, 0.5, 0.5, 0.5}, nan, 1, 1, [5]float32{0.171875, nan, 0.515625, 0.125, 0.6875}},
	}
	type gcase struct {
		name  string
		act   [4]float32 // r, z, n, q
		h, dh float32
		want  [5]float32 // dar, daz, dan, dq, dhPrev
	}
	gcases := []gcase{
		{"saturated", [4]float32{1, 1, 1, 2}, 3, 5, [5]float32{0, 0, 0, 0, 5}},
		{"z=0, n=±1", [4]float32{0.5, 0, -1, 2}, 3, 1, [5]float32{0, 0, 0, 0, 0}},
		{"dh=Inf, z=1", [4]float32{0.5, 1, 0.5, 2}, 3, inf, [5]float32{nan, nan, nan, nan, inf}},
		{"NaN h", [4]float32{0.5, 0.5, 0.5, 2}, nan, 1, [5]float32{0.1875, nan, 0.375, 0.1875, 0.5}},
	}
	forEachISA(t, func(t *testing.T) {
		for _, H := range []int{1, 8, 17, 33} {
			for _, cs := range lcases {
				act, cp, dh, dc := make([]float32, 5*H), make([]float32, H), make([]float32, H), make([]float32, H)
				for j := range H {
					for k := range 5 {
						act[k*H+j] = cs.act[k]
					}
					cp[j], dh[j], dc[j] = cs.cPrev, cs.dh, cs.dc
				}
				dG, dcp := make([]float32, 4*H), make([]float32, H)
				LSTMCellBackward(dG, dcp, act, cp, dh, dc)
				for j := range H {
					got := [5]float32{dG[j], dG[H+j], dG[2*H+j], dG[3*H+j], dcp[j]}
					for k := range got {
						if !sameBits(got[k], cs.want[k]) {
							t.Fatalf("LSTM %s, H=%d: output %d at %d = %v, want %v", cs.name, H, k, j, got[k], cs.want[k])
						}
					}
				}
			}
			for _, cs := range gcases {
				act, h, dh := make([]float32, 4*H), make([]float32, H), make([]float32, H)
				for j := range H {
					for k := range 4 {
						act[k*H+j] = cs.act[k]
					}
					h[j], dh[j] = cs.h, cs.dh
				}
				dx, dhh, dp := make([]float32, 3*H), make([]float32, 3*H), make([]float32, H)
				GRUCellBackward(dx, dhh, dp, act, h, dh)
				for j := range H {
					got := [5]float32{dx[j], dx[H+j], dx[2*H+j], dhh[2*H+j], dp[j]}
					for k := range got {
						if !sameBits(got[k], cs.want[k]) {
							t.Fatalf("GRU %s, H=%d: output %d at %d = %v, want %v", cs.name, H, k, j, got[k], cs.want[k])
						}
					}
				}
			}
		}
	})
}

func TestCellTrainPanics(t *testing.T) {
	f := func(n int) []float32 { return make([]float32, n) }
	mustPanic(t, "heed/kernels: LSTMCellTrain: len(c)=2, len(hOut)=2, len(cOut)=2, len(act)=8, len(gates)=8, len(b)=8; want len(hOut)=len(cOut)=len(c), len(act)=5·len(c) and len(gates)=len(b)=4·len(c)",
		func() { LSTMCellTrain(f(2), f(2), f(8), f(8), f(8), f(2)) })
	mustPanic(t, "heed/kernels: LSTMCellBackward: len(cPrev)=2, len(dGates)=8, len(dcPrev)=2, len(act)=10, len(dh)=2, len(dc)=1; want len(dGates)=4·len(cPrev), len(act)=5·len(cPrev) and len(dcPrev)=len(dh)=len(dc)=len(cPrev)",
		func() { LSTMCellBackward(f(8), f(2), f(10), f(2), f(2), f(1)) })
	mustPanic(t, "heed/kernels: GRUCellTrain: len(h)=2, len(hOut)=2, len(act)=6, len(gates)=6, len(nh)=2, len(bx)=6, len(bh)=6; want len(hOut)=len(nh)=len(h), len(act)=4·len(h) and len(gates)=len(bx)=len(bh)=3·len(h)",
		func() { GRUCellTrain(f(2), f(6), f(6), f(2), f(6), f(6), f(2)) })
	mustPanic(t, "heed/kernels: GRUCellBackward: len(h)=2, len(dGx)=6, len(dGh)=5, len(dhPrev)=2, len(act)=8, len(dh)=2; want len(dGx)=len(dGh)=3·len(h), len(act)=4·len(h) and len(dhPrev)=len(dh)=len(h)",
		func() { GRUCellBackward(f(6), f(5), f(2), f(8), f(2), f(2)) })

	// Overlaps: in place where allowed, a panic naming the arguments
	// otherwise.
	const H = 4
	buf := f(64)
	mustPanic(t, "heed/kernels: LSTMCellTrain: hOut overlaps act",
		func() { LSTMCellTrain(buf[:H], buf[40:44], buf[2:2+5*H], f(4*H), f(4*H), f(H)) })
	mustPanic(t, "heed/kernels: LSTMCellTrain: cOut overlaps c without being it",
		func() { LSTMCellTrain(f(H), buf[:H], f(5*H), f(4*H), f(4*H), buf[1:1+H]) })
	mustPanic(t, "heed/kernels: LSTMCellTrain: act overlaps gates",
		func() { LSTMCellTrain(f(H), f(H), buf[:5*H], buf[:4*H], f(4*H), f(H)) })
	mustPanic(t, "heed/kernels: LSTMCellBackward: dGates overlaps act",
		func() { LSTMCellBackward(buf[:4*H], f(H), buf[:5*H], f(H), f(H), f(H)) })
	mustPanic(t, "heed/kernels: LSTMCellBackward: dcPrev overlaps dh",
		func() { LSTMCellBackward(f(4*H), buf[:H], f(5*H), f(H), buf[:H], f(H)) })
	mustPanic(t, "heed/kernels: LSTMCellBackward: dcPrev overlaps dc without being it",
		func() { LSTMCellBackward(f(4*H), buf[:H], f(5*H), f(H), f(H), buf[2:2+H]) })
	mustPanic(t, "heed/kernels: GRUCellTrain: hOut overlaps h without being it",
		func() { GRUCellTrain(buf[1:1+H], f(4*H), f(3*H), f(H), f(3*H), f(3*H), buf[:H]) })
	mustPanic(t, "heed/kernels: GRUCellTrain: act overlaps nh",
		func() { GRUCellTrain(f(H), buf[:4*H], f(3*H), buf[4*H-1:5*H-1], f(3*H), f(3*H), f(H)) })
	mustPanic(t, "heed/kernels: GRUCellBackward: dGx overlaps dGh",
		func() { GRUCellBackward(buf[:3*H], buf[3*H-1:6*H-1], f(H), f(4*H), f(H), f(H)) })
	mustPanic(t, "heed/kernels: GRUCellBackward: dhPrev overlaps dh without being it",
		func() { GRUCellBackward(f(3*H), f(3*H), buf[:H], f(4*H), f(H), buf[3:3+H]) })
	mustPanic(t, "heed/kernels: GRUCellBackward: dGh overlaps h",
		func() { GRUCellBackward(f(3*H), buf[:3*H], f(H), f(4*H), buf[5:5+H], f(H)) })
	// Empty is fine.
	LSTMCellTrain(nil, nil, nil, nil, nil, nil)
	LSTMCellBackward(nil, nil, nil, nil, nil, nil)
	GRUCellTrain(nil, nil, nil, nil, nil, nil, nil)
	GRUCellBackward(nil, nil, nil, nil, nil, nil)
}

func TestCellTrainAllocs(t *testing.T) {
	skipSparse(t)
	const H = 100
	rng := rand.New(rand.NewPCG(36, 7))
	act, cPrev, dh, dc := lstmTrainInputs(rng, H)
	gact, h, gdh := gruTrainInputs(rng, H)
	gates, b := randIn(rng, 4*H, 3), randIn(rng, 4*H, 3)
	o1, o2, o3, o4 := make([]float32, 4*H), make([]float32, 4*H), make([]float32, H), make([]float32, 5*H)
	forEachISA(t, func(t *testing.T) {
		for name, f := range map[string]func(){
			"LSTMCellTrain":    func() { LSTMCellTrain(o3, o1[:H], o4, gates, b, cPrev) },
			"LSTMCellBackward": func() { LSTMCellBackward(o1, o3, act, cPrev, dh, dc) },
			"GRUCellTrain":     func() { GRUCellTrain(o3, o1, gates[:3*H], dh, b[:3*H], b[H:], h) },
			"GRUCellBackward":  func() { GRUCellBackward(o1[:3*H], o2[:3*H], o3, gact, h, gdh) },
		} {
			if a := allocs.Count(10, f); a != 0 {
				t.Errorf("%s allocates %d times in the measured calls", name, a)
			}
		}
	})
}

// fuzzCells runs the four training kernels on data (taken as float32
// values, the operands cut from it) under every ISA and fails unless each
// gives fallback's bits.
func fuzzCells(t *testing.T, data []byte, lstm bool) {
	x := floats(data)
	check := func(isa, what string, got, want []float32) {
		for j := range want {
			if !sameBits(got[j], want[j]) {
				t.Fatalf("%s %s[%d] = %v [%#x], fallback %v [%#x]", isa, what, j, got[j], math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
			}
		}
	}
	if lstm {
		H := len(x) / 11 // gates and b 4H each, c, dh, dc
		gates, b, c, dh, dc := x[:4*H], x[4*H:8*H], x[8*H:9*H], x[9*H:10*H], x[10*H:11*H]
		wh, wc, wa := make([]float32, H), make([]float32, H), make([]float32, 5*H)
		fallback.LSTMCellTrain(wh, wc, wa, gates, b, c)
		// The backward on the forward's act, and on data taken as act.
		raw := x[:5*H]
		wG, wcp, rG, rcp := make([]float32, 4*H), make([]float32, H), make([]float32, 4*H), make([]float32, H)
		fallback.LSTMCellBackward(wG, wcp, wa, c, dh, dc)
		fallback.LSTMCellBackward(rG, rcp, raw, c, dh, dc)
		hO, cO, act, dG, dcp := make([]float32, H), make([]float32, H), make([]float32, 5*H), make([]float32, 4*H), make([]float32, H)
		eachISA(func(isa string) {
			LSTMCellTrain(hO, cO, act, gates, b, c)
			check(isa, "LSTMCellTrain h'", hO, wh)
			check(isa, "LSTMCellTrain c'", cO, wc)
			check(isa, "LSTMCellTrain act", act, wa)
			LSTMCellBackward(dG, dcp, wa, c, dh, dc)
			check(isa, "LSTMCellBackward dGates", dG, wG)
			check(isa, "LSTMCellBackward dcPrev", dcp, wcp)
			LSTMCellBackward(dG, dcp, raw, c, dh, dc)
			check(isa, "LSTMCellBackward (raw act) dGates", dG, rG)
			check(isa, "LSTMCellBackward (raw act) dcPrev", dcp, rcp)
		})
		return
	}
	H := len(x) / 12 // gates, bx, bh 3H each, nh, h, dh
	gates, bx, bh := x[:3*H], x[3*H:6*H], x[6*H:9*H]
	nh, h, dh := x[9*H:10*H], x[10*H:11*H], x[11*H:12*H]
	wh, wa := make([]float32, H), make([]float32, 4*H)
	fallback.GRUCellTrain(wh, wa, gates, nh, bx, bh, h)
	raw := x[:4*H]
	wx, whh, wp := make([]float32, 3*H), make([]float32, 3*H), make([]float32, H)
	rx, rhh, rp := make([]float32, 3*H), make([]float32, 3*H), make([]float32, H)
	fallback.GRUCellBackward(wx, whh, wp, wa, h, dh)
	fallback.GRUCellBackward(rx, rhh, rp, raw, h, dh)
	hO, act, dx, dhh, dp := make([]float32, H), make([]float32, 4*H), make([]float32, 3*H), make([]float32, 3*H), make([]float32, H)
	eachISA(func(isa string) {
		GRUCellTrain(hO, act, gates, nh, bx, bh, h)
		check(isa, "GRUCellTrain h'", hO, wh)
		check(isa, "GRUCellTrain act", act, wa)
		GRUCellBackward(dx, dhh, dp, wa, h, dh)
		check(isa, "GRUCellBackward dGx", dx, wx)
		check(isa, "GRUCellBackward dGh", dhh, whh)
		check(isa, "GRUCellBackward dhPrev", dp, wp)
		GRUCellBackward(dx, dhh, dp, raw, h, dh)
		check(isa, "GRUCellBackward (raw act) dGx", dx, rx)
		check(isa, "GRUCellBackward (raw act) dGh", dhh, rhh)
		check(isa, "GRUCellBackward (raw act) dhPrev", dp, rp)
	})
}

// fuzzSeed returns n float32 values as bytes: a ramp through [−3, 3) with
// NaN, ±Inf, 0 and 1 among them.
func fuzzSeed(n int) []byte {
	b := make([]byte, 0, 4*n)
	for i := range n {
		v := float32(i%13)/2 - 3
		switch i % 17 {
		case 3:
			v = float32(math.NaN())
		case 5:
			v = float32(math.Inf(1))
		case 7:
			v = float32(math.Inf(-1))
		case 11:
			v = 1
		case 13:
			v = 0
		}
		w := math.Float32bits(v)
		b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	return b
}

func FuzzLSTMCellBackward(f *testing.F) {
	f.Add([]byte{})
	f.Add(fuzzSeed(11))
	f.Add(fuzzSeed(11 * 19))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzCells(t, data, true) })
}

func FuzzGRUCellBackward(f *testing.F) {
	f.Add([]byte{})
	f.Add(fuzzSeed(12))
	f.Add(fuzzSeed(12 * 19))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzCells(t, data, false) })
}
