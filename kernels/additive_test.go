package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// additive64 returns the exact score Σ v[i]·tanh(q[i] + row[i]) of one row,
// the error bound AdditiveScore documents for it, whether any term is NaN or
// infinite (then no bound applies and the fallback's special value is
// expected), and the sum of the magnitudes of the finite terms.
//
// The bound: with sᵢ = q[i]+row[i], tᵢ = tanh(sᵢ) and t̂ᵢ the float32 tanh of
// the rounded sum, |t̂ᵢ − tᵢ| ≤ u·|sᵢ|·sech²(sᵢ) + 2 ULP ≤ 5u·|tᵢ| + 2η (the
// rounding of sᵢ moves tanh by at most u·|tᵢ|, as x·sech²x ≤ tanh x; 2 ULP of a
// normal value is at most 4u relative, of a subnormal 2η). The products and
// the sum in any order add γ_d·Σ|v[i]·t̂ᵢ| and d·η for underflow. So
//
//	|err| ≤ Σ|v[i]|·(5u·|tᵢ| + 2η) + γ_d·Σ|v[i]|·((1+5u)·|tᵢ| + 2η) + d·η.
func additive64(row, q, v []float32) (exact, bound float64, special bool, finite float64) {
	d := len(q)
	var abs, absT float64
	for i := range q {
		th := math.Tanh(float64(q[i]) + float64(row[i]))
		p := float64(v[i]) * th
		if math.IsNaN(p) || math.IsInf(p, 0) {
			special = true
		} else {
			finite += math.Abs(p)
		}
		exact += p
		av := math.Abs(float64(v[i]))
		abs += av * (5*u*math.Abs(th) + 2*eta)
		absT += av * ((1+5*u)*math.Abs(th) + 2*eta)
	}
	return exact, abs + gamma(d)*absT + float64(d)*eta, special, finite
}

// checkAdditive checks every score of dst against the oracle, or against the
// fallback's special value for rows with a NaN or infinite term. Rows whose
// finite terms reach MaxFloat32/2 in magnitude may overflow in one summation
// order and not another: their score must be NaN or ±Inf when a term is, and
// otherwise NaN, ±Inf or within the bound.
func checkAdditive(t *testing.T, what string, dst []float32, k Matrix, q, v []float32) {
	t.Helper()
	want := make([]float32, len(dst))
	fallback.AdditiveScore(want, k.Data, k.Stride, q, v)
	for s := range dst {
		row := k.Row(s)
		exact, bound, special, finite := additive64(row, q, v)
		switch {
		case special && finite > math.MaxFloat32/2:
			if isFinite(dst[s]) {
				t.Fatalf("%s: %d×%d: dst[%d] = %v, want NaN or ±Inf (a term is)", what, k.Rows, k.Cols, s, dst[s])
			}
		case finite > math.MaxFloat32/2 && !isFinite(dst[s]):
		case special:
			if !sameSpecial(dst[s], want[s]) {
				t.Fatalf("%s: %d×%d: dst[%d] = %v, fallback %v", what, k.Rows, k.Cols, s, dst[s], want[s])
			}
		default:
			if err := math.Abs(float64(dst[s]) - exact); !(err <= bound) {
				t.Fatalf("%s: %d×%d stride %d: dst[%d] = %v, want %v ± %.3g (error %.3g)",
					what, k.Rows, k.Cols, k.Stride, s, dst[s], exact, bound, err)
			}
		}
	}
}

var additiveCols = func() []int {
	var c []int
	for n := 0; n <= 70; n++ {
		c = append(c, n)
	}
	return append(c, 127, 128, 129, 255, 256, 257, 1000)
}()

func TestAdditiveScore(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		for _, cols := range additiveCols {
			for _, rows := range []int{0, 1, 3, 4, 5, 8, 9, 13, 37} {
				for _, pad := range []int{0, 3} {
					scale := float32(math.Ldexp(1, rng.IntN(7)-5))
					stride := cols + pad
					kd, kok := slab(t, max(rows-1, 0)*stride+cols, rng.IntN(16))
					if rows == 0 {
						kd = kd[:0]
					}
					k := Matrix{Rows: rows, Cols: cols, Stride: stride, Data: kd}
					for s := 0; s < rows; s++ {
						fill(rng, k.Row(s))
						for i := range k.Row(s) {
							k.Row(s)[i] *= scale
						}
					}
					q, qok := slab(t, cols, rng.IntN(16))
					v, vok := slab(t, cols, rng.IntN(16))
					dst, dok := slab(t, rows, rng.IntN(16))
					fill(rng, q)
					fill(rng, v)
					for i := range q {
						q[i] *= scale
					}
					AdditiveScore(dst, k, q, v)
					checkAdditive(t, "AdditiveScore", dst, k, q, v)
					kok()
					qok()
					vok()
					dok()
				}
			}
		}
	})
}

// TestAdditiveScoreFallback checks the fallback itself against the oracle.
func TestAdditiveScoreFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, cols := range additiveCols {
		k := Matrix{Rows: 5, Cols: cols, Stride: cols, Data: make([]float32, 5*cols)}
		q, v, dst := make([]float32, cols), make([]float32, cols), make([]float32, 5)
		fill(rng, k.Data)
		fill(rng, q)
		fill(rng, v)
		fallback.AdditiveScore(dst, k.Data, k.Stride, q, v)
		checkAdditive(t, "fallback.AdditiveScore", dst, k, q, v)
	}
}

func TestAdditiveScoreSpecial(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 18))
		for _, cols := range []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100} {
			for trial := 0; trial < 30; trial++ {
				rows := 1 + rng.IntN(9)
				k := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
				q, v, dst := make([]float32, cols), make([]float32, cols), make([]float32, rows)
				fill(rng, k.Data)
				fill(rng, q)
				fill(rng, v)
				for n := 0; n < 1+trial%4; n++ {
					sl := [][]float32{k.Data, q, v}[rng.IntN(3)]
					sl[rng.IntN(len(sl))] = specials[rng.IntN(len(specials))]
				}
				AdditiveScore(dst, k, q, v)
				checkAdditive(t, "AdditiveScore", dst, k, q, v)
			}
		}
		// Saturation: |q+K| large gives tanh = ±1 exactly, so the score is Σ ±v.
		k := Matrix{Rows: 2, Cols: 20, Stride: 20, Data: make([]float32, 40)}
		q, v, dst := make([]float32, 20), make([]float32, 20), make([]float32, 2)
		for i := range q {
			q[i], v[i] = 50, 1
			k.Data[i], k.Data[20+i] = 0, -100
		}
		AdditiveScore(dst, k, q, v)
		if dst[0] != 20 || dst[1] != -20 {
			t.Fatalf("saturated scores = %v, want [20 -20]", dst)
		}
	})
}

func TestAdditiveScoreGuard(t *testing.T) {
	const rows = 5
	forEachGuarded(t, rows*(257+3), 8, func(t *testing.T, n int, get func(int) []float32) {
		for _, pad := range []int{0, 3} { // rows packed, and padded with the last one flush
			stride := n + pad
			k := Matrix{Rows: rows, Cols: n, Stride: stride, Data: get((rows-1)*stride + n)}
			q, v, dst := get(n), get(n), get(rows)
			AdditiveScore(dst, k, q, v)
			checkAdditive(t, "AdditiveScore", dst, k, q, v)
		}
	})
}

func TestAdditiveScorePanics(t *testing.T) {
	k := Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}
	f3 := make([]float32, 3)
	mustPanic(t, "heed/kernels: AdditiveScore: k is 2×3 but len(dst)=1, len(q)=3, len(v)=3",
		func() { AdditiveScore(make([]float32, 1), k, f3, f3) })
	mustPanic(t, "heed/kernels: AdditiveScore: k is 2×3 but len(dst)=2, len(q)=2, len(v)=3",
		func() { AdditiveScore(make([]float32, 2), k, f3[:2], f3) })
	mustPanic(t, "heed/kernels: AdditiveScore: k is 2×3 but len(dst)=2, len(q)=3, len(v)=4",
		func() { AdditiveScore(make([]float32, 2), k, f3, make([]float32, 4)) })
	mustPanic(t, "heed/kernels: AdditiveScore: k is 2×3 with stride 3: len(k.Data)=5 < 6",
		func() {
			AdditiveScore(make([]float32, 2), Matrix{Rows: 2, Cols: 3, Stride: 3, Data: k.Data[:5]}, f3, f3)
		})
}

func FuzzAdditiveScore(f *testing.F) {
	f.Add(byte(3), []byte{})
	f.Add(byte(1), []byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x7f"))
	f.Fuzz(func(t *testing.T, cols byte, data []byte) {
		x := floats(data)
		d := int(cols)%40 + 1
		if len(x) < 2*d {
			return
		}
		q, v, kd := x[:d], x[d:2*d], x[2*d:]
		rows := min(len(kd)/d, maxFuzzRows/4)
		k := Matrix{Rows: rows, Cols: d, Stride: d, Data: kd[:rows*d]}
		eachISA(func(isa string) {
			dst := make([]float32, rows)
			AdditiveScore(dst, k, q, v)
			checkAdditive(t, isa+" AdditiveScore", dst, k, q, v)
		})
	})
}
