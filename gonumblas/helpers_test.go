package gonumblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/heedml/heed/kernels"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestMain routes every size through heed's kernels, so that the tests
// exercise them on the smallest shapes too; TestThresholds checks the
// production thresholds.
func TestMain(m *testing.M) {
	gemvMinWork, gemmMinWork = 0, 0
	os.Exit(m.Run())
}

// eachISA runs test once under every ISA kernels supports here (HEED_ISA and
// -tags purego narrow the list), restoring the default after.
func eachISA(t *testing.T, test func(*testing.T)) {
	def := kernels.Active()
	defer kernels.Use(def)
	for _, isa := range kernels.Supported() {
		if err := kernels.Use(isa); err != nil {
			t.Fatal(err)
		}
		t.Run(isa.String(), test)
	}
}

// ref is gonum's own implementation, the reference every test compares with.
var ref gonum.Implementation

// impl is the implementation under test.
var impl Implementation

// sentinel fills the elements a routine must not touch.
const sentinel = float32(-12345.5)

// gamma returns γₙ = n·u/(1−n·u), u = 2⁻²⁴.
func gamma(n int) float64 {
	const u = 0x1p-24
	return float64(n) * u / (1 - float64(n)*u)
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// randVec returns a slice holding n mixed-sign elements at stride |inc|, the
// gaps filled with sentinel. For a negative inc the slice is the end of an
// allocation twice its length: gonum v0.17's amd64 Ger, which the tests call
// with negative increments, reads up to the slice's length before its start.
func randVec(r *rand.Rand, n, inc int) []float32 {
	neg := inc < 0
	if neg {
		inc = -inc
	}
	l := 0
	if n > 0 {
		l = (n-1)*inc + 1
	}
	v := make([]float32, l)
	if neg {
		v = make([]float32, 2*l)[l:]
	}
	for i := range v {
		v[i] = sentinel
	}
	for i := 0; i < n; i++ {
		v[i*inc] = float32(r.Float64()*2 - 1)
	}
	return v
}

// randMat returns a rows×cols row-major matrix with leading dimension ld, the
// padding filled with sentinel, of the length gonum requires,
// (rows−1)·ld + cols, also when cols = 0.
func randMat(r *rand.Rand, rows, cols, ld int) []float32 {
	l := 0
	if rows > 0 {
		l = (rows-1)*ld + cols
	}
	a := make([]float32, l)
	for i := range a {
		a[i] = sentinel
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			a[i*ld+j] = float32(r.Float64()*2 - 1)
		}
	}
	return a
}

// idx returns the position of logical element i of an n-vector with increment
// inc, as BLAS defines it (a negative increment runs from the end).
func idx(i, n, inc int) int {
	if inc < 0 {
		return (n - 1 - i) * -inc
	}
	return i * inc
}

// logical returns the n logical elements of x in float64.
func logical(x []float32, n, inc int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(x[idx(i, n, inc)])
	}
	return v
}

// within reports whether got is within bound of exact; NaN matches only NaN.
func within(got float32, exact, bound float64) bool {
	if math.IsNaN(exact) || math.IsNaN(float64(got)) {
		return math.IsNaN(exact) && math.IsNaN(float64(got))
	}
	if math.IsInf(exact, 0) {
		return float64(got) == exact
	}
	return math.Abs(float64(got)-exact) <= bound
}

// same reports whether a and b are the same float32, NaN equal to NaN.
func same(a, b float32) bool {
	return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b)) ||
		a != a && b != b
}

// sameSlice reports the first index where a and b differ, or −1.
func sameSlice(a, b []float32) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if !same(a[i], b[i]) {
			return i
		}
	}
	return -1
}

// panicOf runs f and returns the message it panicked with, or "" if none.
func panicOf(f func()) (msg string) {
	defer func() {
		if e := recover(); e != nil {
			msg = fmt.Sprint(e)
			if msg == "" {
				msg = "<empty panic>"
			}
		}
	}()
	f()
	return ""
}

// vecSizes are the vector lengths the tests sweep.
var vecSizes = func() []int {
	s := make([]int, 0, 80)
	for n := 0; n <= 70; n++ {
		s = append(s, n)
	}
	return append(s, 100, 127, 128, 129, 255, 256, 257, 1000, 4099)
}()

// incs are the increments the tests sweep.
var incs = []int{1, 2, 3, -1, -2}

// scalars are the α and β values the tests sweep.
var scalars = []float32{0, 1, -1, 0.5, -2.25}

func checkf(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Errorf(format, args...)
	}
}

var negZero = float32(math.Copysign(0, -1))
