package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// fullyMasked reports whether x is a non-empty row of −Inf.
func fullyMasked(x []float32) bool {
	return len(x) > 0 && fallback.Max(x) == float32(math.Inf(-1))
}

// checkSoftmaxMatTVec runs SoftmaxMatTVec(dst, a, x) and checks it against
// Softmax(x, x) then MatTVec(dst, a, x) under the same ISA: the same bits for a
// row with a NaN or a non-finite maximum, except that a fully masked row (all
// −Inf) leaves dst bit for bit unchanged; otherwise weights within Softmax's
// bounds of the oracle, and a context within γₙ₊₂·(|dst| + Σ|xᵣ·A[r,c]|) of
// dst + Σ xᵣ·A[r,c] for the weights x returned (special values in A or dst as
// MatTVec gives them).
func checkSoftmaxMatTVec(t *testing.T, what string, dst []float32, a Matrix, x []float32) {
	t.Helper()
	x0, dst0 := slices.Clone(x), slices.Clone(dst)
	a0 := bits(a.Data)
	wantX, wantDst := slices.Clone(x), slices.Clone(dst)
	Softmax(wantX, wantX)
	if !fullyMasked(x0) { // a fully masked row leaves dst unchanged
		MatTVecAdd(wantDst, a, wantX)
	}
	SoftmaxMatTVecAdd(dst, a, x)
	if !slices.Equal(bits(a.Data), a0) {
		t.Fatalf("%s: a changed", what)
	}
	if softmaxSpecialRow(x0) {
		if !slices.Equal(bits(x), bits(wantX)) {
			t.Fatalf("%s: weights %v, want Softmax's %v (scores %v)", what, x, wantX, x0)
		}
		if !slices.Equal(bits(dst), bits(wantDst)) {
			t.Fatalf("%s: dst %v, want MatTVec's %v", what, dst, wantDst)
		}
		return
	}
	checkSoftmaxAny(t, what+" weights", x, x0)
	// dst0[c] is one more term (weight 1), and a zero term makes the bound
	// γₙ₊₂: the context is formed from the unnormalised weights and scaled.
	xs := append(slices.Clone(x), 1, 0)
	for c := range dst {
		checkDotAny(t, fmt.Sprintf("%s context[%d]", what, c), dst[c], wantDst[c], xs, append(column(a, c), dst0[c], 0), true)
	}
}

func TestSoftmaxMatTVec(t *testing.T) {
	ninf := float32(math.Inf(-1))
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(41, 42))
		for _, rows := range []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 128, 257} {
			for _, cols := range []int{0, 1, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100, 256} {
				for trial := 0; trial < 7; trial++ {
					pad := trial % 2 * 3
					a, aok := newMatrix(t, rng, rows, cols, pad, rng.IntN(16))
					x, xok := slab(t, rows, rng.IntN(16))
					dst, dok := slab(t, cols, rng.IntN(16))
					fill(rng, x)
					fill(rng, dst)
					switch trial {
					case 2: // a special score
						x[rng.IntN(rows)] = specials[rng.IntN(len(specials))]
					case 3: // masked keys: a run of −Inf
						lo := rng.IntN(rows)
						for i := lo; i < lo+rng.IntN(rows-lo+1); i++ {
							x[i] = ninf
						}
					case 4: // fully masked
						for i := range x {
							x[i] = ninf
						}
					case 5: // a NaN with a payload: every weight the default NaN
						x[rng.IntN(rows)] = math.Float32frombits([]uint32{0x7fc12345, 0xffc00001, 0x7f800001}[rng.IntN(3)])
					}
					checkSoftmaxMatTVec(t, fmt.Sprintf("SoftmaxMatTVec %d×%d trial %d", rows, cols, trial), dst, a, x)
					aok()
					xok()
					dok()
				}
			}
		}
	})
}

// TestSoftmaxMatTVecMasked checks that a fully masked row (all −Inf) gives
// zero weights and leaves dst bit for bit unchanged, −0 and NaN payloads
// included, even with Inf and NaN in A (where 0·A would be NaN), on every ISA
// and route: panel widths, wide A, fewer than 8 columns.
func TestSoftmaxMatTVecMasked(t *testing.T) {
	ninf, negZero := float32(math.Inf(-1)), float32(math.Copysign(0, -1))
	dstVals := []float32{negZero, 0, 1, -2.5, float32(math.Inf(1)), math.Float32frombits(0x7fc12345), math.Float32frombits(0xff800001)}
	aVals := []float32{float32(math.Inf(1)), ninf, float32(math.NaN()), 1, negZero}
	forEachISA(t, func(t *testing.T) {
		for _, rows := range []int{1, 2, 7, 8, 9, 17, 64, 65} {
			for _, cols := range []int{1, 3, 7, 8, 9, 16, 63, 64, 65, 127, 128, 129, 300} {
				a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
				for i := range a.Data {
					a.Data[i] = aVals[i%len(aVals)]
				}
				x, dst := make([]float32, rows), make([]float32, cols)
				for i := range x {
					x[i] = ninf
				}
				for i := range dst {
					dst[i] = dstVals[i%len(dstVals)]
				}
				dst0 := bits(dst)
				SoftmaxMatTVecAdd(dst, a, x)
				if !slices.Equal(bits(dst), dst0) {
					t.Fatalf("%d×%d: dst %v, want unchanged", rows, cols, dst)
				}
				for i, w := range x {
					if math.Float32bits(w) != 0 {
						t.Fatalf("%d×%d: weight %d = %v, want +0", rows, cols, i, w)
					}
				}
			}
		}
	})
}

func TestSoftmaxMatTVecGuard(t *testing.T) {
	forEachGuarded(t, 257*11, 6, func(t *testing.T, n int, get func(int) []float32) {
		// n rows of few columns, and few rows of n columns.
		for _, sh := range [][2]int{{n, 1 + n%11}, {1 + n%5, n}} {
			rows, cols := sh[0], sh[1]
			a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: get(rows * cols)}
			x, dst := get(rows), get(cols)
			checkSoftmaxMatTVec(t, fmt.Sprintf("SoftmaxMatTVec %d×%d", rows, cols), dst, a, x)
		}
	})
}

func TestSoftmaxMatTVecPanics(t *testing.T) {
	a := Matrix{Rows: 3, Cols: 4, Stride: 5, Data: make([]float32, 14)}
	mustPanic(t, "heed/kernels: SoftmaxMatTVecAdd: a is 3×4 but len(dst)=3, len(x)=3",
		func() { SoftmaxMatTVecAdd(make([]float32, 3), a, make([]float32, 3)) })
	mustPanic(t, "heed/kernels: SoftmaxMatTVecAdd: a is 3×4 with stride 3 < 4 columns",
		func() { SoftmaxMatTVecAdd(nil, Matrix{Rows: 3, Cols: 4, Stride: 3, Data: a.Data}, nil) })
}

func FuzzSoftmaxMatTVec(f *testing.F) {
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x7f\x00\x00\x80\x3f"), uint8(2))
	f.Add([]byte("\x00\x00\x80\xff\x00\x00\x80\xff\x00\x00\x80\x7f\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x00\x40"), uint8(8))
	f.Fuzz(func(t *testing.T, data []byte, cols uint8) {
		a, x0, dst0, ok := fuzzMatTVec(data, cols)
		if !ok {
			return
		}
		eachISA(func(isa string) {
			checkSoftmaxMatTVec(t, isa+" SoftmaxMatTVec", slices.Clone(dst0), a, slices.Clone(x0))
		})
	})
}
