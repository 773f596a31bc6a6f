package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// This file is the test harness every kernel's tests use: running a test under
// each ISA, inputs at offsets with canaries around them, special values, and
// the float64 oracle's error bounds.

const u = 1.0 / (1 << 24) // unit roundoff of float32

// gamma returns γₙ = n·u/(1−n·u), the classic bound on the relative error of a
// sum of n products in float32.
func gamma(n int) float64 { return float64(n) * u / (1 - float64(n)*u) }

// eachISA calls f with each ISA this CPU and build support active in turn,
// then restores the active ISA: the one loop over ISAs. AVX512 runs twice,
// once per width of its dual-width kernels (AVX512Width); f gets the name of
// the ISA and width: generic, avx2, avx512-256, avx512-512, neon. Fuzz targets
// call it directly, naming the ISA in their messages, as a subtest per ISA and
// input costs more than many of their checks.
func eachISA(f func(isa string)) {
	prev, prevWidth := Active(), avx512Width
	defer func() { Use(prev); avx512Width = prevWidth }()
	for _, isa := range Supported() {
		if testISAs != nil && !slices.Contains(testISAs, isa) {
			continue
		}
		if err := Use(isa); err != nil {
			panic(err)
		}
		if isa != AVX512 {
			f(isa.String())
			continue
		}
		for _, w := range []int{256, 512} {
			if err := UseAVX512Width(w); err != nil {
				panic(err)
			}
			f(fmt.Sprintf("%v-%d", isa, w))
		}
	}
}

// testISAs, from HEED_TEST_ISAS (comma-separated ISA names), limits eachISA
// to those ISAs; nil (unset) means every supported one. make test runs the
// suite under qemu's Haswell with HEED_TEST_ISAS=avx2: the generic path there
// is the Go code the native run has already tested.
var testISAs = func() []ISA {
	v := os.Getenv("HEED_TEST_ISAS")
	if v == "" {
		return nil
	}
	var isas []ISA
	for _, name := range strings.Split(v, ",") {
		isa, err := ParseISA(name)
		if err != nil {
			panic(fmt.Sprintf("HEED_TEST_ISAS=%q: %v", v, err))
		}
		isas = append(isas, isa)
	}
	return isas
}()

// sparse reports whether HEED_TEST_SPARSE is set. make test sets it for its
// Haswell step, which repeats under emulation the AVX2 kernels that
// test-native has already checked on the same instructions: that step proves
// they run on a CPU without AVX-512 and that dispatch picks them there. Its
// oldest-Go step sets it too: test-native has just run the same code. Tests
// that repeat one code path over many values, positions or trials take fewer
// of them when it is set; every shape that selects a different path (a tail,
// a block count, a route, a variant) is kept.
var sparse = os.Getenv("HEED_TEST_SPARSE") != ""

// skipSparse skips t when sparse: a test of what no CPU model changes
// (allocations), which the native run checks under every ISA.
func skipSparse(t *testing.T) {
	t.Helper()
	if sparse {
		t.Skip("HEED_TEST_SPARSE: checked under every ISA by the native run")
	}
}

// sparseKeeps reports whether a test runs trial i of those it repeats for
// each case c (trials that vary values or conditions, not the path a shape
// selects): always, or when sparse one in every, chosen by (c+i) mod every so
// that the trials kept rotate over the cases and each still runs.
func sparseKeeps(c, i, every int) bool { return !sparse || (c+i)%every == 0 }

// runner is *testing.T or *testing.B.
type runner[T any] interface {
	Run(name string, f func(T)) bool
}

// forEachISA runs f under eachISA as a subtest or sub-benchmark named for the
// ISA.
func forEachISA[T runner[T]](r T, f func(T)) {
	eachISA(func(isa string) { r.Run(isa, f) })
}

// lengths returns every length 0..4·max+1 followed by larger ones.
func lengths(max int) []int {
	var ns []int
	for n := 0; n <= max; n++ {
		ns = append(ns, n)
	}
	return append(ns, 1000, 1023, 4096, 4099, 65537)
}

// smallLengths are every length through 4 AVX-512 vectors × unroll 4, plus one.
var smallLengths = lengths(257)

// canary is the value placed around test slices; a kernel that writes outside
// its slices changes it.
var canary = math.Float32frombits(0x7fc0dead)

// slab returns a slice of length n at offset off into a larger slice whose other
// elements are the canary, and a function that fails t if any canary changed.
func slab(t *testing.T, n, off int) ([]float32, func()) {
	const pad = 19
	buf := make([]float32, off+n+pad)
	for i := range buf {
		buf[i] = canary
	}
	s := buf[off : off+n : off+n]
	return s, func() {
		t.Helper()
		for i, v := range buf {
			if (i < off || i >= off+n) && math.Float32bits(v) != math.Float32bits(canary) {
				t.Fatalf("element %d outside the slice [%d, %d) was written: %v", i, off, off+n, v)
			}
		}
	}
}

// forEachSlab calls f for every length n of smallLengths and the offsets
// off = 0, 1+n/per, 2·(1+n/per), … below 16, with len(shifts) slices of length
// n, the i-th at offset (off+shifts[i]) mod 16 in a slab of canaries (their
// contents are canaries: f fills them). After f returns it fails t if any
// canary changed.
func forEachSlab(t *testing.T, per int, shifts []int, f func(n, off int, s [][]float32)) {
	t.Helper()
	s := make([][]float32, len(shifts))
	oks := make([]func(), len(shifts))
	for _, n := range smallLengths {
		for off := 0; off < 16; off += 1 + n/per {
			for i, sh := range shifts {
				s[i], oks[i] = slab(t, n, (off+sh)%16)
			}
			f(n, off, s)
			for _, ok := range oks {
				ok()
			}
		}
	}
}

// fill sets s to random values in [−1, 1) scaled by 2^k for k in [−4, 4].
func fill(rng *rand.Rand, s []float32) {
	for i := range s {
		s[i] = float32(rng.Float64()*2-1) * float32(math.Ldexp(1, rng.IntN(9)-4))
	}
}

// specials are the values mixed into special-value tests.
var specials = []float32{
	float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
	0, float32(math.Copysign(0, -1)),
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-40, -1e-40,
	math.MaxFloat32, -math.MaxFloat32, 1e15, -1e15, 1, -1,
}

// sameSpecial reports whether a and b are both NaN, or equal with the same sign.
func sameSpecial(a, b float32) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b))
}

// isFinite reports whether v is neither NaN nor ±Inf.
func isFinite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// ulps returns the distance between a and b in units in the last place, counting
// the float32 values between them (±0 are 0 apart); NaN against anything but NaN
// is MaxInt.
func ulps(a, b float32) int64 {
	if a != a || b != b {
		if a != a && b != b {
			return 0
		}
		return math.MaxInt64
	}
	ord := func(f float32) int64 {
		b := int64(math.Float32bits(f))
		if b&(1<<31) != 0 {
			return -(b &^ (1 << 31))
		}
		return b
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return d
}

// dot64 returns Σ x[i]·y[i] in float64 and Σ|x[i]·y[i]|.
func dot64(x, y []float32) (s, abs float64) {
	for i := range x {
		p := float64(x[i]) * float64(y[i])
		s += p
		abs += math.Abs(p)
	}
	return s, abs
}

// eta is the smallest positive subnormal float32: a product that underflows
// is off by at most η/2, a term the γₙ bound (which assumes no underflow) lacks.
const eta = 0x1p-149

// checkDot fails t unless got is within γₙ·abs + n·η of exact (n products).
func checkDot(t *testing.T, what string, got float32, exact, abs float64, n int) {
	t.Helper()
	if err, bound := math.Abs(float64(got)-exact), gamma(n)*abs+float64(n)*eta; !(err <= bound) {
		t.Fatalf("%s = %v, want %v ± %.3g (error %.3g)", what, got, exact, bound, err)
	}
}

// checkDotAny checks that got, and fallback's result want, meet Dot's
// contract for Σ x[i]·y[i] with any inputs:
//   - NaN when an input is NaN, a product is Inf·0, or infinite products of
//     both signs meet;
//   - otherwise, with infinite products all of sign s, s·Inf, or when the
//     finite products overflow (see below) s·Inf or NaN;
//   - otherwise (every input finite) within γₙ·Σ|x[i]·y[i]| + n·η of the
//     exact sum, and +0 if every product is zero (a zero of either sign with
//     signedZero, for sums that start from a value of the caller's, as
//     MatTVec's dst); when the finite products overflow, NaN, ±Inf or a
//     finite value within that bound.
//
// The finite products overflow when one of them exceeds MaxFloat32 in
// magnitude or their magnitudes sum beyond MaxFloat32/2 (below that no
// partial sum overflows in any order).
func checkDotAny(t *testing.T, what string, got, want float32, x, y []float32, signedZero bool) {
	t.Helper()
	var nan, posInf, negInf, overflow bool
	var finite float64
	allZero := true
	for i := range x {
		p := float64(x[i]) * float64(y[i]) // exact for finite float32 factors
		switch {
		case p != p:
			nan = true
		case math.IsInf(p, 1):
			posInf = true
		case math.IsInf(p, -1):
			negInf = true
		default:
			finite += math.Abs(p)
			overflow = overflow || math.Abs(p) > math.MaxFloat32
		}
		allZero = allZero && p == 0
	}
	overflow = overflow || finite > math.MaxFloat32/2
	for _, c := range []struct {
		who string
		v   float32
	}{{what, got}, {"fallback " + what, want}} {
		v := c.v
		switch {
		case nan || posInf && negInf:
			if v == v {
				t.Fatalf("%s = %v, want NaN", c.who, v)
			}
		case posInf || negInf:
			inf := float32(math.Inf(1))
			if negInf {
				inf = -inf
			}
			if v != inf && (!overflow || v == v) {
				t.Fatalf("%s = %v, want %v (or NaN: finite products overflow %v)", c.who, v, inf, overflow)
			}
		case allZero:
			if math.Float32bits(v) != 0 && !(signedZero && v == 0) {
				t.Fatalf("%s = %v (bits %#x), want +0: every product is zero", c.who, v, math.Float32bits(v))
			}
		case overflow && !isFinite(v):
		default:
			exact, abs := dot64(x, y)
			checkDot(t, c.who, v, exact, abs, len(x))
		}
	}
}

// mustPanic fails t unless f panics with exactly the message want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic; want %q", want)
		}
		msg, _ := r.(string)
		if err, ok := r.(error); ok {
			msg = err.Error()
		}
		if msg != want {
			t.Fatalf("panic %q; want %q", r, want)
		}
	}()
	f()
}
