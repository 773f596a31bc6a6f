package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/heedml/heed/kernels"
)

var allKinds = []kind{kindDot, kindScaled, kindCosine, kindGeneral, kindAdditive}

// newScorer returns a random scorer of the given kind for keys of length dk
// (query length dq and attention size da where the kind has them).
func newScorer(rng *rand.Rand, k kind, dq, dk, da int) (Scorer, oracle, int) {
	switch k {
	case kindDot:
		return Dot(), oracle{sc: Dot()}, dk
	case kindScaled:
		return ScaledDot(), oracle{sc: ScaledDot()}, dk
	case kindCosine:
		return Cosine(), oracle{sc: Cosine()}, dk
	case kindGeneral:
		w := randMat(rng, dq, dk, rng.IntN(3))
		sc := General(w)
		return sc, oracle{sc: sc, w: w}, dq
	default:
		w1, w2, v := randMat(rng, da, dq, rng.IntN(3)), randMat(rng, da, dk, rng.IntN(3)), randVec(rng, da)
		sc := Additive(w1, w2, v)
		return sc, oracle{sc: sc, w: w1, w2: w2, v: v}, dq
	}
}

// maskMode picks one of: none, valid length, boolean mask, both, fully masked;
// it sets them on m and returns the attended set.
func setMask(rng *rand.Rand, m *Memory, mode int) []bool {
	S := m.Len()
	att := make([]bool, S)
	valid := S
	var mask []bool
	switch mode {
	case 1:
		valid = rng.IntN(S + 1)
	case 2, 3:
		mask = make([]bool, S)
		for s := range mask {
			mask[s] = rng.IntN(3) > 0
		}
		if mode == 3 {
			valid = rng.IntN(S + 1)
		}
	case 4:
		mask = make([]bool, S)
	}
	m.SetValid(valid)
	m.SetMask(mask)
	for s := range att {
		att[s] = s < valid && (mask == nil || mask[s])
	}
	return att
}

var (
	testS = []int{1, 2, 3, 8, 17, 64, 130}
	testD = []int{1, 2, 7, 16, 33, 64}
)

// TestAttend checks one step of every mechanism against the float64 oracle,
// over many shapes, strides, separate values and masks, under every ISA, with
// the context summed in one pass and in blocks of a few rows.
func TestAttend(t *testing.T) {
	for _, blk := range []int{contextBlock, 40} {
		t.Run(fmt.Sprintf("block=%d", blk), func(t *testing.T) {
			forceContextBlock(t, blk)
			testAttend(t)
		})
	}
}

// forceContextBlock sets the bytes of values per context pass to blk.
func forceContextBlock(t *testing.T, blk int) {
	old := contextBlock
	contextBlock = blk
	t.Cleanup(func() { contextBlock = old })
}

func testAttend(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, k := range allKinds {
			for _, S := range testS {
				for _, d := range testD {
					dq, da := 1+rng.IntN(40), 1+rng.IntN(40)
					sc, o, qd := newScorer(rng, k, dq, d, da)
					keys := randMat(rng, S, d, rng.IntN(3))
					values := kernels.Matrix{}
					vals := keys
					if rng.IntN(2) == 0 {
						vals = randMat(rng, S, []int{1, 5, 24}[rng.IntN(3)], rng.IntN(3))
						values = vals
					}
					m := NewMemory(sc, keys, values)
					for mode := range 5 {
						att := setMask(rng, m, mode)
						h := randVec(rng, qd)
						weights, context := randVec(rng, S), randVec(rng, vals.Cols)
						m.Attend(weights, context, h)
						what := fmt.Sprintf("%s S=%d d=%d dv=%d mode %d", sc, S, d, vals.Cols, mode)
						o.checkStep(t, what, weights, context, h, keys, vals, att)
						m.Scores(weights, h)
						o.checkScores(t, what, weights, h, keys, att)
					}
				}
			}
		}
	})
}

// forceSplit makes every step of at least 2·rows keys split, on 3 goroutines.
func forceSplit(t *testing.T, rows int) {
	r, w, p := splitMinRows, splitMinWork, runtime.GOMAXPROCS(3)
	splitMinRows, splitMinWork = rows, 0
	t.Cleanup(func() { splitMinRows, splitMinWork = r, w; runtime.GOMAXPROCS(p) })
}

// TestAttendChunks checks long steps whose values are the keys, run in
// L2-sized parts one after another on one processor, against the oracle.
func TestAttendChunks(t *testing.T) {
	old, p := chunkBytes, runtime.GOMAXPROCS(1)
	chunkBytes = 256
	t.Cleanup(func() { chunkBytes = old; runtime.GOMAXPROCS(p) })
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, k := range allKinds {
			for _, S := range []int{10, 40, 301} {
				for _, d := range []int{1, 9, 32} {
					sc, o, qd := newScorer(rng, k, 1+rng.IntN(20), d, 1+rng.IntN(20))
					keys := randMat(rng, S, d, rng.IntN(3))
					m := NewMemory(sc, keys, kernels.Matrix{})
					for mode := range 5 {
						att := setMask(rng, m, mode)
						o.splits = m.splitParts()
						h := randVec(rng, qd)
						weights, context := randVec(rng, S), randVec(rng, d)
						m.Attend(weights, context, h)
						o.checkStep(t, fmt.Sprintf("%s S=%d d=%d mode %d parts %d", sc, S, d, mode, o.splits), weights, context, h, keys, keys, att)
					}
				}
			}
		}
	})
}

// TestAttendSplit checks the flash-decoding split against the oracle,
// including parts that are fully masked.
func TestAttendSplit(t *testing.T) {
	forceSplit(t, 5)
	forceContextBlock(t, 40)
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, k := range allKinds {
			for _, S := range []int{10, 11, 16, 40, 301} {
				for _, d := range []int{1, 9, 32} {
					sc, o, qd := newScorer(rng, k, 1+rng.IntN(20), d, 1+rng.IntN(20))
					keys := randMat(rng, S, d, 1)
					vals := randMat(rng, S, 1+rng.IntN(20), 2)
					m := NewMemory(sc, keys, vals)
					for mode := range 5 {
						att := setMask(rng, m, mode)
						if mode == 2 { // mask a whole part
							for s := range S / 2 {
								m.mask[s], att[s] = false, false
							}
						}
						o.splits = m.splitParts()
						h := randVec(rng, qd)
						weights, context := randVec(rng, S), randVec(rng, vals.Cols)
						m.Attend(weights, context, h)
						o.checkStep(t, fmt.Sprintf("%s S=%d d=%d mode %d parts %d", sc, S, d, mode, o.splits), weights, context, h, keys, vals, att)
					}
				}
			}
		}
	})
}

// TestAttendMany checks many queries in one call against the oracle: first
// calls after Reset (blocked MatTVec contexts) and later ones (Vᵀ), with the
// default block and with blocks of a row or two.
func TestAttendMany(t *testing.T) {
	for _, blk := range []int{manyBlock, 40} {
		t.Run(fmt.Sprintf("block=%d", blk), func(t *testing.T) {
			old := manyBlock
			manyBlock = blk
			t.Cleanup(func() { manyBlock = old })
			testAttendMany(t)
		})
	}
}

func testAttendMany(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, k := range allKinds {
			for _, S := range []int{1, 3, 17, 64} {
				for _, d := range []int{1, 5, 32} {
					for _, B := range []int{1, 2, 5, 8} {
						sc, o, qd := newScorer(rng, k, 1+rng.IntN(20), d, 1+rng.IntN(20))
						keys := randMat(rng, S, d, rng.IntN(2))
						vals, values := keys, kernels.Matrix{}
						if B%2 == 0 {
							vals = randMat(rng, S, 1+rng.IntN(12), 1)
							values = vals
						}
						m := NewMemory(sc, keys, values)
						for mode := range 5 {
							if mode%2 == 0 {
								m.Reset(keys, values) // the next call is a first one
							}
							att := setMask(rng, m, mode)
							q := randMat(rng, B, qd, 1)
							w := randMat(rng, B, S, 2)
							c := randMat(rng, B, vals.Cols, 3)
							m.AttendMany(w, c, q)
							for b := range B {
								o.checkStep(t, fmt.Sprintf("%s S=%d d=%d B=%d mode %d query %d", sc, S, d, B, mode, b),
									row(w, b), row(c, b), row(q, b), keys, vals, att)
							}
						}
					}
				}
			}
		}
	})
}

// TestBatch checks a batch of sequences of different lengths and mechanisms,
// on one goroutine and spread over several.
func TestBatch(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprint("parallel=", parallel), func(t *testing.T) {
			if parallel {
				old, p := batchMinWork, runtime.GOMAXPROCS(3)
				batchMinWork = 0
				defer func() { batchMinWork = old; runtime.GOMAXPROCS(p) }()
			}
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(7, 8))
				const n = 13
				var (
					mems      = make([]*Memory, n)
					os        = make([]oracle, n)
					keys      = make([]kernels.Matrix, n)
					atts      = make([][]bool, n)
					w, c, q   = make([][]float32, n), make([][]float32, n), make([][]float32, n)
					b         Batch
					qd, S, dv int
				)
				for i := range n {
					S = 1 + rng.IntN(90)
					var sc Scorer
					dk := 1 + rng.IntN(40)
					sc, os[i], qd = newScorer(rng, allKinds[i%len(allKinds)], 1+rng.IntN(20), dk, 1+rng.IntN(20))
					keys[i] = randMat(rng, S, dk, 1)
					mems[i] = NewMemory(sc, keys[i], kernels.Matrix{})
					atts[i] = setMask(rng, mems[i], i%5)
					dv = keys[i].Cols
					w[i], c[i], q[i] = randVec(rng, S), randVec(rng, dv), randVec(rng, qd)
				}
				b.Attend(mems, w, c, q)
				for i := range n {
					os[i].checkStep(t, fmt.Sprintf("sequence %d (%s)", i, mems[i].sc), w[i], c[i], q[i], keys[i], keys[i], atts[i])
				}
			})
		})
	}
}

// TestAttendSpecial checks the softmax's special rules through a step, plain
// and split: keys whose score is +Inf share the weight 1 (their values give the
// context), and a NaN query gives NaN weights.
func TestAttendSpecial(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprint("split=", split), func(t *testing.T) {
			if split {
				forceSplit(t, 4)
			}
			forEachISA(t, func(t *testing.T) {
				const S, d = 40, 3
				keys := kernels.Matrix{Rows: S, Cols: d, Stride: d, Data: make([]float32, S*d)}
				for i := range keys.Data {
					keys.Data[i] = float32(i%7) / 7
				}
				inf := float32(math.Inf(1))
				copy(row(keys, 5), []float32{inf, 1, 1})
				copy(row(keys, 33), []float32{inf, 2, 0})
				vals := kernels.Matrix{Rows: S, Cols: 1, Stride: 1, Data: make([]float32, S)}
				vals.Data[5], vals.Data[33] = 2, 4
				m := NewMemory(Dot(), keys, vals)
				if split && m.splitParts() < 2 {
					t.Fatal("not split")
				}
				w, c := make([]float32, S), make([]float32, 1)
				m.Attend(w, c, []float32{1, 1, 1})
				for s, x := range w {
					want := float32(0)
					if s == 5 || s == 33 {
						want = 0.5
					}
					if x != want {
						t.Fatalf("weights[%d] = %v, want %v", s, x, want)
					}
				}
				if c[0] != 3 {
					t.Fatalf("context = %v, want 3", c[0])
				}
				m.Attend(w, c, []float32{float32(math.NaN()), 1, 1})
				for s, x := range w {
					if !math.IsNaN(float64(x)) {
						t.Fatalf("NaN query: weights[%d] = %v, want NaN", s, x)
					}
				}
			})
		})
	}
}

// TestParallelThresholds checks that small work stays on the caller's
// goroutine, large work spreads over GOMAXPROCS, and long steps whose values
// are the keys run in L2-sized parts unless they stream (a dot-product score).
func TestParallelThresholds(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, c := range []struct{ work, n, want int }{
		{0, 10, 1}, {batchMinWork - 1, 10, 1}, {batchMinWork, 10, 4}, {batchMinWork, 3, 3}, {1 << 30, 1, 1},
	} {
		if got := batchParts(c.work, c.n); got != c.want {
			t.Errorf("batchParts(%d, %d) = %d, want %d", c.work, c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		procs, S, d int
		sep         bool // separate values: no chunks
		cosine      bool // a score that does not stream: chunks
		want        int
	}{
		{4, 128, 64, false, false, 1}, {4, 1024, 256, false, false, 1}, {4, 2047, 1024, false, false, 1},
		{4, 2047, 1024, false, true, 32}, {4, 2047, 1024, true, true, 1},
		{4, 2048, 64, false, false, 1}, {4, 2048, 128, false, false, 2}, {4, 8192, 256, false, false, 8},
		{4, 8192, 256, false, true, 32}, {4, 8192, 256, true, false, 8},
		{4, 100000, 4, false, false, 16}, {4, 100000, 2, false, false, 1},
		{1, 8192, 256, false, false, 1}, {1, 8192, 256, false, true, 32}, {1, 8192, 256, true, true, 1},
		{1, 1025, 256, false, true, 5}, {1, 1025, 256, false, false, 1},
	} {
		runtime.GOMAXPROCS(c.procs)
		keys := kernels.Matrix{Rows: c.S, Cols: c.d, Stride: c.d, Data: make([]float32, c.S*c.d)}
		values := kernels.Matrix{}
		if c.sep {
			values = kernels.Matrix{Rows: c.S, Cols: c.d, Stride: c.d, Data: make([]float32, c.S*c.d)}
		}
		sc := Dot()
		if c.cosine {
			sc = Cosine()
		}
		if got := NewMemory(sc, keys, values).splitParts(); got != c.want {
			t.Errorf("procs=%d S=%d, d=%d, separate values %v, %s: %d parts, want %d", c.procs, c.S, c.d, c.sep, sc, got, c.want)
		}
	}
}

// TestAttendStream checks steps whose values are the keys taken in one
// streaming pass (DotSoftmaxMatTVec), on one goroutine and split, against the
// oracle; masked steps and the other scores take their usual paths. A key
// holding ±Inf or NaN makes a score that is not finite: the step then gives
// the bits of the unstreamed step on one goroutine.
func TestAttendStream(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprint("split=", split), func(t *testing.T) {
			if split {
				forceSplit(t, 5)
			} else {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			}
			forceContextBlock(t, 40)
			old := streamMin
			streamMin = 40
			t.Cleanup(func() { streamMin = old })
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(13, 14))
				for _, k := range allKinds {
					for _, S := range []int{10, 17, 40, 301} {
						for _, d := range []int{1, 8, 9, 32} {
							sc, o, qd := newScorer(rng, k, 1+rng.IntN(20), d, 1+rng.IntN(20))
							keys := randMat(rng, S, d, rng.IntN(3))
							m := NewMemory(sc, keys, kernels.Matrix{})
							for mode := range 5 {
								att := setMask(rng, m, mode)
								if mode == 0 && (k == kindDot || k == kindScaled || k == kindGeneral) && !m.streams() {
									t.Fatalf("%s S=%d d=%d does not stream", sc, S, d)
								}
								o.splits = m.splitParts()
								h := randVec(rng, qd)
								weights, context := randVec(rng, S), randVec(rng, d)
								m.Attend(weights, context, h)
								o.checkStep(t, fmt.Sprintf("%s S=%d d=%d mode %d parts %d", sc, S, d, mode, o.splits), weights, context, h, keys, keys, att)
							}
						}
					}
				}
				for _, v := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
					const S, d = 40, 8
					keys := randMat(rng, S, d, 0)
					keys.Data[5*d+rng.IntN(d)], keys.Data[33*d] = v, v
					m := NewMemory(Dot(), keys, kernels.Matrix{})
					h := randVec(rng, d)
					for i := range h {
						h[i] = float32(math.Abs(float64(h[i]))) + 0.5 // the special score has v's sign
					}
					w, c := make([]float32, S), make([]float32, d)
					m.Attend(w, c, h)
					stream, rows := streamMin, splitMinRows
					streamMin, splitMinRows = 1<<30, 1<<30
					wantW, wantC := make([]float32, S), make([]float32, d)
					m.Attend(wantW, wantC, h)
					streamMin, splitMinRows = stream, rows
					if !slices.Equal(f32bits(w), f32bits(wantW)) || !slices.Equal(f32bits(c), f32bits(wantC)) {
						t.Fatalf("key %v: weights %v context %v, want %v %v", v, w, c, wantW, wantC)
					}
				}
			})
		})
	}
}

func f32bits(s []float32) []uint32 {
	b := make([]uint32, len(s))
	for i, v := range s {
		b[i] = math.Float32bits(v)
	}
	return b
}
