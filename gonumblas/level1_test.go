package gonumblas

import (
	"math"
	"testing"
)

func TestSdot(t *testing.T) { eachISA(t, testSdot) }

func testSdot(t *testing.T) {
	r := newRand(1)
	for _, n := range vecSizes {
		for _, incX := range incs {
			for _, incY := range incs {
				x, y := randVec(r, n, incX), randVec(r, n, incY)
				got := impl.Sdot(n, x, incX, y, incY)
				want := ref.Sdot(n, x, incX, y, incY)
				xs, ys := logical(x, n, incX), logical(y, n, incY)
				var exact, abs float64
				for i := range xs {
					exact += xs[i] * ys[i]
					abs += math.Abs(xs[i] * ys[i])
				}
				bound := gamma(n) * abs
				checkf(t, within(got, exact, bound), "Sdot n=%d incX=%d incY=%d: %v, exact %v, bound %g", n, incX, incY, got, exact, bound)
				checkf(t, within(want, exact, bound), "gonum Sdot n=%d incX=%d incY=%d: %v, exact %v, bound %g", n, incX, incY, want, exact, bound)
				if incX != 1 || incY != 1 {
					checkf(t, same(got, want), "Sdot n=%d incX=%d incY=%d: %v, gonum %v (must be gonum's)", n, incX, incY, got, want)
				}
			}
		}
	}
}

func TestSaxpy(t *testing.T) { eachISA(t, testSaxpy) }

func testSaxpy(t *testing.T) {
	r := newRand(2)
	for _, n := range vecSizes {
		for _, incX := range incs {
			for _, incY := range incs {
				for _, alpha := range scalars {
					x, y := randVec(r, n, incX), randVec(r, n, incY)
					got, want := append([]float32(nil), y...), append([]float32(nil), y...)
					impl.Saxpy(n, alpha, x, incX, got, incY)
					ref.Saxpy(n, alpha, x, incX, want, incY)
					checkAxpy(t, "Saxpy", n, alpha, x, incX, y, incY, got, want)
				}
			}
		}
	}
	// x and y the same slice: y = (1+α)·y.
	for _, n := range vecSizes {
		y := randVec(r, n, 1)
		got, want := append([]float32(nil), y...), append([]float32(nil), y...)
		impl.Saxpy(n, 0.75, got, 1, got, 1)
		ref.Saxpy(n, 0.75, want, 1, want, 1)
		checkAxpy(t, "Saxpy x=y", n, 0.75, y, 1, y, 1, got, want)
	}
}

// checkAxpy checks got against y + α·x (bound γ₂·(|y|+|α·x|)), the same bound
// for gonum's want, bit-identity where the call falls through, and that the
// gaps of y are untouched.
func checkAxpy(t *testing.T, name string, n int, alpha float32, x []float32, incX int, y []float32, incY int, got, want []float32) {
	t.Helper()
	xs, ys := logical(x, n, incX), logical(y, n, incY)
	gs, ws := logical(got, n, incY), logical(want, n, incY)
	for i := range xs {
		exact := ys[i] + float64(alpha)*xs[i]
		bound := gamma(2) * (math.Abs(ys[i]) + math.Abs(float64(alpha)*xs[i]))
		if !within(float32(gs[i]), exact, bound) || !within(float32(ws[i]), exact, bound) {
			t.Errorf("%s n=%d α=%v incX=%d incY=%d: y[%d]=%v, gonum %v, exact %v", name, n, alpha, incX, incY, i, gs[i], ws[i], exact)
			return
		}
	}
	if incX != 1 || incY != 1 || alpha == 0 {
		if i := sameSlice(got, want); i >= 0 {
			t.Errorf("%s n=%d α=%v incX=%d incY=%d: differs from gonum at %d", name, n, alpha, incX, incY, i)
		}
	}
	for i := range got {
		if y[i] == sentinel && got[i] != sentinel {
			t.Errorf("%s n=%d incY=%d: wrote y[%d] outside the vector", name, n, incY, i)
			return
		}
	}
}

func TestSscal(t *testing.T) { eachISA(t, testSscal) }

func testSscal(t *testing.T) {
	r := newRand(3)
	for _, n := range vecSizes {
		for _, inc := range incs {
			for _, alpha := range append(scalars, float32(math.Inf(1))) {
				x := randVec(r, n, inc)
				if n > 2 && inc > 0 {
					x[inc] = float32(math.NaN()) // α = 0 must store 0 over it, as gonum does
				}
				got, want := append([]float32(nil), x...), append([]float32(nil), x...)
				impl.Sscal(n, alpha, got, inc)
				ref.Sscal(n, alpha, want, inc)
				if i := sameSlice(got, want); i >= 0 {
					t.Errorf("Sscal n=%d α=%v inc=%d: x[%d]=%v, gonum %v", n, alpha, inc, i, got[i], want[i])
				}
			}
		}
	}
}

func TestSnrm2(t *testing.T) { eachISA(t, testSnrm2) }

func testSnrm2(t *testing.T) {
	r := newRand(4)
	for _, n := range vecSizes {
		for _, inc := range incs {
			for _, scale := range []float64{1, 1e-30, 1e-19, 1e19, 1e30} {
				x := randVec(r, n, inc)
				for i := 0; i < n; i++ {
					x[idx(i, n, inc)] *= float32(scale)
				}
				got, want := impl.Snrm2(n, x, inc), ref.Snrm2(n, x, inc)
				if inc < 0 || n < 2 {
					checkf(t, same(got, want), "Snrm2 n=%d inc=%d scale=%g: %v, gonum %v (must be gonum's)", n, inc, scale, got, want)
					continue
				}
				var ss float64
				for _, v := range logical(x, n, inc) {
					ss += v * v
				}
				exact := math.Sqrt(ss)
				// √(s·(1+δ)), |δ| ≤ γₙ, then one rounding.
				bound := (gamma(n)/2 + 0x1p-24) * exact * (1 + gamma(n))
				checkf(t, within(got, exact, bound), "Snrm2 n=%d inc=%d scale=%g: %v, exact %v, bound %g", n, inc, scale, got, exact, bound)
				checkf(t, within(want, exact, bound), "gonum Snrm2 n=%d inc=%d scale=%g: %v, exact %v, bound %g", n, inc, scale, want, exact, bound)
			}
		}
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, x := range [][]float32{
		{1, inf, 2}, {nan, 1, 2}, {inf, nan, 1}, {nan, inf}, {-inf, 0, 0, 0},
		{3e38, 3e38, 1}, {1e-40, 1e-40, 1e-41}, {0, 0, 0}, {negZero, 0},
		{2e19, 2e19, 2e19}, {1e-20, 1e-20}, // Σx² overflows, underflows below 2⁻⁶⁰
	} {
		got, want := impl.Snrm2(len(x), x, 1), ref.Snrm2(len(x), x, 1)
		checkf(t, same(got, want), "Snrm2(%v) = %v, gonum %v", x, got, want)
	}
}

func TestSasum(t *testing.T) { eachISA(t, testSasum) }

func testSasum(t *testing.T) {
	r := newRand(5)
	for _, n := range vecSizes {
		for _, inc := range incs {
			x := randVec(r, n, inc)
			got, want := impl.Sasum(n, x, inc), ref.Sasum(n, x, inc)
			if inc != 1 {
				checkf(t, same(got, want), "Sasum n=%d inc=%d: %v, gonum %v (must be gonum's)", n, inc, got, want)
				continue
			}
			var exact float64
			for _, v := range logical(x, n, inc) {
				exact += math.Abs(v)
			}
			bound := gamma(max(n-1, 0)) * exact
			checkf(t, within(got, exact, bound), "Sasum n=%d: %v, exact %v, bound %g", n, got, exact, bound)
			checkf(t, within(want, exact, bound), "gonum Sasum n=%d: %v, exact %v, bound %g", n, want, exact, bound)
		}
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, x := range [][]float32{{1, -inf, 2}, {nan, 1, 2, 3, 4, 5, 6, 7, 8}, {inf, -inf}, {negZero}} {
		got, want := impl.Sasum(len(x), x, 1), ref.Sasum(len(x), x, 1)
		checkf(t, same(got, want), "Sasum(%v) = %v, gonum %v", x, got, want)
	}
}
