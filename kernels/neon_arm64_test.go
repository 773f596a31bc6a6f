//go:build !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/fallback"
	"github.com/heedml/heed/internal/coef"
)

// The shared per-kernel tests run the NEON kernels through forEachISA against
// the float64 oracle, fallback's special values and guard pages. These tests
// check what they cannot: that the NEON kernels whose fallback does the same
// roundings in the same order on arm64 (Axpy, Scale, MatTVec, Exp, Tanh) agree
// with it bit for bit.

// neonSameBits fails t unless got and want are identical float32 slices.
func neonSameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("%s: element %d of %d = %v, fallback %v", what, i, len(want), got[i], want[i])
		}
	}
}

func TestNEONElementwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range smallLengths {
		off := rng.IntN(16)
		x, xok := slab(t, n, off)
		y, yok := slab(t, n, (off+3)%16)
		fill(rng, x)
		fill(rng, y)
		alpha := float32(rng.NormFloat64())

		want := append([]float32(nil), y...)
		fallback.Axpy(alpha, x, want)
		axpyNEON(alpha, x, y)
		neonSameBits(t, "axpyNEON", y, want)

		want = append(want[:0], x...)
		fallback.Axpy(alpha, want, want)
		axpyNEON(alpha, x, x) // in place: x += alpha·x
		neonSameBits(t, "axpyNEON in place", x, want)

		want = append(want[:0], y...)
		fallback.Scale(alpha, want)
		scaleNEON(alpha, y)
		neonSameBits(t, "scaleNEON", y, want)
		xok()
		yok()
	}
}

// TestNEONMatTVec checks matTVecNEON bit for bit against fallback: the same
// FMAs in the same order.
func TestNEONMatTVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, sh := range matShapes() {
		rows, cols := sh[0], sh[1]
		if cols == 0 {
			continue // the Go wrappers handle empty rows
		}
		for _, pad := range []int{0, 5} {
			a, aok := newMatrix(t, rng, rows, cols, pad, rng.IntN(16))
			w, wok := slab(t, rows, rng.IntN(16))
			fill(rng, w)
			acc, cok := slab(t, cols, rng.IntN(16))
			fill(rng, acc)
			want := append([]float32(nil), acc...)
			fallback.MatTVec(want, a.Data, a.Stride, w)
			matTVecNEON(acc, a.Data, a.Stride, w)
			neonSameBits(t, "matTVecNEON", acc, want)
			aok()
			wok()
			cok()
		}
	}
}

// neonExpTanhInputs returns a dense sample: floats in [−1, 1] at a stride, every
// float near the thresholds of internal/coef (underflow, overflow, tanh's
// first step of its reduction, ln2/4, and saturation), a stride over all
// floats, and specials.
func neonExpTanhInputs() []float32 {
	var xs []float32
	for b := uint32(0); b < 0x3f800000; b += 997 {
		xs = append(xs, math.Float32frombits(b), -math.Float32frombits(b))
	}
	for _, c := range []float32{coef.ExpLo, coef.ExpHi, coef.Ln2 / 4, coef.TanhSat, -103.97, 0.5, 0.625, 1, 2} {
		b := math.Float32bits(c)
		for d := uint32(0); d < 3000; d++ {
			xs = append(xs, math.Float32frombits(b-1500+d), -math.Float32frombits(b-1500+d))
		}
	}
	for b := uint64(0); b < 1<<32; b += 65521 {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	return append(xs, specials...)
}

// TestNEONExpTanh checks expNEON and tanhNEON bit for bit against fallback
// (the same algorithm with the same fused operations on arm64), and both
// within 2 ULP of the float64 oracle wherever the result is a normal float
// (Exp flushes results below 2⁻¹²⁶ to +0 by contract).
func TestNEONExpTanh(t *testing.T) {
	xs := neonExpTanhInputs()
	got, want := make([]float32, len(xs)), make([]float32, len(xs))
	for _, k := range []struct {
		name    string
		asm, fb func(dst, x []float32)
		oracle  func(float64) float64
	}{
		{"exp", expNEON, fallback.Exp, math.Exp},
		{"tanh", tanhNEON, fallback.Tanh, math.Tanh},
	} {
		k.asm(got, xs)
		k.fb(want, xs)
		worst := int64(0)
		for i, x := range xs {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("%sNEON(%v = %#08x) = %v, fallback %v", k.name, x, math.Float32bits(x), got[i], want[i])
			}
			exact := float32(k.oracle(float64(x)))
			if math.Abs(float64(exact)) < 0x1p-126 && k.name == "exp" {
				continue
			}
			if d := ulps(got[i], exact); d > 2 {
				t.Fatalf("%sNEON(%v) = %v, oracle %v: %d ULP", k.name, x, got[i], exact, d)
			} else if d > worst {
				worst = d
			}
		}
		t.Logf("%s: %d inputs, max %d ULP", k.name, len(xs), worst)
	}
}
