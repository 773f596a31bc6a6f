package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/heedml/heed/internal/allocs"
)

var nan32 = float32(math.NaN())

// gemmCase is one product for the GEMM tests: op(A) m×k, op(B) k×n, with pad
// extra elements between rows and off elements before each matrix.
type gemmCase struct {
	ta, tb      bool
	m, n, k     int
	alpha, beta float32
	pad, off    int
}

func (g gemmCase) String() string {
	return fmt.Sprintf("ta=%t tb=%t m=%d n=%d k=%d α=%v β=%v pad=%d off=%d", g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.beta, g.pad, g.off)
}

// testMatrix returns a rows×cols Matrix with the given padding and offset,
// whose elements are random (or all fill when fill is not 0) and whose
// padding and the elements around it are outside.
func testMatrix(rng *rand.Rand, rows, cols, pad, off int, fill, outside float32) (Matrix, []float32) {
	stride := cols + pad
	n := 0
	if rows > 0 && cols > 0 {
		n = (rows-1)*stride + cols
	}
	buf := make([]float32, off+n+pad+3)
	for i := range buf {
		buf[i] = outside
	}
	m := Matrix{Rows: rows, Cols: cols, Stride: stride, Data: buf[off : off+n : off+n]}
	for i := 0; i < rows && n > 0; i++ {
		r := m.Data[i*stride : i*stride+cols]
		if fill != 0 {
			for j := range r {
				r[j] = fill
			}
		} else {
			fillGemm(rng, r)
		}
	}
	return m, buf
}

// fillGemm sets s to random values of both signs with magnitudes in
// [2⁻⁴, 2⁴), so no product underflows.
func fillGemm(rng *rand.Rand, s []float32) {
	for i := range s {
		v := float32(1+rng.Float64()) * float32(math.Ldexp(1, rng.IntN(8)-4))
		if rng.IntN(2) == 0 {
			v = -v
		}
		s[i] = v
	}
}

// opAt returns element (i, j) of op(m).
func opAt(m Matrix, trans bool, i, j int) float32 {
	if trans {
		i, j = j, i
	}
	return m.Data[i*m.Stride+j]
}

// checkGemm runs g on the active ISA and fails t unless every element of C is
// within the bound of Gemm's contract of the float64 result, nothing outside C
// changed, β = 0 ignored the NaN placed in C and α = 0 the NaN placed in A
// and B.
func checkGemm(t *testing.T, rng *rand.Rand, g gemmCase) {
	t.Helper()
	ar, ac := g.m, g.k
	if g.ta {
		ar, ac = ac, ar
	}
	br, bc := g.k, g.n
	if g.tb {
		br, bc = bc, br
	}
	var abFill, cFill float32
	if g.alpha == 0 {
		abFill = nan32 // α = 0 must read neither A nor B
	}
	if g.beta == 0 {
		cFill = nan32 // β = 0 must not read C
	}
	a, _ := testMatrix(rng, ar, ac, g.pad, g.off, abFill, nan32)
	b, _ := testMatrix(rng, br, bc, g.pad, g.off, abFill, nan32)
	c, cbuf := testMatrix(rng, g.m, g.n, g.pad, g.off, cFill, canary)
	c0 := append([]float32(nil), c.Data...)

	gemmUnderTest(tr(g.ta), tr(g.tb), g.alpha, a, b, g.beta, c)

	for i := 0; i < g.m; i++ {
		for j := 0; j < g.n; j++ {
			var exact, abs float64
			if g.alpha != 0 {
				var s float64
				for p := 0; p < g.k; p++ {
					prod := float64(opAt(a, g.ta, i, p)) * float64(opAt(b, g.tb, p, j))
					s += prod
					abs += math.Abs(prod)
				}
				exact = float64(g.alpha) * s
				abs *= math.Abs(float64(g.alpha))
			}
			if g.beta != 0 {
				bc := float64(g.beta) * float64(c0[i*c.Stride+j])
				exact += bc
				abs += math.Abs(bc)
			}
			got := c.Data[i*c.Stride+j]
			bound := gamma(g.k+1)*abs + float64(g.k+2)*eta
			if err := math.Abs(float64(got) - exact); !(err <= bound) {
				t.Fatalf("%v: C[%d,%d] = %v, want %v ± %.3g (error %.3g)", g, i, j, got, exact, bound, err)
			}
		}
	}
	// Nothing outside C's elements may change: its padding and surroundings
	// hold the canary.
	checkOutside(t, fmt.Sprint(g), c, cbuf, g.off, canary)
}

// checkOutside fails t if an element of buf outside c (which starts off
// elements into buf, as testMatrix lays it out) is not the value outside it
// was filled with.
func checkOutside(t *testing.T, what string, c Matrix, buf []float32, off int, outside float32) {
	t.Helper()
	for idx, v := range buf {
		if i := idx - off; i >= 0 && i < len(c.Data) && i%c.Stride < c.Cols {
			continue
		}
		if math.Float32bits(v) != math.Float32bits(outside) {
			t.Fatalf("%s: element %d outside C was written: %v", what, idx, v)
		}
	}
}

// gemmScalars are the values of α and β every test combines.
var gemmScalars = []float32{0, 1, -0.5}

// gemmTileSizes returns the largest micro-tile of the supported ISAs.
func gemmTileSizes() (mr, nr int) {
	mr, nr = 4, 4
	for _, isa := range Supported() {
		if mk := gemmMicroFor(isa); mk != nil {
			mr, nr = max(mr, mk.mr), max(nr, mk.nr)
		}
	}
	return mr, nr
}

// gemmSweep returns the cases of the size sweep: every m through 3 tiles + 1
// and every n likewise, with a few values of the other dimensions, and every
// k through 13 and around the blocking size kc, under every op combination;
// α, β, padding and offset cycle through their values so that each size meets
// several of them and each combination of them many sizes.
func gemmSweep(kc int) []gemmCase {
	mr, nr := gemmTileSizes()
	var shapes [][3]int
	// Rows through 3·mr + 1, and past skinnyMaxRows, where A as is leaves the
	// skinny routes for the blocked one.
	var ms []int
	for m := 0; m <= 3*mr+1; m++ {
		ms = append(ms, m)
	}
	ms = append(ms, skinnyMaxRows+1, skinnyMaxRows+mr+1)
	for _, m := range ms {
		for _, n := range []int{1, 17, nr, nr + 1} {
			for _, k := range []int{1, 5} {
				shapes = append(shapes, [3]int{m, n, k})
			}
		}
	}
	for n := 0; n <= 3*nr+1; n++ {
		for _, m := range []int{1, 7, mr, mr + 1} {
			shapes = append(shapes, [3]int{m, n, 3})
		}
	}
	ks := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, kc - 1, kc, kc + 1, 2*kc + 3}
	for _, k := range ks {
		for _, mn := range [][2]int{{mr + 1, nr + 1}, {2, 3}} {
			shapes = append(shapes, [3]int{mn[0], mn[1], k})
		}
	}
	var cases []gemmCase
	i := 0
	for _, s := range shapes {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				cases = append(cases, gemmCase{
					ta: ta, tb: tb, m: s[0], n: s[1], k: s[2],
					alpha: gemmScalars[i%3], beta: gemmScalars[i/3%3],
					pad: i / 9 % 2 * 3, off: i / 18 % 2 * 5,
				})
				i++
			}
		}
	}
	return cases
}

// tr returns the Transpose a bool names.
func tr(t bool) Transpose {
	if t {
		return Trans
	}
	return NoTrans
}

// gemmUnderTest is the entry checkGemm runs: Gemm, or GemmScratch.Gemm in
// TestGemmScratch.
var gemmUnderTest = Gemm

// TestGemmScratch runs the sweep and the scalar crossings through one
// GemmScratch, reused across all products and ISAs.
func TestGemmScratch(t *testing.T) {
	var s GemmScratch
	gemmUnderTest = s.Gemm
	defer func() { gemmUnderTest = Gemm }()
	t.Run("sweep", TestGemmSweep)
	t.Run("scalars", TestGemmScalars)
	t.Run("allocs", func(t *testing.T) {
		skipSparse(t)
		rng := rand.New(rand.NewPCG(9, 10))
		forEachISA(t, func(t *testing.T) {
			for _, n := range []int{37, 200} {
				a, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
				b, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
				c, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
				f := func() { s.Gemm(NoTrans, Trans, 1, a, b, 0.5, c) }
				f()
				if got := allocs.Count(gemmAllocRuns(), f); got != 0 {
					t.Errorf("n=%d: GemmScratch.Gemm allocates %d times in the measured calls", n, got)
				}
			}
		})
	})
	t.Run("panics", func(t *testing.T) {
		defer func() {
			want := "heed/kernels: GemmScratch.Gemm: op(a) is 2×3, op(b) is 4×5, c is 2×5 (transA=false, transB=false)"
			if r := recover(); r != want {
				t.Fatalf("panic %v, want %q", r, want)
			}
		}()
		m := func(r, c int) Matrix { return Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)} }
		s.Gemm(NoTrans, NoTrans, 1, m(2, 3), m(4, 5), 0, m(2, 5))
	})
}

func TestGemmSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	forEachISA(t, func(t *testing.T) {
		kc := 256
		if mk := gemmMicroFor(Active()); mk != nil {
			kc = mk.kc
		}
		for _, g := range gemmSweep(kc) {
			checkGemm(t, rng, g)
		}
	})
}

// TestGemmScalars crosses every α and β with every op combination, padding
// and offset on shapes with edges in every dimension.
func TestGemmScalars(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	mr, nr := gemmTileSizes()
	forEachISA(t, func(t *testing.T) {
		for _, s := range [][3]int{{0, 3, 2}, {3, 0, 2}, {2, 3, 0}, {1, 1, 1}, {mr + 1, 2*nr + 3, 7}, {2*mr - 1, nr - 1, 9}} {
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					for _, alpha := range gemmScalars {
						for _, beta := range gemmScalars {
							for _, pad := range []int{0, 3} {
								for _, off := range []int{0, 5} {
									checkGemm(t, rng, gemmCase{ta, tb, s[0], s[1], s[2], alpha, beta, pad, off})
								}
							}
						}
					}
				}
			}
		}
	})
}

// TestGemmBlocks shrinks the blocking sizes so that small products cross
// every block boundary of kc, mc and nc, including partial blocks. With
// kc = 24, kcFor takes inner blocks of up to 32: k in one block above kc
// (30), in blocks of kc (40, 70) and in fewer, even blocks (64), crossing
// mcFor's smaller blocks of rows too.
func TestGemmBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	forEachISA(t, func(t *testing.T) {
		mk := gemmMicroFor(Active())
		if mk == nil {
			t.Skip("no micro-kernel on this ISA")
		}
		saved := *mk
		defer func() { *mk = saved }()
		mr, nr := mk.mr, mk.nr
		for _, b := range []struct {
			kc, mc int
			shapes [][3]int
		}{
			{5, 2 * mr, [][3]int{{2*mr + 1, 2*nr + 1, 11}, {5*mr - 1, 5*nr + 3, 10}, {mr, nr, 5}, {1, 1, 16}}},
			{24, 4 * mr, [][3]int{{7*mr + 1, 2*nr + 3, 30}, {7*mr + 1, 2*nr + 3, 40}, {7*mr + 1, 2*nr + 3, 64}, {mr - 1, 5*nr - 1, 64}, {mr - 1, 5*nr - 1, 70}}},
		} {
			mk.kc, mk.mc, mk.nc = b.kc, b.mc, 2*nr
			for _, s := range b.shapes {
				for _, ta := range []bool{false, true} {
					for _, tb := range []bool{false, true} {
						for _, beta := range gemmScalars {
							checkGemm(t, rng, gemmCase{ta, tb, s[0], s[1], s[2], -0.5, beta, 2, 1})
						}
					}
				}
			}
		}
	})
}

// TestGemmParallel runs products large enough to be split over goroutines,
// with sizes that leave partial tiles in every block of the grid.
func TestGemmParallel(t *testing.T) {
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	rng := rand.New(rand.NewPCG(7, 8))
	forEachISA(t, func(t *testing.T) {
		for i, s := range [][3]int{{301, 203, 97}, {37, 997, 131}, {997, 37, 131}, {203, 167, 131}} {
			if gemmParts(s[0], s[1], s[2]) < 2 {
				t.Fatalf("%v is not split", s)
			}
			// -short (emulation, the oldest Go): one op combination per
			// shape, each combination on one shape. The split is Go the
			// native run checks in full; TestGemmSweep takes every
			// combination through the kernels under emulation.
			for op := range 4 {
				if !testing.Short() || (i+op)%4 == 0 {
					checkGemm(t, rng, gemmCase{op&1 != 0, op&2 != 0, s[0], s[1], s[2], -0.5, 1, 1, 2})
				}
			}
		}
	})
}

// TestGemmSpecials checks that NaN and Inf in A, B and C propagate as in IEEE
// arithmetic and the same way on every ISA.
func TestGemmSpecials(t *testing.T) {
	const m, n, k = 17, 35, 6
	inf := float32(math.Inf(1))
	forEachISA(t, func(t *testing.T) {
		for _, tc := range []struct {
			name       string
			ai, bi, ci int // flat indices set to v in A, B, C
			v          float32
			beta       float32
			// want reports what C[i,j] must be.
			want func(i, j int) string
		}{
			{"NaN in A", 2*k + 3, -1, -1, nan32, 1, func(i, j int) string {
				if i == 2 {
					return "nan"
				}
				return "finite"
			}},
			{"NaN in B", -1, 4*n + 7, -1, nan32, 0, func(i, j int) string {
				if j == 7 {
					return "nan"
				}
				return "finite"
			}},
			{"Inf in A times 0 in B", 0, -1, -1, inf, 0, func(i, j int) string {
				if i == 0 && j < n {
					return "nan" // B's row 0 is zero
				}
				return "finite"
			}},
			{"NaN in C, β=1", -1, -1, 5*n + 9, nan32, 1, func(i, j int) string {
				if i == 5 && j == 9 {
					return "nan"
				}
				return "finite"
			}},
			{"NaN in C, β=0", -1, -1, 5*n + 9, nan32, 0, func(i, j int) string { return "finite" }},
		} {
			a := Matrix{Rows: m, Cols: k, Stride: k, Data: make([]float32, m*k)}
			b := Matrix{Rows: k, Cols: n, Stride: n, Data: make([]float32, k*n)}
			c := Matrix{Rows: m, Cols: n, Stride: n, Data: make([]float32, m*n)}
			for i := range a.Data {
				a.Data[i] = float32(i%5) + 1
			}
			for i := range b.Data {
				b.Data[i] = float32(i%3) + 1
			}
			if tc.name == "Inf in A times 0 in B" {
				clear(b.Data[:n])
			}
			for _, p := range []struct {
				s []float32
				i int
			}{{a.Data, tc.ai}, {b.Data, tc.bi}, {c.Data, tc.ci}} {
				if p.i >= 0 {
					p.s[p.i] = tc.v
				}
			}
			Gemm(NoTrans, NoTrans, 1, a, b, tc.beta, c)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					v := c.Data[i*n+j]
					switch tc.want(i, j) {
					case "nan":
						if v == v {
							t.Fatalf("%s: C[%d,%d] = %v, want NaN", tc.name, i, j, v)
						}
					case "finite":
						if !isFinite(v) {
							t.Fatalf("%s: C[%d,%d] = %v, want finite", tc.name, i, j, v)
						}
					}
				}
			}
		}
	})
}

func TestGemmPanics(t *testing.T) {
	mat := func(r, c int) Matrix { return Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)} }
	for _, tc := range []struct {
		name    string
		ta, tb  bool
		a, b, c Matrix
		want    string
	}{
		{"inner", false, false, mat(2, 3), mat(4, 5), mat(2, 5), "heed/kernels: Gemm: op(a) is 2×3, op(b) is 4×5, c is 2×5 (transA=false, transB=false)"},
		{"rows", true, false, mat(3, 2), mat(3, 5), mat(3, 5), "heed/kernels: Gemm: op(a) is 2×3, op(b) is 3×5, c is 3×5 (transA=true, transB=false)"},
		{"cols", false, true, mat(2, 3), mat(5, 3), mat(2, 4), "heed/kernels: Gemm: op(a) is 2×3, op(b) is 3×5, c is 2×4 (transA=false, transB=true)"},
		{"short c", false, false, mat(2, 3), mat(3, 5), Matrix{Rows: 2, Cols: 5, Stride: 5, Data: make([]float32, 9)}, "heed/kernels: Gemm: c is 2×5 with stride 5: len(c.Data)=9 < 10"},
		{"stride a", false, false, Matrix{Rows: 2, Cols: 3, Stride: 2, Data: make([]float32, 9)}, mat(3, 5), mat(2, 5), "heed/kernels: Gemm: a is 2×3 with stride 2 < 3 columns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tc.want {
					t.Fatalf("panic %v, want %q", r, tc.want)
				}
			}()
			Gemm(tr(tc.ta), tr(tc.tb), 1, tc.a, tc.b, 0, tc.c)
		})
	}
}

func TestGemmNoAllocs(t *testing.T) {
	skipSparse(t)
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	rng := rand.New(rand.NewPCG(9, 10))
	forEachISA(t, func(t *testing.T) {
		for _, n := range []int{37, 200} {
			a, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
			b, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
			c, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
			f := func() { Gemm(NoTrans, Trans, 1, a, b, 0.5, c) }
			f()
			if got := allocs.Count(gemmAllocRuns(), f); got != 0 {
				t.Errorf("n=%d: Gemm allocates %d times in the measured calls", n, got)
			}
		}
	})
}

// FuzzGemm checks small products of any shape, ops, scalars and layout
// against the float64 oracle under every ISA.
func FuzzGemm(f *testing.F) {
	f.Add(uint8(5), uint8(17), uint8(3), uint8(0), uint64(1))
	f.Add(uint8(15), uint8(33), uint8(9), uint8(0xff), uint64(2))
	f.Fuzz(func(t *testing.T, m, n, k, flags uint8, seed uint64) {
		g := gemmCase{
			ta: flags&1 != 0, tb: flags&2 != 0,
			m: int(m % 48), n: int(n % 100), k: int(k % 40),
			alpha: gemmScalars[int(flags>>2&3)%3], beta: gemmScalars[int(flags>>4&3)%3],
			pad: int(flags >> 6 & 1 * 3), off: int(flags >> 7 * 5),
		}
		forEachISA(t, func(t *testing.T) {
			checkGemm(t, rand.New(rand.NewPCG(seed, 11)), g)
		})
	})
}

// TestGemmConcurrent runs products, split and not, from several goroutines at
// once: they share the packing-buffer pool and the workers.
func TestGemmConcurrent(t *testing.T) {
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	cases := []gemmCase{
		{false, false, 301, 203, 97, 1, 0, 0, 0},
		{true, true, 37, 45, 29, -0.5, 1, 1, 2},
		{false, true, 203, 167, 131, 1, -0.5, 0, 1},
	}
	t.Run("group", func(t *testing.T) {
		for w := 0; w < 4; w++ {
			t.Run(fmt.Sprint(w), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(uint64(w), 12))
				for i := 0; i < 3; i++ {
					checkGemm(t, rng, cases[(w+i)%len(cases)])
				}
			})
		}
	})
}

// gemmAllocRuns is how many calls the Gemm allocation tests count over:
// fewer with -short (the emulated CI runs), where a 200³ product is slow;
// allocs.Count returns the total, so one allocation in any call shows.
func gemmAllocRuns() int {
	if testing.Short() {
		return 2
	}
	return 20
}

// TestGemmInPlaceB checks stridedBSpreads and runs products with B as is
// through each route Gemm picks for it, under every ISA: whole panels read in
// place (one block of rows covers C, a stride that spreads over the sets,
// with op(A) as is or transposed), a panel packed at a time (one block of
// rows, a 4 KiB stride), and the whole kc×nc block packed (more rows than one
// block).
func TestGemmInPlaceB(t *testing.T) {
	for _, tc := range []struct {
		ldb  int
		want bool
	}{{1, true}, {64, true}, {512, true}, {1000, true}, {1536, true}, {1024, false}, {2048, false}, {3072, false}} {
		if got := stridedBSpreads(tc.ldb); got != tc.want {
			t.Errorf("stridedBSpreads(%d) = %t, want %t", tc.ldb, got, tc.want)
		}
	}
	rng := rand.New(rand.NewPCG(19, 20))
	forEachISA(t, func(t *testing.T) {
		mk := gemmMicroFor(Active())
		if mk == nil {
			t.Skip("no micro-kernel on this ISA")
		}
		m, n := 2*mk.mr+1, 2*mk.nr+3
		for _, c := range []gemmCase{
			{false, false, m, n, 13, -0.5, 1, 3, 1},
			{true, false, m, n, 13, 1, -0.5, 3, 2},
			{false, false, m, n, 13, 1, 0, 1024 - n, 0}, // B's rows 4 KiB apart
		} {
			checkGemm(t, rng, c)
		}
		saved := *mk
		defer func() { *mk = saved }()
		mk.mc = 2 * mk.mr
		checkGemm(t, rng, gemmCase{false, false, 5*mk.mr + 1, n, 13, -0.5, -0.5, 3, 1})
	})
}

// TestGemmDirectBlocks shrinks L2 so that a row-major A at a power-of-two
// stride is read in place in blocks of fewer rows than mc (directMC), with
// partial blocks.
func TestGemmDirectBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	forEachISA(t, func(t *testing.T) {
		mk := gemmMicroFor(Active())
		if mk == nil {
			t.Skip("no micro-kernel on this ISA")
		}
		saved := *mk
		defer func() { *mk = saved }()
		// k = 13 and pad 3: lda = 16 floats, 64 bytes, so that directMC is
		// l2/2/64 = 2·mr rows.
		mk.kc, mk.mc, mk.nc, mk.l2 = 5, 5*mk.mr, 2*mk.nr, 256*mk.mr
		if got := mk.directMC(16, 5); got != 2*mk.mr {
			t.Fatalf("directMC = %d, want %d", got, 2*mk.mr)
		}
		for _, m := range []int{2*mk.mr + 1, 5*mk.mr - 1, 7 * mk.mr} {
			for _, tb := range []bool{false, true} {
				for _, beta := range gemmScalars {
					checkGemm(t, rng, gemmCase{false, tb, m, 2*mk.nr + 3, 13, -0.5, beta, 3, 1})
				}
			}
		}
	})
}

// TestGemmOrders runs products through both orders of runPacked's tiles,
// panels outer and strips outer (stripsOuter chooses by the inner block),
// with the blocking shrunk so that they cross every boundary of kc, of the
// blocks of rows and of op(B)'s columns, with partial strips and panels:
// through Gemm, GemmScratch.GemmPacked on the leading block of a larger
// operand, and both forms of GemmPackedBand against GemmPacked. An A
// transposed, which is packed, keeps the panels outer.
func TestGemmOrders(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var s GemmScratch
	var p PackedB
	forEachISA(t, func(t *testing.T) {
		mk := gemmMicroFor(Active())
		if mk == nil {
			t.Skip("no micro-kernel on this ISA")
		}
		saved := *mk
		defer func() { *mk, gemmOrder, gemmUnderTest = saved, 0, Gemm }()
		mr, nr := mk.mr, mk.nr
		mk.kc, mk.mc, mk.nc = 24, 4*mr, 2*nr
		shapes := [][3]int{{7*mr + 1, 5*nr + 3, 30}, {7*mr + 1, 2*nr + 3, 64}, {mr - 1, 5*nr - 1, 70}, {3 * mr, 3 * nr, 24}}
		for _, order := range []int{1, 2} {
			gemmOrder = order
			for i, gemm := range []func(tA, tB Transpose, alpha float32, a, b Matrix, beta float32, c Matrix){Gemm, packedGemm(&s, &p, 7)} {
				gemmUnderTest = gemm
				for j, sh := range shapes {
					for op := range 4 {
						for bi, beta := range gemmScalars {
							// -short (emulation): one β per shape and op;
							// natively every β.
							if testing.Short() && (i+j+op+bi)%len(gemmScalars) != 0 {
								continue
							}
							checkGemm(t, rng, gemmCase{op&1 != 0, op&2 != 0, sh[0], sh[1], sh[2], -0.5, beta, 2, 1})
						}
					}
				}
			}
			for _, sh := range [][3]int{{7*mr + 1, 64, 5*nr + 3}, {40, 70, 90}} {
				for _, d := range []int{-5, 1, 17} {
					for _, transA := range []bool{false, true} {
						name := fmt.Sprintf("order %d: %dx%dx%d d=%d transA=%v", order, sh[0], sh[1], sh[2], d, transA)
						checkGemmBand(t, name, rng, &s, &p, sh[0], sh[1], sh[2], d, -0.5, transA, false)
					}
				}
			}
		}
	})
}

// TestGemmOrdersAgree checks that the two orders of runPacked's tiles give
// the same bits with the blocking of the active ISA, on products of more
// rows than a block (so that Gemm packs op(B) by blocks, not panel by panel)
// whose inner blocks choose strips outer on AVX2 and AVX-512, and that what
// they give is the product (one checked against float64). It runs natively
// only: under emulation (-short) TestGemmOrders takes both orders through
// the micro-kernels, and NEON, without an in-place micro-kernel, has one
// order.
func TestGemmOrdersAgree(t *testing.T) {
	if testing.Short() || sparse {
		t.Skip("-short or HEED_TEST_SPARSE: TestGemmOrders covers both orders")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	forEachISA(t, func(t *testing.T) {
		mk := gemmMicroFor(Active())
		if mk == nil {
			t.Skip("no micro-kernel on this ISA")
		}
		defer func() { gemmOrder = 0 }()
		shapes := [][3]int{{mk.mc + 2*mk.mr + 1, 3*mk.nr + 5, mk.kc + 100}, {mk.mc + mk.mr - 1, mk.ncStrips(mk.kc) + mk.nr + 1, 2*mk.kc + 3}}
		for _, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tb := range []bool{false, true} {
				a, _ := testMatrix(rng, m, k, 3, 0, 0, 0)
				br, bc := k, n
				if tb {
					br, bc = n, k
				}
				b, _ := testMatrix(rng, br, bc, 1, 0, 0, 0)
				c0, _ := testMatrix(rng, m, n, 2, 0, 0, 0)
				var cs [2]Matrix
				for i, order := range []int{1, 2} {
					gemmOrder = order
					cs[i] = Matrix{Rows: m, Cols: n, Stride: c0.Stride, Data: append([]float32(nil), c0.Data...)}
					Gemm(NoTrans, tr(tb), -0.5, a, b, 1, cs[i])
				}
				for r := range m {
					for j := range n {
						if g, w := cs[1].Data[r*cs[1].Stride+j], cs[0].Data[r*cs[0].Stride+j]; math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("%dx%dx%d tb=%v: C[%d][%d] = %v strips outer, %v panels outer", m, n, k, tb, r, j, g, w)
						}
					}
				}
			}
		}
		gemmOrder = 2
		checkGemm(t, rng, gemmCase{false, false, mk.mc + 1, mk.nr + 3, mk.kc + 5, 1, -0.5, 1, 0})
	})
}
