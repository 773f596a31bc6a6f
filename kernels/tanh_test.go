package kernels

import (
	"fmt"
	"math"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

var tanhUnary = unary{name: "Tanh", kernel: Tanh, ref: fallback.Tanh, check: checkTanh, sample: tanhSample}

// checkTanh: NaN for NaN, the sign of x (±0 kept), exactly ±1 where the
// float32 rounding of tanh is ±1, else within maxULP.
func checkTanh(x, got float32) string {
	want := float32(math.Tanh(float64(x)))
	switch {
	case x != x:
		if got == got {
			return "want NaN"
		}
	case math.Signbit(float64(got)) != math.Signbit(float64(x)):
		return "wrong sign"
	case want == 1 || want == -1 || x == 0:
		if got != want {
			return fmt.Sprintf("want exactly %v", want)
		}
	default:
		if d := ulps(got, want); d > maxULP {
			return fmt.Sprintf("want %v (%d ULP)", want, d)
		}
	}
	return ""
}

func tanhSample() []float32 {
	s := commonSample()
	s = append(s, both(floatsIn(8.5, 9.5, 1))...)      // saturation at ±9.010914
	s = append(s, both(floatsIn(0.6, 0.66, 1))...)     // the polynomial's end, 0.625
	s = append(s, both(floatsIn(0.66, 8.5, 31))...)    // the e²ˣ branch
	s = append(s, both(floatsIn(0, 0x1p-10, 4093))...) // tanh x ≈ x, subnormals
	return s
}

func TestTanhDense(t *testing.T)   { testDense(t, tanhUnary) }
func TestTanhLengths(t *testing.T) { testLengths(t, tanhUnary, 4) }
func TestTanhGuard(t *testing.T)   { testGuard(t, tanhUnary) }

func TestTanhSpecial(t *testing.T) {
	negz := float32(math.Copysign(0, -1))
	cases := []struct{ x, want float32 }{
		{0, 0}, {negz, negz}, {float32(math.Inf(1)), 1}, {float32(math.Inf(-1)), -1},
		{math.Float32frombits(0x41102cb4), 1}, // smallest x with tanh rounding to 1
		{-math.Float32frombits(0x41102cb4), -1},
		{1e30, 1}, {-math.MaxFloat32, -1},
		{math.SmallestNonzeroFloat32, math.SmallestNonzeroFloat32},
		{-math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32},
		{1e-20, 1e-20},
	}
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			for _, n := range []int{1, 8, 17} {
				x, dst := make([]float32, n), make([]float32, n)
				for i := range x {
					x[i] = c.x
				}
				Tanh(dst, x)
				for i := range dst {
					if math.Float32bits(dst[i]) != math.Float32bits(c.want) {
						t.Fatalf("n=%d: Tanh(%v)[%d] = %v, want %v", n, c.x, i, dst[i], c.want)
					}
				}
			}
		}
	})
}

func TestTanhPanics(t *testing.T) {
	mustPanic(t, "heed/kernels: Tanh: len(dst)=5 != len(x)=4", func() { Tanh(make([]float32, 5), make([]float32, 4)) })
}

func FuzzTanh(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x20\x3f\xb4\x2c\x10\x41\x00\x00\x00\x80\x01\x00\xc0\xff"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzUnary(t, tanhUnary, data) })
}
