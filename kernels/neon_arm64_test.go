//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/coef"
	"github.com/heedml/heed/internal/fallback"
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

// TestNEONLowPrecMatTVec checks the NEON transposed products over stored
// matrices bit for bit against fallback, which does the same FMAs (and, for
// Q8, the same rounding of x[r]·Scale per block) in the same order; the
// kernels take whole vectors of 8 (blocks of 32) columns.
func TestNEONLowPrecMatTVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, rows := range []int{1, 2, 3, 4, 5, 8, 13} {
		for _, cols := range []int{8, 16, 32, 40, 64, 96, 128} {
			for _, pad := range []int{0, 3} {
				a := randMatrix(rng, rows, cols)
				stride := cols + pad
				h16 := make([]uint16, rows*stride)
				for r := 0; r < rows; r++ {
					for c := 0; c < cols; c++ {
						h16[r*stride+c] = uint16(rng.Uint32()) // every bit pattern, NaNs too
					}
				}
				x := make([]float32, rows)
				fill(rng, x)
				acc := make([]float32, cols)
				fill(rng, acc)
				for _, k := range []struct {
					name string
					asm  func(dst []float32, a []uint16, lda int, x []float32)
					fb   func(dst []float32, a []uint16, lda int, x []float32)
				}{
					{"matTVecBF16NEON", matTVecBF16NEON, fallback.MatTVecBF16},
					{"matTVecF16NEON", matTVecF16NEON, fallback.MatTVecF16},
				} {
					got := append([]float32(nil), acc...)
					want := append([]float32(nil), acc...)
					k.asm(got, h16, stride, x)
					k.fb(want, h16, stride, x)
					neonSameBits(t, fmt.Sprintf("%s %d×%d", k.name, rows, cols), got, want)
				}
				if cols%Q8BlockLen != 0 {
					continue
				}
				nb := cols/Q8BlockLen + pad%2
				q := make([]Q8Block, rows*nb)
				for r := 0; r < rows; r++ {
					fallback.QuantizeQ8(fq8(q[r*nb:]), a.Data[r*cols:(r+1)*cols])
				}
				got := append([]float32(nil), acc...)
				want := append([]float32(nil), acc...)
				matTVecQ8NEON(got, q8Bytes(q), nb, x)
				fallback.MatTVecQ8(want, fq8(q), nb, x)
				neonSameBits(t, fmt.Sprintf("matTVecQ8NEON %d×%d", rows, cols), got, want)
			}
		}
	}
}

// TestNEONSpanMaxFirstAbove calls TopK's NEON kernels directly: spanMaxNEON
// against fallback.Max per span, and firstAboveNEON against
// fallback.FirstAbove with the hit in each position of a 16-element step and
// the tail.
func TestNEONSpanMaxFirstAbove(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	x := make([]float32, 3*topKSpan)
	fill(rng, x)
	dst := make([]float32, 3)
	if spanMaxNEON(dst, x) {
		t.Fatal("spanMaxNEON reports a NaN in finite data")
	}
	for j := range dst {
		if want := fallback.Max(x[j*topKSpan : (j+1)*topKSpan]); dst[j] != want {
			t.Fatalf("span %d: %v, want %v", j, dst[j], want)
		}
	}
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 64, 100} {
		y := make([]float32, n)
		for hit := -1; hit < n; hit++ {
			for _, hv := range []float32{0.75, float32(math.NaN()), float32(math.Inf(1))} {
				for i := range y {
					y[i] = float32(i%5) / 10 // ≤ t = 0.5
				}
				if hit >= 0 {
					y[hit] = hv
				}
				if got, want := firstAboveNEON(y, 0.5), fallback.FirstAbove(y, 0.5); got != want {
					t.Fatalf("n=%d hit=%d (%v): firstAboveNEON = %d, want %d", n, hit, hv, got, want)
				}
			}
		}
		if got, want := firstAboveNEON(y, float32(math.NaN())), fallback.FirstAbove(y, float32(math.NaN())); got != want {
			t.Fatalf("n=%d t=NaN: firstAboveNEON = %d, want %d", n, got, want)
		}
	}
}

// TestNEONFromQ8 checks fromQ8NEON bit for bit against fallback.DequantizeQ8
// (one FMUL per value) on random blocks, NaN scales among them.
func TestNEONFromQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, nb := range []int{1, 2, 3, 7} {
		src := make([]Q8Block, nb)
		for b := range src {
			src[b].Scale = float32(math.Ldexp(rng.Float64(), rng.IntN(300)-170))
			if b == 2 {
				src[b].Scale = float32(math.NaN())
			}
			for i := range src[b].Q {
				src[b].Q[i] = int8(rng.IntN(256) - 128)
			}
		}
		got, want := make([]float32, nb*Q8BlockLen+1), make([]float32, nb*Q8BlockLen)
		got[len(want)] = canary
		fromQ8NEON(got[:len(want)], q8Bytes(src))
		fallback.DequantizeQ8(want, fq8(src))
		neonSameBits(t, fmt.Sprintf("fromQ8NEON %d blocks", nb), got, want)
		if math.Float32bits(got[len(want)]) != math.Float32bits(canary) {
			t.Fatalf("fromQ8NEON %d blocks wrote past dst", nb)
		}
	}
}
