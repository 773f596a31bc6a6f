package kernels

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/heedml/heed/internal/fallback"
)

// Transpose says whether a matrix product takes an operand as it is or
// transposed.
type Transpose uint8

const (
	NoTrans Transpose = iota // op(X) = X
	Trans                    // op(X) = Xᵀ
)

// Gemm sets C = α·op(A)·op(B) + β·C, the general matrix product of BLAS's
// sgemm on row-major matrices: op(A) is A, or Aᵀ when tA is Trans, and op(B)
// is B, or Bᵀ when tB is Trans. op(A) must be m×k, op(B) k×n and C m×n; Gemm
// panics, before any work, naming the sizes, if they do not agree or a Matrix
// is invalid, and if C overlaps A or B.
//
// Every element of C is within γₖ₊₁·(|α|·Σₚ|op(A)ᵢₚ·op(B)ₚⱼ| + |β·cᵢⱼ|) of
// the exact result, γₙ = n·u/(1−n·u) with u = 2⁻²⁴ (away from underflow, where
// each product may add 2⁻¹⁵⁰): the products of the inner dimension are summed
// with fused multiply-adds in blocks, and α and β are applied by one more
// fused multiply-add.
//
// As in BLAS, β = 0 does not read C, so NaN or Inf already in C is ignored,
// and α = 0 (or k = 0) reads neither A nor B and sets C = β·C. Otherwise NaN
// and Inf in A, B or C propagate as in IEEE arithmetic (Inf·0 = NaN). An empty
// C (m = 0 or n = 0) is left as it is.
//
// A and B may overlap each other. Gemm allocates
// nothing once its packing buffers are warm (they are kept in a sync.Pool).
// With a SIMD micro-kernel (AVX2, AVX-512, NEON), products of at least 2²²
// multiply-adds (about 161³) are split over up to GOMAXPROCS goroutines, by
// blocks of rows and of columns of C. Gemm is safe for concurrent use.
func Gemm(tA, tB Transpose, alpha float32, a, b Matrix, beta float32, c Matrix) {
	g, ok := gemmPrepare("Gemm", tA == Trans, tB == Trans, alpha, a, b, beta, c)
	if !ok || g.skinny(true) {
		return
	}
	if g.micro == nil {
		g.fallback()
		return
	}
	g.exec()
}

// exec runs g: over goroutines where gemmParts splits it, else on the
// calling goroutine with a pooled buffer.
func (g *gemmOp) exec() {
	if parts := gemmParts(g.m, g.n, g.k); parts > 1 {
		g.parallel(parts)
		return
	}
	buf := gemmBufs.Get().(*gemmBuf)
	g.run(buf)
	gemmBufs.Put(buf)
}

// GemmScratch holds the packing buffers of products computed on one
// goroutine, for callers that run many small products from their own
// goroutines (a block of tiled attention, say). The zero value is ready to
// use; a GemmScratch must not be used by two goroutines at once.
type GemmScratch struct{ buf gemmBuf }

// Gemm is [Gemm] computed entirely on the calling goroutine with the buffers
// of s: the same product, accuracy, special values, aliasing rules and named
// panics (with the kernel named "GemmScratch.Gemm"), but never split over
// goroutines and without the shared buffer pool. It allocates nothing once s
// has grown to the largest product it has computed: at most
// (mc + nc)·kc + mr·nr floats for the active micro-kernel's tile mr×nr and
// blocking sizes (kernels/DESIGN.md, "GEMM"), about (m + n)·k for an m×n×k product
// smaller than the blocks.
func (s *GemmScratch) Gemm(tA, tB Transpose, alpha float32, a, b Matrix, beta float32, c Matrix) {
	g, ok := gemmPrepare("GemmScratch.Gemm", tA == Trans, tB == Trans, alpha, a, b, beta, c)
	if !ok || g.skinny(false) {
		return
	}
	if g.micro == nil {
		g.fallback()
		return
	}
	g.run(&s.buf)
}

// gemmPrepare validates a product, handles the products that need no
// micro-kernel (empty C, α = 0, k = 0) and returns the others, ok = true, with
// the active micro-kernel (nil for the fallback).
func gemmPrepare(name string, transA, transB bool, alpha float32, a, b Matrix, beta float32, c Matrix) (g gemmOp, ok bool) {
	a.check(name, "a")
	b.check(name, "b")
	c.check(name, "c")
	m, k := a.Rows, a.Cols
	if transA {
		m, k = k, m
	}
	kb, n := b.Rows, b.Cols
	if transB {
		kb, n = n, kb
	}
	if kb != k || c.Rows != m || c.Cols != n {
		panicf("%s: op(a) is %d×%d, op(b) is %d×%d, c is %d×%d (transA=%t, transB=%t)",
			name, m, k, kb, n, c.Rows, c.Cols, transA, transB)
	}
	checkDisjoint(name, "c", c.span(), "a", a.span())
	checkDisjoint(name, "c", c.span(), "b", b.span())
	if m == 0 || n == 0 {
		return g, false
	}
	if alpha == 0 || k == 0 {
		fallback.Gemm(false, false, m, n, 0, 0, nil, 0, nil, 0, beta, c.Data, c.Stride)
		return g, false
	}
	return gemmOp{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a.Data, lda: a.Stride, b: b.Data, ldb: b.Stride, c: c.Data, ldc: c.Stride,
		micro: gemmMicroFor(active), smallInPlaceB: !transB && stridedBSpreads(b.Stride)}, true
}

// gemmMicro is a register-blocked micro-kernel: it sets the mr×nr block of C
// at c (row stride ldc elements) to α·Aₚ·Bₚ + β·C, where Aₚ is a packed k×mr
// panel of op(A) (a[p·mr+i]) and Bₚ a packed k×nr panel of op(B) (b[p·nr+j]);
// β = 0 does not read C. k ≥ 1.
type gemmMicro struct {
	mr, nr int
	kern   func(k int, a, b, c *float32, ldc int, alpha, beta float32)
	// rows is kern reading an mr×k block of A in place, row i at a[i·lda:]:
	// a row-major op(A) needs no packing for its whole panels.
	rows gemmRowsKernel
	// skinny, when set, holds the kernels of GemmPacked's skinny route
	// (skinnypacked.go): skinny[l][r−1] for r = 1 … mr rows, prefetching
	// into L1 (l = 0) or L2 (l = 1).
	skinny [2][]gemmSkinnyKernel
	// skinnyStrided, when set, holds rowsStrided's tiles of r = 1 … mr rows
	// (skinnyStrided[r−1]) for the strided skinny route (skinnypacked.go).
	skinnyStrided []gemmStridedKernel
	// strided and rowsStrided, when set, are kern and rows reading a k×nr
	// block of B in place, row p at b[p·ldb:]: a row-major op(B) read
	// where it is (gemmOp.inPlaceB).
	strided     func(k int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)
	rowsStrided func(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)
	// transpose8, when set, packs a transposed op(B): for q < blocks it sets
	// dst[(8q+p)·ldd + j] = src[j·lds + 8q+p], p, j < 8 (an 8×8 register
	// transpose per block). blocks ≥ 1.
	transpose8 func(dst *float32, ldd int, src *float32, lds int, blocks int)
	// packAT6, when set (mr = 6), packs the full panels of a transposed
	// op(A): dst[q·6·kb + 6p + i] = src[p·lds + 6q + i] for p < kb,
	// q < panels, i < 6. kb, panels ≥ 1.
	packAT6 func(dst, src *float32, lds, kb, panels int)
	// kc, mc and nc are the blocking sizes: a packed mc×kc block of op(A)
	// and kc×nc block of op(B).
	kc, mc, nc int
	// l1 and l2 are the L1d and L2 sizes in bytes the blocking was derived
	// from (directMC, stripsOuter, ncStrips).
	l1, l2 int
}

// gemmOrder, when not 0, fixes the order of runPacked's tiles for tests:
// 1 panels outer, 2 strips outer (stripsOuter).
var gemmOrder int

// stripsOuter reports whether a block of the product with inner blocks of
// kc goes strip by strip (each mr-row strip of A against every panel of
// op(B), the strip kept in L1) rather than panel by panel (each panel
// against every strip, the panel kept in L1): when a kc×nr panel takes more
// than half of L1, where it cannot stay beside the strips' rows and C.
// kernels/DESIGN.md ("GEMM", "Blocking") explains the rule.
func (mk *gemmMicro) stripsOuter(kc int) bool {
	switch gemmOrder {
	case 1:
		return false
	case 2:
		return true
	}
	return kc*mk.nr*4 > mk.l1/2
}

// ncStrips returns the columns of a block of op(B) gone through strip by
// strip: at most nc, and a kc×nc block of at most half of L2, which every
// strip reads whole.
func (mk *gemmMicro) ncStrips(kc int) int {
	return max(mk.nr, min(mk.nc, mk.l2/2/(4*kc)/mk.nr*mk.nr))
}

// directMC returns the rows of a block of op(A) read in place (row stride
// lda elements) for inner blocks of kc: mcFor(kc), or fewer when lda is a
// multiple of a large power of two. A row-major block of rows at such a
// stride does not spread over L2's sets as a packed block does: with every
// row of kc elements starting at a multiple of the stride's largest
// power-of-two factor g bytes (g < kc·4 is the packed case), the rows fall
// on a 1/(g/(kc·4)) share of the sets, so the block holds as much of each
// set as a packed block of max(kc·4, g) bytes a row would. The rows are
// therefore capped at L2/2 / max(kc·4, g) (the L2/2 of mc's rule),
// independent of the associativity as long as g is at most the bytes L2
// maps onto one way, which the cap of g at L2/16 keeps for caches of up to
// 16 ways.
func (mk *gemmMicro) directMC(lda, kc int) int {
	b := lda * 4
	g := b & -b
	if g == 0 {
		return mk.mcFor(kc)
	}
	g = min(g, mk.l2/16)
	rows := mk.l2 / 2 / max(kc*4, g)
	return min(mk.mcFor(kc), max(mk.mr, rows/mk.mr*mk.mr))
}

// kcFor returns the inner block of a product with inner dimension k: k
// itself up to a third more than the rule's kc, else kc, or, when blocks of
// up to that third more cover k in fewer of them, the even block that does
// (⌈k/blocks⌉ rounded up to 8). Fewer blocks mean fewer passes over C;
// kernels/DESIGN.md ("GEMM", "Blocking") explains the rule.
func (mk *gemmMicro) kcFor(k int) int {
	hi := max(mk.kc, mk.kc*4/3/8*8)
	if k <= hi {
		return k
	}
	blocks := (k + hi - 1) / hi
	if (k+mk.kc-1)/mk.kc == blocks {
		return mk.kc
	}
	return min(hi, roundUp((k+blocks-1)/blocks, 8))
}

// mcFor returns the rows of a packed block of A for inner blocks of kc: mc,
// scaled down when kc is above the rule's, so that the block keeps its size.
func (mk *gemmMicro) mcFor(kc int) int {
	if kc <= mk.kc {
		return mk.mc
	}
	return max(mk.mr, mk.mc*mk.kc/kc/mk.mr*mk.mr)
}

// gemmOp is one product, or the block of it that one goroutine computes.
type gemmOp struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a              []float32
	lda            int
	b              []float32
	ldb            int
	c              []float32
	ldc            int
	micro          *gemmMicro
	// packed, when not nil, is op(B) packed beforehand (b and ldb unused):
	// nr-column panels of kp rows each, as runPacked reads them.
	packed []float32
	kp     int
	// inPlaceB reads whole nr-column panels of a B as is (not transB, packed
	// nil) where they are, through the strided micro-kernels, and packs only
	// a partial last panel; without strided micro-kernels B is packed as
	// usual. smallInPlaceB does so only where that beats packing: when one
	// block of rows covers C (each panel would be packed for the tiles of
	// one pass) and B's row stride spreads its rows over the cache's sets
	// (stridedBSpreads).
	inPlaceB, smallInPlaceB bool
	// banded restricts the product to a staircase ([GemmScratch.GemmPackedBand]):
	// row i of C needs its columns j < i + band (bandCols) or its terms of
	// the inner dimension p < i + band (not bandCols). Whole tiles, or the
	// tail of a tile's inner loop, are left out.
	banded, bandCols bool
	band             int
}

// stridedBSpreads reports whether rows of B ldb elements apart fall on
// different L1 sets: not when the stride is a multiple of 4 KiB, one way of
// the L1 data cache of the x86 cores with strided micro-kernels (32 KiB
// 8-way, 48 KiB 12-way: a VIPT cache indexes within a page), where every row
// of a panel maps to the same sets and a panel read in place thrashes them.
func stridedBSpreads(ldb int) bool {
	b := ldb * 4
	return b&-b < 4096
}

func (g *gemmOp) fallback() {
	fallback.Gemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc)
}

// gemmBuf holds one goroutine's packing buffers and the edge tile.
type gemmBuf struct {
	a, b, tile []float32
}

var gemmBufs = sync.Pool{New: func() any { return new(gemmBuf) }}

// grow returns s with length n, reusing its array when it is large enough.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// run computes the product on the calling goroutine: the loops of BLIS around
// the micro-kernel. For each kc×nc block of op(B), packed into nr-column
// panels, and each mc×kc block of op(A), packed into mr-row panels, every
// mr×nr tile of C gets one micro-kernel call; the first block of the inner
// dimension applies β, the later ones add to C.
func (g *gemmOp) run(buf *gemmBuf) { g.runPacked(buf, g.packed, g.kp) }

// runPacked is run with op(B) packed beforehand when packed is not nil: nr-column
// panels of kp rows each (panel r at packed[r·nr·kp:], row p of it at
// p·nr), of which the product uses the leading g.k rows and g.n columns.
func (g *gemmOp) runPacked(buf *gemmBuf, packed []float32, kp int) {
	if g.skinnyPacked(packed) {
		g.runSkinnyPacked(buf, packed, kp)
		return
	}
	if g.skinnyStrided(packed) {
		g.runSkinnyStrided(buf)
		return
	}
	mk := g.micro
	mr, nr := mk.mr, mk.nr
	kc := mk.kcFor(g.k)
	mc := mk.mcFor(kc)
	mcMax := min(mc, roundUp(g.m, mr))
	ncMax := min(mk.nc, roundUp(g.n, nr))
	buf.tile = grow(buf.tile, mr*nr)
	// A row-major op(A) is read in place by whole panels; only the last,
	// partial one is packed.
	direct := !g.transA && mk.rows != nil
	if direct {
		mc = mk.directMC(g.lda, kc)
	}
	// A B as is read in place by whole panels; only the last, partial one
	// is packed (into the start of buf.b).
	oneBlock := g.m <= mc // one pass of the ic loop covers C
	inB := (g.inPlaceB || g.smallInPlaceB && oneBlock) && !g.transB && packed == nil && mk.strided != nil
	// Otherwise, when one block of rows covers C, each panel of op(B) is
	// packed just before its tiles into a buffer of one panel, which stays
	// in cache, rather than the whole kc×nc block before them.
	perPanel := packed == nil && !inB && oneBlock
	// With inner blocks too long for a panel of op(B) to stay in L1, the
	// tiles of an A read in place go one strip of mr rows at a time, each
	// strip against every panel of the block (stripsOuter): the strip's
	// rows stay in L1 and the block of op(B) in L2, read panel after
	// panel. Otherwise each panel goes against every strip of the block of
	// A and stays in L1 (or L2) while the strips are read from L2: a
	// packed A, whose block would share L2 with op(B)'s, and a B read in
	// place keep that order, and so do panels packed one by one.
	strips := direct && !inB && !perPanel && mk.stripsOuter(kc)
	nc := mk.nc
	if strips {
		nc = mk.ncStrips(kc)
		ncMax = min(nc, roundUp(g.n, nr))
		mc = roundUp(g.m, mr) // one block: a partial strip is packed just before its tiles
		mcMax = mr
	}
	buf.a = grow(buf.a, mcMax*kc)
	switch {
	case perPanel:
		buf.b = grow(buf.b, nr*kc)
	case packed == nil:
		buf.b = grow(buf.b, ncMax*kc)
	}
	for jc := 0; jc < g.n; jc += nc {
		nb := min(nc, g.n-jc)
		for pc := 0; pc < g.k; pc += kc {
			kb := min(kc, g.k-pc)
			// The kb×nr panel of op(B) for columns jc+jr… is at
			// bs[off+jr/nr·panel] when packed (panelOf).
			bs, panel, off := buf.b, nr*kb, 0
			fullB := 0 // columns [0, fullB) of the block are read in place
			switch {
			case inB:
				fullB = nb / nr * nr
				if fullB < nb {
					packB(buf.b, false, g.b, g.ldb, pc, jc+fullB, kb, nb-fullB, nr, nil)
				}
				off = -fullB / nr * panel
			case perPanel: // below, for each jr
			case packed == nil:
				packB(buf.b, g.transB, g.b, g.ldb, pc, jc, kb, nb, nr, mk.transpose8)
			default:
				bs, panel, off = packed, nr*kp, jc/nr*nr*kp+pc*nr
			}
			beta := g.beta
			if pc > 0 {
				beta = 1
			}
			// panelOf returns the panel of op(B) for columns jc+jr…: packed
			// (bp), or where it is in B (bIn, its kb×nr block).
			panelOf := func(jr int) (bp *float32, bIn []float32) {
				switch {
				case jr < fullB:
					o := pc*g.ldb + jc + jr
					return nil, g.b[o : o+(kb-1)*g.ldb+nr]
				case perPanel:
					packB(buf.b, g.transB, g.b, g.ldb, pc, jc+jr, kb, min(nr, nb-jr), nr, mk.transpose8)
					return &buf.b[0], nil
				}
				return &bs[off+jr/nr*panel], nil
			}
			for ic := 0; ic < g.m; ic += mc {
				mb := min(mc, g.m-ic)
				// tile computes the tile of C at rows ic+ir…, columns jc+jr…
				// from the strip of A at rows ic+ir… (read in place, or packed
				// at ap) and the panel bp or bIn.
				tile := func(ir, jr int, ap []float32, bp *float32, bIn []float32) {
					h, w := min(mr, mb-ir), min(nr, nb-jr)
					kt := kb // the tile's share of the inner dimension
					if g.banded {
						lim := ic + ir + h - 1 + g.band // the limit of the tile's last row
						switch {
						case g.bandCols && jc+jr >= lim:
							return
						case !g.bandCols:
							kt = min(kb, max(0, lim-pc))
							if kt == 0 {
								// No term is left: C = β·C (the
								// micro-kernels take k ≥ 1).
								if beta != 1 { // k = 0: the fallback's C = β·C
									fallback.Gemm(false, false, h, w, 0, 0, nil, 0, nil, 0, beta, g.c[(ic+ir)*g.ldc+jc+jr:], g.ldc)
								}
								return
							}
						}
					}
					ci := (ic+ir)*g.ldc + jc + jr
					c, ldc := &g.c[ci], g.ldc
					t := buf.tile
					edge := w < nr || h < mr
					if edge {
						// An edge tile goes through the full-size tile
						// buffer, so the micro-kernel never touches C
						// outside the matrix.
						if beta != 0 {
							tileIn(t, nr, g.c[ci:], g.ldc, h, w)
						}
						c, ldc = &t[0], nr
					}
					switch {
					case bIn != nil && direct && h == mr:
						mk.rowsStrided(kt, &g.a[(ic+ir)*g.lda+pc], g.lda, &bIn[0], g.ldb, c, ldc, g.alpha, beta)
					case bIn != nil:
						mk.strided(kt, &ap[0], &bIn[0], g.ldb, c, ldc, g.alpha, beta)
					case direct && h == mr:
						mk.rows(kt, &g.a[(ic+ir)*g.lda+pc], g.lda, bp, c, ldc, g.alpha, beta)
					default:
						mk.kern(kt, &ap[0], bp, c, ldc, g.alpha, beta)
					}
					if edge {
						tileOut(g.c[ci:], g.ldc, t, nr, h, w)
					}
				}
				if strips {
					for ir := 0; ir < mb; ir += mr {
						if h := min(mr, mb-ir); h < mr {
							packA(buf.a, false, g.a, g.lda, ic+ir, pc, h, kb, mr, nil)
						}
						for jr := 0; jr < nb; jr += nr {
							bp, bIn := panelOf(jr)
							tile(ir, jr, buf.a, bp, bIn)
						}
					}
					continue
				}
				if full := mb / mr * mr; !direct {
					packA(buf.a, g.transA, g.a, g.lda, ic, pc, mb, kb, mr, mk.packAT6)
				} else if full < mb {
					packA(buf.a[full*kb:], false, g.a, g.lda, ic+full, pc, mb-full, kb, mr, nil)
				}
				for jr := 0; jr < nb; jr += nr {
					bp, bIn := panelOf(jr)
					for ir := 0; ir < mb; ir += mr {
						tile(ir, jr, buf.a[ir*kb:], bp, bIn)
					}
				}
			}
		}
	}
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// packA packs the mb×kb block of op(A) at (ic, pc) into dst as ⌈mb/mr⌉ panels
// of kb×mr, panel q holding rows ic+q·mr…: dst[q·mr·kb + p·mr + i]. Rows past
// mb are zero. The full panels of a transposed op(A) go through at6
// (gemmMicro.packAT6) when it is set and mr is 6.
func packA(dst []float32, trans bool, a []float32, lda, ic, pc, mb, kb, mr int,
	at6 func(dst, src *float32, lds, kb, panels int)) {
	q0 := 0
	if trans && mr == 6 && at6 != nil && mb >= 6 && kb > 0 {
		// The full panels through at6 (gemmMicro.packAT6); the last
		// elements it reads and writes are checked here.
		panels := mb / 6
		q0 = 6 * panels
		off := pc*lda + ic
		_ = a[off+(kb-1)*lda+q0-1]
		_ = dst[(panels-1)*6*kb+6*kb-1]
		at6(&dst[0], &a[off], lda, kb, panels)
	}
	for q := q0; q < mb; q += mr {
		h := min(mr, mb-q)
		panel := dst[q*kb : q*kb+mr*kb]
		if trans {
			// op(A)(i, p) = a[p·lda + i]: each p is h contiguous elements.
			for p := 0; p < kb; p++ {
				src := a[(pc+p)*lda+ic+q:]
				d := panel[p*mr : p*mr+mr]
				copy(d[:h], src[:h])
				clear(d[h:])
			}
			continue
		}
		// op(A)(i, p) = a[i·lda + p]: each row of the panel is a row of a,
		// scattered with stride mr. The bounds are checked once per row.
		for i := 0; i < h; i++ {
			src := a[(ic+q+i)*lda+pc:]
			scatter(panel[i:], src[:kb], mr)
		}
		for i := h; i < mr; i++ {
			zeroStrided(panel[i:], kb, mr)
		}
	}
}

// packB packs the kb×nb block of op(B) at (pc, jc) into dst as ⌈nb/nr⌉ panels
// of kb×nr: dst[r·nr·kb + p·nr + j] for columns jc+r·nr+j. Columns past nb
// are zero. A transposed op(B) goes through t8 (gemmMicro.transpose8) in
// blocks of 8×8 when it is set.
func packB(dst []float32, trans bool, b []float32, ldb, pc, jc, kb, nb, nr int,
	t8 func(dst *float32, ldd int, src *float32, lds int, blocks int)) {
	for r := 0; r < nb; r += nr {
		w := min(nr, nb-r)
		panel := dst[r*kb : r*kb+nr*kb]
		if !trans {
			for p := 0; p < kb; p++ {
				src := b[(pc+p)*ldb+jc+r:]
				d := panel[p*nr : p*nr+nr]
				copy(d[:w], src[:w])
				clear(d[w:])
			}
			continue
		}
		// op(B)(p, j) = b[j·ldb + p]: column j of the panel is a row of b.
		j := 0
		if t8 != nil && kb >= 8 {
			kb8, w8 := kb&^7, w&^7
			// Chunks of packTBytes of the panel, each filled whole by every
			// group of eight columns in turn, so that the rows of the panel
			// a transpose writes a part of are still in L1 when the next
			// group writes the rest.
			chunk := max(8, packTBytes/(4*nr)&^7)
			for p0 := 0; p0 < kb8; p0 += chunk {
				blocks := min(chunk, kb8-p0) / 8
				for j := 0; j < w8; j += 8 {
					row := (jc+r+j)*ldb + pc + p0
					// The slices are the exact extents t8 reads and
					// writes, so a short one panics here rather than in
					// the assembly.
					src := b[row : row+7*ldb+8*blocks]
					d := panel[p0*nr+j : (p0+8*blocks-1)*nr+j+8]
					t8(&d[0], nr, &src[0], ldb, blocks)
				}
			}
			for ; j < w8; j += 8 {
				row := (jc+r+j)*ldb + pc
				for p := kb8; p < kb; p++ {
					dp := panel[p*nr+j : p*nr+j+8]
					for i := range dp {
						dp[i] = b[row+i*ldb+p]
					}
				}
			}
		}
		for ; j < w; j++ {
			src := b[(jc+r+j)*ldb+pc:]
			scatter(panel[j:], src[:kb], nr)
		}
		for j := w; j < nr; j++ {
			zeroStrided(panel[j:], kb, nr)
		}
	}
}

// packTBytes is the bytes of a panel packB fills at a time from a transposed
// op(B): 64 rows of a 64-column panel, whose lines at the panel's 256-byte
// row stride fall on a quarter of L1's sets, four to a set, so that they stay
// in L1 between the two transposes that write their halves (kernels/DESIGN.md,
// "GEMM", "Packing, edges, buffers").
const packTBytes = 16 << 10

// gemmParallelWork is the number of multiply-adds m·n·k from which Gemm splits
// a product over goroutines, each part getting at least that much.
const gemmParallelWork = 1 << 21

// gemmParts returns how many goroutines an m×n×k product uses.
func gemmParts(m, n, k int) int {
	p := runtime.GOMAXPROCS(0)
	if p <= 1 {
		return 1
	}
	w := float64(m) * float64(n) * float64(k) / gemmParallelWork
	if w < 2 {
		return 1
	}
	return int(min(float64(p), w))
}

// parallel splits C into a grid of parts blocks, rows by columns with the
// blocks as square as the grid allows, whole micro-tiles each, and computes
// them concurrently, each with its own packing.
func (g *gemmOp) parallel(parts int) {
	mr, nr := g.micro.mr, g.micro.nr
	tilesM, tilesN := (g.m+mr-1)/mr, (g.n+nr-1)/nr
	// Choose the grid pm×pn ≤ parts with the least work per block.
	pm, pn, best := 1, 1, -1.0
	for i := 1; i <= parts; i++ {
		j := parts / i
		if i > tilesM || j > tilesN {
			continue
		}
		// Per block: m·n/(i·j) multiply-adds per step of k, and packing
		// that grows with the block's sides.
		bm, bn := float64(g.m)/float64(i), float64(g.n)/float64(j)
		score := bm*bn + 64*(bm+bn)
		if best < 0 || score < best {
			pm, pn, best = i, j, score
		}
	}
	if pm*pn <= 1 {
		buf := gemmBufs.Get().(*gemmBuf)
		g.run(buf)
		gemmBufs.Put(buf)
		return
	}
	job := gemmJobs.Get().(*gemmJob)
	job.op = *g
	job.pm, job.pn = pm, pn
	job.tilesM, job.tilesN = tilesM, tilesN
	runParallel(job, pm*pn, &job.wg)
	job.op = gemmOp{}
	gemmJobs.Put(job)
}

// gemmJob is a product split into a grid of blocks of C.
type gemmJob struct {
	op             gemmOp
	pm, pn         int
	tilesM, tilesN int
	wg             sync.WaitGroup
}

var gemmJobs = sync.Pool{New: func() any { return new(gemmJob) }}

func (j *gemmJob) run(part int) {
	g := j.op
	bi, bj := part/j.pn, part%j.pn
	mr, nr := g.micro.mr, g.micro.nr
	i0 := min(g.m, j.tilesM*bi/j.pm*mr)
	i1 := min(g.m, j.tilesM*(bi+1)/j.pm*mr)
	j0 := min(g.n, j.tilesN*bj/j.pn*nr)
	j1 := min(g.n, j.tilesN*(bj+1)/j.pn*nr)
	if i0 >= i1 || j0 >= j1 {
		return
	}
	g.m, g.n = i1-i0, j1-j0
	if g.transA {
		g.a = g.a[i0:]
	} else {
		g.a = g.a[i0*g.lda:]
	}
	switch {
	case g.packed != nil: // j0 is a whole number of nr-column panels
		g.packed = g.packed[j0*g.kp:]
	case g.transB:
		g.b = g.b[j0*g.ldb:]
	default:
		g.b = g.b[j0:]
	}
	g.c = g.c[i0*g.ldc+j0:]
	buf := gemmBufs.Get().(*gemmBuf)
	g.run(buf)
	gemmBufs.Put(buf)
}

// scatter sets dst[p·stride] = src[p] for every p. It panics, before writing,
// unless dst holds them all; the loop itself runs without bounds checks.
func scatter(dst, src []float32, stride int) {
	n := len(src)
	if n == 0 {
		return
	}
	_ = dst[(n-1)*stride]
	d := unsafe.Pointer(unsafe.SliceData(dst))
	step := uintptr(stride) * 4
	p := 0
	for ; p+4 <= n; p += 4 {
		s := (*[4]float32)(src[p:])
		q := unsafe.Add(d, uintptr(p)*step)
		*(*float32)(q) = s[0]
		*(*float32)(unsafe.Add(q, step)) = s[1]
		*(*float32)(unsafe.Add(q, 2*step)) = s[2]
		*(*float32)(unsafe.Add(q, 3*step)) = s[3]
	}
	for ; p < n; p++ {
		*(*float32)(unsafe.Add(d, uintptr(p)*step)) = src[p]
	}
}

// zeroStrided sets dst[p·stride] = 0 for p < n.
func zeroStrided(dst []float32, n, stride int) {
	for p := 0; p < n; p++ {
		dst[p*stride] = 0
	}
}

// tileIn copies the h×w block of C at c (row stride ldc) into the tile t
// (row stride nr), for a micro-kernel run on an edge tile.
func tileIn(t []float32, nr int, c []float32, ldc, h, w int) {
	for i := 0; i < h; i++ {
		copy(t[i*nr:i*nr+w], c[i*ldc:i*ldc+w])
	}
}

// tileOut copies the h×w block of the tile t back to C at c.
func tileOut(c []float32, ldc int, t []float32, nr, h, w int) {
	for i := 0; i < h; i++ {
		copy(c[i*ldc:i*ldc+w], t[i*nr:i*nr+w])
	}
}
