package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
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
	for _, blk := range []int{tune.contextBlock, 40} {
		t.Run(fmt.Sprintf("block=%d", blk), func(t *testing.T) {
			setTuning(t, func(t *tuning) { t.contextBlock = blk })
			testAttend(t)
		})
	}
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
					values := keys
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

// TestAttendChunks checks long steps whose values are the keys, run in
// L2-sized parts one after another on one processor, against the oracle.
func TestAttendChunks(t *testing.T) {
	setTuning(t, func(t *tuning) { t.chunkBytes = 256 })
	setProcs(t, 1)
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, k := range allKinds {
			for _, S := range []int{10, 40, 301} {
				for _, d := range []int{1, 9, 32} {
					sc, o, qd := newScorer(rng, k, 1+rng.IntN(20), d, 1+rng.IntN(20))
					keys := randMat(rng, S, d, rng.IntN(3))
					m := NewMemory(sc, keys, keys)
					for mode := range 5 {
						att := setMask(rng, m, mode)
						o.splits = m.plan(callAttend, 1).parts
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
	setTuning(t, func(t *tuning) { t.contextBlock = 40 })
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
						o.splits = m.plan(callAttend, 1).parts
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
// default block and with blocks of a row or two, and every call with B > 1
// on the Gemm route.
func TestAttendMany(t *testing.T) {
	forEachManyRoute(t, func(t *testing.T) {
		for _, blk := range []int{tune.manyBlock, 40} {
			t.Run(fmt.Sprintf("block=%d", blk), func(t *testing.T) {
				setTuning(t, func(t *tuning) { t.manyBlock = blk })
				testAttendMany(t)
			})
		}
	})
}

// forEachManyRoute runs f with AttendMany's default routes, then with every
// call of B > 1 queries on the Gemm route (manyGemmMin = 2).
func forEachManyRoute(t *testing.T, f func(t *testing.T)) {
	t.Run("routes=default", f)
	t.Run("routes=gemm", func(t *testing.T) {
		setTuning(t, func(t *tuning) { t.manyGemmMin = 2 })
		f(t)
	})
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
						vals, values := keys, keys
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
				setTuning(t, func(t *tuning) { t.batchMinWork = 0 })
				setProcs(t, 3)
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
					mems[i] = NewMemory(sc, keys[i], keys[i])
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
				if split && m.plan(callAttend, 1).route != routeSplit {
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
				// Keys 0..19 (whole parts when split) score −Inf: weight 0;
				// the step is the one over the other keys.
				for s := range S {
					copy(row(keys, s), []float32{float32(s%7) / 7, 1, 1})
				}
				for s := range 20 {
					row(keys, s)[0] = float32(math.Inf(-1))
				}
				m.Attend(w, c, []float32{1, 1, 1})
				sub := NewMemory(Dot(), rows(keys, 20, S), rows(vals, 20, S))
				wantW, wantC := make([]float32, S-20), make([]float32, 1)
				sub.step(sub.plan(callStep, 1), wantW, wantC, []float32{1, 1, 1})
				for s, x := range w {
					want := float32(0)
					if s >= 20 {
						want = wantW[s-20]
					}
					if math.Abs(float64(x-want)) > 1e-6 || math.IsNaN(float64(x)) {
						t.Fatalf("−Inf scores: weights[%d] = %v, want %v", s, x, want)
					}
				}
				if math.Abs(float64(c[0]-wantC[0])) > 1e-6 || math.IsNaN(float64(c[0])) {
					t.Fatalf("−Inf scores: context = %v, want %v", c[0], wantC[0])
				}
			})
		})
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
				setProcs(t, 1)
			}
			setTuning(t, func(t *tuning) { t.contextBlock, t.streamMin = 40, 40 })
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(13, 14))
				for _, k := range allKinds {
					for _, S := range []int{10, 17, 40, 301} {
						for _, d := range []int{1, 8, 9, 32} {
							sc, o, qd := newScorer(rng, k, 1+rng.IntN(20), d, 1+rng.IntN(20))
							keys := randMat(rng, S, d, rng.IntN(3))
							m := NewMemory(sc, keys, keys)
							for mode := range 5 {
								att := setMask(rng, m, mode)
								p := m.plan(callAttend, 1)
								if mode == 0 && (k == kindDot || k == kindScaled || k == kindGeneral) && S*d*4 > 40 &&
									p.route != routeStream && !(p.route == routeSplit && p.stream) {
									t.Fatalf("%s S=%d d=%d does not stream: %+v", sc, S, d, p)
								}
								o.splits = p.parts
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
					m := NewMemory(Dot(), keys, keys)
					h := randVec(rng, d)
					for i := range h {
						h[i] = float32(math.Abs(float64(h[i]))) + 0.5 // the special score has v's sign
					}
					w, c := make([]float32, S), make([]float32, d)
					m.Attend(w, c, h)
					wantW, wantC := make([]float32, S), make([]float32, d)
					m.step(m.plan(callPlain, 1), wantW, wantC, h)
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

// TestCosineMagnitudes checks cosine steps, scores and many-query calls
// against the float64 oracle for keys and queries of magnitudes 1e-45 to 1e38
// (each key its own), where a float32 ‖h‖² or ‖h̄_s‖², or the product of the
// two norms, would overflow or underflow.
func TestCosineMagnitudes(t *testing.T) {
	mags := []float64{1e-45, 1e-38, 1e-30, 1e-25, 1e-20, 1e-10, 1, 1e10, 1e20, 1e30, 1e38}
	forEachISA(t, func(t *testing.T) {
		// The cases that gave NaN or equal weights, with their exact weights.
		want := []float32{float32(math.E / (math.E + 1)), float32(1 / (math.E + 1))}
		for _, a := range []float32{1e-20, 1e20, 1e-25, 1e-38, 1e38} {
			keys := kernels.Matrix{Rows: 2, Cols: 2, Stride: 2, Data: []float32{a, 0, 0, a}}
			w, c := make([]float32, 2), make([]float32, 2)
			NewMemory(Cosine(), keys, keys).Attend(w, c, []float32{a, 0})
			for s := range w {
				if !(math.Abs(float64(w[s]-want[s])) <= 1e-6) {
					t.Fatalf("keys [[%g 0] [0 %g]], query [%g 0]: weights %v, want %v", a, a, a, w, want)
				}
			}
		}
		rng := rand.New(rand.NewPCG(21, 22))
		_, o, _ := newScorer(rng, kindCosine, 0, 0, 0)
		for _, d := range []int{1, 2, 7, 33} {
			for _, qa := range mags {
				for _, mixed := range []bool{false, true} {
					const S = 12
					keys := kernels.Matrix{Rows: S, Cols: d, Stride: d, Data: make([]float32, S*d)}
					for s := range S {
						ka := mags[rng.IntN(len(mags))]
						if !mixed {
							ka = qa
						}
						for j := range row(keys, s) {
							row(keys, s)[j] = float32((rng.Float64()*2 - 1) * ka)
						}
					}
					h := make([]float32, d)
					for j := range h {
						h[j] = float32((rng.Float64()*2 - 1) * qa)
					}
					vals := randMat(rng, S, 3, 1)
					m := NewMemory(Cosine(), keys, vals)
					att := setMask(rng, m, 0)
					what := fmt.Sprintf("d=%d query magnitude %g mixed keys %v", d, qa, mixed)
					w, c := make([]float32, S), make([]float32, 3)
					m.Attend(w, c, h)
					o.checkStep(t, what, w, c, h, keys, vals, att)
					m.Scores(w, h)
					o.checkScores(t, what, w, h, keys, att)
					q := kernels.Matrix{Rows: 2, Cols: d, Stride: d, Data: append(append([]float32{}, h...), h...)}
					for call := range 3 { // the first call, then Vᵀ, then Gemm
						wm, cm := randMat(rng, 2, S, 0), randMat(rng, 2, 3, 0)
						if call == 2 {
							old := tune
							tune.manyGemmMin = 2
							m.AttendMany(wm, cm, q)
							tune = old
						} else {
							m.AttendMany(wm, cm, q)
						}
						for b := range 2 {
							o.checkStep(t, what+" AttendMany", row(wm, b), row(cm, b), h, keys, vals, att)
						}
					}
				}
			}
		}
	})
}

// TestAttendManyVsAttend checks AttendMany's contract against Attend: each
// row is within Attend's error bound of the exact step, so a row of
// AttendMany and the Attend step of the same query differ by at most the sum
// of the two bounds (they are not promised to be equal bit for bit: the
// largest relative difference seen is logged).
func TestAttendManyVsAttend(t *testing.T) {
	forEachManyRoute(t, testAttendManyVsAttend)
}

func testAttendManyVsAttend(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(23, 24))
		var worst float64
		differ, rowsSeen := 0, 0
		for _, k := range allKinds {
			for _, S := range []int{3, 17, 64, 300} {
				for _, d := range []int{5, 32, 64} {
					B := 2 + rng.IntN(6)
					sc, o, qd := newScorer(rng, k, 1+rng.IntN(20), d, 1+rng.IntN(20))
					keys := randMat(rng, S, d, rng.IntN(2))
					m := NewMemory(sc, keys, keys)
					for mode := range 5 {
						if mode%2 == 0 {
							m.Reset(keys, keys) // the next AttendMany is a first call
						}
						if !sparseKeeps(S+d+int(k), mode, 3) {
							continue
						}
						att := setMask(rng, m, mode)
						q := randMat(rng, B, qd, 1)
						wm, cm := randMat(rng, B, S, 0), randMat(rng, B, d, 0)
						m.AttendMany(wm, cm, q)
						stepO := o
						stepO.splits = m.plan(callAttend, 1).parts
						w, c := make([]float32, S), make([]float32, d)
						for b := range B {
							h := row(q, b)
							m.Attend(w, c, h)
							r, rs := o.step(h, keys, keys, att), stepO.step(h, keys, keys, att)
							what := fmt.Sprintf("%s S=%d d=%d B=%d mode %d query %d", sc, S, d, B, mode, b)
							rowsSeen++
							if !slices.Equal(f32bits(w), f32bits(row(wm, b))) || !slices.Equal(f32bits(c), f32bits(row(cm, b))) {
								differ++
							}
							for s := range S {
								diff := math.Abs(float64(w[s]) - float64(row(wm, b)[s]))
								if !(diff <= r.da[s]+rs.da[s]) {
									t.Fatalf("%s: weights[%d]: Attend %v, AttendMany %v, differ by %.3g > %.3g", what, s, w[s], row(wm, b)[s], diff, r.da[s]+rs.da[s])
								}
								if w[s] >= 1e-3 {
									worst = max(worst, diff/math.Abs(float64(w[s])))
								}
							}
							for j := range d {
								diff := math.Abs(float64(c[j]) - float64(row(cm, b)[j]))
								if !(diff <= r.dc[j]+rs.dc[j]) {
									t.Fatalf("%s: context[%d]: Attend %v, AttendMany %v, differ by %.3g > %.3g", what, j, c[j], row(cm, b)[j], diff, r.dc[j]+rs.dc[j])
								}
							}
						}
					}
				}
			}
		}
		t.Logf("%d of %d rows differ from Attend in some bit; largest relative difference of a weight ≥ 0.001: %.3g", differ, rowsSeen, worst)
	})
}
