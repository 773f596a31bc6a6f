package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// logSoftmax64 is the float64 oracle: the exact log-softmax of the float32
// inputs, for rows whose maximum is finite.
func logSoftmax64(x []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	l := math.Log(s)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = (float64(v) - m) - l
	}
	return y
}

// checkLogSoftmax fails t unless got is the log-softmax of x within the
// documented bound (2·|x[i] − m| + 5·ln n + 1.5·n + 4)·u absolute, −Inf where the
// exact value is below −MaxFloat32. x must have a finite maximum and no NaN.
func checkLogSoftmax(t *testing.T, what string, got, x []float32) {
	t.Helper()
	n := len(x)
	want := logSoftmax64(x)
	m := float64(fallback.Max(x))
	// overflow is the least magnitude float32 rounding takes to ±Inf: half a
	// unit in the last place above MaxFloat32.
	const overflow = math.MaxFloat32 + 0x1p103
	for i, y := range want {
		g := float64(got[i])
		bound := (2*math.Abs(float64(x[i])-m) + 5*math.Log(float64(n)) + 1.5*float64(n) + 4) * u
		switch {
		case math.IsInf(y, -1): // x[i] = −Inf
			if !math.IsInf(g, -1) {
				t.Fatalf("%s: n=%d: y[%d] = %v, want -Inf", what, n, i, got[i])
			}
			continue
		case math.IsInf(g, -1):
			// Right only where the exact result, within the bound, reaches
			// the magnitude that rounds to −Inf.
			if y-bound <= -overflow {
				continue
			}
			t.Fatalf("%s: n=%d: y[%d] = -Inf, want %v ± %.3g", what, n, i, y, bound)
		}
		if err := math.Abs(g - y); !(err <= bound) {
			t.Fatalf("%s: n=%d: y[%d] = %v, want %v ± %.3g (error %.3g; x[i]−m = %v)",
				what, n, i, got[i], y, bound, err, float64(x[i])-m)
		}
	}
}

func TestLogSoftmaxLengths(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, n := range smallLengths {
			for off := 0; off < 16; off += 1 + n/32 {
				x, xok := slab(t, n, off)
				dst, dok := slab(t, n, (off+5)%16)
				fill(rng, x)
				scale := float32(math.Ldexp(1, rng.IntN(12)-2))
				for i := range x {
					x[i] *= scale
					if rng.IntN(32) == 0 {
						x[i] = float32(math.Inf(-1)) // masked
					}
				}
				if n > 0 {
					x[rng.IntN(n)] = 0.5 * scale // a finite maximum
				}
				LogSoftmax(dst, x)
				checkLogSoftmax(t, "LogSoftmax", dst, x)
				LogSoftmax(x, x)
				for i := range x {
					if math.Float32bits(x[i]) != math.Float32bits(dst[i]) {
						t.Fatalf("n=%d: in place y[%d] = %v, out of place %v", n, i, x[i], dst[i])
					}
				}
				xok()
				dok()
			}
		}
	})
}

// TestLogSoftmaxWide checks rows with a wide range, where Softmax's
// probabilities underflow but their logarithms are finite, and long rows.
func TestLogSoftmaxWide(t *testing.T) {
	cases := [][]float32{
		{0, -200, -1000, 3e38, -3e38},
		{1e30, 1e30, 0},
		{-1e-30, 1e-30, 0},
		{100, 0, -100, -1e4},
		{-3e38, -3e38},
	}
	forEachISA(t, func(t *testing.T) {
		for _, x := range cases {
			dst := make([]float32, len(x))
			LogSoftmax(dst, x)
			checkLogSoftmax(t, "LogSoftmax", dst, x)
		}
		rng := rand.New(rand.NewPCG(9, 10))
		for _, n := range []int{32000, 100003} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 8)
			}
			dst := make([]float32, n)
			LogSoftmax(dst, x)
			checkLogSoftmax(t, "LogSoftmax", dst, x)
		}
	})
}

func TestLogSoftmaxSpecial(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	ln2, ln3 := float32(math.Ln2), float32(math.Log(3))
	cases := []struct{ x, want []float32 }{
		{[]float32{}, []float32{}},
		{[]float32{-inf, -inf, -inf}, []float32{-inf, -inf, -inf}},
		{[]float32{1, inf, -inf, inf, 0}, []float32{-inf, -ln2, -inf, -ln2, -inf}},
		{[]float32{inf, inf, inf}, []float32{-ln3, -ln3, -ln3}},
		{[]float32{inf}, []float32{0}},
		{[]float32{3}, []float32{0}},
		{[]float32{1, -inf, 1}, []float32{-ln2, -inf, -ln2}},
		{[]float32{1, nan, inf}, []float32{nan, nan, nan}},
		{[]float32{-inf, nan}, []float32{nan, nan}},
	}
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			for _, rep := range []int{1, 9} { // the pattern repeated, to reach the vector loops
				x := make([]float32, 0, len(c.x)*rep)
				for r := 0; r < rep; r++ {
					x = append(x, c.x...)
				}
				dst := make([]float32, len(x))
				LogSoftmax(dst, x)
				for i := range dst {
					want := c.want[i%len(c.want)]
					if rep > 1 && want == -ln2 {
						want = float32(-math.Log(float64(2 * rep)))
					}
					if rep > 1 && want == -ln3 {
						want = float32(-math.Log(float64(3 * rep)))
					}
					if rep > 1 && want == 0 && c.x[0] == inf {
						want = float32(-math.Log(float64(rep)))
					}
					if rep > 1 && want == 0 && c.x[0] == 3 {
						want = float32(-math.Log(float64(rep)))
					}
					ok := sameSpecial(dst[i], want) || isFinite(want) && ulps(dst[i], want) <= maxULP
					if want != want {
						ok = dst[i] != dst[i] && math.Float32bits(dst[i]) == 0x7fc00000
					}
					if !ok {
						t.Fatalf("LogSoftmax(%v)[%d] = %v, want %v", x, i, dst[i], want)
					}
				}
			}
		}
	})
}

func TestLogSoftmaxPanics(t *testing.T) {
	mustPanic(t, "heed/kernels: LogSoftmax: len(dst)=5 != len(x)=4", func() { LogSoftmax(make([]float32, 5), make([]float32, 4)) })
}

func FuzzLogSoftmax(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x80\x7f\x00\x00\x80\xff\x00\x00\x00\x80"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := floats(data)
		want := make([]float32, len(x))
		fallback.LogSoftmax(want, x)
		got := make([]float32, len(x))
		eachISA(func(isa string) {
			LogSoftmax(got, x)
			if softmaxSpecialRow(x) {
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: y[%d] = %v, fallback %v", isa, i, got[i], want[i])
					}
				}
				return
			}
			if len(x) > 0 {
				checkLogSoftmax(t, isa, got, x)
			}
		})
	})
}

// TestLogSoftmaxGuard runs LogSoftmax and AddConstTo on slices flush against
// PROT_NONE pages, out of place and in place.
func TestLogSoftmaxGuard(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	forEachGuarded(t, 257, 2, func(t *testing.T, n int, get func(int) []float32) {
		x, dst := get(n), get(n)
		fill(rng, x)
		LogSoftmax(dst, x)
		checkLogSoftmax(t, "LogSoftmax", dst, x)
		AddConst(dst, 1.5, x)
		for i := range x {
			if dst[i] != x[i]+1.5 {
				t.Fatalf("n=%d: AddConstTo: dst[%d] = %v, want %v", n, i, dst[i], x[i]+1.5)
			}
		}
		LogSoftmax(x, x)
	})
}
