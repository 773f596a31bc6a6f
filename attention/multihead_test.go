package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/heedml/heed/kernels"

	"github.com/heedml/heed/internal/allocs"
)

// TestMultiHead checks tiled multi-head and grouped-query attention, with and
// without the causal mask, T < S, T = S and T > S (queries that see no key),
// sizes that are not multiples of the blocks, padded rows and offset data,
// against the float64 oracle of each head (the scaled-dot oracle on the
// head's column blocks, with the tiled bound), on one goroutine and on
// several, for several block sizes, under every ISA.
func TestMultiHead(t *testing.T) {
	// tiles: rows, keys and, when not 0, the diagonal products' rows.
	for _, tiles := range [][3]int{{0, 0, 0}, {1, 1, 0}, {5, 7, 0}, {6, 64, 0}, {16, 16, 0}, {0, 0, 1}, {5, 7, 2}, {16, 16, 5}, {16, 64, 6}} {
		// phase runs a single goroutine's call in phases of one KV head (a
		// byte budget that fits none); parallel calls take one phase.
		for _, c := range []struct{ parallel, phase bool }{{false, false}, {false, true}, {true, false}} {
			parallel := c.parallel
			t.Run(fmt.Sprintf("tiles=%v/parallel=%v/phases=%v", tiles, parallel, c.phase), func(t *testing.T) {
				if c.phase && testing.Short() && tiles != [3]int{5, 7, 0} && tiles != [3]int{16, 16, 5} {
					t.Skip("-short: phases with two block sizes only")
				}
				if sparse && tiles != [3]int{0, 0, 0} && tiles != [3]int{5, 7, 0} && tiles != [3]int{16, 16, 5} {
					t.Skip("HEED_TEST_SPARSE: the tiling is Go the native run checked under every ISA; three block sizes run its kernels here")
				}
				setTuning(t, func(t *tuning) { t.multiHeadDirect = -1 })
				if c.phase {
					setTuning(t, func(t *tuning) { t.multiHeadPhase = 1 })
				} else {
					setTuning(t, func(t *tuning) { t.multiHeadPhase = 0 })
				}
				if tiles[0] > 0 {
					setTiles(t, tiles[0], tiles[1])
				}
				if tiles[2] > 0 {
					setDiag(t, tiles[2])
				}
				if parallel {
					setTuning(t, func(t *tuning) { t.multiHeadMinWork = 0 })
					setProcs(t, 3)
				}
				testMultiHead(t)
			})
		}
	}
	t.Run("direct", func(t *testing.T) {
		setTuning(t, func(t *tuning) { t.multiHeadDirect = math.MaxInt })
		testMultiHead(t)
	})
}

// setTiles sets the block sizes of the tiled attention for the test.
func setTiles(tb testing.TB, rows, keys int) {
	old := tileSize
	tileSize.rows, tileSize.keys = rows, keys
	tb.Cleanup(func() { tileSize = old })
}

// setDiag sets the rows per product on blocks the causal mask cuts.
func setDiag(tb testing.TB, n int) {
	old := tileSize
	tileSize.diag = n
	tb.Cleanup(func() { tileSize = old })
}

// mhShape is one MultiHead/GroupedQuery case: kv = 0 calls MultiHead.
type mhShape struct{ T, S, dk, dh, heads, kv int }

var mhShapes = []mhShape{
	{1, 1, 1, 1, 1, 0}, {1, 5, 2, 3, 2, 0}, {3, 3, 2, 2, 4, 0}, {7, 5, 2, 1, 3, 0},
	{4, 9, 12, 12, 1, 0}, {16, 16, 8, 8, 4, 0}, {5, 33, 3, 5, 3, 0}, {2, 1, 1, 1, 2, 0},
	{33, 20, 5, 4, 2, 0}, {20, 47, 9, 7, 2, 0},
	{9, 9, 4, 4, 4, 2}, {13, 29, 6, 5, 6, 3}, {29, 13, 6, 5, 4, 1}, {17, 17, 3, 8, 8, 1},
	{30, 70, 8, 8, 4, 4}, {70, 30, 7, 9, 6, 2}, {12, 12, 4, 4, 1, 1},
}

func testMultiHead(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		var ws Workspace
		for _, sh := range mhShapes {
			for _, causal := range []bool{false, true} {
				kv := sh.kv
				if kv == 0 {
					kv = sh.heads
				}
				q := offsetMat(rng, sh.T, sh.heads*sh.dk, rng.IntN(3), rng.IntN(3))
				k := offsetMat(rng, sh.S, kv*sh.dk, rng.IntN(3), rng.IntN(3))
				v := offsetMat(rng, sh.S, kv*sh.dh, rng.IntN(3), rng.IntN(3))
				out := randMat(rng, sh.T, sh.heads*sh.dh, 2)
				if sh.kv == 0 {
					MultiHead(out, q, k, v, sh.heads, masking(causal), &ws)
				} else {
					GroupedQuery(out, q, k, v, sh.heads, sh.kv, masking(causal), &ws)
				}
				checkMultiHead(t, fmt.Sprintf("%+v causal=%v", sh, causal), out, q, k, v, sh.heads, kv, causal)
			}
		}
	})
}

// offsetMat is randMat with its data starting off elements into a larger
// buffer of NaNs.
func offsetMat(rng *rand.Rand, r, c, pad, off int) kernels.Matrix {
	m := randMat(rng, r, c, pad)
	buf := make([]float32, off+len(m.Data))
	for i := range off {
		buf[i] = float32(math.NaN())
	}
	copy(buf[off:], m.Data)
	m.Data = buf[off:]
	return m
}

// checkMultiHead checks every output row of every head of a MultiHead or
// GroupedQuery call against the oracle with the tiled bound for the blocks in
// use, and that the padding of out was not written.
func checkMultiHead(t *testing.T, what string, out, q, k, v kernels.Matrix, heads, kv int, causal bool) {
	t.Helper()
	T, S := q.Rows, k.Rows
	dk, dh := q.Cols/heads, v.Cols/kv
	o := oracle{sc: ScaledDot(), tiled: max(1, tileSize.keys)}
	for i := range heads {
		j := i / (heads / kv)
		qi, ki := cols(q, i*dk, (i+1)*dk), cols(k, j*dk, (j+1)*dk)
		vi, oi := cols(v, j*dh, (j+1)*dh), cols(out, i*dh, (i+1)*dh)
		for tq := range T {
			att := make([]bool, S)
			for s := range att {
				att[s] = !causal || s <= tq+S-T
			}
			// MultiHead returns no weights: checkStep checks the weights
			// of an equivalent Memory step (also against the oracle) and
			// MultiHead's output row as the context.
			weights := make([]float32, S)
			m := NewMemory(ScaledDot(), ki, vi)
			m.SetMask(att)
			m.Attend(weights, make([]float32, dh), row(qi, tq))
			o.checkStep(t, fmt.Sprintf("%s head %d row %d", what, i, tq), weights, row(oi, tq), row(qi, tq), ki, vi, att)
		}
	}
	for j := range len(out.Data) {
		if j%out.Stride >= out.Cols && !math.IsNaN(float64(out.Data[j])) {
			t.Fatalf("%s: out padding %d written", what, j)
		}
	}
}

// TestMultiHeadPanics checks the shape errors.
func TestMultiHeadPanics(t *testing.T) {
	m := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	for _, c := range []struct {
		want         string
		out, q, k, v kernels.Matrix
		heads        int
	}{
		{"heed/attention: MultiHead: 0 heads", m(2, 4), m(2, 4), m(3, 4), m(3, 4), 0},
		{"heed/attention: MultiHead: q is 2×4, k is 3×5, v is 3×4; want q T×d, k S×d, v S×d_v", m(2, 4), m(2, 4), m(3, 5), m(3, 4), 2},
		{"heed/attention: MultiHead: 3 heads do not divide d=4 and d_v=6", m(2, 6), m(2, 4), m(3, 4), m(3, 6), 3},
		{"heed/attention: MultiHead: out is 2×5, want T×d_v = 2×4", m(2, 5), m(2, 4), m(3, 4), m(3, 4), 2},
		{"heed/attention: MultiHead: k is 3×4 with stride 2 < 4 columns", m(2, 4), m(2, 4), kernels.Matrix{Rows: 3, Cols: 4, Stride: 2, Data: make([]float32, 12)}, m(3, 4), 2},
	} {
		mustPanic(t, c.want, func() { MultiHead(c.out, c.q, c.k, c.v, c.heads, Unmasked, nil) })
	}
}

// mustPanic fails t unless f panics with exactly the message want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic; want %q", want)
		}
		if msg, _ := r.(string); msg != want {
			t.Fatalf("panic %q; want %q", r, want)
		}
	}()
	f()
}

// TestPoolShrinks checks that the workers a 64-head MultiHead started under
// GOMAXPROCS(64) exit once GOMAXPROCS is 1 and they are idle, and that the
// pool grows again for the next parallel call.
func TestPoolShrinks(t *testing.T) {
	old := pool.idle.Swap(int64(time.Millisecond))
	t.Cleanup(func() { pool.idle.Store(old) })
	setTuning(t, func(t *tuning) { t.multiHeadMinWork, t.multiHeadDirect = 0, -1 })
	setProcs(t, 64)
	rng := rand.New(rand.NewPCG(17, 18))
	const T, S, d, heads = 3, 4, 64, 64
	q, k := randMat(rng, T, d, 0), randMat(rng, S, d, 0)
	out := randMat(rng, T, d, 0)
	var ws Workspace
	before := runtime.NumGoroutine()
	MultiHead(out, q, k, k, heads, Unmasked, &ws)
	want := f32bits(out.Data)
	pool.mu.Lock()
	grown := pool.workers
	pool.mu.Unlock()
	if grown < heads-1 {
		t.Fatalf("%d workers after a %d-head call under GOMAXPROCS(64), want ≥ %d", grown, heads, heads-1)
	}
	runtime.GOMAXPROCS(1)
	// Every worker exits (the ones from earlier tests too): at most
	// `before` goroutines remain once they have, after a bounded wait.
	deadline := time.Now().Add(10 * time.Second)
	for {
		pool.mu.Lock()
		w := pool.workers
		pool.mu.Unlock()
		g := runtime.NumGoroutine()
		if w == 0 && g <= before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("under GOMAXPROCS(1): %d workers and %d goroutines remain (%d before the call)", w, g, before)
		}
		time.Sleep(5 * time.Millisecond)
	}
	runtime.GOMAXPROCS(4)
	clear(out.Data)
	MultiHead(out, q, k, k, heads, Unmasked, &ws)
	pool.mu.Lock()
	regrown := pool.workers
	pool.mu.Unlock()
	if same := slices.Equal(f32bits(out.Data), want); regrown != 3 || !same {
		t.Fatalf("after shrinking, under GOMAXPROCS(4): %d workers (want 3); output as before: %v", regrown, same)
	}
}

// TestMultiHeadSpecial checks special values against Memory.Attend with the
// same mask, row by row: a NaN query poisons only its own rows; an infinite
// value enters only the rows of queries that see its key (masked keys never
// produce NaN); −Inf scores get weight 0, +Inf scores share the weight, a row
// whose scores are all −Inf follows Attend; queries that see no key get 0. It
// runs the tiled route at several block sizes and the direct route.
func TestMultiHeadSpecial(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	// tiles: rows, keys and diagonal rows of the tiled route (0: the
	// defaults); direct: the small-call route without tiles.
	for _, tiles := range [][3]int{{0, 0, 0}, {5, 7, 0}, {1, 1, 0}, {8, 8, 3}, {-1, -1, -1}} {
		name := fmt.Sprint("tiles=", tiles)
		if tiles[0] < 0 {
			name = "direct"
		}
		t.Run(name, func(t *testing.T) {
			if tiles[0] >= 0 {
				// Phases of one KV head: the packed slots are reused.
				setTuning(t, func(t *tuning) { t.multiHeadDirect, t.multiHeadPhase = -1, 1 })
			}
			if tiles[0] > 0 {
				setTiles(t, tiles[0], tiles[1])
			}
			if tiles[2] > 0 {
				setDiag(t, tiles[2])
			}
			forEachISA(t, func(t *testing.T) {
				for _, sh := range []mhShape{{11, 13, 4, 3, 2, 1}, {13, 11, 4, 3, 2, 2}, {16, 9, 3, 5, 4, 2}} {
					for _, causal := range []bool{false, true} {
						for c := range 6 {
							rng := rand.New(rand.NewPCG(uint64(c), 31))
							q := randMat(rng, sh.T, sh.heads*sh.dk, 1)
							k := randMat(rng, sh.S, sh.kv*sh.dk, 1)
							v := randMat(rng, sh.S, sh.kv*sh.dv(), 1)
							switch c {
							case 0: // a NaN query
								q.Data[3*q.Stride+1] = nan
							case 1: // infinite values: the last keys, which most causal queries do not see
								v.Data[(sh.S-1)*v.Stride] = inf
								v.Data[(sh.S-2)*v.Stride+1] = -inf
								v.Data[(sh.S-3)*v.Stride+2] = nan
							// Large keys differ by factors of 2 or more, so that
							// the other queries' softmax is one-hot, not
							// decided by roundings that differ from Attend's.
							case 2: // −Inf scores: a huge query against keys of the opposite sign
								for j := range sh.dk {
									q.Data[5*q.Stride+j] = 1e30
									k.Data[2*k.Stride+j] = -1e10
									k.Data[(sh.S-1)*k.Stride+j] = -2e10
								}
							case 3: // +Inf scores, two keys sharing the weight
								for j := range sh.dk {
									q.Data[(sh.T-1)*q.Stride+j] = 1e30
									k.Data[0*k.Stride+j] = 1e10
									k.Data[4*k.Stride+j] = 2e10
								}
							case 4: // a row whose scores are all −Inf
								for j := range sh.dk {
									q.Data[(sh.T-2)*q.Stride+j] = 1e30
								}
								for s := range sh.S {
									for j := range sh.dk {
										k.Data[s*k.Stride+j] = -1e10 * float32(1+s)
									}
								}
							case 5: // an infinite value in the first block of keys, which the first query does not see
								v.Data[max(0, sh.S-sh.T+1)*v.Stride+1] = inf
							}
							out := randMat(rng, sh.T, sh.heads*sh.dv(), 1)
							GroupedQuery(out, q, k, v, sh.heads, sh.kv, masking(causal), nil)
							compareAttend(t, fmt.Sprintf("%+v causal=%v case %d", sh, causal, c), out, q, k, v, sh.heads, sh.kv, causal)
						}
					}
				}
			})
		})
	}
}

// dv returns the per-head value width of a special-value case (dh).
func (s mhShape) dv() int { return s.dh }

// compareAttend fails t unless every output row of every head has the NaNs
// and infinities of Memory.Attend's context for that row against the keys it
// sees (a Memory of those keys only: masked keys never enter), and is
// otherwise within 1e-5 relative of it: special values are checked here,
// accuracy by checkMultiHead.
func compareAttend(t *testing.T, what string, out, q, k, v kernels.Matrix, heads, kv int, causal bool) {
	t.Helper()
	T, S := q.Rows, k.Rows
	dk, dh := q.Cols/heads, v.Cols/kv
	for i := range heads {
		j := i / (heads / kv)
		qi, ki := cols(q, i*dk, (i+1)*dk), cols(k, j*dk, (j+1)*dk)
		vi, oi := cols(v, j*dh, (j+1)*dh), cols(out, i*dh, (i+1)*dh)
		for tq := range T {
			seen := S
			if causal {
				seen = min(S, max(0, tq+S-T+1))
			}
			want := make([]float32, dh)
			if seen > 0 {
				m := NewMemory(ScaledDot(), rows(ki, 0, seen), rows(vi, 0, seen))
				m.Attend(make([]float32, seen), want, row(qi, tq))
			}
			got := row(oi, tq)
			for c := range dh {
				g, w := float64(got[c]), float64(want[c])
				ok := math.IsNaN(g) == math.IsNaN(w) && (math.IsNaN(w) || math.Abs(g-w) <= 1e-5*(1+math.Abs(w)) || g == w)
				if seen == 0 && g != 0 {
					ok = false
				}
				if !ok {
					t.Fatalf("%s: head %d row %d (sees %d keys): out[%d] = %v, Attend gives %v", what, i, tq, seen, c, g, w)
				}
			}
		}
	}
}

// TestMultiHeadNoAllocs checks that calls with a warm Workspace allocate
// nothing, on one goroutine and on the pool.
func TestMultiHeadNoAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(3, 4))
	q, k, v := randMat(rng, 70, 32, 0), randMat(rng, 90, 16, 0), randMat(rng, 90, 24, 0)
	out := randMat(rng, 70, 48, 0)
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprint("parallel=", parallel), func(t *testing.T) {
			setTiles(t, 16, 32)
			if parallel {
				setTuning(t, func(t *tuning) { t.multiHeadMinWork = 0 })
				setProcs(t, 3)
			}
			forEachISA(t, func(t *testing.T) {
				var ws Workspace
				for _, causal := range []bool{false, true} {
					f := func() { GroupedQuery(out, q, k, v, 4, 2, masking(causal), &ws) }
					f()
					if n := allocs.Count(allocRuns(10), f); n != 0 {
						t.Errorf("causal=%v: %d allocations in the measured calls", causal, n)
					}
					small := func() {
						GroupedQuery(rows(out, 0, 20), rows(q, 0, 20), rows(k, 0, 30), rows(v, 0, 30), 4, 2, masking(causal), &ws)
					}
					small()
					if n := allocs.Count(allocRuns(10), small); n != 0 {
						t.Errorf("causal=%v, direct route: %d allocations in the measured calls", causal, n)
					}
				}
			})
		})
	}
}

// TestGroupedQueryPanics checks GroupedQuery's shape errors.
func TestGroupedQueryPanics(t *testing.T) {
	m := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	for _, c := range []struct {
		want         string
		out, q, k, v kernels.Matrix
		heads, kv    int
	}{
		{"heed/attention: GroupedQuery: 0 KV heads do not divide 4 heads", m(2, 8), m(2, 8), m(3, 2), m(3, 2), 4, 0},
		{"heed/attention: GroupedQuery: 3 KV heads do not divide 4 heads", m(2, 8), m(2, 8), m(3, 6), m(3, 6), 4, 3},
		{"heed/attention: GroupedQuery: 4 KV heads do not divide 2 heads", m(2, 8), m(2, 8), m(3, 8), m(3, 8), 2, 4},
		{"heed/attention: GroupedQuery: q is 2×9, v is 3×4: 4 heads do not divide d=9 or 2 KV heads d_v=4", m(2, 8), m(2, 9), m(3, 4), m(3, 4), 4, 2},
		{"heed/attention: GroupedQuery: q is 2×8, k is 3×8, v is 3×4; want q T×(4·d_k), k S×(2·d_k), v S×(2·d_h)", m(2, 8), m(2, 8), m(3, 8), m(3, 4), 4, 2},
		{"heed/attention: GroupedQuery: q is 2×8, k is 4×4, v is 3×4; want q T×(4·d_k), k S×(2·d_k), v S×(2·d_h)", m(2, 8), m(2, 8), m(4, 4), m(3, 4), 4, 2},
		{"heed/attention: GroupedQuery: out is 2×4, want T×(4·d_h) = 2×8", m(2, 4), m(2, 8), m(3, 4), m(3, 4), 4, 2},
		{"heed/attention: GroupedQuery: out is 3×8, want T×(4·d_h) = 2×8", m(3, 8), m(2, 8), m(3, 4), m(3, 4), 4, 2},
	} {
		mustPanic(t, c.want, func() { GroupedQuery(c.out, c.q, c.k, c.v, c.heads, c.kv, Unmasked, nil) })
	}
}

// TestMultiHeadEmpty checks T = 0 (nothing written) and S = 0 (every query
// sees no key: zero outputs), causal or not.
func TestMultiHeadEmpty(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, causal := range []bool{false, true} {
		out := randMat(rng, 3, 4, 1)
		GroupedQuery(out, randMat(rng, 3, 6, 0), randMat(rng, 0, 3, 0), randMat(rng, 0, 2, 0), 2, 1, masking(causal), nil)
		for r := range 3 {
			for _, x := range row(out, r) {
				if x != 0 || math.Signbit(float64(x)) {
					t.Fatalf("causal=%v S=0: out row %d = %v, want +0", causal, r, row(out, r))
				}
			}
		}
		MultiHead(randMat(rng, 0, 4, 0), randMat(rng, 0, 6, 0), randMat(rng, 5, 6, 0), randMat(rng, 5, 4, 0), 2, masking(causal), nil)
	}
}

// masking returns Causal for true, Unmasked for false.
func masking(causal bool) Masking {
	if causal {
		return Causal
	}
	return Unmasked
}
