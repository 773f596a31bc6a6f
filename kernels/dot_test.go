package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/fallback"
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
				checkDotAny(t, "Dot", Dot(x, y), fallback.Dot(x, y), x, y)
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
		forEachISA(t, func(t *testing.T) {
			checkDotAny(t, "Dot", Dot(x, y), want, x, y)
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
