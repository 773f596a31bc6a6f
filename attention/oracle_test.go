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

// Gradients. The backward passes are checked against a float64 evaluation of
// each gradient formula (the value of an ev) that also carries a bound on
// the error of the float32 computation that approximates it (its e),
// derived operation by operation in the standard model, as heed computes
// it: each rounding adds u·|result|, each sum of n terms γ_{n+extra}·Σ|terms|
// (extra covers the partial sums a blocked product or a final addition to a
// buffer adds), each input that heed computed earlier (the weights of the
// forward, a recomputed projection) comes with its own bound. The values are
// themselves checked against central finite differences of the float64
// forward (TestGradOracleFiniteDifferences).

// ev is an exact value v and a bound e on the error of its float32
// computation.
type ev struct{ v, e float64 }

func (a ev) mag() float64 { return math.Abs(a.v) + a.e }

// evRound is a value v with propagated error e, rounded once.
func evRound(v, e float64) ev { return ev{v, e + u*(math.Abs(v)+e) + eta} }

func evAdd(a, b ev) ev { return evRound(a.v+b.v, a.e+b.e) }
func evSub(a, b ev) ev { return evRound(a.v-b.v, a.e+b.e) }
func evMul(a, b ev) ev { return evRound(a.v*b.v, termErr(a, b)) }

// evFMA is a·b + c rounded once.
func evFMA(a, b, c ev) ev { return evRound(a.v*b.v+c.v, termErr(a, b)+c.e) }

// termErr is the propagated error of the exact product a·b.
func termErr(a, b ev) float64 { return a.e*math.Abs(b.v) + math.Abs(a.v)*b.e + a.e*b.e }

// evSummer accumulates Σ a_i·b_i (or Σ t_i) computed in float32 in any
// order, with up to n+extra roundings on each term.
type evSummer struct {
	v, e, m float64
	n       int
}

func (s *evSummer) addProd(a, b ev) {
	s.v += a.v * b.v
	s.e += termErr(a, b)
	s.m += a.mag() * b.mag()
	s.n++
}

func (s *evSummer) add(t ev) {
	s.v += t.v
	s.e += t.e
	s.m += t.mag()
	s.n++
}

func (s *evSummer) sum(extra int) ev {
	return ev{s.v, s.e + gamma(s.n+extra)*s.m + float64(s.n)*eta}
}

// evTanh is tanh(z) by a kernel within 2 ULP.
func evTanh(z ev) ev {
	t := math.Tanh(z.v)
	return ev{t, (1-t*t)*z.e + z.e*z.e + 4*u*math.Abs(t) + eta}
}

// evExp is e^x by a kernel within 2 ULP (2⁻¹²⁶ absolute where subnormal).
func evExp(x ev) ev {
	y := math.Exp(x.v)
	return ev{y, y*math.Expm1(x.e) + math.Exp(x.v+x.e)*4*u + tiny}
}

func exact(x float64) ev { return ev{x, 0} }

// f64Mem is a Memory in float64: the inputs of a step as float64, for the
// gradient oracle and its finite differences. When same, V is K (one
// matrix: perturbing a key perturbs its value).
type f64Mem struct {
	kind      kind
	K, V      [][]float64
	W, W1, W2 [][]float64
	v         []float64
	att       []bool
	same      bool
}

func toF64(m kernels.Matrix) [][]float64 {
	r := make([][]float64, m.Rows)
	for i := range r {
		r[i] = make([]float64, m.Cols)
		for j := range r[i] {
			r[i][j] = at(m, i, j)
		}
	}
	return r
}

func vecF64(x []float32) []float64 {
	r := make([]float64, len(x))
	for i, v := range x {
		r[i] = float64(v)
	}
	return r
}

// newF64Mem returns the float64 Memory of oracle o's scorer over keys and
// values (the same matrix when same) with the attended set att.
func newF64Mem(o oracle, keys, vals kernels.Matrix, att []bool, same bool) *f64Mem {
	m := &f64Mem{kind: o.sc.kind, K: toF64(keys), att: att, same: same}
	m.V = m.K
	if !same {
		m.V = toF64(vals)
	}
	switch m.kind {
	case kindGeneral:
		m.W = toF64(o.w)
	case kindAdditive:
		m.W1, m.W2, m.v = toF64(o.w), toF64(o.w2), vecF64(o.v)
	}
	return m
}

func norm64(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// score returns the exact score of query h against key s.
func (m *f64Mem) score(h []float64, s int) float64 {
	k := m.K[s]
	var x float64
	switch m.kind {
	case kindDot, kindScaled, kindCosine:
		for i := range k {
			x += h[i] * k[i]
		}
		switch m.kind {
		case kindScaled:
			x /= math.Sqrt(float64(len(k)))
		case kindCosine:
			nh, nk := norm64(h), norm64(k)
			if nh == 0 || nk == 0 {
				return 0
			}
			x /= nh * nk
		}
	case kindGeneral:
		for i := range h {
			for j := range k {
				x += h[i] * m.W[i][j] * k[j]
			}
		}
	case kindAdditive:
		for a := range m.v {
			var z float64
			for j := range h {
				z += m.W1[a][j] * h[j]
			}
			for j := range k {
				z += m.W2[a][j] * k[j]
			}
			x += m.v[a] * math.Tanh(z)
		}
	}
	return x
}

// step returns the exact weights and context of query h.
func (m *f64Mem) step(h []float64) (alpha, ctx []float64) {
	S := len(m.K)
	alpha = make([]float64, S)
	x := make([]float64, S)
	mx := math.Inf(-1)
	for s := range S {
		if m.att[s] {
			x[s] = m.score(h, s)
			mx = max(mx, x[s])
		}
	}
	dv := 0
	if S > 0 {
		dv = len(m.V[0])
	}
	ctx = make([]float64, dv)
	if math.IsInf(mx, -1) {
		return alpha, ctx
	}
	var sum float64
	for s := range S {
		if m.att[s] {
			alpha[s] = math.Exp(x[s] - mx)
			sum += alpha[s]
		}
	}
	for s := range S {
		alpha[s] /= sum
		for j := range ctx {
			ctx[j] += alpha[s] * m.V[s][j]
		}
	}
	return alpha, ctx
}

// loss is Σ_b (dc_b·c_b + dw_b·α_b), whose gradients the backward computes
// for dcontext dcs and dweights dws (a nil row: none).
func (m *f64Mem) loss(hs, dcs, dws [][]float64) float64 {
	var l float64
	for b, h := range hs {
		alpha, ctx := m.step(h)
		for j, c := range ctx {
			l += dcs[b][j] * c
		}
		if dws[b] != nil {
			for s, a := range alpha {
				l += dws[b][s] * a
			}
		}
	}
	return l
}

// memGrads are the gradients of a Memory's backward with their bounds: dh
// per query; dK (with the values' gradient when same), dV (nil when same);
// the scorer's parameters.
type memGrads struct {
	dh            [][]ev
	dK, dV        [][]ev
	dW, dW1, dW2  [][]ev
	dv            []ev
	alpha, dalpha [][]float64 // the exact weights of each query, and the bounds of the computed ones
}

func evMat(r, c int) [][]ev {
	m := make([][]ev, r)
	for i := range m {
		m[i] = make([]ev, c)
	}
	return m
}

// grads returns the gradients of loss for queries hs with dcontext dcs and
// dweights dws, as heed computes them from weights within dalpha (per
// query; nil: exact) of the exact ones.
func (m *f64Mem) grads(hs, dcs, dws, dalpha [][]float64) *memGrads {
	B, S := len(hs), len(m.K)
	dk, dv, dq := 0, 0, 0
	if S > 0 {
		dk, dv = len(m.K[0]), len(m.V[0])
	}
	if B > 0 {
		dq = len(hs[0])
	}
	g := &memGrads{dh: evMat(B, dq), dK: evMat(S, dk)}
	// ds[b][s]: the scores' gradients; their terms over the queries.
	ds := evMat(B, S)
	alphas := make([][]ev, B)
	for b, h := range hs {
		alpha, _ := m.step(h)
		g.alpha = append(g.alpha, alpha)
		da := make([]float64, S)
		if dalpha != nil {
			da = dalpha[b]
		}
		g.dalpha = append(g.dalpha, da)
		al := make([]ev, S)
		dA := make([]ev, S)
		var mu evSummer
		for s := range S {
			al[s] = ev{alpha[s], da[s]}
			if !m.att[s] {
				al[s] = ev{}
				continue
			}
			var t evSummer
			for j := range dv {
				t.addProd(exact(m.V[s][j]), exact(dcs[b][j]))
			}
			dA[s] = t.sum(2)
			if dws[b] != nil {
				dA[s] = evAdd(dA[s], exact(dws[b][s]))
			}
			mu.addProd(al[s], dA[s])
		}
		mus := mu.sum(2)
		for s := range S {
			if m.att[s] {
				ds[b][s] = evMul(al[s], evSub(dA[s], mus))
			}
		}
		alphas[b] = al
	}
	// Values.
	dV := evMat(S, dv)
	for s := range S {
		for j := range dv {
			var t evSummer
			for b := range B {
				t.addProd(alphas[b][s], exact(dcs[b][j]))
			}
			dV[s][j] = t.sum(2)
		}
	}
	if m.same {
		for s := range S {
			copy(g.dK[s], dV[s])
		}
	} else {
		g.dV = dV
	}
	m.scorerGrads(g, hs, ds)
	return g
}

// accum adds part (a sum computed into a buffer holding acc) to acc.
func accum(acc *ev, part ev) { *acc = evAdd(*acc, part) }

// scorerGrads adds the scorer's gradients for the scores' gradients ds.
func (m *f64Mem) scorerGrads(g *memGrads, hs [][]float64, ds [][]ev) {
	B, S := len(hs), len(m.K)
	if S == 0 || B == 0 {
		return
	}
	dk, dq := len(m.K[0]), len(hs[0])
	K := func(s, j int) ev { return exact(m.K[s][j]) }
	H := func(b, i int) ev { return exact(hs[b][i]) }
	switch m.kind {
	case kindDot, kindScaled:
		if m.kind == kindScaled {
			c := 1 / math.Sqrt(float64(dk))
			for b := range B {
				for s := range S {
					ds[b][s] = evMul(ds[b][s], ev{c, u * c})
				}
			}
		}
		for b := range B {
			for i := range dq {
				var t evSummer
				for s := range S {
					t.addProd(ds[b][s], K(s, i))
				}
				g.dh[b][i] = t.sum(2)
			}
		}
		for s := range S {
			for i := range dk {
				var t evSummer
				for b := range B {
					t.addProd(ds[b][s], H(b, i))
				}
				accum(&g.dK[s][i], t.sum(2))
			}
		}
	case kindGeneral:
		// u = Wᵀh, du = Σ_s ds_s·k_s, dh = W·du, dW = Σ_b h·duᵀ, dk_s += Σ_b ds_s·u.
		us, dus := evMat(B, dk), evMat(B, dk)
		for b := range B {
			for j := range dk {
				var t evSummer
				for i := range dq {
					t.addProd(H(b, i), exact(m.W[i][j]))
				}
				us[b][j] = t.sum(2)
				var d evSummer
				for s := range S {
					d.addProd(ds[b][s], K(s, j))
				}
				dus[b][j] = d.sum(2)
			}
			for i := range dq {
				var t evSummer
				for j := range dk {
					t.addProd(exact(m.W[i][j]), dus[b][j])
				}
				g.dh[b][i] = t.sum(2)
			}
		}
		g.dW = evMat(dq, dk)
		for i := range dq {
			for j := range dk {
				var t evSummer
				for b := range B {
					t.addProd(H(b, i), dus[b][j])
				}
				g.dW[i][j] = t.sum(2)
			}
		}
		for s := range S {
			for j := range dk {
				var t evSummer
				for b := range B {
					t.addProd(ds[b][s], us[b][j])
				}
				accum(&g.dK[s][j], t.sum(2))
			}
		}
	case kindCosine:
		m.cosineGrads(g, hs, ds)
	case kindAdditive:
		m.additiveGrads(g, hs, ds)
	}
}

// cosineGrads is scorerGrads for Cosine (see cosine_backward.go).
func (m *f64Mem) cosineGrads(g *memGrads, hs [][]float64, ds [][]ev) {
	B, S, d := len(hs), len(m.K), len(m.K[0])
	rel := gamma(d + 4)
	nks := make([]float64, S)
	inv := make([]ev, S)
	for s := range S {
		nks[s] = norm64(m.K[s])
		if nks[s] != 0 {
			inv[s] = ev{1 / nks[s], rel / nks[s]}
		}
	}
	G := evMat(B, S)
	X := evMat(B, S)
	qh := evMat(B, d)
	nhs := make([]float64, B)
	for b, h := range hs {
		nhs[b] = norm64(h)
		if nhs[b] == 0 {
			continue // a zero query: no gradient
		}
		for i := range d {
			qh[b][i] = ev{h[i] / nhs[b], rel * math.Abs(h[i]) / nhs[b]}
		}
		var e evSummer
		for s := range S {
			if nks[s] != 0 {
				var abs float64
				for i := range d {
					abs += math.Abs(h[i] * m.K[s][i])
				}
				X[b][s] = ev{m.score(h, s), 3*gamma(d+6)*abs/(nhs[b]*nks[s]) + float64(d)*0x1p-100}
			}
			e.addProd(ds[b][s], X[b][s])
			G[b][s] = evMul(ds[b][s], inv[s])
		}
		es := e.sum(2)
		invh := ev{1 / nhs[b], rel / nhs[b]}
		for i := range d {
			var t evSummer
			for s := range S {
				t.addProd(G[b][s], exact(m.K[s][i]))
			}
			tq := evFMA(ev{-es.v, es.e}, qh[b][i], t.sum(3))
			g.dh[b][i] = evMul(tq, invh)
		}
	}
	for s := range S {
		var col evSummer
		for b := range B {
			col.add(evMul(G[b][s], X[b][s]))
		}
		c := col.sum(2)
		c.v = -c.v
		for i := range d {
			var t evSummer
			for b := range B {
				t.addProd(G[b][s], qh[b][i])
			}
			accum(&g.dK[s][i], t.sum(2))
			g.dK[s][i] = evFMA(c, evMul(inv[s], exact(m.K[s][i])), g.dK[s][i])
		}
	}
}

// additiveGrads is scorerGrads for Additive (see backward.go).
func (m *f64Mem) additiveGrads(g *memGrads, hs [][]float64, ds [][]ev) {
	B, S, dk, dq, da := len(hs), len(m.K), len(m.K[0]), len(hs[0]), len(m.v)
	// K = H̄W₂ᵀ as Reset computes it, q = W₁h.
	Ka := evMat(S, da)
	for s := range S {
		for a := range da {
			var t evSummer
			for j := range dk {
				t.addProd(exact(m.W2[a][j]), exact(m.K[s][j]))
			}
			Ka[s][a] = t.sum(2)
		}
	}
	dqa := evMat(B, da)
	dKa := make([][]evSummer, S)
	for s := range dKa {
		dKa[s] = make([]evSummer, da)
	}
	dvs := make([]evSummer, da)
	for b, h := range hs {
		for a := range da {
			var t evSummer
			for j := range dq {
				t.addProd(exact(m.W1[a][j]), exact(h[j]))
			}
			qa := t.sum(2)
			va := exact(m.v[a])
			var dqs evSummer
			for s := range S {
				if ds[b][s].v == 0 && ds[b][s].e == 0 {
					continue
				}
				tt := evTanh(evAdd(qa, Ka[s][a]))
				gg := evSub(va, evMul(va, evMul(tt, tt)))
				dqs.addProd(ds[b][s], gg)
				dKa[s][a].addProd(ds[b][s], gg)
				dvs[a].addProd(ds[b][s], tt)
			}
			dqa[b][a] = dqs.sum(2)
		}
	}
	g.dv = make([]ev, da)
	for a := range da {
		g.dv[a] = dvs[a].sum(2)
	}
	dKs := evMat(S, da)
	for s := range S {
		for a := range da {
			dKs[s][a] = dKa[s][a].sum(2)
		}
	}
	for b := range B {
		for j := range dq {
			var t evSummer
			for a := range da {
				t.addProd(exact(m.W1[a][j]), dqa[b][a])
			}
			g.dh[b][j] = t.sum(2)
		}
	}
	g.dW1 = evMat(da, dq)
	for a := range da {
		for j := range dq {
			var t evSummer
			for b := range B {
				t.addProd(dqa[b][a], exact(hs[b][j]))
			}
			g.dW1[a][j] = t.sum(2)
		}
	}
	g.dW2 = evMat(da, dk)
	for a := range da {
		for j := range dk {
			var t evSummer
			for s := range S {
				t.addProd(dKs[s][a], exact(m.K[s][j]))
			}
			g.dW2[a][j] = t.sum(2)
		}
	}
	for s := range S {
		for j := range dk {
			var t evSummer
			for a := range da {
				t.addProd(dKs[s][a], exact(m.W2[a][j]))
			}
			accum(&g.dK[s][j], t.sum(2))
		}
	}
}

// f64MH is a MultiHead or GroupedQuery call in float64 (kv KV heads; the
// head blocks of q, k and v as in GroupedQuery).
type f64MH struct {
	q, k, v   [][]float64
	heads, kv int
	causal    bool
}

func (m *f64MH) dims() (T, S, dk, dh, group int) {
	T, S = len(m.q), len(m.k)
	dk = len(m.q[0]) / m.heads
	if S > 0 {
		dh = len(m.v[0]) / m.kv
	}
	return T, S, dk, dh, m.heads / m.kv
}

// seen returns how many keys query t sees.
func (m *f64MH) seen(t int) int {
	T, S, _, _, _ := m.dims()
	if !m.causal {
		return S
	}
	return min(S, max(0, t+S-T+1))
}

// scores returns the exact scaled scores of query t of head i against the
// keys it sees, and the bound of the float32 products that compute them.
func (m *f64MH) scores(i, t int) (x, e []float64) {
	_, _, dk, _, group := m.dims()
	j := i / group
	n := m.seen(t)
	x, e = make([]float64, n), make([]float64, n)
	c := 1 / math.Sqrt(float64(dk))
	for s := range n {
		var abs float64
		for a := range dk {
			p := m.q[t][i*dk+a] * m.k[s][j*dk+a]
			x[s] += p
			abs += math.Abs(p)
		}
		x[s] *= c
		e[s] = gamma(dk+2)*abs*c + float64(dk+2)*eta
	}
	return x, e
}

// weights returns the exact softmax of query t of head i over the keys it
// sees and its logsumexp (−Inf when it sees none).
func (m *f64MH) weights(i, t int) (p []float64, lse float64) {
	x, _ := m.scores(i, t)
	mx := math.Inf(-1)
	for _, v := range x {
		mx = max(mx, v)
	}
	if len(x) == 0 {
		return x, math.Inf(-1)
	}
	var sum float64
	p = make([]float64, len(x))
	for s, v := range x {
		p[s] = math.Exp(v - mx)
		sum += p[s]
	}
	for s := range p {
		p[s] /= sum
	}
	return p, mx + math.Log(sum)
}

// loss is Σ dout∘out.
func (m *f64MH) loss(dout [][]float64) float64 {
	T, _, _, dh, group := m.dims()
	var l float64
	for i := range m.heads {
		j := i / group
		for t := range T {
			p, _ := m.weights(i, t)
			for s, w := range p {
				for a := range dh {
					l += dout[t][i*dh+a] * w * m.v[s][j*dh+a]
				}
			}
		}
	}
	return l
}

// grads returns dq, dk and dv for loss with the output gradient dout, as the
// flash backward computes them: when out is not nil, from that forward
// output (its bounds in outErr), the logsumexps within lseErr (heads×T) of
// the exact ones and the recomputed scores within their bounds, with extra
// partial sums per accumulated element; with out nil, the exact formulas.
func (m *f64MH) grads(dout [][]float64, out, outErr, lseErr [][]float64, extra int) (dq, dk, dv [][]ev) {
	T, S, dkh, dh, group := m.dims()
	dq, dk, dv = evMat(T, m.heads*dkh), evMat(S, m.kv*dkh), evMat(S, m.kv*dh)
	sk := make([][]evSummer, S)
	sv := make([][]evSummer, S)
	for s := range S {
		sk[s] = make([]evSummer, m.kv*dkh)
		sv[s] = make([]evSummer, m.kv*dh)
	}
	alpha := 1 / math.Sqrt(float64(dkh))
	aev := ev{alpha, u * alpha}
	for i := range m.heads {
		j := i / group
		for t := range T {
			x, xe := m.scores(i, t)
			p, lse := m.weights(i, t)
			n := len(x)
			if n == 0 {
				continue
			}
			// D_t = Σ dout·out over the head's columns.
			var dsum evSummer
			for a := range dh {
				o := ev{}
				if out != nil {
					o = ev{out[t][i*dh+a], outErr[t][i*dh+a]}
				} else {
					for s := range n {
						o.v += p[s] * m.v[s][j*dh+a]
					}
				}
				dsum.addProd(exact(dout[t][i*dh+a]), o)
			}
			D := dsum.sum(2)
			ds := make([]ev, n)
			for s := range n {
				P := exact(p[s])
				if out != nil {
					arg := x[s] - lse
					P = evExp(ev{arg, xe[s] + lseErr[i][t] + u*math.Abs(arg)})
				}
				var dps evSummer
				for a := range dh {
					dps.addProd(exact(dout[t][i*dh+a]), exact(m.v[s][j*dh+a]))
				}
				ds[s] = evMul(P, evSub(dps.sum(2), D))
				for a := range dh {
					sv[s][j*dh+a].addProd(P, exact(dout[t][i*dh+a]))
				}
				for a := range dkh {
					sk[s][j*dkh+a].addProd(ds[s], exact(m.q[t][i*dkh+a]))
				}
			}
			for a := range dkh {
				var t2 evSummer
				for s := range n {
					t2.addProd(ds[s], exact(m.k[s][j*dkh+a]))
				}
				dq[t][i*dkh+a] = evMul(t2.sum(extra), aev)
			}
		}
	}
	for s := range S {
		for a := range sk[s] {
			dk[s][a] = evMul(sk[s][a].sum(extra), aev)
		}
		for a := range sv[s] {
			dv[s][a] = sv[s][a].sum(extra)
		}
	}
	return dq, dk, dv
}
