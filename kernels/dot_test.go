package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

func TestDot(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		forEachSlab(t, 64, []int{0, 5}, func(n, off int, s [][]float32) {
			x, y := s[0], s[1]
			fill(rng, x)
			fill(rng, y)
			got := Dot(x, y)
			exact, abs := dot64(x, y)
			checkDot(t, "Dot", got, exact, abs, n)
			checkDot(t, "fallback.Dot", fallback.Dot(x, y), exact, abs, n)
		})
	})
}

func TestDotSpecial(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range []int{1, 7, 8, 9, 31, 33, 64, 100, 257} {
			for trial := 0; trial < 50; trial++ {
				x, y := make([]float32, n), make([]float32, n)
				fill(rng, x)
				fill(rng, y)
				for k := 0; k < 1+trial%3; k++ {
					x[rng.IntN(n)] = specials[rng.IntN(len(specials))]
					y[rng.IntN(n)] = specials[rng.IntN(len(specials))]
				}
				checkDotAny(t, "Dot", Dot(x, y), fallback.Dot(x, y), x, y, false)
			}
		}
	})
}

func TestDotGuard(t *testing.T) {
	forEachGuarded(t, 257, 2, func(t *testing.T, n int, get func(int) []float32) {
		x, y := get(n), get(n)
		exact, abs := dot64(x, y)
		checkDot(t, "Dot", Dot(x, y), exact, abs, n)
	})
}

func TestDotPanics(t *testing.T) {
	mustPanic(t, "heed/kernels: Dot: len(x)=3 != len(y)=4", func() { Dot(make([]float32, 3), make([]float32, 4)) })
}

func FuzzDot(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v := floats(data)
		n := len(v) / 2
		x, y := v[:n], v[n:2*n]
		want := fallback.Dot(x, y)
		eachISA(func(isa string) {
			checkDotAny(t, isa+" Dot", Dot(x, y), want, x, y, false)
		})
	})
}

// floats reinterprets fuzz bytes as float32s.
func floats(data []byte) []float32 {
	v := make([]float32, len(data)/4)
	for i := range v {
		v[i] = math.Float32frombits(uint32(data[4*i]) | uint32(data[4*i+1])<<8 | uint32(data[4*i+2])<<16 | uint32(data[4*i+3])<<24)
	}
	return v
}

// TestDotOverflow puts pairs whose products overflow, cancel or underflow at
// every position of short vectors, and checks Dot's contract for them
// (checkDotAny): NaN, the infinity or a value within the bound as the contract
// allows, and +0 when every product is zero.
func TestDotOverflow(t *testing.T) {
	inf, negZero := float32(math.Inf(1)), float32(math.Copysign(0, -1))
	cases := []struct{ x, y []float32 }{
		{[]float32{-inf, 1e38}, []float32{1, 10}},   // -Inf against an overflowing finite product
		{[]float32{inf, -1e38}, []float32{1, 10}},   // the same, signs swapped
		{[]float32{1e38, -1e38}, []float32{10, 10}}, // finite products that overflow and cancel
		{[]float32{3e38, 3e38}, []float32{1, 1}},    // a partial sum that overflows
		{[]float32{3e38, -3e38, 3e38}, []float32{1, 1, 1}},
		{[]float32{-1e-30}, []float32{1e-30}},                           // an underflowing product
		{[]float32{1e-30, -1e-30}, []float32{1e-30, 1e-30}},             // underflowing products that cancel
		{[]float32{negZero, 5, negZero}, []float32{3, 0, negZero}},      // every product zero: +0
		{[]float32{inf, 1}, []float32{0, 1}},                            // Inf·0
		{[]float32{inf, -inf}, []float32{1, 1}},                         // infinities of both signs
		{[]float32{inf, 1e38, 1e38}, []float32{2, 1e30, -1e30}},         // +Inf among overflowing products of both signs
		{[]float32{math.MaxFloat32, 1}, []float32{2, -math.MaxFloat32}}, // both products overflow
	}
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			for _, n := range []int{len(c.x), 7, 8, 9, 16, 17, 33, 64, 65} {
				if n < len(c.x) {
					continue
				}
				for pos := 0; pos+len(c.x) <= n; pos++ {
					x, y := make([]float32, n), make([]float32, n) // zeros elsewhere
					copy(x[pos:], c.x)
					copy(y[pos:], c.y)
					checkDotAny(t, fmt.Sprintf("Dot(%v at %d of %d)", c.x, pos, n), Dot(x, y), fallback.Dot(x, y), x, y, false)
					// Split across the vector: the first element at pos, the rest at the end.
					x2, y2 := make([]float32, n), make([]float32, n)
					x2[pos], y2[pos] = c.x[0], c.y[0]
					copy(x2[n-len(c.x)+1:], c.x[1:])
					copy(y2[n-len(c.y)+1:], c.y[1:])
					if pos < n-len(c.x)+1 {
						checkDotAny(t, fmt.Sprintf("Dot(%v split at %d of %d)", c.x, pos, n), Dot(x2, y2), fallback.Dot(x2, y2), x2, y2, false)
					}
				}
			}
		}
	})
}

// TestSumZeroSign checks that a sum of zeros of either sign is +0.
func TestSumZeroSign(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	forEachISA(t, func(t *testing.T) {
		for _, n := range smallLengths {
			x := make([]float32, n)
			for i := range x {
				x[i] = negZero
			}
			if s := Sum(x); math.Float32bits(s) != 0 {
				t.Fatalf("Sum(%d × −0) = %v, want +0", n, s)
			}
			if n > 0 {
				x[n/2] = 0
				if s := Sum(x); math.Float32bits(s) != 0 {
					t.Fatalf("Sum(−0s and a +0, n=%d) = %v, want +0", n, s)
				}
			}
		}
	})
}
