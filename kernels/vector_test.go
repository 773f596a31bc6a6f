package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// ones returns n ones: Sum(x) is Dot(x, ones(n)), which lets the sum tests
// reuse the dot product's oracle and special-value checks.
func ones(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// withSpecials returns a copy of x with 1–3 random elements replaced by special values.
func withSpecials(rng *rand.Rand, x []float32, trial int) []float32 {
	x = slices.Clone(x)
	if len(x) == 0 {
		return x
	}
	for k := 0; k < 1+trial%3; k++ {
		x[rng.IntN(len(x))] = specials[rng.IntN(len(specials))]
	}
	return x
}

// checkElem fails t unless, for finite inputs (finite reports that), got is
// within 2u·scale + η of exact (one rounding of the fused or the unfused
// result) or is the same infinity as the fallback's result want (the unfused
// product overflowed), and for other inputs got is the same special value as
// want.
func checkElem(t *testing.T, what string, i int, got, want float32, exact, scale float64, finite bool) {
	t.Helper()
	bound := 2*u*scale + eta
	switch {
	case finite && math.Abs(float64(got)-exact) <= bound:
	case finite && !isFinite(want) && sameSpecial(got, want):
	case !finite && sameSpecial(got, want):
	default:
		t.Fatalf("%s[%d] = %v, want %v ± %.3g (fallback %v)", what, i, got, exact, bound, want)
	}
}

func TestSum(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		forEachSlab(t, 64, []int{0}, func(n, off int, s [][]float32) {
			x := s[0]
			fill(rng, x)
			exact, abs := dot64(x, ones(n))
			checkDot(t, "Sum", Sum(x), exact, abs, n)
			checkDot(t, "fallback.Sum", fallback.Sum(x), exact, abs, n)
		})
	})
}

func TestSumSpecial(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 129, 257} {
			for trial := 0; trial < 50; trial++ {
				x := make([]float32, n)
				fill(rng, x)
				x = withSpecials(rng, x, trial)
				checkDotAny(t, "Sum", Sum(x), fallback.Sum(x), x, ones(n), false)
			}
		}
	})
}

func TestSumGuard(t *testing.T) {
	forEachGuarded(t, 257, 1, func(t *testing.T, n int, get func(int) []float32) {
		x := get(n)
		exact, abs := dot64(x, ones(n))
		checkDot(t, "Sum", Sum(x), exact, abs, n)
	})
}

func FuzzSum(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x80\x7f\x00\x00\x80\xff\x00\x00\xc0\x7f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := floats(data)
		want := fallback.Sum(x)
		eachISA(func(isa string) {
			checkDotAny(t, isa+" Sum", Sum(x), want, x, ones(len(x)), false)
		})
	})
}

// checkMax fails t unless Max(x) is exactly fallback.Max(x), sign of zero and
// NaN included.
func checkMax(t *testing.T, x []float32) {
	t.Helper()
	if got, want := Max(x), fallback.Max(x); !sameSpecial(got, want) {
		t.Fatalf("Max(%d elements) = %v (bits %#x), want %v (bits %#x)", len(x), got, math.Float32bits(got), want, math.Float32bits(want))
	}
}

func TestMax(t *testing.T) {
	nan, negZero := float32(math.NaN()), float32(math.Copysign(0, -1))
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		forEachSlab(t, 64, []int{0}, func(n, off int, s [][]float32) {
			fill(rng, s[0])
			checkMax(t, s[0])
		})
		for _, n := range smallLengths {
			if n > 300 {
				continue
			}
			x := make([]float32, n)
			for trial := 0; trial < 6; trial++ {
				fill(rng, x)
				checkMax(t, withSpecials(rng, x, trial))
			}
			// The maximum, a NaN, or the only +0 at each position in turn.
			for _, c := range []struct{ rest, at float32 }{
				{-1, 2}, {-1, nan}, {negZero, 0}, {-1, 0}, {-1, negZero},
				{float32(math.Inf(-1)), -5}, {1, nan},
			} {
				for i := range x {
					x[i] = c.rest
				}
				checkMax(t, x)
				for i := range x {
					if sparse && i >= 32 && i < n-32 && i%5 != 0 {
						continue // every lane and unrolled slot is among the rest
					}
					x[i] = c.at
					checkMax(t, x)
					x[i] = c.rest
				}
			}
		}
	})
}

// TestMaxSpecialPositions places each special value at every position of
// every vector lane and tail slot, among copies of a base value.
func TestMaxSpecialPositions(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	forEachISA(t, func(t *testing.T) {
		for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 20, 33, 37} {
			for pos := 0; pos < n; pos++ {
				for _, base := range []float32{negZero, 0, -1, float32(math.Inf(-1))} {
					for _, sp := range specials {
						x := make([]float32, n)
						for i := range x {
							x[i] = base
						}
						x[pos] = sp
						checkMax(t, x)
					}
				}
			}
		}
		if got := Max(nil); !math.IsInf(float64(got), -1) {
			t.Fatalf("Max(nil) = %v, want -Inf", got)
		}
	})
}

func TestMaxGuard(t *testing.T) {
	forEachGuarded(t, 257, 1, func(t *testing.T, n int, get func(int) []float32) {
		x := get(n)
		checkMax(t, x)
		if n > 0 {
			x[n-1] = 100
			checkMax(t, x)
			x[0] = float32(math.NaN())
			checkMax(t, x)
		}
	})
}

func FuzzMax(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x00\x80\x00\x00\x00\x00\x00\x00\x80\xff\x00\x00\xc0\x7f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := floats(data)
		eachISA(func(isa string) {
			checkMax(t, x)
		})
	})
}

// checkAxpy fails t unless every got[i], and fallback.Axpy's result, is
// y0[i] + alpha·x[i] as Axpy's contract allows: the IEEE result of the fused
// (one rounding) or the unfused (product rounded first) operation. A finite
// result must be within 2u·(|y0[i]| + |alpha·x[i]|) + η of the exact value;
// one that is not must be the fused or the unfused result's special value
// (they differ only when alpha·x[i] or the sum overflows).
func checkAxpy(t *testing.T, got []float32, alpha float32, x, y0 []float32) {
	t.Helper()
	want := slices.Clone(y0)
	fallback.Axpy(alpha, x, want)
	for i := range got {
		p := float64(alpha) * float64(x[i]) // exact
		exact, bound := float64(y0[i])+p, 2*u*(math.Abs(float64(y0[i]))+math.Abs(p))+eta
		unfused := y0[i] + float32(alpha*x[i]) // the conversion rounds the product
		fused := float32(math.FMA(float64(alpha), float64(x[i]), float64(y0[i])))
		for _, v := range []float32{got[i], want[i]} {
			switch {
			case isFinite(v) && math.Abs(float64(v)-exact) <= bound:
			case !isFinite(v) && (sameSpecial(v, unfused) || sameSpecial(v, fused)):
			default:
				t.Fatalf("Axpy[%d] = %v (fallback %v), want %v ± %.3g: fused %v, unfused %v", i, got[i], want[i], exact, bound, fused, unfused)
			}
		}
	}
}

// checkScale is checkAxpy for Scale: got = alpha·x0 within one rounding.
func checkScale(t *testing.T, got []float32, alpha float32, x0 []float32) {
	t.Helper()
	want := slices.Clone(x0)
	fallback.Scale(alpha, want)
	for i := range got {
		p := float64(alpha) * float64(x0[i])
		checkElem(t, "Scale", i, got[i], want[i], p, math.Abs(p)/2, isFinite(alpha) && isFinite(x0[i]))
	}
}

func TestAxpy(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		forEachSlab(t, 64, []int{0, 3}, func(n, off int, s [][]float32) {
			x, y := s[0], s[1]
			fill(rng, x)
			fill(rng, y)
			x0, y0 := slices.Clone(x), slices.Clone(y)
			alpha := float32(rng.Float64()*4 - 2)
			Axpy(alpha, x, y)
			if !slices.Equal(x, x0) {
				t.Fatalf("n=%d: Axpy changed x", n)
			}
			checkAxpy(t, y, alpha, x0, y0)
			// In place: y += alpha·y.
			Axpy(alpha, x, x)
			checkAxpy(t, x, alpha, x0, x0)
		})
	})
}

func TestAxpySpecial(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(15, 16))
		for _, n := range []int{1, 7, 8, 9, 31, 33, 64, 100, 257} {
			for trial := 0; trial < 30; trial++ {
				x, y := make([]float32, n), make([]float32, n)
				fill(rng, x)
				fill(rng, y)
				x, y = withSpecials(rng, x, trial), withSpecials(rng, y, trial+1)
				alpha := []float32{0.5, -3, 0, float32(math.Inf(1)), float32(math.NaN())}[trial%5]
				y0 := slices.Clone(y)
				Axpy(alpha, x, y)
				checkAxpy(t, y, alpha, x, y0)
			}
		}
	})
}

func TestAxpyGuard(t *testing.T) {
	forEachGuarded(t, 257, 2, func(t *testing.T, n int, get func(int) []float32) {
		x, y := get(n), get(n)
		y0 := slices.Clone(y)
		Axpy(1.5, x, y)
		checkAxpy(t, y, 1.5, x, y0)
		Axpy(-0.5, x, x)
		checkAxpy(t, x, -0.5, y0, y0) // get fills every operand alike: x was y0
	})
}

func TestAxpyPanics(t *testing.T) {
	mustPanic(t, "heed/kernels: Axpy: len(x)=3 != len(y)=4", func() { Axpy(1, make([]float32, 3), make([]float32, 4)) })
	mustPanic(t, "heed/kernels: Axpy: len(x)=5 != len(y)=0", func() { Axpy(1, make([]float32, 5), nil) })
}

func FuzzAxpy(f *testing.F) {
	f.Add([]byte{}, float32(1))
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x7f"), float32(-2))
	f.Fuzz(func(t *testing.T, data []byte, alpha float32) {
		v := floats(data)
		n := len(v) / 2
		x, y0 := v[:n], v[n:2*n]
		eachISA(func(isa string) {
			y := slices.Clone(y0)
			Axpy(alpha, x, y)
			checkAxpy(t, y, alpha, x, y0)
		})
	})
}

func TestScale(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 18))
		forEachSlab(t, 64, []int{0}, func(n, off int, s [][]float32) {
			x := s[0]
			fill(rng, x)
			x0 := slices.Clone(x)
			alpha := float32(rng.Float64()*4 - 2)
			Scale(x, alpha, x)
			checkScale(t, x, alpha, x0)
		})
	})
}

func TestScaleSpecial(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(19, 20))
		for _, n := range []int{1, 7, 8, 9, 31, 33, 64, 100, 257} {
			for trial := 0; trial < 30; trial++ {
				x := make([]float32, n)
				fill(rng, x)
				x = withSpecials(rng, x, trial)
				alpha := []float32{0.5, -3, 0, float32(math.Inf(-1)), float32(math.NaN()), 1e30}[trial%6]
				x0 := slices.Clone(x)
				Scale(x, alpha, x)
				checkScale(t, x, alpha, x0)
			}
		}
	})
}

func TestScaleGuard(t *testing.T) {
	forEachGuarded(t, 257, 1, func(t *testing.T, n int, get func(int) []float32) {
		x := get(n)
		x0 := slices.Clone(x)
		Scale(x, -2.5, x)
		checkScale(t, x, -2.5, x0)
	})
}

func FuzzScale(f *testing.F) {
	f.Add([]byte{}, float32(1))
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x7f"), float32(-2))
	f.Fuzz(func(t *testing.T, data []byte, alpha float32) {
		x0 := floats(data)
		eachISA(func(isa string) {
			x := slices.Clone(x0)
			Scale(x, alpha, x)
			checkScale(t, x, alpha, x0)
		})
	})
}

// TestAxpyOverflow puts an overflowing product alpha·x[i] against an infinite
// or finite y[i] at every position of short vectors: the result must be what
// the fused or the unfused IEEE operation gives (checkAxpy).
func TestAxpyOverflow(t *testing.T) {
	inf := float32(math.Inf(1))
	cases := []struct{ alpha, x, y float32 }{
		{1e38, 10, -inf}, {1e38, 10, inf}, {-1e38, 10, inf}, {1e38, -10, 3e38},
		{math.MaxFloat32, 2, -math.MaxFloat32}, {2e38, 2, -3e38}, {1e38, 10, 1},
	}
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			for _, n := range []int{1, 7, 8, 9, 16, 17, 33} {
				for pos := 0; pos < n; pos++ {
					x, y := make([]float32, n), make([]float32, n)
					for i := range x {
						x[i], y[i] = float32(i%5)-2, float32(i%3)
					}
					x[pos], y[pos] = c.x, c.y
					y0 := slices.Clone(y)
					Axpy(c.alpha, x, y)
					checkAxpy(t, y, c.alpha, x, y0)
				}
			}
		}
	})
}
