package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// unary describes an element-wise kernel for the shared tests of Exp and Tanh.
type unary struct {
	name   string
	kernel func(dst, x []float32) // the public kernel (dispatching)
	ref    func(dst, x []float32) // fallback
	// check returns why got is not an acceptable result for x ("" if it is):
	// within maxULP of the float64 oracle, and the special-value contract.
	check func(x, got float32) string
	// sample lists the inputs of the dense test.
	sample func() []float32
}

const maxULP = 2

var expUnary = unary{name: "Exp", kernel: Exp, ref: fallback.Exp, check: checkExp, sample: expSample}

// checkExp: +0 where eˣ < 2⁻¹²⁶ (results below the normal range flush to
// zero), +Inf where eˣ rounds to +Inf, NaN for NaN, else within maxULP.
func checkExp(x, got float32) string {
	exact := math.Exp(float64(x))
	want := float32(exact)
	switch {
	case x != x:
		if got == got {
			return "want NaN"
		}
	case exact < 0x1p-126:
		if math.Float32bits(got) != 0 {
			return "want +0 (flush below 2⁻¹²⁶)"
		}
	case math.IsInf(float64(want), 1) || math.IsInf(float64(got), 1):
		if want != got {
			return fmt.Sprintf("want %v", want)
		}
	default:
		if d := ulps(got, want); d > maxULP {
			return fmt.Sprintf("want %v (%d ULP)", want, d)
		}
	}
	return ""
}

// floatsIn returns every float32 in [lo, hi] (lo, hi ≥ 0 or both ≤ 0 as bit
// patterns ordered alike) whose bit pattern is a multiple of stride apart.
// Under -short (the emulated CI steps) the stride is sampleStride times
// longer; the native run takes every dense sample whole.
func floatsIn(lo, hi float32, stride uint32) []float32 {
	stride *= sampleStride()
	a, b := math.Float32bits(lo), math.Float32bits(hi)
	if a > b {
		a, b = b, a
	}
	var s []float32
	for u := a; u <= b && u >= a; u += stride {
		s = append(s, math.Float32frombits(u))
	}
	return s
}

// sampleStride is 1, 4 under -short (emulation runs every dense sample's
// kernels at a fraction of native speed, and the float64 checks beside them)
// and 32 when sparse (the same instructions were swept natively).
func sampleStride() uint32 {
	switch {
	case sparse:
		return 32
	case testing.Short():
		return 4
	}
	return 1
}

// both returns s followed by its negation.
func both(s []float32) []float32 {
	for _, v := range s[:len(s):len(s)] {
		s = append(s, -v)
	}
	return s
}

// nans are NaNs with payloads: quiet and signalling, both signs.
var nans = []float32{
	math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000),
	math.Float32frombits(0x7fc00001), math.Float32frombits(0x7fffffff),
	math.Float32frombits(0x7f800001), math.Float32frombits(0xff8001ff),
	math.Float32frombits(0x7fa5a5a5), math.Float32frombits(0xffffffff),
}

// commonSample is part of every dense sample: all floats in [−1, 1] at a
// stride, all float32 bit patterns at a coarser stride, and special values.
func commonSample() []float32 {
	s := both(floatsIn(0, 1, 257))
	for u := uint64(0); u < 1<<32; u += 4099 * uint64(sampleStride()) {
		s = append(s, math.Float32frombits(uint32(u)))
	}
	s = append(s, specials...)
	return append(s, nans...)
}

func expSample() []float32 {
	s := commonSample()
	s = append(s, floatsIn(-89, -86, 1)...)            // flush to zero
	s = append(s, floatsIn(88, 89, 1)...)              // overflow
	s = append(s, floatsIn(-104, 89, 1021)...)         // the finite range
	s = append(s, both(floatsIn(0, 0x1p-20, 4093))...) // e^x ≈ 1 + x
	s = append(s, both(floatsIn(0.34, 0.35, 1))...)    // n changes at ±ln2/2
	return s
}

// testDense checks every input of u's sample under every ISA, and that the
// special values agree with fallback's.
func testDense(t *testing.T, u unary) {
	x := u.sample()
	ref := make([]float32, len(x))
	u.ref(ref, x)
	got := make([]float32, len(x))
	forEachISA(t, func(t *testing.T) {
		u.kernel(got, x)
		bad := 0
		for i, v := range x {
			msg := u.check(v, got[i])
			if msg == "" && (!isFinite(got[i]) || !isFinite(ref[i]) || got[i] == 0 || ref[i] == 0) && !sameSpecial(got[i], ref[i]) {
				msg = fmt.Sprintf("special value differs from fallback's %v", ref[i])
			}
			if msg != "" {
				t.Errorf("%s(%v [%#x]) = %v [%#x]: %s", u.name, v, math.Float32bits(v), got[i], math.Float32bits(got[i]), msg)
				if bad++; bad > 10 {
					t.FailNow()
				}
			}
		}
	})
}

// testLengths checks every length and several offsets (canaries around the
// slices), out of place and in place, against the oracle and fallback.
func testLengths(t *testing.T, u unary, scale float32) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		forEachSlab(t, 32, []int{0, 3}, func(n, off int, s [][]float32) {
			x, dst := s[0], s[1]
			fill(rng, x)
			for i := range x {
				x[i] *= scale
				if rng.IntN(16) == 0 {
					x[i] = specials[rng.IntN(len(specials))]
				}
			}
			u.kernel(dst, x)
			ref := make([]float32, n)
			u.ref(ref, x)
			for i, v := range x {
				if msg := u.check(v, dst[i]); msg != "" {
					t.Fatalf("n=%d off=%d: %s(x[%d]=%v) = %v: %s", n, off, u.name, i, v, dst[i], msg)
				}
				if (!isFinite(ref[i]) || ref[i] == 0) && !sameSpecial(dst[i], ref[i]) {
					t.Fatalf("n=%d: %s(%v) = %v, fallback %v", n, u.name, v, dst[i], ref[i])
				}
			}
			// In place: the same bits.
			u.kernel(x, x)
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(dst[i]) {
					t.Fatalf("n=%d off=%d: in place x[%d] = %v, out of place %v", n, off, i, x[i], dst[i])
				}
			}
		})
	})
}

// testGuard runs u on slices flush against PROT_NONE pages, out of place and
// in place.
func testGuard(t *testing.T, u unary) {
	forEachGuarded(t, 257, 2, func(t *testing.T, n int, get func(int) []float32) {
		x, dst := get(n), get(n)
		u.kernel(dst, x)
		for i, v := range x {
			if msg := u.check(v, dst[i]); msg != "" {
				t.Fatalf("n=%d: %s(%v) = %v: %s", n, u.name, v, dst[i], msg)
			}
		}
		u.kernel(x, x)
	})
}

// fuzzUnary checks every ISA against fallback on fuzzed inputs: both within
// the oracle's bound, and the same special values.
func fuzzUnary(t *testing.T, u unary, data []byte) {
	x := floats(data)
	want := make([]float32, len(x))
	u.ref(want, x)
	got := make([]float32, len(x))
	eachISA(func(isa string) {
		u.kernel(got, x)
		for i, v := range x {
			if msg := u.check(v, got[i]); msg != "" {
				t.Fatalf("%v %s(%v [%#x]) = %v: %s", isa, u.name, v, math.Float32bits(v), got[i], msg)
			}
			if d := ulps(got[i], want[i]); d > maxULP || (!isFinite(want[i]) || want[i] == 0) && !sameSpecial(got[i], want[i]) {
				t.Fatalf("%v %s(%v) = %v, fallback %v", isa, u.name, v, got[i], want[i])
			}
		}
	})
}

func TestExpDense(t *testing.T)   { testDense(t, expUnary) }
func TestExpLengths(t *testing.T) { testLengths(t, expUnary, 16) }
func TestExpGuard(t *testing.T)   { testGuard(t, expUnary) }

func TestExpSpecial(t *testing.T) {
	inf := float32(math.Inf(1))
	cases := []struct{ x, want float32 }{
		{float32(math.Inf(-1)), 0}, {inf, inf}, {0, 1}, {float32(math.Copysign(0, -1)), 1},
		{math.Float32frombits(0x42b17218), inf}, // smallest x whose eˣ rounds to +Inf
		{-1e30, 0}, {1e30, inf}, {-math.MaxFloat32, 0}, {math.MaxFloat32, inf},
		{math.SmallestNonzeroFloat32, 1}, {-math.SmallestNonzeroFloat32, 1},
	}
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			for _, n := range []int{1, 8, 17} { // scalar path, full vector, tail
				x, dst := make([]float32, n), make([]float32, n)
				for i := range x {
					x[i] = c.x
				}
				Exp(dst, x)
				for i := range dst {
					if math.Float32bits(dst[i]) != math.Float32bits(c.want) {
						t.Fatalf("n=%d: Exp(%v)[%d] = %v, want %v", n, c.x, i, dst[i], c.want)
					}
				}
			}
		}
		// Just below the overflow threshold: finite, within the bound.
		x := []float32{math.Float32frombits(0x42b17217)}
		Exp(x, x)
		if msg := checkExp(math.Float32frombits(0x42b17217), x[0]); msg != "" || math.IsInf(float64(x[0]), 0) {
			t.Fatalf("Exp(%v) = %v: %s", math.Float32frombits(0x42b17217), x[0], msg)
		}
	})
}

func TestExpPanics(t *testing.T) {
	mustPanic(t, "heed/kernels: Exp: len(dst)=3 != len(x)=4", func() { Exp(make([]float32, 3), make([]float32, 4)) })
}

func FuzzExp(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x80\x3f\x18\x72\xb1\x42\x01\x00\xc0\x7f\x4f\xac\xae\xc2"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzUnary(t, expUnary, data) })
}
