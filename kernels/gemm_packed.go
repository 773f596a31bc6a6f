package kernels

import "github.com/heedml/heed/internal/fallback"

// PackedB is the right operand op(B) of matrix products, packed once in the
// layout the micro-kernel of the ISA active at [PackedB.Pack] reads, for many
// products against it or against its leading blocks
// ([GemmScratch.GemmPacked]): a product then copies nothing of op(B). Or,
// set by [PackedB.Ref], a B as is read where it is. The zero value is an empty operand (no rows, no columns); Pack reuses the
// buffer, so a PackedB packed again at most as large allocates nothing. A PackedB may be read by
// many goroutines at once, but not while it is being packed.
type PackedB struct {
	data []float32
	k, n int
	// mk is the micro-kernel the layout is for: nr-column panels of k rows
	// each (panel r at data[r·nr·k:], row p of it at p·nr), columns past n
	// zero. nil: data is op(B) row-major with stride n (the fallback).
	mk *gemmMicro
	// ref, set by Ref, is B itself (op(B) = B): nothing is packed, and the
	// products read it as a Matrix (data unused).
	ref    Matrix
	refers bool
}

// Rows returns the rows k of the packed op(B).
func (p *PackedB) Rows() int { return p.k }

// Cols returns the columns n of the packed op(B).
func (p *PackedB) Cols() int { return p.n }

// Pack sets p to op(B): B, or Bᵀ when t is Trans. It panics, naming the
// sizes, if b is not a valid Matrix. NaN and Inf are copied as they are.
func (p *PackedB) Pack(t Transpose, b Matrix) {
	b.check("PackedB.Pack", "b")
	trans := t == Trans
	k, n := b.Rows, b.Cols
	if trans {
		k, n = n, k
	}
	p.k, p.n = k, n
	p.ref, p.refers = Matrix{}, false
	p.mk = gemmMicroFor(active)
	if k == 0 || n == 0 {
		p.data = p.data[:0]
		return
	}
	if p.mk == nil {
		p.data = grow(p.data, k*n)
		for i := 0; i < k; i++ {
			d := p.data[i*n : i*n+n]
			if !trans {
				copy(d, b.Data[i*b.Stride:i*b.Stride+n])
				continue
			}
			for j := range d {
				d[j] = b.Data[j*b.Stride+i]
			}
		}
		return
	}
	nr := p.mk.nr
	p.data = grow(p.data, roundUp(n, nr)*k)
	packB(p.data, trans, b.Data, b.Stride, 0, 0, k, n, nr, p.mk.transpose8)
}

// Ref sets p to B itself (op(B) = B, not transposed) without copying it:
// the products read whole column panels of the micro-kernel's tile where
// they are, at B's row stride, and pack only a partial last panel (at most
// k·nr floats per block of the product, nr the tile's width, into the
// product's own buffers; on ISAs without an in-place micro-kernel the
// product packs B as Gemm does). The products' results, accuracy, special
// values and allocation rule are those of a packed B, so Ref suits a B
// multiplied once, for which Pack's copy would not pay. p keeps b's data: b
// must not be modified while p refers to it, and p must be packed or
// referred again to release it. It panics, naming the sizes, if b is not a
// valid Matrix.
func (p *PackedB) Ref(b Matrix) {
	b.check("PackedB.Ref", "b")
	p.k, p.n = b.Rows, b.Cols
	p.mk = gemmMicroFor(active)
	p.ref, p.refers = b, true
	p.data = p.data[:0]
}

// GemmPacked sets C = α·op(A)·P + β·C, where P is the leading k×n block of the
// operand packed in p, k the columns of op(A) (A, or Aᵀ when tA is Trans) and n the
// columns of C: what [Gemm] computes with that block of op(B) as a Matrix,
// with the same accuracy, special values (α = 0 or k = 0 reads neither A nor
// p; β = 0 does not read C), allocation rule and split over goroutines. It
// panics, before any work, naming the sizes, unless op(A) is m×k and C is m×n
// with k ≤ p.Rows() and n ≤ p.Cols(), and if C overlaps A (or the B that p
// refers to). It only reads p, so many products may use one PackedB at once.
// On AVX2 and AVX-512, a product of at most 32 rows of A (tA NoTrans), such
// as the output projection of a decode step for a beam with the weights
// packed once, reads its block of p once, panel after panel in address order,
// and A where it is.
func GemmPacked(tA Transpose, alpha float32, a Matrix, p *PackedB, beta float32, c Matrix) {
	g, ok := gemmPackedPrepare("GemmPacked", tA == Trans, alpha, a, p, beta, c)
	if !ok {
		return
	}
	g.exec()
}

// GemmPacked is [GemmPacked] computed entirely on the calling goroutine with
// the buffers of s, as [GemmScratch.Gemm] is [Gemm]: never split over
// goroutines, and allocating nothing once s is warm. It panics as GemmPacked
// does, with the kernel named "GemmScratch.GemmPacked".
func (s *GemmScratch) GemmPacked(tA Transpose, alpha float32, a Matrix, p *PackedB, beta float32, c Matrix) {
	g, ok := gemmPackedPrepare("GemmScratch.GemmPacked", tA == Trans, alpha, a, p, beta, c)
	if !ok {
		return
	}
	g.run(&s.buf)
}

// Band says what [GemmScratch.GemmPackedBand] leaves out of a product on a
// causal staircase, where row i of C and of op(A) has the limit lim(i) = i + d.
type Band uint8

const (
	// BandColumns: only the elements C[i][j] with j < lim(i) are wanted. They
	// are computed as GemmPacked computes them (the same bits); the other
	// elements of C are unspecified: a tile of C wholly at or past the limit
	// of its last row is neither computed nor written, others are computed.
	BandColumns Band = iota
	// BandInner: the terms op(A)[i][p]·P[p][j] with p ≥ lim(i) may be left
	// out: a tile's inner loop stops at the limit of the tile's last row, and
	// a tile with no term left is set to β·C. Where those elements of op(A)
	// are zero and the rows of P they meet are finite, C is GemmPacked's
	// product (equal up to the sign of a zero).
	BandInner
)

// GemmPackedBand is [GemmScratch.GemmPacked] on the staircase of a causal
// attention block, where row i of C and of op(A) has the limit lim(i) = i + d,
// leaving out what band says. So a caller computes the scores Q·Kᵀ of a block
// of queries against the keys each sees (BandColumns), zeroes the weights past
// them, and multiplies the weights by the values over the keys each sees
// (BandInner), without the tiles above the diagonal. The micro-kernels' tiles
// are what is left out, so the saving is the staircase's area rounded to
// tiles. Validation, accuracy of the computed elements, special values and
// allocation are GemmPacked's; d may be any integer (lim(i) ≤ 0: the row
// needs nothing). It panics as GemmPacked does, with the kernel named
// "GemmScratch.GemmPackedBand".
func (s *GemmScratch) GemmPackedBand(tA Transpose, alpha float32, a Matrix, p *PackedB, beta float32, c Matrix, d int, band Band) {
	g, ok := gemmPackedPrepare("GemmScratch.GemmPackedBand", tA == Trans, alpha, a, p, beta, c)
	if !ok {
		return
	}
	g.banded, g.bandCols, g.band = true, band == BandColumns, d
	g.run(&s.buf)
}

// gemmPackedPrepare validates a product against a packed operand, computes
// the products that need no micro-kernel (empty C, α = 0, k = 0, a PackedB of
// the fallback) and returns the others, ok = true.
func gemmPackedPrepare(name string, transA bool, alpha float32, a Matrix, p *PackedB, beta float32, c Matrix) (g gemmOp, ok bool) {
	a.check(name, "a")
	c.check(name, "c")
	m, k := a.Rows, a.Cols
	if transA {
		m, k = k, m
	}
	n := c.Cols
	if k > p.k || n > p.n || c.Rows != m {
		panicf("%s: op(a) is %d×%d, packed op(b) is %d×%d, c is %d×%d (transA=%t): want op(a) m×k, c m×n, k and n within op(b)",
			name, m, k, p.k, p.n, c.Rows, c.Cols, transA)
	}
	checkDisjoint(name, "c", c.span(), "a", a.span())
	if p.refers {
		checkDisjoint(name, "c", c.span(), "p", p.ref.span())
	}
	if m == 0 || n == 0 {
		return g, false
	}
	if alpha == 0 || k == 0 {
		fallback.Gemm(false, false, m, n, 0, 0, nil, 0, nil, 0, beta, c.Data, c.Stride)
		return g, false
	}
	if p.refers {
		g = gemmOp{transA: transA, m: m, n: n, k: k, alpha: alpha, beta: beta,
			a: a.Data, lda: a.Stride, b: p.ref.Data, ldb: p.ref.Stride, c: c.Data, ldc: c.Stride,
			micro: p.mk, inPlaceB: true}
		if p.mk == nil {
			g.fallback()
			return g, false
		}
		return g, true
	}
	if p.mk == nil {
		fallback.Gemm(transA, false, m, n, k, alpha, a.Data, a.Stride, p.data, p.n, beta, c.Data, c.Stride)
		return g, false
	}
	return gemmOp{transA: transA, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a.Data, lda: a.Stride, c: c.Data, ldc: c.Stride, micro: p.mk, packed: p.data, kp: p.k}, true
}
