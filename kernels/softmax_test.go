package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// softmax64 is the float64 oracle: the exact softmax of the float32 inputs,
// for rows whose maximum is finite.
func softmax64(x []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	p := make([]float64, len(x))
	var s float64
	for i, v := range x {
		p[i] = math.Exp(float64(v) - m)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// checkSoftmax fails t unless got is the softmax of x within the documented
// bounds: each output within (|x[i]−m| + n + 4)·u relative (2⁻¹²⁶ absolute
// where the exact value is subnormal), and Σ within (n+2)·u of 1. x must have a
// finite maximum and no NaN.
func checkSoftmax(t *testing.T, what string, got, x []float32) {
	t.Helper()
	n := len(x)
	if n == 0 {
		return
	}
	want := softmax64(x)
	m := float64(fallback.Max(x))
	var sum float64
	for i, p := range want {
		g := float64(got[i])
		bound := (math.Abs(float64(x[i])-m) + float64(n) + 4) * u * p
		if p < 0x1p-126 {
			bound = 0x1p-126
		}
		if err := math.Abs(g - p); !(err <= bound) {
			t.Fatalf("%s: n=%d: p[%d] = %v, want %v ± %.3g (error %.3g = %.2f·u relative; x[i]−m = %v)",
				what, n, i, got[i], p, bound, err, err/p/u, float64(x[i])-m)
		}
		sum += g
	}
	if err, bound := math.Abs(sum-1), float64(n+2)*u; !(err <= bound) {
		t.Fatalf("%s: n=%d: Σp = 1 %+.3g, beyond (n+2)·u = %.3g", what, n, sum-1, bound)
	}
}

// softmaxSpecialRow reports whether x has a NaN or a non-finite maximum, for
// which the result must match the fallback bit for bit.
func softmaxSpecialRow(x []float32) bool {
	m := fallback.Max(x)
	return len(x) > 0 && !isFinite(m)
}

// checkSoftmaxAny checks got = Softmax(x) for any x: the fallback's bits when
// x has a NaN or a non-finite maximum, the oracle bounds otherwise.
func checkSoftmaxAny(t *testing.T, what string, got, x []float32) {
	t.Helper()
	if softmaxSpecialRow(x) {
		want := make([]float32, len(x))
		fallback.Softmax(want, x)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: n=%d: p[%d] = %v (%#x), fallback %v (%#x); x[i] = %v", what, len(x), i,
					got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]), x[i])
			}
		}
		return
	}
	for i, v := range x {
		if math.IsInf(float64(v), -1) && got[i] != 0 {
			t.Fatalf("%s: n=%d: masked x[%d] = −Inf gives %v, want 0", what, len(x), i, got[i])
		}
	}
	checkSoftmax(t, what, got, x)
}

func TestSoftmax(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		forEachSlab(t, 64, []int{0, 3}, func(n, off int, s [][]float32) {
			x, dst := s[0], s[1]
			for _, spread := range []float32{1, 30} {
				for i := range dst {
					dst[i] = canary // as a fresh slab: an output not written shows
				}
				fill(rng, x)
				for i := range x {
					x[i] *= spread
				}
				orig := append([]float32(nil), x...)
				Softmax(dst, x)
				checkSoftmax(t, "Softmax", dst, orig)
				for i := range x {
					if math.Float32bits(x[i]) != math.Float32bits(orig[i]) {
						t.Fatalf("n=%d: x[%d] changed", n, i)
					}
				}
				// In place: the same bits as out of place.
				Softmax(x, x)
				for i := range x {
					if math.Float32bits(x[i]) != math.Float32bits(dst[i]) {
						t.Fatalf("n=%d: in place p[%d] = %v, out of place %v", n, i, x[i], dst[i])
					}
				}
			}
		})
	})
}

// TestSoftmaxFallback checks the fallback itself against the oracle.
func TestSoftmaxFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range smallLengths {
		x, dst := make([]float32, n), make([]float32, n)
		fill(rng, x)
		fallback.Softmax(dst, x)
		checkSoftmax(t, "fallback.Softmax", dst, x)
	}
}

// TestSoftmaxRange covers wide spreads, where most exponentials underflow, and
// rows sitting at large offsets, where x−m is not exact.
func TestSoftmaxRange(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, n := range []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 33, 100, 1000, 4099} {
			for _, c := range []struct{ base, spread float64 }{
				{0, 200}, {0, 1e-6}, {1e4, 50}, {-1e30, 1e25}, {3e38, 1e33}, {-3e38, 1e33}, {0, 1e38},
			} {
				x, dst := make([]float32, n), make([]float32, n)
				for i := range x {
					x[i] = float32(c.base + (rng.Float64()*2-1)*c.spread)
				}
				Softmax(dst, x)
				checkSoftmax(t, "Softmax", dst, x)
			}
		}
	})
}

// TestSoftmaxTight aims at the tightest case of the bound: short rows whose
// x−m sits just past a power of two, where rounding x−m costs the whole
// |x−m|·u and the exponential's own error must fit in the (n+4)·u left.
func TestSoftmaxTight(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(19, 20))
		for _, n := range []int{2, 3} {
			x, dst := make([]float32, n), make([]float32, n)
			for _, d := range []float64{1, 4, 16, 64} {
				for trial := 0; trial < 20000; trial++ {
					m := float32(0.25 + rng.Float64()*8)
					x[0] = m
					for i := 1; i < n; i++ {
						x[i] = m - float32(d*(1+rng.Float64()*0.02))
					}
					Softmax(dst, x)
					checkSoftmax(t, "Softmax", dst, x)
				}
			}
		}
	})
}

func TestSoftmaxSpecial(t *testing.T) {
	inf, ninf := float32(math.Inf(1)), float32(math.Inf(-1))
	// Fixed rows with their exact results.
	cases := []struct {
		x, want []float32
	}{
		{[]float32{ninf, ninf, ninf}, []float32{0, 0, 0}},
		{[]float32{ninf}, []float32{0}},
		{[]float32{1, inf, 2, inf}, []float32{0, 0.5, 0, 0.5}},
		{[]float32{ninf, inf, ninf}, []float32{0, 1, 0}},
		{[]float32{ninf, 3, ninf}, []float32{0, 1, 0}},
		{[]float32{0, ninf, 0, ninf}, []float32{0.5, 0, 0.5, 0}},
		{[]float32{5}, []float32{1}},
		{[]float32{-math.MaxFloat32, math.MaxFloat32}, []float32{0, 1}},
	}
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			for _, pad := range []int{0, 8, 16, 17} {
				// Pad with −Inf before and after: the same result with zeros added.
				x := make([]float32, 0, len(c.x)+2*pad)
				for i := 0; i < pad; i++ {
					x = append(x, ninf)
				}
				x = append(x, c.x...)
				for i := 0; i < pad; i++ {
					x = append(x, ninf)
				}
				dst := make([]float32, len(x))
				Softmax(dst, x)
				for i, g := range dst {
					w := float32(0)
					if i >= pad && i < pad+len(c.x) {
						w = c.want[i-pad]
					}
					if math.Float32bits(g) != math.Float32bits(w) {
						t.Fatalf("Softmax(%v) = %v, want %v at %d", x, dst, w, i)
					}
				}
			}
		}
		// NaN anywhere, whatever its sign and payload, gives all default NaNs,
		// in place or not.
		for _, n := range []int{1, 2, 7, 8, 9, 16, 17, 31, 33, 100, 257} {
			for _, at := range []int{0, n / 2, n - 1} {
				for j, fillv := range []float32{1, ninf, inf, -3} {
					nan := math.Float32frombits([]uint32{0x7fc00000, 0x7fc03030, 0xffc12345, 0x7f800001}[j])
					x := make([]float32, n)
					for i := range x {
						x[i] = fillv
					}
					x[at] = nan
					dst := make([]float32, n)
					Softmax(dst, x)
					Softmax(x, x)
					for i := range dst {
						if math.Float32bits(dst[i]) != 0x7fc00000 || math.Float32bits(x[i]) != 0x7fc00000 {
							t.Fatalf("n=%d, NaN at %d among %v: p[%d] = %v (in place %v), want NaN", n, at, fillv, i, dst[i], x[i])
						}
					}
				}
			}
		}
		// Random specials against the fallback, and masked rows against the oracle.
		rng := rand.New(rand.NewPCG(11, 12))
		for _, n := range []int{1, 2, 5, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 257, 1000} {
			for trial := 0; trial < 40; trial++ {
				x := make([]float32, n)
				fill(rng, x)
				for k := 0; k < 1+trial%4; k++ {
					x[rng.IntN(n)] = specials[rng.IntN(len(specials))]
				}
				if trial%5 == 0 { // a masked row: a random run of −Inf
					a := rng.IntN(n)
					b := a + rng.IntN(n-a+1)
					for i := a; i < b; i++ {
						x[i] = ninf
					}
				}
				dst := make([]float32, n)
				Softmax(dst, x)
				checkSoftmaxAny(t, "Softmax", dst, x)
				y := append([]float32(nil), x...)
				Softmax(y, y)
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(dst[i]) {
						t.Fatalf("n=%d: in place p[%d] = %v, out of place %v", n, i, y[i], dst[i])
					}
				}
			}
		}
	})
}

func TestSoftmaxGuard(t *testing.T) {
	forEachGuarded(t, 257, 2, func(t *testing.T, n int, get func(int) []float32) {
		x, dst := get(n), get(n)
		orig := append([]float32(nil), x...)
		Softmax(dst, x)
		checkSoftmax(t, "Softmax", dst, orig)
		Softmax(x, x)
		checkSoftmax(t, "Softmax in place", x, orig)
	})
}

func TestSoftmaxPanics(t *testing.T) {
	mustPanic(t, "heed/kernels: Softmax: len(dst)=3 != len(x)=4", func() { Softmax(make([]float32, 3), make([]float32, 4)) })
}

func FuzzSoftmax(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f"))
	f.Add([]byte("\x00\x00\x80\xff\x00\x00\x80\xff\x00\x00\x80\x7f\x00\x00\x80\x3f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := floats(data)
		eachISA(func(isa string) {
			dst := make([]float32, len(x))
			Softmax(dst, x)
			checkSoftmaxAny(t, isa+" Softmax", dst, x)
			y := append([]float32(nil), x...)
			Softmax(y, y)
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(dst[i]) {
					t.Fatalf("%v: in place p[%d] = %v, out of place %v", isa, i, y[i], dst[i])
				}
			}
		})
	})
}
