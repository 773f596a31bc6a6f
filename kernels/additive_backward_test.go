package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// additiveGrads is the state of AdditiveScoreBackwardAdd's outputs.
type additiveGrads struct {
	dq, dv []float32
	dk     Matrix // Rows = 0: no key gradient
}

// clone returns a copy of g with its own buffers (dk packed).
func (g additiveGrads) clone() additiveGrads {
	c := additiveGrads{dq: append([]float32(nil), g.dq...), dv: append([]float32(nil), g.dv...)}
	c.dk = Matrix{Rows: g.dk.Rows, Cols: g.dk.Cols, Stride: g.dk.Cols, Data: make([]float32, g.dk.Rows*g.dk.Cols)}
	for s := 0; s < g.dk.Rows; s++ {
		copy(c.dk.Row(s), g.dk.Row(s))
	}
	return c
}

// checkAdditiveBackward checks got, the gradients after the call, against
// fallback's bits (from before, the gradients on entry) and, where every
// input of a row with ds ≠ 0 is finite and nothing can overflow, against the
// float64 gradients within the doc's bounds.
func checkAdditiveBackward(t *testing.T, what string, got, before additiveGrads, k Matrix, q, v, ds []float32) {
	t.Helper()
	want := before.clone()
	var dkd []float32
	if want.dk.Rows > 0 {
		dkd = want.dk.Data
	}
	fallback.AdditiveScoreBackwardAdd(want.dq, want.dv, dkd, want.dk.Stride, k.Data, k.Stride, q, v, ds)
	same := func(name string, s int, a, b []float32) {
		for i := range a {
			if !sameBits(a[i], b[i]) {
				t.Fatalf("%s: %d×%d: %s[%d][%d] = %v [%#x], fallback %v [%#x]", what, k.Rows, k.Cols, name, s, i, a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
			}
		}
	}
	same("dq", 0, got.dq, want.dq)
	same("dv", 0, got.dv, want.dv)
	for s := 0; s < got.dk.Rows; s++ {
		same("dk", s, got.dk.Row(s), want.dk.Row(s))
	}

	// The float64 gradients and the bounds.
	d := k.Cols
	finite := true
	m := 0
	for s, g := range ds {
		if g == 0 {
			continue
		}
		m++
		finite = finite && isFinite(g)
		for _, x := range k.Row(s) {
			finite = finite && isFinite(x)
		}
	}
	for i := 0; i < d; i++ {
		finite = finite && isFinite(q[i]) && isFinite(v[i]) && isFinite(before.dq[i]) && isFinite(before.dv[i])
	}
	if !finite {
		return
	}
	for i := 0; i < d; i++ {
		dv, dq := float64(before.dv[i]), float64(before.dq[i])
		absT, absV, tiny := math.Abs(dv), math.Abs(dq), 0.0
		for s, g := range ds {
			if g == 0 {
				continue
			}
			th := math.Tanh(float64(q[i]) + float64(k.Row(s)[i]))
			gv := float64(g) * float64(v[i])
			dv += float64(g) * th
			dq += gv * (1 - th*th)
			absT += math.Abs(float64(g) * th)
			absV += math.Abs(gv)
			rowTiny := (1 + 6*math.Abs(float64(g))*(1+math.Abs(float64(v[i])))) * eta
			tiny += rowTiny
			if got.dk.Rows > 0 {
				dk0 := float64(before.dk.Row(s)[i])
				exact := dk0 + gv*(1-th*th)
				bound := gamma(14)*(math.Abs(dk0)+math.Abs(gv)) + rowTiny
				if math.Abs(dk0)+math.Abs(gv) < math.MaxFloat32/2 && !within(got.dk.Row(s)[i], exact, bound) {
					t.Fatalf("%s: %d×%d: dk[%d][%d] = %v, want %v ± %.3g", what, k.Rows, k.Cols, s, i, got.dk.Row(s)[i], exact, bound)
				}
			}
		}
		if absT < math.MaxFloat32/2 {
			if b := gamma(m+6)*absT + tiny; !within(got.dv[i], dv, b) {
				t.Fatalf("%s: %d×%d: dv[%d] = %v, want %v ± %.3g (m=%d)", what, k.Rows, k.Cols, i, got.dv[i], dv, b, m)
			}
		}
		if absV < math.MaxFloat32/2 {
			if b := gamma(m+13)*absV + tiny; !within(got.dq[i], dq, b) {
				t.Fatalf("%s: %d×%d: dq[%d] = %v, want %v ± %.3g (m=%d)", what, k.Rows, k.Cols, i, got.dq[i], dq, b, m)
			}
		}
	}
}

// additiveBackwardCase builds a case of rows×cols: K (stride cols+pad) with
// scores spread by scale, q, v, ds with some rows masked (ds = 0, their K
// rows poisoned with NaN and ±Inf), and nonzero gradients on entry; dk has
// its own stride, or no rows when !withDK. Every slice sits in a slab of
// canaries; ok checks them.
func additiveBackwardCase(t *testing.T, rng *rand.Rand, rows, cols, pad int, withDK bool) (g additiveGrads, k Matrix, q, v, ds []float32, ok func()) {
	var oks []func()
	sl := func(n int) []float32 {
		s, ok := slab(t, n, rng.IntN(16))
		oks = append(oks, ok)
		return s
	}
	mat := func(stride int) Matrix {
		d := sl(max(rows-1, 0)*stride + cols)
		if rows == 0 || cols == 0 {
			d = d[:0]
		}
		return Matrix{Rows: rows, Cols: cols, Stride: stride, Data: d}
	}
	scale := float32(math.Ldexp(1, rng.IntN(5)-3))
	k = mat(cols + pad)
	q, v, ds = sl(cols), sl(cols), sl(rows)
	fill(rng, q)
	fill(rng, v)
	fill(rng, ds)
	for i := range q {
		q[i] *= scale
	}
	for s := 0; s < rows; s++ {
		r := k.Row(s)
		fill(rng, r)
		for i := range r {
			r[i] *= scale
		}
		if rng.IntN(4) == 0 {
			ds[s] = 0
			for i := range r {
				r[i] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1}[rng.IntN(4)]
			}
		}
	}
	g.dq, g.dv = sl(cols), sl(cols)
	fill(rng, g.dq)
	fill(rng, g.dv)
	if withDK {
		g.dk = mat(cols + 2*pad + 1)
		for s := 0; s < rows; s++ {
			fill(rng, g.dk.Row(s))
		}
	}
	return g, k, q, v, ds, func() {
		for _, ok := range oks {
			ok()
		}
	}
}

// TestAdditiveScoreBackward runs every column count through four AVX-512
// vectors and one, longer rows, and several row counts (the row blocks and
// what is left of them), with and without dk, padded strides, masked rows
// and canaries.
func TestAdditiveScoreBackward(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(91, 92))
		for ci, cols := range additiveCols {
			for ri, rows := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 37} {
				if !sparseKeeps(ci, ri, 3) && rows > 5 {
					continue
				}
				for _, pad := range []int{0, 3} {
					for _, withDK := range []bool{true, false} {
						g, k, q, v, ds, ok := additiveBackwardCase(t, rng, rows, cols, pad, withDK)
						before := g.clone()
						AdditiveScoreBackwardAdd(g.dq, g.dv, g.dk, k, q, v, ds)
						ok()
						checkAdditiveBackward(t, "AdditiveScoreBackwardAdd", g, before, k, q, v, ds)
					}
				}
			}
		}
	})
}

// TestAdditiveScoreBackwardSpecial mixes special values into the inputs of
// rows with ds ≠ 0 and into ds, and checks saturation (w = 0 exactly).
func TestAdditiveScoreBackwardSpecial(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(93, 94))
		for _, cols := range []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100} {
			for trial := 0; trial < 30; trial++ {
				if !sparseKeeps(cols, trial, 4) {
					continue
				}
				rows := 1 + rng.IntN(9)
				g, k, q, v, ds, _ := additiveBackwardCase(t, rng, rows, cols, 0, trial%2 == 0)
				for n := 0; n < 1+trial%4; n++ {
					sl := [][]float32{k.Data, q, v, ds, g.dq, g.dv}[rng.IntN(6)]
					sl[rng.IntN(len(sl))] = specials[rng.IntN(len(specials))]
				}
				before := g.clone()
				AdditiveScoreBackwardAdd(g.dq, g.dv, g.dk, k, q, v, ds)
				checkAdditiveBackward(t, "AdditiveScoreBackwardAdd", g, before, k, q, v, ds)
			}
		}
		// Saturation: |q + K| large gives t = ±1, so dq and dk get exactly
		// nothing and dv gets ±ds.
		k := Matrix{Rows: 2, Cols: 20, Stride: 20, Data: make([]float32, 40)}
		q, v := make([]float32, 20), make([]float32, 20)
		for i := range q {
			q[i], v[i] = 50, 1
			k.Data[20+i] = -100
		}
		dq, dv := make([]float32, 20), make([]float32, 20)
		dk := Matrix{Rows: 2, Cols: 20, Stride: 20, Data: make([]float32, 40)}
		AdditiveScoreBackwardAdd(dq, dv, dk, k, q, v, []float32{2, 3})
		for i := range dq {
			if dq[i] != 0 || dv[i] != -1 || dk.Data[i] != 0 || dk.Data[20+i] != 0 {
				t.Fatalf("saturated: dq[%d] = %v, dv = %v, dk = %v, %v; want 0, −1, 0, 0", i, dq[i], dv[i], dk.Data[i], dk.Data[20+i])
			}
		}
	})
}

// TestAdditiveScoreBackwardMasked checks that rows with ds = 0 contribute
// nothing: a masked row whose K holds NaN and ±Inf changes no output bit,
// −0 included, and its dk row is not written.
func TestAdditiveScoreBackwardMasked(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		for _, cols := range []int{1, 8, 17, 64} {
			k := Matrix{Rows: 3, Cols: cols, Stride: cols, Data: make([]float32, 3*cols)}
			q, v, dq, dv := make([]float32, cols), make([]float32, cols), make([]float32, cols), make([]float32, cols)
			dk := Matrix{Rows: 3, Cols: cols, Stride: cols, Data: make([]float32, 3*cols)}
			negZero := float32(math.Copysign(0, -1))
			for i := range q {
				q[i], v[i], dq[i], dv[i] = float32(math.Inf(-1)), float32(math.NaN()), negZero, negZero
				k.Data[i], k.Data[cols+i], k.Data[2*cols+i] = float32(math.Inf(1)), float32(math.NaN()), 1
			}
			for i := range dk.Data {
				dk.Data[i] = canary
			}
			AdditiveScoreBackwardAdd(dq, dv, dk, k, q, v, []float32{0, negZero, 0})
			for i := range dq {
				if math.Float32bits(dq[i]) != 0x80000000 || math.Float32bits(dv[i]) != 0x80000000 {
					t.Fatalf("cols=%d: every row masked: dq[%d] = %v, dv = %v, want −0", cols, i, dq[i], dv[i])
				}
			}
			for i, x := range dk.Data {
				if math.Float32bits(x) != math.Float32bits(canary) {
					t.Fatalf("cols=%d: dk.Data[%d] = %v written for a masked row", cols, i, x)
				}
			}
		}
	})
}

func TestAdditiveScoreBackwardPanics(t *testing.T) {
	const name = "heed/kernels: AdditiveScoreBackwardAdd: "
	k := Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}
	f := func() []float32 { return make([]float32, 3) }
	q, v, dq, dv, ds := f(), f(), f(), f(), make([]float32, 2)
	dk := Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}
	mustPanic(t, name+"k is 2×3 but len(q)=2, len(v)=3, len(dq)=3, len(dv)=3, len(ds)=2",
		func() { AdditiveScoreBackwardAdd(dq, dv, dk, k, q[:2], v, ds) })
	mustPanic(t, name+"k is 2×3 but len(q)=3, len(v)=3, len(dq)=3, len(dv)=3, len(ds)=1",
		func() { AdditiveScoreBackwardAdd(dq, dv, dk, k, q, v, ds[:1]) })
	mustPanic(t, name+"k is 2×3 but len(q)=3, len(v)=3, len(dq)=4, len(dv)=3, len(ds)=2",
		func() { AdditiveScoreBackwardAdd(make([]float32, 4), dv, dk, k, q, v, ds) })
	mustPanic(t, name+"k is 2×3 but dk is 1×3: want k's shape or no rows",
		func() { AdditiveScoreBackwardAdd(dq, dv, Matrix{Rows: 1, Cols: 3, Stride: 3, Data: f()}, k, q, v, ds) })
	mustPanic(t, name+"dk is 2×3 with stride 3: len(dk.Data)=5 < 6",
		func() {
			AdditiveScoreBackwardAdd(dq, dv, Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 5)}, k, q, v, ds)
		})
	mustPanic(t, name+"dq overlaps dv", func() { AdditiveScoreBackwardAdd(dq, dq, dk, k, q, v, ds) })
	mustPanic(t, name+"dv overlaps dk", func() { AdditiveScoreBackwardAdd(dq, dk.Data[3:], dk, k, q, v, ds) })
	mustPanic(t, name+"dq overlaps k", func() { AdditiveScoreBackwardAdd(k.Data[1:4], dv, dk, k, q, v, ds) })
	buf := make([]float32, 6)
	mustPanic(t, name+"dk overlaps q", func() {
		AdditiveScoreBackwardAdd(dq, dv, Matrix{Rows: 2, Cols: 3, Stride: 3, Data: buf}, k, buf[3:], v, ds)
	})
	mustPanic(t, name+"dv overlaps ds", func() { AdditiveScoreBackwardAdd(dq, buf[:3], dk, k, q, v, buf[2:4]) })
	AdditiveScoreBackwardAdd(dq, dv, Matrix{}, k, q, v, ds)
}

// FuzzAdditiveScoreBackward checks every ISA against fallback's bits (and,
// for finite inputs, the float64 bounds) on fuzzed q, v, ds and K, with and
// without dk.
func FuzzAdditiveScoreBackward(f *testing.F) {
	f.Add(byte(3), []byte{})
	f.Add(byte(1), []byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x7f\x00\x00\x00\x00\x00\x00\x80\x3f"))
	f.Fuzz(func(t *testing.T, colsB byte, data []byte) {
		x := floats(data)
		d := int(colsB)%40 + 1
		if len(x) < 2*d {
			return
		}
		q, v, rest := x[:d], x[d:2*d], x[2*d:]
		rows := min(len(rest)/(d+1), maxFuzzRows/4)
		ds, kd := rest[:rows], rest[rows:rows+rows*d]
		k := Matrix{Rows: rows, Cols: d, Stride: d, Data: kd}
		eachISA(func(isa string) {
			for _, withDK := range []bool{true, false} {
				g := additiveGrads{dq: make([]float32, d), dv: make([]float32, d)}
				if withDK {
					g.dk = Matrix{Rows: rows, Cols: d, Stride: d, Data: make([]float32, rows*d)}
				}
				before := g.clone()
				AdditiveScoreBackwardAdd(g.dq, g.dv, g.dk, k, q, v, ds)
				checkAdditiveBackward(t, isa+" AdditiveScoreBackwardAdd", g, before, k, q, v, ds)
			}
		})
	})
}
