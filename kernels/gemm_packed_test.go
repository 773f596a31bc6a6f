package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/heedml/heed/internal/allocs"
)

// packedGemm returns a product with Gemm's signature computed by packing
// op(B) into p and calling s.GemmPacked, or GemmPacked when s is nil. With extra, op(B) is the leading
// block of a larger operand, extra rows and columns larger, whose other
// elements are NaN: a product that reads past its block, or writes the
// columns past n, fails checkGemm.
func packedGemm(s *GemmScratch, p *PackedB, extra int) func(tA, tB Transpose, alpha float32, a, b Matrix, beta float32, c Matrix) {
	return packedGemmRef(s, p, extra, false)
}

// packedGemmRef is packedGemm, with a B as is (transB false) referred to by
// PackedB.Ref instead of packed when ref is set.
func packedGemmRef(s *GemmScratch, p *PackedB, extra int, ref bool) func(tA, tB Transpose, alpha float32, a, b Matrix, beta float32, c Matrix) {
	return func(tA, tB Transpose, alpha float32, a, b Matrix, beta float32, c Matrix) {
		if extra > 0 {
			r, cl := b.Rows+extra, b.Cols+extra
			big := Matrix{Rows: r, Cols: cl, Stride: cl, Data: make([]float32, r*cl)}
			for i := range big.Data {
				big.Data[i] = nan32
			}
			for i := 0; i < b.Rows && b.Cols > 0; i++ {
				copy(big.Data[i*cl:i*cl+b.Cols], b.Data[i*b.Stride:i*b.Stride+b.Cols])
			}
			b = big
		}
		if ref && tB == NoTrans {
			p.Ref(b)
		} else {
			p.Pack(tB, b)
		}
		if s == nil {
			GemmPacked(tA, alpha, a, p, beta, c)
			return
		}
		s.GemmPacked(tA, alpha, a, p, beta, c)
	}
}

// packedCombo reports whether TestGemmPacked (TestGemmPackedRef when ref)
// takes the caller's scratch (or GemmPacked's pool and split, scratch nil) on
// an exact operand (or one with extra leading columns): all four natively;
// under -short (emulation) two for TestGemmPacked, the scratch on an exact
// operand and the pool and split on a leading block; only the second for
// TestGemmPackedRef, and for both when sparse: its micro-kernels are the
// first's (the scratch is Go the native run has checked), and where no
// strided micro-kernel exists (NEON) Ref's panels go through the packed ones.
func packedCombo(scratch *GemmScratch, extra int, ref bool) bool {
	switch {
	case sparse || testing.Short() && ref:
		return scratch == nil && extra > 0
	case testing.Short():
		return (scratch == nil) != (extra == 0)
	}
	return true
}

// TestGemmPacked runs Gemm's sweep, scalar crossings and block crossings
// through PackedB.Pack and GemmScratch.GemmPacked or GemmPacked, the operand
// packed as it is and as the leading block of a larger one, under every ISA;
// GemmPacked also through the products Gemm splits over goroutines.
func TestGemmPacked(t *testing.T) { testGemmPacked(t, false) }

// TestGemmPackedRef is TestGemmPacked with every B as is referred to
// (PackedB.Ref) instead of packed: whole panels read in place at B's stride
// by the strided micro-kernels, the partial last panel packed.
func TestGemmPackedRef(t *testing.T) { testGemmPacked(t, true) }

func testGemmPacked(t *testing.T, ref bool) {
	var s GemmScratch
	var p PackedB
	defer func() { gemmUnderTest = Gemm }()
	for _, scratch := range []*GemmScratch{&s, nil} {
		for _, extra := range []int{0, 7} {
			if !packedCombo(scratch, extra, ref) {
				continue
			}
			gemmUnderTest = packedGemmRef(scratch, &p, extra, ref)
			name := "scratch/exact"
			if extra > 0 {
				name = "scratch/leading"
			}
			if scratch == nil {
				name = name[len("scratch/"):]
			}
			t.Run(name+"/sweep", TestGemmSweep)
			t.Run(name+"/scalars", TestGemmScalars)
			t.Run(name+"/blocks", TestGemmBlocks)
			t.Run(name+"/direct", TestGemmDirectBlocks)
			// Under -short (emulation) TestGemmParallel runs the split's
			// micro-kernels; the split of a packed operand is Go that the
			// native run checks.
			if scratch == nil && !testing.Short() {
				t.Run(name+"/parallel", TestGemmParallel)
			}
		}
	}
}

// TestGemmPackedISA packs (or refers to, PackedB.Ref) under one ISA and
// multiplies under another: the packed layout belongs to the ISA active at
// Pack.
func TestGemmPackedISA(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var s GemmScratch
	var p PackedB
	ref := false
	prev := Active()
	defer Use(prev)
	for _, packISA := range Supported() {
		for _, runISA := range Supported() {
			Use(packISA)
			gemmUnderTest = func(tA, tB Transpose, alpha float32, a, b Matrix, beta float32, c Matrix) {
				if ref && tB == NoTrans {
					p.Ref(b)
				} else {
					p.Pack(tB, b)
				}
				Use(runISA)
				s.GemmPacked(tA, alpha, a, &p, beta, c)
				Use(packISA)
			}
			for _, tb := range []bool{false, true} {
				checkGemm(t, rng, gemmCase{false, tb, 13, 70, 9, -0.5, 1, 1, 2})
				checkGemm(t, rng, gemmCase{true, tb, 7, 33, 17, 1, 0, 0, 0})
			}
			ref = true
			checkGemm(t, rng, gemmCase{false, false, 13, 70, 9, -0.5, 1, 1, 2})
			checkGemm(t, rng, gemmCase{true, false, 7, 150, 17, 1, 0, 0, 0})
			ref = false
		}
	}
	gemmUnderTest = Gemm
}

func TestGemmPackedGuard(t *testing.T) {
	var s GemmScratch
	var p PackedB
	gemmGuard(t, packedGemm(&s, &p, 0))
	gemmGuard(t, packedGemm(nil, &p, 0))
	gemmGuard(t, packedGemmRef(&s, &p, 0, true))
	gemmGuard(t, packedGemmRef(nil, &p, 0, true))
	// The tiles strip by strip (a packed op(B) is never packed panel by
	// panel, so the order applies to every A read in place).
	defer func() { gemmOrder = 0 }()
	gemmOrder = 2
	gemmGuard(t, packedGemm(&s, &p, 0))
}

func TestGemmPackedAllocs(t *testing.T) {
	skipSparse(t)
	prev := runtime.GOMAXPROCS(2) // n = 200 is split
	defer runtime.GOMAXPROCS(prev)
	rng := rand.New(rand.NewPCG(15, 16))
	var s GemmScratch
	var p PackedB
	forEachISA(t, func(t *testing.T) {
		for _, n := range []int{37, 200} {
			a, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
			b, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
			c, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
			f := func() {
				p.Pack(Trans, b)
				s.GemmPacked(NoTrans, 1, a, &p, 0.5, c)
			}
			f()
			if got := allocs.Count(gemmAllocRuns(), f); got != 0 {
				t.Errorf("n=%d: Pack and GemmScratch.GemmPacked allocate %d times in the measured calls", n, got)
			}
			g := func() {
				p.Pack(Trans, b)
				GemmPacked(NoTrans, 1, a, &p, 0.5, c)
			}
			g()
			if got := allocs.Count(gemmAllocRuns(), g); got != 0 {
				t.Errorf("n=%d: Pack and GemmPacked allocate %d times in the measured calls", n, got)
			}
		}
	})
}

func TestGemmPackedPanics(t *testing.T) {
	mat := func(r, c int) Matrix { return Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)} }
	var p PackedB
	p.Pack(NoTrans, mat(3, 5))
	if p.Rows() != 3 || p.Cols() != 5 {
		t.Fatalf("packed %d×%d, want 3×5", p.Rows(), p.Cols())
	}
	var s GemmScratch
	for _, tc := range []struct {
		name string
		ta   bool
		a, c Matrix
		want string
	}{
		{"inner", false, mat(2, 4), mat(2, 5), "heed/kernels: GemmScratch.GemmPacked: op(a) is 2×4, packed op(b) is 3×5, c is 2×5 (transA=false): want op(a) m×k, c m×n, k and n within op(b)"},
		{"cols", false, mat(2, 3), mat(2, 6), "heed/kernels: GemmScratch.GemmPacked: op(a) is 2×3, packed op(b) is 3×5, c is 2×6 (transA=false): want op(a) m×k, c m×n, k and n within op(b)"},
		{"rows", true, mat(3, 2), mat(3, 5), "heed/kernels: GemmScratch.GemmPacked: op(a) is 2×3, packed op(b) is 3×5, c is 3×5 (transA=true): want op(a) m×k, c m×n, k and n within op(b)"},
		{"short c", false, mat(2, 3), Matrix{Rows: 2, Cols: 5, Stride: 5, Data: make([]float32, 9)}, "heed/kernels: GemmScratch.GemmPacked: c is 2×5 with stride 5: len(c.Data)=9 < 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tc.want {
					t.Fatalf("panic %v, want %q", r, tc.want)
				}
			}()
			s.GemmPacked(tr(tc.ta), 1, tc.a, &p, 0, tc.c)
		})
	}
	t.Run("GemmPacked", func(t *testing.T) {
		want := "heed/kernels: GemmPacked: op(a) is 2×4, packed op(b) is 3×5, c is 2×5 (transA=false): want op(a) m×k, c m×n, k and n within op(b)"
		defer func() {
			if r := recover(); r != want {
				t.Fatalf("panic %v, want %q", r, want)
			}
		}()
		GemmPacked(NoTrans, 1, mat(2, 4), &p, 0, mat(2, 5))
	})
	t.Run("pack", func(t *testing.T) {
		want := "heed/kernels: PackedB.Pack: b is 2×3 with stride 2 < 3 columns"
		defer func() {
			if r := recover(); r != want {
				t.Fatalf("panic %v, want %q", r, want)
			}
		}()
		p.Pack(NoTrans, Matrix{Rows: 2, Cols: 3, Stride: 2, Data: make([]float32, 9)})
	})
}

// TestGemmPackedBand checks GemmScratch.GemmPackedBand against GemmPacked
// (checkGemmBand) under every ISA, op(A) as is and transposed, B packed and
// referred to, β ∈ {0, 1, −0.5}, limits before, across and past C. Where
// micro-kernels run (not Generic) it also checks that work is left out: cols
// leaves a tile past the limits unwritten, and not cols keeps NaN rows of P
// that only terms past a row's limit meet out of that row.
func TestGemmPackedBand(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	var s GemmScratch
	var p PackedB
	shapes := []struct{ m, k, n int }{{1, 1, 1}, {7, 13, 5}, {40, 70, 90}, {100, 300, 130}, {13, 600, 70}}
	ds := []int{-5, 0, 1, 3, 17, 1000}
	if testing.Short() { // the 40×70×90 product still checks the work left out
		shapes = shapes[1:3]
	}
	if sparse {
		ds = []int{-5, 1, 17}
	}
	forEachISA(t, func(t *testing.T) {
		micro := Active() != Generic
		for _, sh := range shapes {
			for _, d := range ds {
				for _, beta := range gemmScalars {
					for c := range 4 {
						transA, ref := c&1 != 0, c&2 != 0
						name := fmt.Sprintf("%dx%dx%d d=%d beta=%v transA=%v ref=%v", sh.m, sh.k, sh.n, d, beta, transA, ref)
						a, b, untouched := checkGemmBand(t, name, rng, &s, &p, sh.m, sh.k, sh.n, d, beta, transA, ref)
						if micro && sh.m >= 40 && d <= 3 && untouched == 0 {
							t.Errorf("%s cols: every element written: no tile left out", name)
						}
						if !micro || ref || sh.m < 40 || d != 1 || sh.k < 32 {
							continue
						}
						// Rows of P from 16 on NaN: row 0 (a tile of at most
						// 8 rows, so limit ≤ 8) must not meet them. a is zero
						// past each row's limit (checkGemmBand).
						for q := 16; q < sh.k; q++ {
							for j := range sh.n {
								b.Data[q*b.Stride+j] = nan32
							}
						}
						p.Pack(NoTrans, b)
						cm, _ := testMatrix(rng, sh.m, sh.n, 3, 0, 0, nan32)
						s.GemmPackedBand(tr(transA), 1.5, a, &p, 0, cm, d, BandInner)
						for j := range sh.n {
							if v := cm.Data[j]; v != v {
								t.Fatalf("%s inner: C[0][%d] is NaN: the terms past row 0's tile's limit were not left out", name, j)
							}
						}
					}
				}
			}
		}
	})
}

// FuzzGemmPackedBand runs checkGemmBand on sizes, limits and flags from the
// fuzzer, under every ISA.
func FuzzGemmPackedBand(f *testing.F) {
	f.Add(uint8(40), uint8(70), uint8(90), int8(1), uint8(0), uint64(1))
	f.Add(uint8(7), uint8(13), uint8(5), int8(-3), uint8(0xff), uint64(2))
	f.Fuzz(func(t *testing.T, m, k, n uint8, d int8, flags uint8, seed uint64) {
		var s GemmScratch
		var p PackedB
		transA, ref := flags&1 != 0, flags&2 != 0
		beta := gemmScalars[int(flags>>2&3)%3]
		mm, kk, nn := int(m%64), int(k%96), int(n%140)
		name := fmt.Sprintf("%dx%dx%d d=%d beta=%v transA=%v ref=%v", mm, kk, nn, d, beta, transA, ref)
		forEachISA(t, func(t *testing.T) {
			checkGemmBand(t, name, rand.New(rand.NewPCG(seed, 19)), &s, &p, mm, kk, nn, int(d), beta, transA, ref)
		})
	})
}

// checkGemmBand compares GemmPackedBand with GemmPacked on random m×k and
// k×n operands (B packed, or referred to when ref), α = 1.5: cols (β = 0),
// every element below its row's limit must have GemmPacked's bits; not cols
// (β as given), with op(A) zeroed from each row's limit on, every element
// must equal GemmPacked's (±0 alike). Neither may write outside C. It returns
// the operands (a zeroed past the limits) and how many elements cols left
// unwritten.
func checkGemmBand(t *testing.T, name string, rng *rand.Rand, s *GemmScratch, p *PackedB, m, k, n, d int, beta float32, transA, ref bool) (a, b Matrix, untouched int) {
	t.Helper()
	bits := func(x float32) uint32 {
		if x != x {
			return 0x7fc00000
		}
		if x == 0 {
			return 0
		}
		return math.Float32bits(x)
	}
	ar, ac := m, k
	if transA {
		ar, ac = ac, ar
	}
	a, _ = testMatrix(rng, ar, ac, 2, 1, 0, 0)
	b, _ = testMatrix(rng, k, n, 1, 0, 0, 0)
	if ref {
		p.Ref(b)
	} else {
		p.Pack(NoTrans, b)
	}
	lim := func(i int) int { return max(0, min(i+d, n)) }
	c0, _ := testMatrix(rng, m, n, 3, 0, 0, nan32)
	c1, buf1 := testMatrix(rng, m, n, 3, 0, 0, nan32)
	for i := range m { // a sentinel: left alone where nothing is computed
		for j := range n {
			c1.Data[i*c1.Stride+j] = 12345
		}
	}
	s.GemmPacked(tr(transA), 1.5, a, p, 0, c0)
	s.GemmPackedBand(tr(transA), 1.5, a, p, 0, c1, d, BandColumns)
	for i := range m {
		for j := range n {
			g, w := c1.Data[i*c1.Stride+j], c0.Data[i*c0.Stride+j]
			if j < lim(i) && bits(g) != bits(w) {
				t.Fatalf("%s cols: C[%d][%d] = %v, GemmPacked %v", name, i, j, g, w)
			}
			if g == 12345 {
				untouched++
			}
		}
	}
	checkOutside(t, name+" cols", c1, buf1, 0, nan32)

	// Not cols: op(A) zero from each row's limit on.
	klim := func(i int) int { return max(0, min(i+d, k)) }
	for i := range m {
		for q := klim(i); q < k; q++ {
			if transA {
				a.Data[q*a.Stride+i] = 0
			} else {
				a.Data[i*a.Stride+q] = 0
			}
		}
	}
	c2, buf2 := testMatrix(rng, m, n, 3, 0, 0, nan32)
	c3, _ := testMatrix(rng, m, n, 3, 0, 0, nan32)
	copy(c3.Data, c2.Data)
	s.GemmPacked(tr(transA), 1.5, a, p, beta, c3)
	s.GemmPackedBand(tr(transA), 1.5, a, p, beta, c2, d, BandInner)
	for i := range m {
		for j := range n {
			if g, w := c2.Data[i*c2.Stride+j], c3.Data[i*c3.Stride+j]; bits(g) != bits(w) {
				t.Fatalf("%s inner: C[%d][%d] = %v, GemmPacked %v", name, i, j, g, w)
			}
		}
	}
	checkOutside(t, name+" inner", c2, buf2, 0, nan32)
	return a, b, untouched
}
