package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/allocs"
	"github.com/heedml/heed/kernels"
)

// setBackTiles sets the blocks of the MultiHead backward for the test.
func setBackTiles(tb testing.TB, rows, keys, diag int) {
	old := backTileSize
	backTileSize.rows, backTileSize.keys, backTileSize.diag = rows, keys, diag
	tb.Cleanup(func() { backTileSize = old })
}

// TestGradOracleMultiHeadFiniteDifferences checks the float64 formulas of
// the MultiHead gradients (f64MH.grads) against central finite differences
// of the float64 forward, causal or not, grouped or not, with queries that
// see no key.
func TestGradOracleMultiHeadFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for _, sh := range []mhShape{{3, 4, 2, 3, 2, 2}, {5, 3, 3, 2, 2, 1}, {4, 4, 2, 2, 4, 2}} {
		for _, causal := range []bool{false, true} {
			m := &f64MH{q: toF64(randMat(rng, sh.T, sh.heads*sh.dk, 0)), k: toF64(randMat(rng, sh.S, sh.kv*sh.dk, 0)),
				v: toF64(randMat(rng, sh.S, sh.kv*sh.dh, 0)), heads: sh.heads, kv: sh.kv, causal: causal}
			dout := toF64(randMat(rng, sh.T, sh.heads*sh.dh, 0))
			dq, dk, dv := m.grads(dout, nil, nil, nil, 0)
			loss := func() float64 { return m.loss(dout) }
			what := fmt.Sprintf("%+v causal=%v", sh, causal)
			fdCheck(t, what+" dq", loss, m.q, dq)
			fdCheck(t, what+" dk", loss, m.k, dk)
			fdCheck(t, what+" dv", loss, m.v, dv)
		}
	}
}

// TestMultiHeadBackward checks MultiHeadTrain's outputs and logsumexps and
// the gradients of MultiHeadBackward and GroupedQueryBackward against the
// float64 oracle within their bounds, over the shapes of TestMultiHead,
// causal or not, for several block sizes, on one goroutine and split by KV
// heads or by blocks of keys, under every ISA.
func TestMultiHeadBackward(t *testing.T) {
	for _, tiles := range [][3]int{{0, 0, 0}, {1, 1, 1}, {5, 7, 2}, {16, 16, 5}, {6, 64, 4}} {
		for _, parallel := range []bool{false, true} {
			t.Run(fmt.Sprintf("tiles=%v/parallel=%v", tiles, parallel), func(t *testing.T) {
				if sparse && tiles != [3]int{0, 0, 0} && tiles != [3]int{5, 7, 2} {
					t.Skip("HEED_TEST_SPARSE: the tiling is Go the native run checked under every ISA; two block sizes run its kernels here")
				}
				if testing.Short() && parallel && tiles != [3]int{5, 7, 2} {
					t.Skip("-short: the parallel routes with one block size")
				}
				if tiles[0] > 0 {
					setBackTiles(t, tiles[0], tiles[1], tiles[2])
					setTiles(t, tiles[0]+3, tiles[1]+2)
				}
				if parallel {
					setTuning(t, func(t *tuning) { t.multiHeadBackMin = 0 })
					setProcs(t, 3)
				}
				testMultiHeadBackward(t)
			})
		}
	}
}

func testMultiHeadBackward(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(53, 54))
		var ws Workspace
		for _, sh := range mhShapes {
			for _, causal := range []bool{false, true} {
				checkMultiHeadBackward(t, rng, sh, causal, &ws)
			}
		}
	})
}

// checkMultiHeadBackward runs a training forward and the backward of a
// random case of shape sh and checks them against the oracle.
func checkMultiHeadBackward(t *testing.T, rng *rand.Rand, sh mhShape, causal bool, ws *Workspace) {
	t.Helper()
	kv := sh.kv
	if kv == 0 {
		kv = sh.heads
	}
	q := offsetMat(rng, sh.T, sh.heads*sh.dk, rng.IntN(3), rng.IntN(3))
	k := offsetMat(rng, sh.S, kv*sh.dk, rng.IntN(3), rng.IntN(3))
	v := offsetMat(rng, sh.S, kv*sh.dh, rng.IntN(3), rng.IntN(3))
	out := randMat(rng, sh.T, sh.heads*sh.dh, 2)
	lse := randVec(rng, sh.heads*sh.T)
	if sh.kv == 0 {
		MultiHeadTrain(out, lse, q, k, v, sh.heads, masking(causal), ws)
	} else {
		GroupedQueryTrain(out, lse, q, k, v, sh.heads, sh.kv, masking(causal), ws)
	}
	what := fmt.Sprintf("%+v causal=%v", sh, causal)
	checkMultiHead(t, what, out, q, k, v, sh.heads, kv, causal)
	m := &f64MH{q: toF64(q), k: toF64(k), v: toF64(v), heads: sh.heads, kv: kv, causal: causal}
	exactOut, outErr, lseErr := checkLSE64(t, what, m, lse, q, k, v)
	dout := randMat(rng, sh.T, sh.heads*sh.dh, 1)
	dq := gradBuf(rng, q.Rows, q.Cols, q.Rows, rng.IntN(5) > 0)
	dk := gradBuf(rng, k.Rows, k.Cols, k.Rows, rng.IntN(5) > 0)
	dv := gradBuf(rng, v.Rows, v.Cols, v.Rows, rng.IntN(5) > 0)
	if sh.kv == 0 {
		MultiHeadBackward(dq, dk, dv, dout, out, lse, q, k, v, sh.heads, masking(causal), ws)
	} else {
		GroupedQueryBackward(dq, dk, dv, dout, out, lse, q, k, v, sh.heads, sh.kv, masking(causal), ws)
	}
	bq, bk := max(1, backTileSize.rows), max(1, backTileSize.keys)
	extra := 7 + (sh.heads/kv)*((sh.T+bq-1)/bq) + (sh.S+bk-1)/bk
	gq, gk, gv := m.grads(toF64(dout), exactOut, outErr, lseErr, extra)
	checkGrad(t, what+" dq", dq, gq, dq.Rows, nil)
	checkGrad(t, what+" dk", dk, gk, dk.Rows, nil)
	checkGrad(t, what+" dv", dv, gv, dv.Rows, nil)
}

// checkLSE64 fails t unless each logsumexp of a training forward is within
// MultiHeadTrain's bound of the exact one, and returns the exact outputs,
// the forward's bounds on them and the logsumexps' bounds (heads×T).
func checkLSE64(t *testing.T, what string, m *f64MH, lse []float32, q, k, v kernels.Matrix) (out, outErr, lseErr [][]float64) {
	t.Helper()
	T, S, dk, dh, group := m.dims()
	out, outErr = make([][]float64, T), make([][]float64, T)
	for tq := range T {
		out[tq], outErr[tq] = make([]float64, m.heads*dh), make([]float64, m.heads*dh)
	}
	lseErr = make([][]float64, m.heads)
	o := oracle{sc: ScaledDot(), tiled: max(1, tileSize.keys)}
	for i := range m.heads {
		j := i / group
		lseErr[i] = make([]float64, T)
		qi, ki, vi := cols(q, i*dk, (i+1)*dk), cols(k, j*dk, (j+1)*dk), cols(v, j*dh, (j+1)*dh)
		for tq := range T {
			x, xe := m.scores(i, tq)
			_, l := m.weights(i, tq)
			got := float64(lse[i*T+tq])
			n := len(x)
			if n == 0 {
				if !math.IsInf(got, -1) {
					t.Fatalf("%s: head %d row %d sees no key: lse = %v, want -Inf", what, i, tq, got)
				}
				continue
			}
			var E, spread float64
			mx := math.Inf(-1)
			for s := range n {
				E = max(E, xe[s])
				mx = max(mx, x[s])
			}
			for s := range n {
				spread = max(spread, mx-x[s])
			}
			b := (n + o.tiled - 1) / o.tiled
			bound := E + (spread+float64(2*n+6*b+4))*u + u*math.Abs(l)
			if err := math.Abs(got - l); !(err <= bound) {
				t.Fatalf("%s: head %d row %d: lse = %v, want %v ± %.3g (error %.3g)", what, i, tq, got, l, bound, err)
			}
			lseErr[i][tq] = bound
			att := make([]bool, S)
			for s := range n {
				att[s] = true
			}
			r := o.step(row(qi, tq), ki, vi, att)
			for a := range dh {
				out[tq][i*dh+a], outErr[tq][i*dh+a] = r.c[a], r.dc[a]
			}
		}
	}
	return out, outErr, lseErr
}

// TestMultiHeadBackwardSpecial checks the special values of the backward: a
// NaN query makes NaN its own gradient row and the rows of dK and dV of the
// keys it sees, and no other query's gradient (the rows of keys it does not
// see may be NaN: its tile's products reach them); a row whose scores are
// all −Inf (lse = −Inf) contributes nothing and its dq row stays zero;
// every other gradient is finite.
func TestMultiHeadBackwardSpecial(t *testing.T) {
	setBackTiles(t, 4, 5, 2)
	forEachISA(t, func(t *testing.T) {
		for _, causal := range []bool{false, true} {
			const T, S, dk, dh, heads, kv = 11, 13, 4, 3, 2, 1
			for c := range 2 {
				rng := rand.New(rand.NewPCG(uint64(c), 55))
				q, k, v := randMat(rng, T, heads*dk, 1), randMat(rng, S, kv*dk, 1), randMat(rng, S, kv*dh, 1)
				const row0 = 5
				switch c {
				case 0:
					q.Data[row0*q.Stride+1] = float32(math.NaN()) // head 0
				case 1:
					for j := range dk { // head 1: scores of −Inf against every key
						q.Data[row0*q.Stride+dk+j] = 1e30
					}
					for s := range S {
						for j := range dk {
							k.Data[s*k.Stride+j] = -1e10 * float32(1+s)
						}
					}
				}
				out, lse := randMat(rng, T, heads*dh, 0), make([]float32, heads*T)
				GroupedQueryTrain(out, lse, q, k, v, heads, kv, masking(causal), nil)
				dout := randMat(rng, T, heads*dh, 0)
				dq, dk2, dv := gradBuf(rng, T, heads*dk, T, true), gradBuf(rng, S, kv*dk, S, true), gradBuf(rng, S, kv*dh, S, true)
				GroupedQueryBackward(dq, dk2, dv, dout, out, lse, q, k, v, heads, kv, masking(causal), nil)
				seen := S
				if causal {
					seen = min(S, row0+S-T+1)
				}
				what := fmt.Sprintf("causal=%v case %d", causal, c)
				for tq := range T {
					for j, x := range row(dq, tq) {
						nan := c == 0 && tq == row0 && j < dk
						if c == 1 && tq == row0 && j >= dk && x != 0 {
							t.Fatalf("%s: dq[%d][%d] = %v for a row of lse −Inf, want 0", what, tq, j, x)
						}
						if math.IsNaN(float64(x)) != nan || math.IsInf(float64(x), 0) {
							t.Fatalf("%s: dq[%d][%d] = %v", what, tq, j, x)
						}
					}
				}
				for s := range S {
					for j, x := range row(dv, s) {
						nan := c == 0 && s < seen
						if c == 0 && s >= seen && math.IsNaN(float64(x)) {
							continue
						}
						if math.IsNaN(float64(x)) != nan || math.IsInf(float64(x), 0) {
							t.Fatalf("%s: dv[%d][%d] = %v, NaN expected: %v", what, s, j, x, nan)
						}
					}
					for j, x := range row(dk2, s) {
						nan := c == 0 && s < seen
						if c == 0 && s >= seen && math.IsNaN(float64(x)) {
							continue
						}
						if math.IsNaN(float64(x)) != nan || math.IsInf(float64(x), 0) {
							t.Fatalf("%s: dk[%d][%d] = %v, NaN expected: %v", what, s, j, x, nan)
						}
					}
				}
			}
		}
	})
}

// TestMultiHeadBackwardNoAllocs checks that a training step's forward and
// backward with a warm Workspace allocate nothing, on one goroutine and
// split by KV heads and by blocks of keys.
func TestMultiHeadBackwardNoAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(57, 58))
	const T, S, heads = 70, 90, 4
	q, out, dout, dq := randMat(rng, T, 32, 0), randMat(rng, T, 48, 0), randMat(rng, T, 48, 0), randMat(rng, T, 32, 0)
	lse := make([]float32, heads*T)
	for _, c := range []struct {
		parallel bool
		kv       int
	}{{false, 2}, {true, 2}, {true, 4}} {
		t.Run(fmt.Sprintf("parallel=%v/kv=%d", c.parallel, c.kv), func(t *testing.T) {
			setBackTiles(t, 16, 32, 8)
			if c.parallel {
				setTuning(t, func(t *tuning) { t.multiHeadBackMin, t.multiHeadMinWork = 0, 0 })
				setProcs(t, 2)
			}
			k, v := randMat(rng, S, 8*c.kv, 0), randMat(rng, S, 12*c.kv, 0)
			dk, dv := randMat(rng, S, 8*c.kv, 0), randMat(rng, S, 12*c.kv, 0)
			forEachISA(t, func(t *testing.T) {
				var ws Workspace
				for _, causal := range []bool{false, true} {
					f := func() {
						GroupedQueryTrain(out, lse, q, k, v, heads, c.kv, masking(causal), &ws)
						GroupedQueryBackward(dq, dk, dv, dout, out, lse, q, k, v, heads, c.kv, masking(causal), &ws)
					}
					if n := allocs.Count(allocRuns(10), f); n != 0 {
						t.Errorf("causal=%v: %d allocations in the measured calls", causal, n)
					}
				}
			})
		})
	}
}

// TestMultiHeadBackwardPanics checks the shape and overlap errors.
func TestMultiHeadBackwardPanics(t *testing.T) {
	m := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	q, k, v, out := m(2, 4), m(3, 4), m(3, 4), m(2, 4)
	lse := make([]float32, 4)
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/attention: MultiHeadTrain: len(lse)=3, want heads·T = 4", func() { MultiHeadTrain(out, lse[:3], q, k, v, 2, Causal, nil) }},
		{"heed/attention: MultiHeadTrain: lse overlaps out", func() { MultiHeadTrain(out, out.Data[:4], q, k, v, 2, Causal, nil) }},
		{"heed/attention: MultiHeadTrain: q is 2×4, v is 3×4: 3 heads do not divide d=4 or 3 KV heads d_v=4", func() { MultiHeadTrain(out, lse, q, k, v, 3, Causal, nil) }},
		{"heed/attention: GroupedQueryTrain: 3 KV heads do not divide 2 heads", func() { GroupedQueryTrain(out, lse, q, k, v, 2, 3, Causal, nil) }},
		{"heed/attention: MultiHeadBackward: dq is 2×3, dk 3×4, dv 3×4, dout 2×4; want dq, dk, dv empty or as q 2×4, k 3×4, v 3×4, and dout as out 2×4", func() {
			MultiHeadBackward(m(2, 3), m(3, 4), m(3, 4), m(2, 4), out, lse, q, k, v, 2, Causal, nil)
		}},
		{"heed/attention: MultiHeadBackward: dq is 2×4, dk 3×4, dv 3×4, dout 2×3; want dq, dk, dv empty or as q 2×4, k 3×4, v 3×4, and dout as out 2×4", func() {
			MultiHeadBackward(m(2, 4), m(3, 4), m(3, 4), m(2, 3), out, lse, q, k, v, 2, Causal, nil)
		}},
		{"heed/attention: MultiHeadBackward: len(lse)=3, want heads·T = 4", func() {
			MultiHeadBackward(m(2, 4), m(3, 4), m(3, 4), m(2, 4), out, lse[:3], q, k, v, 2, Causal, nil)
		}},
		{"heed/attention: MultiHeadBackward: dq overlaps q", func() { MultiHeadBackward(q, m(3, 4), m(3, 4), m(2, 4), out, lse, q, k, v, 2, Causal, nil) }},
		{"heed/attention: MultiHeadBackward: dk overlaps dv", func() {
			d := m(3, 4)
			MultiHeadBackward(kernels.Matrix{}, d, d, m(2, 4), out, lse, q, k, v, 2, Causal, nil)
		}},
		{"heed/attention: MultiHeadBackward: dv overlaps lse", func() {
			d := m(3, 4)
			MultiHeadBackward(kernels.Matrix{}, kernels.Matrix{}, d, m(2, 4), out, d.Data[:4], q, k, v, 2, Causal, nil)
		}},
		{"heed/attention: MultiHeadBackward: mask 2 is not a Masking", func() { MultiHeadBackward(m(2, 4), m(3, 4), m(3, 4), m(2, 4), out, lse, q, k, v, 2, 2, nil) }},
		{"heed/attention: GroupedQueryBackward: q is 2×4, k is 3×4, v is 3×4; want q T×(2·d_k), k S×(1·d_k), v S×(1·d_h)", func() {
			GroupedQueryBackward(m(2, 4), m(3, 4), m(3, 4), m(2, 4), out, lse, q, k, v, 2, 1, Causal, nil)
		}},
	} {
		mustPanic(t, c.want, c.f)
	}
}
