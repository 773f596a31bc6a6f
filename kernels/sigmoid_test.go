package kernels

import (
	"fmt"
	"math"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

var sigmoidUnary = unary{name: "Sigmoid", kernel: Sigmoid, ref: fallback.Sigmoid, check: checkSigmoid, sample: sigmoidSample}

// sigmoid64 is the float64 oracle of Sigmoid.
func sigmoid64(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// checkSigmoid: NaN for NaN, exactly 0.5 at ±0, +0 where σ(x) < 2⁻¹²⁶,
// exactly 1 where the float32 rounding of σ is 1, a result in [0, 1], else
// within maxULP.
func checkSigmoid(x, got float32) string {
	exact := sigmoid64(float64(x))
	want := float32(exact)
	switch {
	case x != x:
		if got == got {
			return "want NaN"
		}
	case !(got >= 0 && got <= 1):
		return "outside [0, 1]"
	case x == 0:
		if got != 0.5 {
			return "want exactly 0.5"
		}
	case exact < 0x1p-126:
		if math.Float32bits(got) != 0 {
			return "want +0 (flush below 2⁻¹²⁶)"
		}
	case want == 1:
		if got != 1 {
			return "want exactly 1"
		}
	default:
		if d := ulps(got, want); d > maxULP {
			return fmt.Sprintf("want %v (%d ULP)", want, d)
		}
	}
	return ""
}

func sigmoidSample() []float32 {
	s := commonSample()
	s = append(s, floatsIn(-89, -86, 1)...)            // flush to zero at SigmoidLo
	s = append(s, floatsIn(17, 21, 1)...)              // rounds to 1 from 17.32868; the clamp at 20
	s = append(s, floatsIn(-104, 30, 1021)...)         // the finite range
	s = append(s, both(floatsIn(0, 0x1p-20, 4093))...) // σ ≈ ½ + x/4
	s = append(s, both(floatsIn(0.34, 0.35, 1))...)    // n changes at ±ln2/2
	return s
}

func TestSigmoidDense(t *testing.T)   { testDense(t, sigmoidUnary) }
func TestSigmoidLengths(t *testing.T) { testLengths(t, sigmoidUnary, 16) }
func TestSigmoidGuard(t *testing.T)   { testGuard(t, sigmoidUnary) }

func TestSigmoidSpecial(t *testing.T) {
	negz := float32(math.Copysign(0, -1))
	inf := float32(math.Inf(1))
	cases := []struct{ x, want float32 }{
		{0, 0.5}, {negz, 0.5}, {inf, 1}, {-inf, 0},
		{math.Float32frombits(0x418aa123), 1}, // smallest x with σ rounding to 1
		{20, 1}, {1e30, 1}, {math.MaxFloat32, 1},
		{math.Float32frombits(0xc2aeac50), 0}, // just below SigmoidLo
		{-1e30, 0}, {-math.MaxFloat32, 0},
		{math.SmallestNonzeroFloat32, 0.5}, {-math.SmallestNonzeroFloat32, 0.5},
	}
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			for _, n := range []int{1, 8, 17} {
				x, dst := make([]float32, n), make([]float32, n)
				for i := range x {
					x[i] = c.x
				}
				Sigmoid(dst, x)
				for i := range dst {
					if math.Float32bits(dst[i]) != math.Float32bits(c.want) {
						t.Fatalf("n=%d: Sigmoid(%v)[%d] = %v, want %v", n, c.x, i, dst[i], c.want)
					}
				}
			}
		}
		// Just above SigmoidLo the result is normal and within 2 ULP.
		x := []float32{math.Float32frombits(0xc2aeac4f)}
		Sigmoid(x, x)
		if msg := checkSigmoid(math.Float32frombits(0xc2aeac4f), x[0]); msg != "" || x[0] < 0x1p-126*0.99 {
			t.Fatalf("Sigmoid(SigmoidLo) = %v: %s", x[0], msg)
		}
	})
}

func TestSigmoidPanics(t *testing.T) {
	mustPanic(t, "heed/kernels: Sigmoid: len(dst)=5 != len(x)=4", func() { Sigmoid(make([]float32, 5), make([]float32, 4)) })
}

func FuzzSigmoid(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x20\x3f\x23\xa1\x8a\x41\x00\x00\x00\x80\x4f\xac\xae\xc2"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzUnary(t, sigmoidUnary, data) })
}

// TestSigmoidSameBits checks that every ISA gives fallback's bits on the dense
// sample (the assembly is the fallback's algorithm operation for operation),
// NaN for NaN.
func TestSigmoidSameBits(t *testing.T) {
	x := sigmoidSample()
	want := make([]float32, len(x))
	fallback.Sigmoid(want, x)
	got := make([]float32, len(x))
	forEachISA(t, func(t *testing.T) {
		Sigmoid(got, x)
		for i := range x {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("Sigmoid(%v [%#x]) = %v [%#x], fallback %v [%#x]", x[i], math.Float32bits(x[i]),
					got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	})
}
