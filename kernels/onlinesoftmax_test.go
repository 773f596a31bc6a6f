package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/heedml/heed/internal/allocs"
)

// checkOnlineSoftmax runs OnlineSoftmax on a copy of x with running max m
// (finite result) and fails t unless m' is the exact max, every x[i] is within
// the documented bound of the float64 e^(x[i]−m') and the sum within γₙ of
// the sum of the new x.
func checkOnlineSoftmax(t *testing.T, what string, x []float32, m float32) {
	t.Helper()
	got := append([]float32(nil), x...)
	gm, gs := OnlineSoftmax(got, m)
	want := float64(m)
	for _, v := range x {
		want = math.Max(want, float64(v))
	}
	if len(x) == 0 {
		if gm != m || gs != 0 {
			t.Fatalf("%s: empty x gives (%v, %v), want (%v, 0)", what, gm, gs, m)
		}
		return
	}
	if float64(gm) != want {
		t.Fatalf("%s: max %v, want %v", what, gm, want)
	}
	var s float64
	for i, v := range x {
		d := float64(v) - want
		e := math.Exp(d)
		bound := 0x1p-126
		if e > 0 {
			bound += (math.Abs(d) + 4) * u * e
		}
		if err := math.Abs(float64(got[i]) - e); !(err <= bound) {
			t.Fatalf("%s: x[%d] = %v → %v, want %v ± %.3g", what, i, v, got[i], e, bound)
		}
		s += float64(got[i])
	}
	if err := math.Abs(float64(gs) - s); !(err <= gamma(len(x))*s) {
		t.Fatalf("%s: sum %v, want %v ± %.3g", what, gs, s, gamma(len(x))*s)
	}
}

// TestOnlineSoftmax checks every length through 4 vectors of the widest ISA
// and longer rows, with the running max below, inside and above the row's
// range and −Inf, and −Inf entries, against float64, under every ISA.
func TestOnlineSoftmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	forEachISA(t, func(t *testing.T) {
		for _, n := range lengths(16) {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 8)
			}
			if n > 3 {
				x[n/3] = float32(math.Inf(-1))
			}
			for _, m := range []float32{float32(math.Inf(-1)), -100, 0, 5, 100} {
				checkOnlineSoftmax(t, fmt.Sprintf("n=%d m=%v", n, m), x, m)
				// The SIMD kernels take every finite row of a vector or
				// more (AVX-512 and NEON: every finite row).
				if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
					continue
				}
				if Active() != Generic && n >= 8 {
					if _, _, st := onlineSoftmax(append([]float32(nil), x...), m); st != softmaxDone {
						t.Fatalf("n=%d m=%v: kernel status %d", n, m, st)
					}
				}
			}
		}
	})
}

// TestOnlineSoftmaxSpecial checks the special values on every ISA: NaN in x
// or m, +Inf in x or m, and rows of −Inf, at lengths that put them in the
// vector loops and in the tails.
func TestOnlineSoftmaxSpecial(t *testing.T) {
	inf, ninf := float32(math.Inf(1)), float32(math.Inf(-1))
	nan := float32(math.NaN())
	forEachISA(t, func(t *testing.T) {
		for _, n := range []int{1, 3, 8, 9, 16, 17, 33, 64, 100} {
			for _, pos := range []int{0, n / 2, n - 1} {
				for _, tc := range []struct {
					name string
					v, m float32 // x[pos] = v
					fill float32 // the other elements
					// wantMax, wantSum; want is x[i] for i ≠ pos, wantPos x[pos]
					wantMax, wantSum, want, wantPos float32
				}{
					{"NaN in x", nan, 0, 1, nan, nan, nan, nan},
					{"NaN in x, m −Inf", nan, ninf, 1, nan, nan, nan, nan},
					{"NaN in x, rest −Inf", nan, ninf, ninf, nan, nan, nan, nan},
					{"NaN m", 1, nan, 1, nan, nan, nan, nan},
					{"+Inf in x", inf, 0, 1, inf, 1, 0, 1},
					{"+Inf m", 2, inf, 1, inf, 0, 0, 0},
					{"all −Inf", ninf, ninf, ninf, ninf, 0, 0, 0},
					{"−Inf in x", ninf, ninf, 0, 0, float32(n - 1), 1, 0},
				} {
					if n == 1 && tc.name == "−Inf in x" {
						continue // no finite element
					}
					x := make([]float32, n)
					for i := range x {
						x[i] = tc.fill
					}
					x[pos] = tc.v
					gm, gs := OnlineSoftmax(x, tc.m)
					same := func(a, b float32) bool { return a == b || (a != a && b != b) }
					if !same(gm, tc.wantMax) || !same(gs, tc.wantSum) {
						t.Fatalf("%s n=%d pos=%d: (%v, %v), want (%v, %v)", tc.name, n, pos, gm, gs, tc.wantMax, tc.wantSum)
					}
					for i, v := range x {
						w := tc.want
						if i == pos {
							w = tc.wantPos
						}
						if !same(v, w) {
							t.Fatalf("%s n=%d pos=%d: x[%d] = %v, want %v", tc.name, n, pos, i, v, w)
						}
					}
				}
			}
		}
	})
}

func TestOnlineSoftmaxNoAllocs(t *testing.T) {
	x := make([]float32, 300)
	forEachISA(t, func(t *testing.T) {
		if got := allocs.Count(20, func() { OnlineSoftmax(x, 0) }); got != 0 {
			t.Errorf("OnlineSoftmax allocates %d times in the measured calls", got)
		}
	})
}
