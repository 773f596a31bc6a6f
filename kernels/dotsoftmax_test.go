package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"testing"
)

// checkDotSoftmax runs DotSoftmaxMatTVec over the rows of a split at cuts (one
// call per range), from the state st0 and context ctx0, and checks it against
// a float64 oracle. A true result needs every score finite and within Dot's
// bound of h·A[r,·], st.Max the largest of st0.Max and the scores, and st.Sum
// and ctx within the bound of e^(m0−M)·(l0, ctx0) + Σᵣ e^(scores[r]−M)·(1, A[r,·]):
// each term within γ_k + (|scores[r]−M| + D)·u relative, where k counts the
// terms, two roundings per exponential and three per rescaling (at most one
// per block of eight rows and per call), |scores[r]−M|·u is the rounding of
// the exponential's argument (as in Softmax's bound) and D = max(|x − M|) over
// the scores and m0 bounds the rounding of the rescalings' arguments, which
// sum to M − m0; plus 2⁻¹²⁶ per weight: Exp flushes results below it to zero. A false result needs a score that is not finite among
// those written.
func checkDotSoftmax(t *testing.T, what string, a Matrix, h []float32, cuts []int, st0 SoftmaxState, ctx0 []float32) {
	t.Helper()
	a0 := bits(a.Data)
	scores, ctx, st := make([]float32, a.Rows), slices.Clone(ctx0), st0
	for i := range scores {
		scores[i] = canary
	}
	ok, blocks := true, 0
	for i := 0; i+1 < len(cuts) && ok; i++ {
		lo, hi := cuts[i], cuts[i+1]
		ok = DotSoftmaxMatTVec(ctx, scores[lo:hi], rows(a, lo, hi), h, &st)
		blocks += (hi-lo+7)/8 + 1
	}
	if !slices.Equal(bits(a.Data), a0) {
		t.Fatalf("%s: a changed", what)
	}
	if !ok {
		for _, s := range scores {
			if s != canary && !isFinite(s) {
				return
			}
		}
		t.Fatalf("%s: false with every score written finite: %v", what, scores)
	}
	M := float64(st0.Max)
	for r, s := range scores {
		if !isFinite(s) {
			t.Fatalf("%s: true with score[%d] = %v", what, r, s)
		}
		exact, abs := dot64(a.Row(r), h)
		checkDot(t, fmt.Sprintf("%s score[%d]", what, r), s, exact, abs, a.Cols)
		M = max(M, float64(s))
	}
	if float64(st.Max) != M {
		t.Fatalf("%s: max %v, want %v", what, st.Max, M)
	}
	k := a.Rows + 2 + 2*a.Rows + 3*blocks
	f0 := 1.0 // e^(m0−M), 1 for an empty state with no rows
	if float64(st0.Max) != M {
		f0 = math.Exp(float64(st0.Max) - M)
	}
	D, m0 := 0.0, isFinite(st0.Max) // an empty state (−Inf) has no term
	if m0 {
		D = M - float64(st0.Max)
	}
	for _, s := range scores {
		D = max(D, M-float64(s))
	}
	// rel returns the relative bound of a term whose exponential's argument is x − M.
	rel := func(x float64) float64 { return gamma(k) + (M-x+D)*u }
	w, wrel := make([]float64, a.Rows), make([]float64, a.Rows)
	sum, bound := f0*float64(st0.Sum), 0.0
	if m0 {
		bound = rel(float64(st0.Max)) * f0 * float64(st0.Sum)
	}
	for r, s := range scores {
		w[r] = math.Exp(float64(s) - M) // M finite: there is a row
		wrel[r] = rel(float64(s))
		sum += w[r]
		bound += wrel[r] * w[r]
	}
	const tiny = 0x1p-126 // Exp's flush-to-zero threshold
	if err, bound := math.Abs(float64(st.Sum)-sum), bound+float64(k)*tiny; !(err <= bound) {
		t.Fatalf("%s: sum %v, want %v ± %.3g (error %.3g)", what, st.Sum, sum, bound, err)
	}
	for c := range ctx {
		want, bound := f0*float64(ctx0[c]), 0.0
		if m0 {
			bound = rel(float64(st0.Max)) * math.Abs(f0*float64(ctx0[c]))
		}
		for r := range w {
			v := float64(a.Data[r*a.Stride+c])
			want += w[r] * v
			bound += wrel[r]*math.Abs(w[r]*v) + tiny*math.Abs(v)
		}
		if err, bound := math.Abs(float64(ctx[c])-want), bound+float64(k)*eta; !(err <= bound) {
			t.Fatalf("%s: ctx[%d] = %v, want %v ± %.3g (error %.3g)", what, c, ctx[c], want, bound, err)
		}
	}
}

// rows returns rows [lo, hi) of a.
func rows(a Matrix, lo, hi int) Matrix {
	if lo == hi || a.Cols == 0 {
		return Matrix{Rows: hi - lo, Cols: a.Cols, Stride: a.Stride}
	}
	return Matrix{Rows: hi - lo, Cols: a.Cols, Stride: a.Stride, Data: a.Data[lo*a.Stride : (hi-1)*a.Stride+a.Cols]}
}

func TestDotSoftmaxMatTVec(t *testing.T) {
	ninf := float32(math.Inf(-1))
	forEachISA(t, func(t *testing.T) {
		forEachDotSoftmaxKernel(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(61, 62))
			rowCounts := []int{1, 2, 7, 8, 9, 15, 16, 17, 24, 63, 64, 65, 200}
			if !testing.Short() { // several passes of the six- and eight-part kernels
				rowCounts = append(rowCounts, 96, 128)
			}
			for _, nr := range rowCounts {
				for _, cols := range []int{0, 1, 7, 8, 9, 16, 24, 64, 72, 256, 520, 1024} { // 1024: rows 4 KiB apart
					for trial := 0; trial < 8; trial++ {
						if !sparseKeeps(nr+cols, trial, 4) {
							continue
						}
						a, aok := newMatrix(t, rng, nr, cols, trial%2*3, rng.IntN(16))
						h, hok := slab(t, cols, rng.IntN(16))
						fill(rng, h)
						ctx0 := make([]float32, cols)
						st0 := SoftmaxState{Max: ninf}
						cuts := []int{0, nr}
						switch trial {
						case 1: // three calls, from a state with a context
							cuts = []int{0, rng.IntN(nr + 1), 0, nr}
							cuts[2] = cuts[1] + rng.IntN(nr-cuts[1]+1)
							fill(rng, ctx0)
							st0 = SoftmaxState{Max: float32(rng.NormFloat64() * 4), Sum: 1 + rng.Float32()}
						case 2, 3: // scores rising (a new max every block) or falling
							for r := 0; r < nr && cols > 0; r++ {
								f := float32(r+1) / float32(nr)
								if trial == 3 {
									f = 1 - f
								}
								for c := range cols {
									a.Data[r*a.Stride+c] = 4 * f * h[c]
								}
							}
						case 4, 5: // a special value in a or h
							v := specials[rng.IntN(len(specials))]
							if cols > 0 && trial == 4 {
								a.Data[rng.IntN(nr)*a.Stride+rng.IntN(cols)] = v
							} else if cols > 0 {
								h[rng.IntN(cols)] = v
							}
						case 6: // a state whose max exceeds every score
							st0 = SoftmaxState{Max: 1e3, Sum: 2}
							fill(rng, ctx0)
						}
						checkDotSoftmax(t, fmt.Sprintf("DotSoftmaxMatTVec %d×%d trial %d", nr, cols, trial), a, h, cuts, st0, ctx0)
						aok()
						hok()
					}
				}
			}
		})
	})
}

func TestDotSoftmaxMatTVecGuard(t *testing.T) {
	forEachDotSoftmaxKernel(t, func(t *testing.T) { testDotSoftmaxMatTVecGuard(t) })
}

func testDotSoftmaxMatTVecGuard(t *testing.T) {
	forEachGuarded(t, 257*24, 6, func(t *testing.T, n int, get func(int) []float32) {
		// n rows of a few vectors of columns, and few rows of n columns.
		for _, sh := range [][2]int{{n, 8 * (1 + n%3)}, {1 + n%17, n}} {
			nr, cols := sh[0], sh[1]
			a := Matrix{Rows: nr, Cols: cols, Stride: cols, Data: get(nr * cols)}
			h, ctx := get(cols), get(cols)
			clear(ctx)
			checkDotSoftmax(t, fmt.Sprintf("DotSoftmaxMatTVec %d×%d", nr, cols), a, h, []int{0, nr},
				SoftmaxState{Max: float32(math.Inf(-1))}, ctx)
		}
	})
}

func TestDotSoftmaxMatTVecPanics(t *testing.T) {
	a := Matrix{Rows: 3, Cols: 4, Stride: 5, Data: make([]float32, 14)}
	var st SoftmaxState
	mustPanic(t, "heed/kernels: DotSoftmaxMatTVec: a is 3×4 but len(scores)=3, len(ctx)=4, len(h)=3",
		func() { DotSoftmaxMatTVec(make([]float32, 4), make([]float32, 3), a, make([]float32, 3), &st) })
	mustPanic(t, "heed/kernels: DotSoftmaxMatTVec: a is 3×4 with stride 3 < 4 columns",
		func() { DotSoftmaxMatTVec(nil, nil, Matrix{Rows: 3, Cols: 4, Stride: 3, Data: a.Data}, nil, &st) })
}

// TestDotSoftmaxMatTVecNilState checks that a nil state panics with a named
// message before anything is written, on every ISA and route (columns a
// multiple of 8 or not, a block of 8 rows or fewer, no rows).
func TestDotSoftmaxMatTVecNilState(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		for _, sh := range [][2]int{{3, 4}, {8, 8}, {9, 16}, {16, 5}, {0, 8}, {2, 0}} {
			rows, cols := sh[0], sh[1]
			a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: ramp(rows * cols)}
			h := ramp(cols)
			ctx, scores := make([]float32, cols), make([]float32, rows)
			for i := range ctx {
				ctx[i] = canary
			}
			for i := range scores {
				scores[i] = canary
			}
			mustPanic(t, "heed/kernels: DotSoftmaxMatTVec: st is nil", func() { DotSoftmaxMatTVec(ctx, scores, a, h, nil) })
			for _, s := range [][]float32{ctx, scores} {
				for i, v := range s {
					if math.Float32bits(v) != math.Float32bits(canary) {
						t.Fatalf("%d×%d: element %d written before the panic: %v", rows, cols, i, v)
					}
				}
			}
		}
	})
}

func FuzzDotSoftmaxMatTVec(f *testing.F) {
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x7f\x00\x00\x80\x3f"), uint8(2))
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x00\x40\x00\x00\x80\x3f\x00\x00\x80\x3f\x00\x00\x00\x40"), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, cols uint8) {
		a, _, h, ok := fuzzMatTVec(data, cols)
		if !ok {
			return
		}
		eachISA(func(isa string) {
			checkDotSoftmax(t, isa+" DotSoftmaxMatTVec", a, h, []int{0, a.Rows},
				SoftmaxState{Max: float32(math.Inf(-1))}, make([]float32, a.Cols))
		})
	})
}
