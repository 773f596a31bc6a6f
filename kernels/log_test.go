package kernels

import (
	"fmt"
	"math"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

var logUnary = unary{name: "Log", kernel: Log, ref: fallback.Log, check: checkLog, sample: logSample}

// checkLog: NaN for NaN and negative x, −Inf at ±0, +Inf at +Inf, +0 at 1,
// else within maxULP.
func checkLog(x, got float32) string {
	switch {
	case x != x || x < 0:
		if got == got {
			return "want NaN"
		}
	case x == 0:
		if !math.IsInf(float64(got), -1) {
			return "want -Inf"
		}
	case math.IsInf(float64(x), 1):
		if !math.IsInf(float64(got), 1) {
			return "want +Inf"
		}
	case x == 1:
		if math.Float32bits(got) != 0 {
			return "want +0"
		}
	default:
		want := float32(math.Log(float64(x)))
		if d := ulps(got, want); d > maxULP {
			return fmt.Sprintf("want %v (%d ULP)", want, d)
		}
	}
	return ""
}

func logSample() []float32 {
	s := commonSample()
	s = append(s, floatsIn(0.5, 2, 7)...)                       // e = 0, ±1: the result is small
	s = append(s, floatsIn(0.99, 1.01, 1)...)                   // ln x ≈ x − 1
	s = append(s, floatsIn(0, 0x1p-120, 65537)...)              // subnormals
	s = append(s, floatsIn(0x1.6a09e4p-1, 0x1.6a09e8p-1, 1)...) // the split at √½
	s = append(s, floatsIn(0x1.6a09e4p0, 0x1.6a09e8p0, 1)...)   // and at √2
	return s
}

func TestLogDense(t *testing.T)   { testDense(t, logUnary) }
func TestLogLengths(t *testing.T) { testLengths(t, logUnary, 64) }
func TestLogGuard(t *testing.T)   { testGuard(t, logUnary) }

func TestLogSpecial(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	cases := []struct{ x, want float32 }{
		{0, -inf}, {float32(math.Copysign(0, -1)), -inf}, {inf, inf}, {-inf, nan}, {nan, nan},
		{-1, nan}, {-math.SmallestNonzeroFloat32, nan}, {1, 0},
		{2, float32(math.Ln2)}, {0.5, -float32(math.Ln2)},
		{math.SmallestNonzeroFloat32, float32(math.Log(math.SmallestNonzeroFloat32))},
		{math.MaxFloat32, float32(math.Log(math.MaxFloat32))},
	}
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			for _, n := range []int{1, 8, 17} {
				x, dst := make([]float32, n), make([]float32, n)
				for i := range x {
					x[i] = c.x
				}
				Log(dst, x)
				for i := range dst {
					if !sameSpecial(dst[i], c.want) {
						t.Fatalf("n=%d: Log(%v)[%d] = %v, want %v", n, c.x, i, dst[i], c.want)
					}
				}
			}
		}
	})
}

func TestLogPanics(t *testing.T) {
	mustPanic(t, "heed/kernels: Log: len(dst)=5 != len(x)=4", func() { Log(make([]float32, 5), make([]float32, 4)) })
}

func FuzzLog(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x80\x3f\xf3\x04\x35\x3f\x00\x00\x00\x80\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzUnary(t, logUnary, data) })
}

// TestLogSameBits checks that every ISA gives fallback's bits on the dense
// sample (the assembly is the fallback's algorithm operation for operation).
func TestLogSameBits(t *testing.T) {
	x := logSample()
	want := make([]float32, len(x))
	fallback.Log(want, x)
	got := make([]float32, len(x))
	forEachISA(t, func(t *testing.T) {
		Log(got, x)
		for i := range x {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("Log(%v [%#x]) = %v [%#x], fallback %v [%#x]", x[i], math.Float32bits(x[i]),
					got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	})
}

// TestLogSpecialLane puts one input other than a positive normal float, the
// boundaries of that range included, at every position of a run of normal
// inputs long enough for every loop of every ISA (pairs, single vectors,
// tails): the vectors holding it must take the special-value path, the
// others may skip it, and every output must be fallback's.
func TestLogSpecialLane(t *testing.T) {
	inf := float32(math.Inf(1))
	odd := []float32{
		0, float32(math.Copysign(0, -1)), inf, -inf, float32(math.NaN()), -1, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, math.Float32frombits(0x007fffff), // subnormals
		-math.Float32frombits(0x00800000), math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00000),
	}
	edges := []float32{math.Float32frombits(0x00800000), math.MaxFloat32} // the range's ends, normal
	const n = 77
	x, got, want := make([]float32, n), make([]float32, n), make([]float32, n)
	forEachISA(t, func(t *testing.T) {
		for _, v := range append(odd, edges...) {
			for p := range n {
				for i := range x {
					x[i] = 1.5 + float32(i)/8
				}
				x[p] = v
				Log(got, x)
				fallback.Log(want, x)
				for i := range x {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("x[%d] = %v [%#x]: Log(x)[%d] = %v, fallback %v", p, v, math.Float32bits(v), i, got[i], want[i])
					}
				}
			}
		}
	})
}
