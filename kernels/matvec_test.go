package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/heedml/heed/internal/fallback"

	"github.com/heedml/heed/internal/allocs"
)

// matShapes are the rows×cols shapes the matrix-vector tests cover: every
// small shape around the 4-row block and the vector widths, the widths of the
// register panels (up to 64 columns on AVX2, 128 on AVX-512), then larger ones.
func matShapes() [][2]int {
	var s [][2]int
	for _, r := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13} {
		for c := 0; c <= 70; c++ {
			s = append(s, [2]int{r, c})
		}
		for _, c := range []int{72, 73, 95, 100, 120, 127, 128, 129, 255, 256, 257} {
			s = append(s, [2]int{r, c})
		}
	}
	return append(s, [2]int{64, 64}, [2]int{256, 256}, [2]int{129, 1000}, [2]int{1000, 33})
}

// newMatrix returns a random rows×cols matrix with stride cols+pad inside a
// canary slab at offset off.
func newMatrix(t *testing.T, rng *rand.Rand, rows, cols, pad, off int) (Matrix, func()) {
	n := 0
	if rows > 0 && cols > 0 {
		n = (rows-1)*(cols+pad) + cols
	}
	data, ok := slab(t, n, off)
	m := Matrix{Rows: rows, Cols: cols, Data: data, Stride: cols + pad}
	for i := 0; i < rows && cols > 0; i++ {
		fill(rng, m.Row(i))
	}
	return m, ok
}

func TestMatVec(t *testing.T) { forEachMatVecRoute(t, testMatVec) }

func testMatVec(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, sh := range matShapes() {
			rows, cols := sh[0], sh[1]
			for _, pad := range []int{0, 3} {
				a, aok := newMatrix(t, rng, rows, cols, pad, rng.IntN(16))
				x, xok := slab(t, cols, rng.IntN(16))
				fill(rng, x)
				dst, dok := slab(t, rows, rng.IntN(16))
				MatVec(dst, a, x)
				want := make([]float32, rows)
				fallback.MatVec(want, a.Data, a.Stride, x)
				for r := range dst {
					exact, abs := dot64(a.Row(r), x)
					checkDot(t, "MatVec", dst[r], exact, abs, cols)
					checkDot(t, "fallback.MatVec", want[r], exact, abs, cols)
				}
				aok()
				xok()
				dok()
			}
		}
	})
}

// TestMatVecLarge covers the shapes for which the kernels prefetch rows ahead:
// short rows of a matrix beyond L2, and long rows of one beyond L3.
func TestMatVecLarge(t *testing.T) { forEachMatVecRoute(t, testMatVecLarge) }

func testMatVecLarge(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, sh := range [][2]int{{1030, 257}, {1031, 1000}, {6, 1<<21 + 3}} {
			rows, cols := sh[0], sh[1]
			a, aok := newMatrix(t, rng, rows, cols, 3, rng.IntN(16))
			x, xok := slab(t, cols, rng.IntN(16))
			fill(rng, x)
			dst, dok := slab(t, rows, rng.IntN(16))
			MatVec(dst, a, x)
			for r := range dst {
				exact, abs := dot64(a.Row(r), x)
				checkDot(t, "MatVec", dst[r], exact, abs, cols)
			}
			aok()
			xok()
			dok()
		}
	})
}

func TestMatVecGuard(t *testing.T) { forEachMatVecRoute(t, testMatVecGuard) }

func testMatVecGuard(t *testing.T) {
	forEachGuarded(t, 257*13, 6, func(t *testing.T, n int, get func(int) []float32) {
		// Every row count of the 4-row blocks and the single rows; then 8 to
		// 13 rows, for the AVX-512 eight-row blocks of rows up to 64 columns.
		for _, rows := range []int{1 + n%5, 8 + n%6} {
			a := Matrix{Rows: rows, Cols: n, Stride: n, Data: get(rows * n)}
			x, dst := get(n), get(rows)
			MatVec(dst, a, x)
			for r := range dst {
				exact, abs := dot64(a.Row(r), x)
				checkDot(t, "MatVec", dst[r], exact, abs, n)
			}
		}
	})
}

func TestMatVecPanics(t *testing.T) {
	a := Matrix{Rows: 3, Cols: 4, Stride: 5, Data: make([]float32, 14)}
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/kernels: MatVec: a is 3×4 but len(dst)=2, len(x)=4", func() { MatVec(make([]float32, 2), a, make([]float32, 4)) }},
		{"heed/kernels: MatVec: a is 3×4 but len(dst)=3, len(x)=5", func() { MatVec(make([]float32, 3), a, make([]float32, 5)) }},
		{"heed/kernels: MatVec: a is -1×4: negative size", func() { MatVec(nil, Matrix{Rows: -1, Cols: 4}, nil) }},
		{"heed/kernels: MatVec: a is 3×4 with stride 3 < 4 columns", func() { MatVec(nil, Matrix{Rows: 3, Cols: 4, Stride: 3, Data: a.Data}, nil) }},
		{"heed/kernels: MatVec: a is 3×4 with stride 5: len(a.Data)=13 < 14", func() { MatVec(nil, Matrix{Rows: 3, Cols: 4, Stride: 5, Data: a.Data[:13]}, nil) }},
		// (Rows−1)·Stride + Cols just past the largest int, and far past it.
		{fmt.Sprintf("heed/kernels: MatVec: a is 3×4 with stride %d: size overflows int", maxInt/2-1), func() { MatVec(nil, Matrix{Rows: 3, Cols: 4, Stride: maxInt/2 - 1, Data: a.Data}, nil) }},
		{fmt.Sprintf("heed/kernels: MatVec: a is 5×4 with stride %d: size overflows int", maxInt/2), func() { MatVec(nil, Matrix{Rows: 5, Cols: 4, Stride: maxInt / 2, Data: a.Data}, nil) }},
		{fmt.Sprintf("heed/kernels: MatVec: a is 3×4 with stride %d: len(a.Data)=14 < %d", maxInt/2-2, maxInt-1), func() { MatVec(nil, Matrix{Rows: 3, Cols: 4, Stride: maxInt/2 - 2, Data: a.Data}, nil) }},
	} {
		mustPanic(t, c.want, c.f)
	}
}

func FuzzMatVec(f *testing.F) {
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x7f"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, cols uint8) {
		v := floats(data)
		c := int(cols)%17 + 1
		if len(v) < 2*c {
			return
		}
		rows := min((len(v)-c)/c, maxFuzzRows)
		a := Matrix{Rows: rows, Cols: c, Stride: c, Data: v[:rows*c]}
		x := v[rows*c : rows*c+c]
		want := make([]float32, rows)
		fallback.MatVec(want, a.Data, c, x)
		got := make([]float32, rows)
		eachISA(func(isa string) {
			MatVec(got, a, x)
			for r := range got {
				checkDotAny(t, isa+" MatVec", got[r], want[r], a.Row(r), x, false)
			}
		})
	})
}

// checkPad fails t if a padding element between m's rows is not the canary.
func checkPad(t *testing.T, what string, m Matrix) {
	t.Helper()
	if m.Cols == 0 {
		return
	}
	for i := 0; i+1 < m.Rows; i++ {
		for j := i*m.Stride + m.Cols; j < (i+1)*m.Stride; j++ {
			if math.Float32bits(m.Data[j]) != math.Float32bits(canary) {
				t.Fatalf("%s: padding element %d after row %d was written: %v", what, j, i, m.Data[j])
			}
		}
	}
}

// column returns column c of a.
func column(a Matrix, c int) []float32 {
	col := make([]float32, a.Rows)
	for r := range col {
		col[r] = a.Data[r*a.Stride+c]
	}
	return col
}

// checkMatTVec checks got = dst0 + Aᵀ·x per element against the float64
// oracle (γ_{rows+1} bound: dst0[c] is one more term, times 1) or, with special
// values, against want, the fallback's result.
func checkMatTVec(t *testing.T, what string, got, want, dst0 []float32, a Matrix, x []float32) {
	t.Helper()
	xs := append(slices.Clone(x), 1)
	for c := range got {
		checkDotAny(t, fmt.Sprintf("%s[%d]", what, c), got[c], want[c], xs, append(column(a, c), dst0[c]), true)
	}
}

func TestMatTVec(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		for _, sh := range matShapes() {
			rows, cols := sh[0], sh[1]
			for _, pad := range []int{0, 3} {
				a, aok := newMatrix(t, rng, rows, cols, pad, rng.IntN(16))
				x, xok := slab(t, rows, rng.IntN(16))
				fill(rng, x)
				dst, dok := slab(t, cols, rng.IntN(16))
				fill(rng, dst)
				dst0, x0 := slices.Clone(dst), slices.Clone(x)
				a0 := slices.Clone(a.Data)
				want := slices.Clone(dst0)
				fallback.MatTVec(want, a.Data, a.Stride, x)
				MatTVecAdd(dst, a, x)
				checkMatTVec(t, "MatTVecAdd", dst, want, dst0, a, x)
				if !slices.Equal(x, x0) || !slices.Equal(bits(a.Data), bits(a0)) {
					t.Fatalf("%d×%d: MatTVecAdd changed its inputs", rows, cols)
				}
				// MatTVec overwrites: the sum from zero.
				zero := make([]float32, cols)
				want = slices.Clone(zero)
				fallback.MatTVec(want, a.Data, a.Stride, x)
				MatTVec(dst, a, x)
				checkMatTVec(t, "MatTVec", dst, want, zero, a, x)
				aok()
				xok()
				dok()
			}
		}
	})
}

// bits returns the bit patterns of s, to compare slices holding NaN canaries.
func bits(s []float32) []uint32 {
	b := make([]uint32, len(s))
	for i, v := range s {
		b[i] = math.Float32bits(v)
	}
	return b
}

func TestMatTVecSpecial(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(23, 24))
		for _, sh := range [][2]int{{1, 1}, {3, 7}, {5, 8}, {4, 9}, {9, 33}, {7, 64}, {3, 100}, {2, 257}} {
			rows, cols := sh[0], sh[1]
			for trial := 0; trial < 20; trial++ {
				a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
				x, dst := make([]float32, rows), make([]float32, cols)
				fill(rng, a.Data)
				fill(rng, x)
				fill(rng, dst)
				a.Data, x, dst = withSpecials(rng, a.Data, trial), withSpecials(rng, x, trial+1), withSpecials(rng, dst, trial+2)
				dst0 := slices.Clone(dst)
				want := slices.Clone(dst)
				fallback.MatTVec(want, a.Data, cols, x)
				MatTVecAdd(dst, a, x)
				checkMatTVec(t, "MatTVec", dst, want, dst0, a, x)
			}
		}
	})
}

func TestMatTVecGuard(t *testing.T) {
	forEachGuarded(t, 257*5, 3, func(t *testing.T, n int, get func(int) []float32) {
		rows := 1 + n%5
		a := Matrix{Rows: rows, Cols: n, Stride: n, Data: get(rows * n)}
		x, dst := get(rows), get(n)
		dst0 := slices.Clone(dst)
		want := slices.Clone(dst)
		fallback.MatTVec(want, a.Data, n, x)
		MatTVecAdd(dst, a, x)
		checkMatTVec(t, "MatTVec", dst, want, dst0, a, x)
	})
}

func TestMatTVecPanics(t *testing.T) {
	a := Matrix{Rows: 3, Cols: 4, Stride: 5, Data: make([]float32, 14)}
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/kernels: MatTVecAdd: a is 3×4 but len(dst)=3, len(x)=3", func() { MatTVecAdd(make([]float32, 3), a, make([]float32, 3)) }},
		{"heed/kernels: MatTVecAdd: a is 3×4 but len(dst)=4, len(x)=4", func() { MatTVecAdd(make([]float32, 4), a, make([]float32, 4)) }},
		{"heed/kernels: MatTVecAdd: a is 3×-4: negative size", func() { MatTVecAdd(nil, Matrix{Rows: 3, Cols: -4}, nil) }},
		{"heed/kernels: MatTVecAdd: a is 3×4 with stride 3 < 4 columns", func() { MatTVecAdd(nil, Matrix{Rows: 3, Cols: 4, Stride: 3, Data: a.Data}, nil) }},
		{"heed/kernels: MatTVecAdd: a is 3×4 with stride 5: len(a.Data)=13 < 14", func() { MatTVecAdd(nil, Matrix{Rows: 3, Cols: 4, Stride: 5, Data: a.Data[:13]}, nil) }},
	} {
		mustPanic(t, c.want, c.f)
	}
}

// maxFuzzRows bounds the rows of the fuzz targets' matrices, so that each
// execution stays cheap and fuzzing explores values rather than sizes; it
// covers several blocks of 8 rows and every row tail.
const maxFuzzRows = 40

// fuzzMatTVec splits a fuzzer's floats into A (with 1 + cols mod 19 columns,
// as many rows as fit, at most maxFuzzRows), x (a weight per row) and dst (a
// value per column).
func fuzzMatTVec(data []byte, cols uint8) (a Matrix, x, dst []float32, ok bool) {
	v := floats(data)
	c := int(cols)%19 + 1
	if len(v) < 3*c {
		return Matrix{}, nil, nil, false
	}
	rows := min((len(v)-2*c)/(c+1), maxFuzzRows)
	a = Matrix{Rows: rows, Cols: c, Stride: c, Data: v[:rows*c]}
	return a, v[rows*c : rows*c+rows], v[rows*c+rows : rows*c+rows+c], true
}

func FuzzMatTVec(f *testing.F) {
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x7f\x00\x00\x80\x3f"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, cols uint8) {
		a, x, dst0, ok := fuzzMatTVec(data, cols)
		if !ok {
			return
		}
		want := slices.Clone(dst0)
		fallback.MatTVec(want, a.Data, a.Stride, x)
		eachISA(func(isa string) {
			got := slices.Clone(dst0)
			MatTVecAdd(got, a, x)
			checkMatTVec(t, isa+" MatTVec", got, want, dst0, a, x)
		})
	})
}

// checkMatVecBatchCase runs MatVecBatch over a random rows×cols A and
// batch×cols X into D (A, X and D padded by pads and offset by offs into
// canary slabs) and checks D against the float64 oracle, nothing outside D
// written and A and X untouched.
func checkMatVecBatchCase(t *testing.T, rng *rand.Rand, rows, cols, batch int, pads, offs [3]int) {
	t.Helper()
	a, aok := newMatrix(t, rng, rows, cols, pads[0], offs[0])
	x, xok := newMatrix(t, rng, batch, cols, pads[1], offs[1])
	d, dok := newMatrix(t, rng, batch, rows, pads[2], offs[2])
	want := Matrix{Rows: batch, Cols: rows, Stride: rows, Data: make([]float32, batch*rows)}
	if rows > 0 && cols > 0 && batch > 0 {
		fallback.MatVecBatch(want.Data, want.Stride, a.Data, a.Stride, x.Data, x.Stride, rows, cols, batch)
	}
	MatVecBatch(d, a, x)
	checkMatVecBatch(t, d, want, a, x)
	checkPad(t, "MatVecBatch dst", d)
	aok()
	xok()
	dok()
}

// checkMatVecBatch checks every element of got = X·Aᵀ against the oracle, or,
// with special values, against want.
func checkMatVecBatch(t *testing.T, got, want Matrix, a, x Matrix) {
	t.Helper()
	for b := 0; b < got.Rows; b++ {
		for r := 0; r < got.Cols; r++ {
			checkDotAny(t, fmt.Sprintf("MatVecBatch[%d][%d]", b, r), got.Data[b*got.Stride+r], want.Data[b*want.Stride+r], a.Row(r), x.Row(b), false)
		}
	}
}

// forEachMatVecBatchRoute runs f with MatVecBatch on each of its routes: the
// batch kernel always, then Gemm always (where the ISA takes Gemm at all;
// not when sparse, where Gemm's own tests run its kernels), then the skinny
// kernel at every size where the ISA has one (skinnyBytes 0).
// TestMatVecBatchRoutes checks the measured switch between them.
func forEachMatVecBatchRoute(t *testing.T, f func(t *testing.T)) {
	old, oldSkinny := matVecBatchGemmMin, skinnyBytes
	defer func() { matVecBatchGemmMin, skinnyBytes = old, oldSkinny }()
	for _, r := range []struct {
		name   string
		min    int
		skinny int
	}{{"kernel", 0, math.MaxInt}, {"gemm", 1, math.MaxInt}, {"skinny", 0, 0}} {
		if sparse && r.name == "gemm" {
			continue
		}
		matVecBatchGemmMin.dim, matVecBatchGemmMin.avx2, matVecBatchGemmMin.avx512ymm, matVecBatchGemmMin.avx512zmm = 0, r.min, r.min, r.min
		skinnyBytes = r.skinny
		t.Run(r.name, f)
	}
}

func TestMatVecBatch(t *testing.T) {
	forEachMatVecBatchRoute(t, testMatVecBatch)
}

func testMatVecBatch(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(25, 26))
		for si, sh := range matShapes() {
			rows, cols := sh[0], sh[1]
			for _, batch := range []int{0, 1, 2, 3, 4, 5, 6, 9} {
				if rows*cols > 5000 && batch%3 != 2 {
					continue
				}
				pad := si % 3
				checkMatVecBatchCase(t, rng, rows, cols, batch, [3]int{pad, 2 - pad, pad + 1}, [3]int{rng.IntN(16), rng.IntN(16), rng.IntN(16)})
			}
		}
	})
}

// TestMatVecBatchRoutes checks MatVecBatch on both sides of its switch to
// Gemm, with the measured thresholds: under each ISA that switches, batches
// just below and at its entry, for A at and just below the smallest size that
// may take Gemm.
func TestMatVecBatchRoutes(t *testing.T) {
	dim := matVecBatchGemmMin.dim
	forEachISA(t, func(t *testing.T) {
		lo := matVecBatchGemmBatch()
		if lo == 0 {
			t.Skip("no Gemm route under this ISA")
		}
		rng := rand.New(rand.NewPCG(31, 32))
		for _, batch := range []int{lo - 1, lo} {
			for _, sh := range [][2]int{{dim, dim}, {dim + 3, dim - 1}, {dim - 1, 2 * dim}} {
				rows, cols := sh[0], sh[1]
				if want := batch >= lo && rows >= dim && cols >= dim; matVecBatchGemm(rows, cols, batch) != want {
					t.Errorf("%d×%d, batch %d: Gemm route %v, want %v", rows, cols, batch, !want, want)
				}
				checkMatVecBatchCase(t, rng, rows, cols, batch, [3]int{1, 0, 2}, [3]int{3, 5, 7})
			}
		}
	})
}

// TestMatVecBatchNoAllocs checks that MatVecBatch allocates nothing once
// warm, on each route (a batch of 7 forced to the kernel or to Gemm, and a
// batch of 1024, which the measured switch gives Gemm on AVX2 and AVX-512),
// serial and with Gemm's goroutines.
func TestMatVecBatchNoAllocs(t *testing.T) {
	skipSparse(t)
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	const rows, cols = 64, 64
	forEachMatVecBatchRoute(t, func(t *testing.T) {
		forEachISA(t, func(t *testing.T) {
			for _, batch := range []int{7, 1024} {
				a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: ramp(rows * cols)}
				x := Matrix{Rows: batch, Cols: cols, Stride: cols, Data: ramp(batch * cols)}
				d := Matrix{Rows: batch, Cols: rows, Stride: rows, Data: make([]float32, batch*rows)}
				f := func() { MatVecBatch(d, a, x) }
				f()
				if got := allocs.Count(5, f); got != 0 {
					t.Errorf("batch=%d: MatVecBatch allocates %d times in the measured calls", batch, got)
				}
			}
		})
	})
}

func TestMatVecBatchSpecial(t *testing.T) {
	forEachMatVecBatchRoute(t, testMatVecBatchSpecial)
}

func testMatVecBatchSpecial(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(27, 28))
		for _, sh := range [][3]int{{1, 1, 1}, {3, 7, 2}, {5, 8, 5}, {4, 9, 4}, {9, 33, 3}, {7, 64, 9}, {3, 100, 1}, {6, 257, 6}} {
			rows, cols, batch := sh[0], sh[1], sh[2]
			for trial := 0; trial < 20; trial++ {
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
			}
		}
	})
}

func TestMatVecBatchGuard(t *testing.T) {
	forEachMatVecBatchRoute(t, testMatVecBatchGuard)
}

func testMatVecBatchGuard(t *testing.T) {
	forEachGuarded(t, 257*6, 3, func(t *testing.T, n int, get func(int) []float32) {
		rows, batch := 1+n%6, 1+(n/3)%6
		a := Matrix{Rows: rows, Cols: n, Stride: n, Data: get(rows * n)}
		x := Matrix{Rows: batch, Cols: n, Stride: n, Data: get(batch * n)}
		d := Matrix{Rows: batch, Cols: rows, Stride: rows, Data: get(batch * rows)}
		want := Matrix{Rows: batch, Cols: rows, Stride: rows, Data: make([]float32, batch*rows)}
		fallback.MatVecBatch(want.Data, rows, a.Data, n, x.Data, n, rows, n, batch)
		MatVecBatch(d, a, x)
		checkMatVecBatch(t, d, want, a, x)
	})
}

func TestMatVecBatchPanics(t *testing.T) {
	a := Matrix{Rows: 3, Cols: 4, Stride: 5, Data: make([]float32, 14)}
	x := Matrix{Rows: 2, Cols: 4, Stride: 4, Data: make([]float32, 8)}
	d := Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/kernels: MatVecBatch: a is 3×4, x is 2×5, dst is 2×3; want x batch×4 and dst batch×3",
			func() { MatVecBatch(d, a, Matrix{Rows: 2, Cols: 5, Stride: 5, Data: make([]float32, 10)}) }},
		{"heed/kernels: MatVecBatch: a is 3×4, x is 2×4, dst is 2×2; want x batch×4 and dst batch×3",
			func() { MatVecBatch(Matrix{Rows: 2, Cols: 2, Stride: 2, Data: make([]float32, 4)}, a, x) }},
		{"heed/kernels: MatVecBatch: a is 3×4, x is 2×4, dst is 3×3; want x batch×4 and dst batch×3",
			func() { MatVecBatch(Matrix{Rows: 3, Cols: 3, Stride: 3, Data: make([]float32, 9)}, a, x) }},
		{"heed/kernels: MatVecBatch: a is -3×4: negative size", func() { MatVecBatch(d, Matrix{Rows: -3, Cols: 4}, x) }},
		{"heed/kernels: MatVecBatch: x is 2×-1: negative size", func() { MatVecBatch(d, a, Matrix{Rows: 2, Cols: -1}) }},
		{"heed/kernels: MatVecBatch: dst is 2×3 with stride 2 < 3 columns", func() { MatVecBatch(Matrix{Rows: 2, Cols: 3, Stride: 2, Data: d.Data}, a, x) }},
		{"heed/kernels: MatVecBatch: a is 3×4 with stride 5: len(a.Data)=13 < 14", func() { MatVecBatch(d, Matrix{Rows: 3, Cols: 4, Stride: 5, Data: a.Data[:13]}, x) }},
		{"heed/kernels: MatVecBatch: x is 2×4 with stride 4: len(x.Data)=7 < 8", func() { MatVecBatch(d, a, Matrix{Rows: 2, Cols: 4, Stride: 4, Data: x.Data[:7]}) }},
		{"heed/kernels: MatVecBatch: dst is 2×3 with stride 3: len(dst.Data)=5 < 6", func() { MatVecBatch(Matrix{Rows: 2, Cols: 3, Stride: 3, Data: d.Data[:5]}, a, x) }},
	} {
		mustPanic(t, c.want, c.f)
	}
}

func FuzzMatVecBatch(f *testing.F) {
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x7f\x00\x00\x80\x3f\x00\x00\x80\x3f"), uint8(2), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, cols, batch uint8) {
		v := floats(data)
		c, nb := int(cols)%19+1, int(batch)%7+1
		if len(v) < (nb+1)*c {
			return
		}
		rows := min((len(v)-nb*c)/c, maxFuzzRows)
		a := Matrix{Rows: rows, Cols: c, Stride: c, Data: v[:rows*c]}
		x := Matrix{Rows: nb, Cols: c, Stride: c, Data: v[rows*c : (rows+nb)*c]}
		want := Matrix{Rows: nb, Cols: rows, Stride: rows, Data: make([]float32, nb*rows)}
		fallback.MatVecBatch(want.Data, rows, a.Data, c, x.Data, c, rows, c, nb)
		eachISA(func(isa string) {
			d := Matrix{Rows: nb, Cols: rows, Stride: rows, Data: make([]float32, nb*rows)}
			MatVecBatch(d, a, x)
			checkMatVecBatch(t, d, want, a, x)
		})
	})
}

// TestMatrixOneRow checks the products on one-row matrices, whose stride may
// be anything (0, negative, less than the columns): it must never be used.
func TestMatrixOneRow(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(29, 30))
		for _, cols := range []int{1, 7, 8, 9, 16, 33, 100} {
			for _, stride := range []int{0, -5, 1, cols + 1} {
				a := Matrix{Rows: 1, Cols: cols, Stride: stride, Data: make([]float32, cols)}
				x := Matrix{Rows: 1, Cols: cols, Stride: stride, Data: make([]float32, cols)}
				fill(rng, a.Data)
				fill(rng, x.Data)
				got := make([]float32, 1)
				MatVec(got, a, x.Data)
				exact, abs := dot64(a.Data, x.Data)
				checkDot(t, "MatVec", got[0], exact, abs, cols)

				d := Matrix{Rows: 1, Cols: 1, Stride: stride, Data: make([]float32, 1)}
				MatVecBatch(d, a, x)
				checkDot(t, "MatVecBatch", d.Data[0], exact, abs, cols)

				w := []float32{0.75}
				dst := make([]float32, cols)
				fill(rng, dst)
				dst0 := slices.Clone(dst)
				want := slices.Clone(dst)
				fallback.MatTVec(want, a.Data, cols, w)
				MatTVecAdd(dst, a, w)
				checkMatTVec(t, "MatTVec", dst, want, dst0, a, w)
			}
		}
	})
}
