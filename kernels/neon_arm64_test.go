//go:build !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/fallback"
	"github.com/heedml/heed/internal/coef"
)

// These tests pin the NEON kernels to package fallback directly (the shared
// per-kernel tests run them through forEachISA as well): the linear kernels
// whose fallback does the same roundings in the same order must agree bit for
// bit, the reductions within their error bounds, and nothing may touch memory
// outside the slices.

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

func TestNEONReductions(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range smallLengths {
		x, ok := slab(t, n, rng.IntN(16))
		fill(rng, x)
		var exact, abs float64
		for _, v := range x {
			exact += float64(v)
			abs += math.Abs(float64(v))
		}
		checkDot(t, "sumNEON", sumNEON(x), exact, abs, n)
		if got, want := maxOfNEON(x), fallback.Max(x); !sameSpecial(got, want) {
			t.Fatalf("maxOfNEON(n=%d) = %v, fallback %v", n, got, want)
		}
		ok()
	}
}

// TestNEONMaxSpecial places NaN, ±Inf and signed zeros at every position of
// every vector lane and tail slot.
func TestNEONMaxSpecial(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 20, 33, 37} {
		for pos := 0; pos < n; pos++ {
			for _, base := range []float32{negZero, 0, -1, float32(math.Inf(-1))} {
				for _, sp := range specials {
					x := make([]float32, n)
					for i := range x {
						x[i] = base
					}
					x[pos] = sp
					if got, want := maxOfNEON(x), fallback.Max(x); !sameSpecial(got, want) {
						t.Fatalf("maxOfNEON(%v) = %v, fallback %v", x, got, want)
					}
				}
			}
		}
	}
	if got := maxOfNEON(nil); !math.IsInf(float64(got), -1) {
		t.Fatalf("maxOfNEON(nil) = %v, want -Inf", got)
	}
}

func TestNEONMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, sh := range matShapes() {
		rows, cols := sh[0], sh[1]
		if cols == 0 {
			continue // the Go wrappers handle empty rows
		}
		for _, pad := range []int{0, 5} {
			a, aok := newMatrix(t, rng, rows, cols, pad, rng.IntN(16))
			x, xok := slab(t, cols, rng.IntN(16))
			fill(rng, x)
			dst, dok := slab(t, rows, rng.IntN(16))
			matVecNEON(dst, a.Data, a.Stride, x)
			for r := range dst {
				exact, abs := dot64(a.Row(r), x)
				checkDot(t, "matVecNEON", dst[r], exact, abs, cols)
			}

			// MatTVec: the same FMAs in the same order as fallback.
			w, wok := slab(t, rows, rng.IntN(16))
			fill(rng, w)
			acc, cok := slab(t, cols, rng.IntN(16))
			fill(rng, acc)
			want := append([]float32(nil), acc...)
			fallback.MatTVec(want, a.Data, a.Stride, w)
			matTVecNEON(acc, a.Data, a.Stride, w)
			neonSameBits(t, "matTVecNEON", acc, want)

			// MatVecBatch with batch 1–4, strided X and D.
			batch := 1 + (rows+cols+pad)%4
			xs, xsok := slab(t, (batch-1)*(cols+2)+cols, rng.IntN(16))
			fill(rng, xs)
			ds, dsok := slab(t, (batch-1)*(rows+1)+rows, rng.IntN(16))
			if rows > 0 {
				matVecBatchNEON(ds, rows+1, a.Data, a.Stride, xs, cols+2, rows, cols, batch)
			}
			for b := 0; b < batch && rows > 0; b++ {
				xb := xs[b*(cols+2) : b*(cols+2)+cols]
				for r := 0; r < rows; r++ {
					exact, abs := dot64(a.Row(r), xb)
					checkDot(t, "matVecBatchNEON", ds[b*(rows+1)+r], exact, abs, cols)
				}
				for r := rows; r < rows+1 && b < batch-1; r++ {
					if math.Float32bits(ds[b*(rows+1)+r]) != math.Float32bits(canary) {
						t.Fatalf("matVecBatchNEON wrote the gap after row %d of batch %d", r, b)
					}
				}
			}
			aok()
			xok()
			dok()
			wok()
			cok()
			xsok()
			dsok()
		}
	}
}

// TestNEONGuard runs every NEON kernel on slices flush against PROT_NONE pages.
func TestNEONGuard(t *testing.T) {
	g := make([]*guard, 4)
	for i := range g {
		g[i] = newGuard(t, 4*260)
	}
	for n := 0; n <= 257; n++ {
		for _, atEnd := range []bool{false, true} {
			x, y := g[0].at(n, atEnd), g[1].at(n, atEnd)
			for i := range x {
				x[i], y[i] = float32(i%7)-3, float32(i%5)-2
			}
			dotNEON(x, y)
			axpyNEON(0.5, x, y)
			scaleNEON(0.5, y)
			sumNEON(x)
			maxOfNEON(x)
			if n == 0 {
				continue
			}
			// A 4×n matrix (stride n) and a 4-long vector, then n×4 (stride 4).
			for _, rows := range []int{1, 3, 4, 5} {
				a := g[2].at(rows*n, atEnd)
				d := g[3].at(rows, atEnd)
				matVecNEON(d, a, n, x)
				matTVecNEON(y, a, n, d)
				matVecBatchNEON(d, rows, a, n, x, n, rows, n, 1)
				x2, d2 := g[0].at(2*n, atEnd), g[3].at(2*rows, atEnd)
				matVecBatchNEON(d2, rows, a, n, x2, n, rows, n, 2)
			}
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

// TestNEONExpTanhShapes runs every length at offsets, in place, and against
// guard pages.
func TestNEONExpTanhShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	g := []*guard{newGuard(t, 260), newGuard(t, 260)}
	for _, k := range []struct{ asm, fb func(dst, x []float32) }{{expNEON, fallback.Exp}, {tanhNEON, fallback.Tanh}} {
		asm := k.asm
		for _, n := range smallLengths {
			x, xok := slab(t, n, rng.IntN(16))
			fill(rng, x)
			dst, dok := slab(t, n, rng.IntN(16))
			asm(dst, x)
			in := append([]float32(nil), x...)
			want := make([]float32, n)
			k.fb(want, in)
			neonSameBits(t, "out of place", dst, want)
			asm(x, x)
			neonSameBits(t, "in place", x, want)
			xok()
			dok()
			if n <= 257 {
				for _, atEnd := range []bool{false, true} {
					src, out := g[0].at(n, atEnd), g[1].at(n, atEnd)
					copy(src, in)
					asm(out, src)
					neonSameBits(t, "guarded", out, dst)
				}
			}
		}
	}
}

// TestNEONSoftmax checks the NEON softmax (max, exp-and-sum, scale passes)
// against the float64 oracle within the documented bounds, with masked (−Inf)
// entries, in place and against guard pages; non-finite maxima go to
// fallback by design and are covered by the shared Softmax tests.
func TestNEONSoftmax(t *testing.T) {
	prev := Active()
	defer Use(prev)
	if err := Use(NEON); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(19, 20))
	g := []*guard{newGuard(t, 260), newGuard(t, 260)}
	for _, n := range smallLengths[1:] {
		for _, masked := range []int{0, 1, n / 3} {
			x, xok := slab(t, n, rng.IntN(16))
			fill(rng, x)
			for i := 0; i < masked && i < n-1; i++ {
				x[rng.IntN(n)] = float32(math.Inf(-1))
			}
			if masked > 0 {
				x[rng.IntN(n)] = 3 // at least one finite entry
			}
			dst, dok := slab(t, n, rng.IntN(16))
			Softmax(dst, x)
			neonCheckSoftmax(t, dst, x)
			in := append([]float32(nil), x...)
			Softmax(x, x)
			neonSameBits(t, "in-place Softmax", x, dst)
			if n <= 257 {
				for _, atEnd := range []bool{false, true} {
					src, out := g[0].at(n, atEnd), g[1].at(n, atEnd)
					copy(src, in)
					Softmax(out, src)
					neonSameBits(t, "guarded Softmax", out, dst)
				}
			}
			xok()
			dok()
		}
	}
}

// neonCheckSoftmax fails t unless each dst[i] is within (|x[i]−m| + n + 4)·u
// relative of the float64 softmax of x and Σ dst is 1 within (n+2)·u.
func neonCheckSoftmax(t *testing.T, dst, x []float32) {
	t.Helper()
	n := len(x)
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	var total float64
	for i, v := range x {
		want := math.Exp(float64(v)-m) / s
		bound := (math.Abs(float64(v)-m) + float64(n) + 4) * u * want
		if err := math.Abs(float64(dst[i]) - want); !(err <= bound) && !(want < 0x1p-126 && float64(dst[i]) < 0x1p-125) {
			t.Fatalf("Softmax n=%d: dst[%d] = %v, want %v ± %.3g (x=%v, max %v)", n, i, dst[i], want, bound, v, m)
		}
		total += float64(dst[i])
	}
	if err := math.Abs(total - 1); err > float64(n+2)*u {
		t.Fatalf("Softmax n=%d: Σ = 1 %+.3g, bound %.3g", n, total-1, float64(n+2)*u)
	}
}

// TestNEONAdditiveScore checks additiveScoreNEON against the float64 oracle
// over the float32 sums q[i]+K[s,i]: with tᵢ the float32 tanh (≤ 2 ULP, so
// relative error ≤ 4u) and the FMA sum, |err| ≤ (4u + γ_d·(1+4u))·Σ|vᵢ·tanh| + d·η.
func TestNEONAdditiveScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, sh := range matShapes() {
		rows, d := sh[0], sh[1]
		if d == 0 {
			continue // the Go wrapper clears dst
		}
		for _, pad := range []int{0, 3} {
			k, kok := newMatrix(t, rng, rows, d, pad, rng.IntN(16))
			q, qok := slab(t, d, rng.IntN(16))
			w, wok := slab(t, d, rng.IntN(16))
			fill(rng, q)
			fill(rng, w)
			dst, dok := slab(t, rows, rng.IntN(16))
			additiveScoreNEON(dst, k.Data, k.Stride, q, w)
			for s := range dst {
				var exact, abs float64
				for i, kv := range k.Row(s) {
					p := float64(w[i]) * math.Tanh(float64(q[i]+kv))
					exact += p
					abs += math.Abs(p)
				}
				bound := (4*u+gamma(d)*(1+4*u))*abs + float64(d)*eta
				if err := math.Abs(float64(dst[s]) - exact); !(err <= bound) {
					t.Fatalf("additiveScoreNEON %d×%d row %d = %v, want %v ± %.3g", rows, d, s, dst[s], exact, bound)
				}
			}
			kok()
			qok()
			wok()
			dok()
		}
	}
	// Specials: NaN and ±Inf in K propagate as in fallback.
	for _, sp := range specials {
		k := []float32{0.5, sp, -1, 2, 0.25, 0.5, 1, sp, -3}
		q, w := []float32{1, -1, 0.5, 2, 0.1, -0.2, 0.3, 0.4, 1}, []float32{1, 2, 3, -1, 0.5, 1, 1, -1, 2}
		for _, d := range []int{1, 2, 5, 9} {
			got, want := make([]float32, 1), make([]float32, 1)
			additiveScoreNEON(got, k, d, q[:d], w[:d])
			fallback.AdditiveScore(want, k, d, q[:d], w[:d])
			if isFinite(want[0]) != isFinite(got[0]) || (!isFinite(want[0]) && !sameSpecial(got[0], want[0])) {
				t.Fatalf("additiveScoreNEON(special %v, d=%d) = %v, fallback %v", sp, d, got[0], want[0])
			}
		}
	}
	// Guard pages: K, q and v flush against PROT_NONE pages.
	g := []*guard{newGuard(t, 4*260), newGuard(t, 260), newGuard(t, 260), newGuard(t, 8)}
	for d := 1; d <= 257; d++ {
		for _, atEnd := range []bool{false, true} {
			for _, rows := range []int{1, 2, 3} {
				k, q, w, dst := g[0].at(rows*d, atEnd), g[1].at(d, atEnd), g[2].at(d, atEnd), g[3].at(rows, atEnd)
				for i := range k {
					k[i] = float32(i%7)/7 - 0.5
				}
				for i := range q {
					q[i], w[i] = float32(i%5)/5-0.4, float32(i%3)-1
				}
				additiveScoreNEON(dst, k, d, q, w)
			}
		}
	}
}
