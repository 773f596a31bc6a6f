package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/heedml/heed/internal/allocs"
	"github.com/heedml/heed/internal/fallback"
)

// withSkinny runs f with the skinny products taken at every size
// (skinnyBytes 0), then restores the threshold.
func withSkinny(t *testing.T, f func(t *testing.T)) {
	defer func(b int) { skinnyBytes = b }(skinnyBytes)
	skinnyBytes = 0
	f(t)
}

// skinnyBatches are the rows of X the skinny tests cover: every count
// through one past skinnyMaxRows, or under -short a count per group size
// and remainder of the AVX kernels (groups of 4 and 8).
func skinnyBatches() []int {
	if testing.Short() {
		return []int{1, 2, 3, 4, 5, 6, 7, 11, 13, 32, 33}
	}
	var bs []int
	for b := 1; b <= skinnyMaxRows+1; b++ {
		bs = append(bs, b)
	}
	return bs
}

// skinnyShapes are the rows×cols of the large matrix: tails of every width
// modulo the 8- and 16-lane vectors and the tiles of 3 and 4 rows, below
// and above a panel.
var skinnyShapes = [][2]int{{1, 1}, {3, 7}, {5, 8}, {7, 9}, {4, 16}, {9, 17}, {13, 31}, {6, 33}, {70, 64}, {67, 129}, {130, 77}, {11, 517}, {203, 40}, {100, 517}, {1500, 203}}

// TestSkinnyMatVecBatch checks MatVecBatch on its skinny route (taken at
// every size) against the float64 oracle for every batch through
// skinnyMaxRows + 1, at strides beyond the columns and offsets into canary
// slabs.
func TestSkinnyMatVecBatch(t *testing.T) {
	withSkinny(t, func(t *testing.T) {
		forEachISA(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(41, 42))
			for si, sh := range skinnyShapes {
				rows, cols := sh[0], sh[1]
				for bi, batch := range skinnyBatches() {
					if sparse && (si+bi)%3 != 0 {
						continue
					}
					pad := (si + bi) % 4
					checkMatVecBatchCase(t, rng, rows, cols, batch, [3]int{pad, 3 - pad, pad + 1}, [3]int{rng.IntN(16), rng.IntN(16), rng.IntN(16)})
				}
			}
		})
	})
}

// TestSkinnyGemm checks Gemm(NoTrans, Trans) and Gemm(NoTrans, NoTrans) on
// their skinny routes (taken at every size) with checkGemm: the bound of
// Gemm's contract, nothing outside C written, β = 0 ignoring the NaN placed
// in C, for every m through skinnyMaxRows + 1, with α and β, padding and
// offsets cycling.
func TestSkinnyGemm(t *testing.T) {
	withSkinny(t, func(t *testing.T) {
		forEachISA(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(43, 44))
			scalars := []float32{1, -0.5, 0.75}
			i := 0
			for si, sh := range skinnyShapes {
				for _, m := range skinnyBatches() {
					for _, tb := range []bool{true, false} {
						i++
						if sparse && i%3 != 0 {
							continue
						}
						n, k := sh[0], sh[1]
						if !tb {
							n, k = k, n // W is k×n: its columns are the tails
						}
						beta := scalars[i/2%3]
						if i%4 == 0 {
							beta = 0
						}
						checkGemm(t, rng, gemmCase{tb: tb, m: m, n: n, k: k, alpha: scalars[i%3], beta: beta, pad: (si + i) % 4, off: i % 5})
					}
				}
			}
			// One row with C not read: MatVec (as is) and MatTVec (W).
			for _, tb := range []bool{true, false} {
				for _, alpha := range []float32{1, -0.5} {
					checkGemm(t, rng, gemmCase{tb: tb, m: 1, n: 1003, k: 301, alpha: alpha, beta: 0, pad: 1, off: 2})
				}
			}
		})
	})
}

// TestSkinnyGemmSplit checks the skinny Gemm split over two goroutines by
// columns of C (a product above gemmParallelWork), and GemmScratch.Gemm
// unsplit, against the bound; the split allocates nothing once warm.
func TestSkinnyGemmSplit(t *testing.T) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	withSkinny(t, func(t *testing.T) {
		forEachISA(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(47, 48))
			for i, sh := range [][3]int{{32, 1000, 300}, {7, 4099, 301}, {2, 8195, 513}} {
				if gemmParts(sh[0], sh[1], sh[2]) < 2 {
					t.Fatalf("%v: not split", sh)
				}
				for _, tb := range []bool{true, false} {
					checkGemm(t, rng, gemmCase{tb: tb, m: sh[0], n: sh[1], k: sh[2], alpha: 1.5, beta: float32(i % 2), pad: i, off: 1})
				}
			}
			if !sparse {
				x := Matrix{Rows: 7, Cols: 301, Stride: 301, Data: ramp(7 * 301)}
				w := Matrix{Rows: 301, Cols: 4099, Stride: 4099, Data: ramp(301 * 4099)}
				d := Matrix{Rows: 7, Cols: 4099, Stride: 4099, Data: make([]float32, 7*4099)}
				f := func() { Gemm(NoTrans, NoTrans, 1, x, w, 0, d) }
				f()
				if got := allocs.Count(5, f); got != 0 {
					t.Errorf("split skinny Gemm allocates %d times", got)
				}
			}
			var s GemmScratch
			defer func() { gemmUnderTest = Gemm }()
			gemmUnderTest = s.Gemm
			checkGemm(t, rng, gemmCase{tb: true, m: 5, n: 1000, k: 300, alpha: 1, beta: 0.5})
			checkGemm(t, rng, gemmCase{m: 5, n: 1000, k: 300, alpha: 1, beta: 0})
		})
	})
}

// TestSkinnyGroups checks the balanced groups of rows of X: ⌈batch/group⌉
// groups, nbig of gs rows and the rest of gs − 1, at most group rows each,
// covering the batch.
func TestSkinnyGroups(t *testing.T) {
	for _, group := range []int{4, 6} {
		for batch := 1; batch <= 64; batch++ {
			gs, nbig := skinnyGroups(batch, group)
			g := (batch + group - 1) / group
			if gs > group || gs < 1 || nbig < 1 || nbig > g || nbig*gs+(g-nbig)*(gs-1) != batch {
				t.Errorf("skinnyGroups(%d, %d) = %d, %d", batch, group, gs, nbig)
			}
		}
	}
}

// TestSkinnyRoutes checks which products take the skinny kernels at the
// default threshold: MatVecBatch from 2 rows of X (1 is MatVec) through
// skinnyMaxRows against an A beyond skinnyBytes under an AVX ISA, Gemm with
// A as is from 1 row, never below the threshold, above skinnyMaxRows, or
// with A transposed.
func TestSkinnyRoutes(t *testing.T) {
	rows := skinnyBytes/(4*64) + 1 // 64 columns, just beyond the threshold
	forEachISA(t, func(t *testing.T) {
		avx := Active() == AVX2 || Active() == AVX512
		for _, c := range []struct {
			rows, cols, batch int
			want              bool
		}{
			{rows, 64, 1, avx}, {rows, 64, 2, avx}, {rows, 64, skinnyMaxRows, avx}, {rows, 64, skinnyMaxRows + 1, false},
			{rows / 2, 64, 8, false}, {rows * 16, 4, 8, Active() == AVX512},
		} {
			if got := skinnyNTTakes(c.rows, c.cols, c.cols, c.batch); got != c.want && Active() != NEON {
				t.Errorf("skinnyNTTakes(%d, %d, %d, %d) = %v, want %v", c.rows, c.cols, c.cols, c.batch, got, c.want)
			}
		}
	})
}

// TestSkinnySpecial checks NaN and Inf through the skinny routes: MatVecBatch
// against Dot's special-value rules (checkMatVecBatch), Gemm against the
// float64 result in IEEE arithmetic (NaN where it is NaN, the same infinity
// where it is infinite).
func TestSkinnySpecial(t *testing.T) {
	withSkinny(t, func(t *testing.T) {
		forEachISA(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(45, 46))
			for si, sh := range [][3]int{{5, 7, 2}, {9, 17, 7}, {13, 33, 13}, {7, 64, 32}, {4, 257, 6}, {37, 20, 16}, {29, 41, 30}} {
				rows, cols, batch := sh[0], sh[1], sh[2]
				for trial := 0; trial < 12; trial++ {
					if !sparseKeeps(si, trial, 4) {
						continue
					}
					a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
					x := Matrix{Rows: batch, Cols: cols, Stride: cols, Data: make([]float32, batch*cols)}
					fill(rng, a.Data)
					fill(rng, x.Data)
					a.Data, x.Data = withSpecials(rng, a.Data, trial), withSpecials(rng, x.Data, trial+1)
					d := Matrix{Rows: batch, Cols: rows, Stride: rows, Data: make([]float32, batch*rows)}
					want := Matrix{Rows: batch, Cols: rows, Stride: rows, Data: make([]float32, batch*rows)}
					fallback.MatVecBatch(want.Data, rows, a.Data, cols, x.Data, cols, rows, cols, batch)
					MatVecBatch(d, a, x)
					checkMatVecBatch(t, d, want, a, x)

					// Gemm NT (A as op(B) transposed) and NN (A as W, k = rows).
					for _, tb := range []bool{true, false} {
						n, k := rows, cols
						xm := x
						if !tb {
							n, k = cols, rows
							xm = Matrix{Rows: batch, Cols: rows, Stride: rows, Data: make([]float32, batch*rows)}
							fill(rng, xm.Data)
							xm.Data = withSpecials(rng, xm.Data, trial+2)
						}
						c := Matrix{Rows: batch, Cols: n, Stride: n, Data: make([]float32, batch*n)}
						for i := range c.Data {
							c.Data[i] = nan32 // β = 0: never read
						}
						Gemm(NoTrans, tr(tb), 1, xm, a, 0, c)
						if Active() == Generic || Active() == NEON {
							continue // fallback.Gemm: its own tests
						}
						for i := 0; i < batch; i++ {
							for j := 0; j < n; j++ {
								var s float64
								nonFinite := false
								for p := 0; p < k; p++ {
									s += float64(xm.Data[i*xm.Stride+p]) * float64(opAt(a, tb, p, j))
									nonFinite = nonFinite || !isFinite(xm.Data[i*xm.Stride+p]) || !isFinite(opAt(a, tb, p, j))
								}
								got := c.Data[i*c.Stride+j]
								switch {
								case !nonFinite:
									if math.IsNaN(float64(got)) {
										t.Fatalf("tb=%v %dx%dx%d: C[%d,%d] = NaN with finite inputs", tb, batch, n, k, i, j)
									}
								case math.IsNaN(s):
									if !math.IsNaN(float64(got)) {
										t.Fatalf("tb=%v %dx%dx%d: C[%d,%d] = %v, want NaN", tb, batch, n, k, i, j, got)
									}
								case math.IsInf(s, 0):
									if float64(got) != s && !math.IsNaN(float64(got)) {
										t.Fatalf("tb=%v %dx%dx%d: C[%d,%d] = %v, want %v (or NaN where finite products overflow)", tb, batch, n, k, i, j, got, s)
									}
								}
							}
						}
					}
				}
			}
		})
	})
}

// TestSkinnyGuard runs the skinny products on matrices placed against
// PROT_NONE pages on either side: no kernel reads or writes outside them.
func TestSkinnyGuard(t *testing.T) {
	withSkinny(t, func(t *testing.T) {
		const maxN = 33 * 300
		ga, gb, gc := newGuard(t, maxN), newGuard(t, maxN), newGuard(t, maxN)
		forEachISA(t, func(t *testing.T) {
			for _, m := range []int{1, 2, 5, 7, 11, 16, 29, 33} {
				for _, n := range []int{1, 3, 8, 15, 17, 33, 65} {
					for _, k := range []int{1, 7, 8, 13, 16, 31, 65} {
						if sparse && (m+n+k)%3 != 0 {
							continue
						}
						for _, tb := range []bool{true, false} {
							for _, atEnd := range []bool{false, true} {
								br, bc := k, n
								if tb {
									br, bc = n, k
								}
								a := Matrix{Rows: m, Cols: k, Stride: k, Data: ga.at(m*k, atEnd)}
								b := Matrix{Rows: br, Cols: bc, Stride: bc, Data: gb.at(br*bc, atEnd)}
								c := Matrix{Rows: m, Cols: n, Stride: n, Data: gc.at(m*n, atEnd)}
								for i := range a.Data {
									a.Data[i] = float32(i%7) - 3
								}
								for i := range b.Data {
									b.Data[i] = float32(i%5) - 2
								}
								for i := range c.Data {
									c.Data[i] = 1
								}
								Gemm(NoTrans, tr(tb), 1, a, b, 1, c)
								want := 1.0
								for p := 0; p < k; p++ {
									want += float64(a.Data[p]) * float64(opAt(b, tb, p, 0))
								}
								if got := c.Data[0]; float64(got) != want {
									t.Fatalf("m=%d n=%d k=%d tb=%v: C[0,0] = %v, want %v", m, n, k, tb, got, want)
								}
								if tb {
									d := Matrix{Rows: m, Cols: n, Stride: n, Data: gc.at(m*n, atEnd)}
									MatVecBatch(d, b, a)
									if got := d.Data[0]; float64(got) != want-1 {
										t.Fatalf("MatVecBatch m=%d n=%d k=%d: [0,0] = %v, want %v", m, n, k, got, want-1)
									}
								}
							}
						}
					}
				}
			}
		})
	})
}

// TestSkinnyNoAllocs checks that the skinny routes allocate nothing.
func TestSkinnyNoAllocs(t *testing.T) {
	skipSparse(t)
	withSkinny(t, func(t *testing.T) {
		forEachISA(t, func(t *testing.T) {
			const n, k = 100, 70
			for _, m := range []int{1, 7, 32} {
				a := Matrix{Rows: n, Cols: k, Stride: k, Data: ramp(n * k)}
				w := Matrix{Rows: k, Cols: n, Stride: n, Data: ramp(n * k)}
				x := Matrix{Rows: m, Cols: k, Stride: k, Data: ramp(m * k)}
				d := Matrix{Rows: m, Cols: n, Stride: n, Data: make([]float32, m*n)}
				for name, f := range map[string]func(){
					"MatVecBatch": func() { MatVecBatch(d, a, x) },
					"Gemm NT":     func() { Gemm(NoTrans, Trans, 1, x, a, 0.5, d) },
					"Gemm NN":     func() { Gemm(NoTrans, NoTrans, 2, x, w, 0, d) },
				} {
					f()
					if got := allocs.Count(5, f); got != 0 {
						t.Errorf("m=%d: %s allocates %d times", m, name, got)
					}
				}
			}
		})
	})
}

// TestSkinnyPanics checks that the skinny routes keep the wrappers' panics:
// shapes and overlap.
func TestSkinnyPanics(t *testing.T) {
	withSkinny(t, func(t *testing.T) {
		a := Matrix{Rows: 40, Cols: 16, Stride: 16, Data: make([]float32, 640)}
		x := Matrix{Rows: 4, Cols: 16, Stride: 16, Data: make([]float32, 64)}
		for name, f := range map[string]func(){
			"shape":   func() { MatVecBatch(Matrix{Rows: 4, Cols: 39, Stride: 39, Data: make([]float32, 156)}, a, x) },
			"overlap": func() { MatVecBatch(Matrix{Rows: 4, Cols: 40, Stride: 40, Data: a.Data[:160]}, a, x) },
			"gemm":    func() { Gemm(NoTrans, Trans, 1, x, a, 0, Matrix{Rows: 4, Cols: 40, Stride: 40, Data: a.Data[:160]}) },
		} {
			func() {
				defer func() {
					if r := recover(); r == nil {
						t.Errorf("%s: no panic", name)
					} else if s := fmt.Sprint(r); len(s) < 12 || s[:12] != "heed/kernels" {
						t.Errorf("%s: panic %q does not name the package", name, s)
					}
				}()
				f()
			}()
		}
	})
}
