package kernels

// The skinny GEMM routes (kernels/DESIGN.md, "Skinny products"): few rows of
// A as is against op(B) = B, without the blocked route's packing of A and
// its padded rows. GemmPacked's route reads a packed op(B) (the output
// projection of a decode step over a vocabulary packed once for a beam or a
// batch): the panels are contiguous, so op(B) streams from memory in address
// order, and the groups of rows of A after the first take each pass of a
// panel from L2. The strided route reads B in place where it is in cache.
// Both keep each group's tile of C in registers over a pass and give C the
// blocked route's bits.

// gemmRowsKernel is a micro-kernel reading its rows of A in place (row i at
// a[i·lda:]) against a packed k×nr panel b: the r×nr block of C at c (row
// stride ldc) is set to α·A·B + β·C, β = ±0 not reading C. k ≥ 1.
type gemmRowsKernel func(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32)

// gemmSkinnyKernel is a gemmRowsKernel whose every step (row of the panel)
// first prefetches lps consecutive lines from pf on (lps ≤ 4; 0: none).
type gemmSkinnyKernel func(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32, pf *float32, lps int)

// gemmStridedKernel is a gemmRowsKernel reading B in place: row p of the
// k×nr block at b[p·ldb:].
type gemmStridedKernel func(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

// skinnyPacked reports whether runPacked takes the skinny route for the
// packed op(B) packed: A as is with at most skinnyMaxRows rows, not banded,
// and a micro-kernel with the route's kernels. At any size: in cache too the
// route, which packs nothing and pads no row, is faster than the blocked one
// (kernels/DESIGN.md).
func (g *gemmOp) skinnyPacked(packed []float32) bool {
	return packed != nil && !g.transA && !g.banded && g.micro.skinny[0] != nil &&
		g.m <= skinnyMaxRows
}

// skinnyPackedAhead returns how far, in bytes, the one group of r rows of a
// skinny packed product prefetches ahead of its loads in panels of nr
// columns: 2 KiB for the AVX-512 tile's panels (64 columns, 4 lines a step)
// and for one row, 8 KiB for more rows in narrower panels (AVX2's 16
// columns, a line a step); measured on Zen 4 (kernels/DESIGN.md).
func skinnyPackedAhead(nr, r int) int {
	if nr >= 64 || r == 1 {
		return 2 << 10
	}
	return 8 << 10
}

// skinnyPackedLines returns the lines per step that each of groups groups
// prefetches of the next pass (kb rows of nr columns: kb·nr/16 lines over
// the groups' groups·kb steps), at least 1 and at most 4, and the lines
// between the groups' starts in it (a group's share).
func skinnyPackedLines(kb, nr, groups int) (lps, share int) {
	lines := kb * nr / 16
	share = (lines + groups - 1) / groups
	return min(4, max(1, (share+kb-1)/kb)), share
}

// runSkinnyPacked computes g by the skinny route: for each nr-column panel of
// op(B) in address order (panel r at packed[r·nr·kp:], row p of it at p·nr),
// in passes of the blocked route's inner blocks (kcFor; the passes after the
// first add to C, so every element of C gets the blocked route's bits),
// each group of rows of A (skinnyGroups: at most mr rows, sizes differing by
// at most one) runs the kernel of its rows over the pass. With more than one
// group, each prefetches its share of the next pass (skinnyPackedLines), so
// that the next pass's lines are requested over the work of all the groups,
// where the first group alone reads from memory; one group prefetches its
// own stream skinnyPackedAhead ahead. The level is the route's
// (skinnyPackedL2). A last panel narrower than nr goes through buf.tile.
func (g *gemmOp) runSkinnyPacked(buf *gemmBuf, packed []float32, kp int) {
	mk := g.micro
	mr, nr := mk.mr, mk.nr
	kerns := mk.skinny[0]
	if skinnyPackedL2() {
		kerns = mk.skinny[1]
	}
	gs, nbig := skinnyGroups(g.m, mr)
	groups := (g.m + mr - 1) / mr
	kc := mk.kcFor(g.k) // the blocked route's inner blocks: its bits
	buf.tile = grow(buf.tile, mr*nr)
	for j0 := 0; j0 < g.n; j0 += nr {
		panel := packed[j0*kp:]
		w := min(nr, g.n-j0)
		for p0 := 0; p0 < g.k; p0 += kc {
			kb := min(kc, g.k-p0)
			beta := g.beta
			if p0 > 0 {
				beta = 1 // the passes after the first add to C
			}
			// The next pass: this panel's next rows, or the next
			// panel's first.
			next, nkb := -1, 0
			switch {
			case p0+kc < g.k:
				next, nkb = j0*kp+(p0+kc)*nr, min(kc, g.k-p0-kc)
			case j0+nr < g.n:
				next, nkb = (j0+nr)*kp, min(kc, g.k)
			}
			lps, share := 0, 0
			if next >= 0 {
				lps, share = skinnyPackedLines(nkb, nr, groups)
			}
			b := &panel[p0*nr]
			for grp, i0 := 0, 0; i0 < g.m; grp++ {
				r := groupRows(grp, gs, nbig)
				pf := b
				switch {
				case groups == 1:
					// One group: its own stream, skinnyPackedAhead
					// bytes ahead, a row's lines a step.
					lps = 0
					if at := j0*kp + p0*nr + skinnyPackedAhead(nr, r)/4; at < len(packed) {
						lps, pf = nr/16, &packed[at]
					}
				case lps > 0:
					pf = &packed[next+min(grp*share*16, nkb*nr-1)]
				}
				kern := kerns[r-1]
				a := &g.a[i0*g.lda+p0]
				c := g.c[i0*g.ldc+j0:]
				if w == nr {
					kern(kb, a, g.lda, b, &c[0], g.ldc, g.alpha, beta, pf, lps)
				} else {
					t := buf.tile[:r*nr]
					if beta != 0 {
						tileIn(t, nr, c, g.ldc, r, w)
					}
					kern(kb, a, g.lda, b, &t[0], nr, g.alpha, beta, pf, lps)
					tileOut(c, g.ldc, t, nr, r, w)
				}
				i0 += r
			}
		}
	}
}

// skinnyStrided reports whether runPacked takes the strided skinny route:
// op(B) = B as is and read in place (packed nil: a Gemm that no skinny
// product took, or a PackedB.Ref), A as is with at most skinnyMaxRows rows,
// not banded, a micro-kernel with the route's kernels, and B within
// skinnyBytes: in cache, where its rows skinnyBytes apart cost nothing (from
// memory Gemm's skinny routes read B in address order instead).
func (g *gemmOp) skinnyStrided(packed []float32) bool {
	return packed == nil && !g.transA && !g.transB && !g.banded && g.micro.skinnyStrided != nil &&
		g.micro.skinny[0] != nil && g.m <= skinnyMaxRows && 4*((g.k-1)*g.ldb+g.n) <= skinnyBytes
}

// runSkinnyStrided computes g by the strided skinny route: runSkinnyPacked's
// order (panels of nr columns, passes of kcFor rows, the groups of rows of A
// over each pass) with the whole panels of B read where they are and the
// last, partial one packed (columns past n zero) into buf.b pass by pass and
// computed through buf.tile: nothing of A is packed, no row padded, and every
// element of C gets the blocked route's bits.
func (g *gemmOp) runSkinnyStrided(buf *gemmBuf) {
	mk := g.micro
	mr, nr := mk.mr, mk.nr
	gs, nbig := skinnyGroups(g.m, mr)
	kc := mk.kcFor(g.k)
	full := g.n / nr * nr
	for j0 := 0; j0 < full; j0 += nr {
		for p0 := 0; p0 < g.k; p0 += kc {
			kb := min(kc, g.k-p0)
			beta := g.beta
			if p0 > 0 {
				beta = 1 // the passes after the first add to C
			}
			b := &g.b[p0*g.ldb+j0]
			for grp, i0 := 0, 0; i0 < g.m; grp++ {
				r := groupRows(grp, gs, nbig)
				mk.skinnyStrided[r-1](kb, &g.a[i0*g.lda+p0], g.lda, b, g.ldb, &g.c[i0*g.ldc+j0], g.ldc, g.alpha, beta)
				i0 += r
			}
		}
	}
	if full == g.n {
		return
	}
	w := g.n - full
	buf.tile = grow(buf.tile, mr*nr)
	for p0 := 0; p0 < g.k; p0 += kc {
		kb := min(kc, g.k-p0)
		beta := g.beta
		if p0 > 0 {
			beta = 1
		}
		buf.b = grow(buf.b, kb*nr)
		packB(buf.b, false, g.b, g.ldb, p0, full, kb, w, nr, nil)
		for grp, i0 := 0, 0; i0 < g.m; grp++ {
			r := groupRows(grp, gs, nbig)
			c := g.c[i0*g.ldc+full:]
			t := buf.tile[:r*nr]
			if beta != 0 {
				tileIn(t, nr, c, g.ldc, r, w)
			}
			mk.skinny[0][r-1](kb, &g.a[i0*g.lda+p0], g.lda, &buf.b[0], &t[0], nr, g.alpha, beta, &buf.b[0], 0)
			tileOut(c, g.ldc, t, nr, r, w)
			i0 += r
		}
	}
}
