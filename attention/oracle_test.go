package attention

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/heedml/heed/internal/testisa"
	"github.com/heedml/heed/kernels"
)

// This file is the float64 oracle of every mechanism and the error bounds its
// results are checked against (u = 2⁻²⁴, γₙ = n·u/(1−n·u)).
//
// Scores: each mechanism's score s has a bound E_s from the standard analysis
// of the float32 computation (see oracle.score). Weights: perturbing the scores by
// at most E = max E_s changes each softmax weight by a factor within e^{±2E},
// and the Softmax kernel adds its own (|x_s − max| + n + 4)·u relative error, so
//
//	|α_s − α64_s| ≤ α64_s·((e^{2E} − 1) + e^{2E}·(|x_s − max| + 2E + n + 4 + x)·u) + 2⁻¹²⁶
//
// where x = 0 for a plain step and x = 4 + parts for a split step (the
// subtraction of the part max, the merge factor and its Scale). Contexts:
//
//	|c_j − c64_j| ≤ Σ_s δα_s·|v_sj| + γ_{n+1+x}·Σ_s (α64_s + δα_s)·|v_sj|.
//
// Weights whose exact value is below 2⁻¹²⁶ may underflow: the Softmax
// contract bounds them by tiny = 2⁻¹²⁶ absolute, which δα_s includes.
// Masked keys and all weights of a fully masked query must be exactly 0.

const u = 1.0 / (1 << 24)

func gamma(n int) float64 { return float64(n) * u / (1 - float64(n)*u) }

// eta is the smallest positive subnormal float32, the absolute error a product
// that underflows may add.
const eta = 0x1p-149

// tiny is the smallest normal float32: the absolute error the softmax allows
// on weights whose exact value is subnormal (the exponential underflows).
const tiny = 0x1p-126

// forEachISA runs f as a subtest under every ISA this CPU supports, or only
// those HEED_TEST_ISAS names (comma-separated) when it is set
// (internal/testisa): make test runs the suite under qemu's Haswell with
// HEED_TEST_ISAS=avx2 and under qemu-aarch64 with neon, since the generic
// path there is Go the native run has tested and kernels' suite checks the
// generic kernels under emulation.
func forEachISA(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	prev := kernels.Active()
	defer kernels.Use(prev)
	isas, err := testisa.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, isa := range isas {
		if err := kernels.Use(isa); err != nil {
			t.Fatal(err)
		}
		t.Run(isa.String(), f)
	}
}

// sparse reports whether HEED_TEST_SPARSE is set: make test's Haswell step,
// which repeats under emulation the AVX2 paths that test-native has already
// checked, and its oldest-Go step (see kernels' harness). Tests that check
// only what no CPU model changes (allocations, under every ISA natively)
// skip themselves there, and tests that repeat a case over mask modes take
// fewer of them (sparseKeeps).
var sparse = os.Getenv("HEED_TEST_SPARSE") != ""

// sparseKeeps reports whether a test runs trial i of those it repeats for
// each case c (mask modes and the like, which the attention's Go code
// handles alike under every ISA): always, or when sparse one in every,
// chosen by (c+i) mod every so that the trials kept rotate over the cases
// and each still runs.
func sparseKeeps(c, i, every int) bool { return !sparse || (c+i)%every == 0 }

// skipSparse skips t when sparse: what it checks, the native run has checked
// under every ISA with the same Go code.
func skipSparse(t *testing.T) {
	t.Helper()
	if sparse {
		t.Skip("HEED_TEST_SPARSE: checked under every ISA by the native run")
	}
}

// randVec returns n random values in [−1, 1) scaled by 2^k, k in [−2, 2].
func randVec(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.Float64()*2-1) * float32(math.Ldexp(1, rng.IntN(5)-2))
	}
	return s
}

// randMat returns a random r×c matrix whose rows are padded with pad NaNs, so
// that reading the padding poisons the result.
func randMat(rng *rand.Rand, r, c, pad int) kernels.Matrix {
	stride := c + pad
	data := make([]float32, max(0, r*stride))
	for i := range data {
		if i%stride < c {
			data[i] = float32(rng.Float64()*2-1) * float32(math.Ldexp(1, rng.IntN(5)-2))
		} else {
			data[i] = float32(math.NaN())
		}
	}
	if r > 0 {
		data = data[:(r-1)*stride+c] // nothing past the last element
	}
	return kernels.Matrix{Rows: r, Cols: c, Stride: stride, Data: data}
}

func at(m kernels.Matrix, i, j int) float64 { return float64(m.Data[i*m.Stride+j]) }

// oracle describes one scorer in float64.
type oracle struct {
	sc     Scorer
	w, w2  kernels.Matrix
	v      []float32
	splits int // the step may be split into this many parts (0: not split)
	// tiled is the keys per block of a tiled (online-softmax) computation
	// (0: not tiled): MultiHead's bound replaces the softmax's n + 4 by
	// 2n + 6b + 4 and the context's γ_{n+1} by γ_{n+2b+2}, b = ⌈n/tiled⌉.
	tiled int

	// Stored keys and values (format_test.go): rounds is the extra roundings
	// per score and context term of the format's kernels (2 for Q8's scale),
	// store the format whose storage rounding of the given float32 keys and
	// values is added to the bounds (Float32: none, the matrices are what
	// the kernels read).
	rounds int
	store  Format
	// qquery adds Q8Q8's query rounding to the scores' bound (queryScore).
	qquery bool
}

// score returns the exact score of query h against key s and its error bound.
func (o oracle) score(h []float32, keys kernels.Matrix, s int) (x, bound float64) {
	x, bound = o.score32(h, keys, s)
	if o.qquery {
		bound += (1 + gamma(keys.Cols+o.rounds+4)) * o.queryScore(h, keys, s)
	}
	if o.store != Float32 {
		e := o.storeScore(h, keys, s)
		bound += (1+gamma(keys.Cols+o.rounds+4))*e + float64(keys.Cols)*eta
	}
	return x, bound
}

// score32 is score for the float32 computation on keys as given.
func (o oracle) score32(h []float32, keys kernels.Matrix, s int) (x, bound float64) {
	d := keys.Cols
	switch o.sc.kind {
	case kindDot, kindScaled:
		var abs float64
		for i := range d {
			p := float64(h[i]) * at(keys, s, i)
			x += p
			abs += math.Abs(p)
		}
		if o.sc.kind == kindDot {
			return x, gamma(d+o.rounds)*abs + float64(d)*eta
		}
		c := 1 / math.Sqrt(float64(d))
		return x * c, gamma(d+2+o.rounds)*abs*c + float64(d+2)*eta
	case kindCosine:
		var abs, hh, kk float64
		for i := range d {
			k := at(keys, s, i)
			x += float64(h[i]) * k
			abs += math.Abs(float64(h[i]) * k)
			hh += float64(h[i]) * float64(h[i])
			kk += k * k
		}
		if hh == 0 || kk == 0 {
			return 0, 0
		}
		n := math.Sqrt(hh) * math.Sqrt(kk)
		return x / n, 3*gamma(d+6)*abs/n + float64(d)*0x1p-100
	case kindGeneral:
		dq, dk := o.w.Rows, o.w.Cols
		var abs float64
		for j := range dk {
			for i := range dq {
				p := float64(h[i]) * at(o.w, i, j) * at(keys, s, j)
				x += p
				abs += math.Abs(p)
			}
		}
		return x, gamma(dq+dk+4+o.rounds)*abs + float64(dq+dk)*eta*(1+maxAbs(keys, s))
	case kindAdditive:
		da, dq := o.w.Rows, o.w.Cols
		var errSum, absVT float64
		for a := range da {
			var q, aq, k, ak float64
			for j := range dq {
				p := at(o.w, a, j) * float64(h[j])
				q += p
				aq += math.Abs(p)
			}
			for j := range d {
				p := at(o.w2, a, j) * at(keys, s, j)
				k += p
				ak += math.Abs(p)
			}
			t := math.Tanh(q + k)
			va := math.Abs(float64(o.v[a]))
			x += float64(o.v[a]) * t
			absVT += va * math.Abs(t)
			errT := gamma(dq)*aq + gamma(d)*ak + u*math.Abs(q+k) + 4*u*math.Abs(t) + 2*float64(dq+d)*eta
			errSum += va * errT
		}
		return x, gamma(da)*absVT + (1+gamma(da))*errSum + float64(da)*eta
	}
	panic("unknown scorer")
}

func maxAbs(m kernels.Matrix, s int) float64 {
	var a float64
	for j := range m.Cols {
		a = max(a, math.Abs(at(m, s, j)))
	}
	return a
}

// checkStep fails t unless weights and context are within the bounds of the
// exact step of query h against keys/values with the attended set att.
func (o oracle) checkStep(t *testing.T, what string, weights, context, h []float32, keys, values kernels.Matrix, att []bool) {
	t.Helper()
	r := o.step(h, keys, values, att)
	if r.n == 0 {
		for s, w := range weights {
			if w != 0 || math.Signbit(float64(w)) {
				t.Fatalf("%s: fully masked, weights[%d] = %v, want 0", what, s, w)
			}
		}
		for j, c := range context {
			if c != 0 {
				t.Fatalf("%s: fully masked, context[%d] = %v, want 0", what, j, c)
			}
		}
		return
	}
	for s := range weights {
		if !att[s] {
			if weights[s] != 0 {
				t.Fatalf("%s: weights[%d] = %v for a masked key, want 0", what, s, weights[s])
			}
			continue
		}
		if err := math.Abs(float64(weights[s]) - r.alpha[s]); !(err <= r.da[s]) {
			t.Fatalf("%s: weights[%d] = %v, want %v ± %.3g (error %.3g; score bound %.3g)", what, s, weights[s], r.alpha[s], r.da[s], err, r.e)
		}
	}
	for j := range context {
		if err := math.Abs(float64(context[j]) - r.c[j]); !(err <= r.dc[j]) {
			t.Fatalf("%s: context[%d] = %v, want %v ± %.3g (error %.3g)", what, j, context[j], r.c[j], r.dc[j], err)
		}
	}
}

// exactStep is a step in float64 and the bounds of the float32 one.
type exactStep struct {
	n         int       // attended keys
	e         float64   // the largest score bound
	alpha, da []float64 // weights and their bounds
	c, dc     []float64 // context and its bounds
}

// step returns the exact step of query h against keys/values with the
// attended set att, and the error bounds of the computed one.
func (o oracle) step(h []float32, keys, values kernels.Matrix, att []bool) exactStep {
	S := keys.Rows
	x := make([]float64, S)
	r := exactStep{alpha: make([]float64, S), da: make([]float64, S), c: make([]float64, values.Cols), dc: make([]float64, values.Cols)}
	mx := math.Inf(-1)
	for s := range S {
		if !att[s] {
			continue
		}
		var b float64
		x[s], b = o.score(h, keys, s)
		r.e = max(r.e, b)
		mx = max(mx, x[s])
		r.n++
	}
	if r.n == 0 {
		return r
	}
	var sum float64
	alpha := r.alpha
	for s := range S {
		if att[s] {
			alpha[s] = math.Exp(x[s] - mx)
			sum += alpha[s]
		}
	}
	extra := 0
	if o.splits > 1 {
		extra = 4 + o.splits
	}
	ctxN := r.n + 1 + extra
	if o.tiled > 0 {
		b := (r.n + o.tiled - 1) / o.tiled
		extra, ctxN = r.n+6*b, r.n+2*b+2
	}
	grow := math.Exp(2 * r.e)
	for s := range S {
		if att[s] {
			alpha[s] /= sum
			r.da[s] = alpha[s]*((grow-1)+grow*(math.Abs(x[s]-mx)+2*r.e+float64(r.n+4+extra))*u) + tiny
		}
	}
	for j := range values.Cols {
		var c, errA, abs float64
		for s := range S {
			if att[s] {
				vj := at(values, s, j)
				c += alpha[s] * vj
				errA += r.da[s] * math.Abs(vj)
				abs += (alpha[s] + r.da[s]) * math.Abs(vj)
			}
		}
		r.c[j], r.dc[j] = c, errA+gamma(ctxN+o.rounds)*abs+float64(r.n)*eta
		if o.store != Float32 {
			var es float64
			for s := range S {
				if att[s] {
					es += (alpha[s] + r.da[s]) * storeErr(o.store, values, s, j)
				}
			}
			r.dc[j] += (1+gamma(ctxN+o.rounds))*es + float64(r.n)*eta
		}
	}
	return r
}

// checkScores fails t unless the raw scores are within their bounds, and −Inf
// for the keys not attended.
func (o oracle) checkScores(t *testing.T, what string, scores, h []float32, keys kernels.Matrix, att []bool) {
	t.Helper()
	for s, got := range scores {
		if !att[s] {
			if !math.IsInf(float64(got), -1) {
				t.Fatalf("%s: scores[%d] = %v for a masked key, want -Inf", what, s, got)
			}
			continue
		}
		x, b := o.score(h, keys, s)
		if err := math.Abs(float64(got) - x); !(err <= b) {
			t.Fatalf("%s: scores[%d] = %v, want %v ± %.3g (error %.3g)", what, s, got, x, b, err)
		}
	}
}
