package kernels

// The skinny products: few rows against a matrix too large for L2, read from
// memory once per call at memory bandwidth (kernels/DESIGN.md, "Skinny
// products"). MatVecBatch and Gemm(NoTrans, Trans) take skinnyNT (A's rows
// contiguous: tiles of rows of A × a group of rows of X, dot products in
// registers), Gemm(NoTrans, NoTrans) takes skinnyNN (W's rows contiguous: a
// strip of columns of C in registers for a group of rows of X, walking the
// inner dimension). The dispatch files decide, with the constants below.

// skinnyMaxRows is the most rows of X (and of C) that a skinny product takes.
const skinnyMaxRows = 32

// skinnyBytes is the span of the large matrix beyond which the skinny
// products are taken: this core's L2 (tests set it to 0 to take them at
// every size).
var skinnyBytes = skinnyL2()

// skinnyPanel returns the rows of A in a panel of skinnyNT for tiles of r
// rows: the rows whose bytes (at stride lda) fill an eighth of L2, a
// multiple of r and at least r. A panel stays in L2 while every group of
// rows of X passes over it, and the kernel prefetches one panel ahead.
func skinnyPanel(r, lda int) int {
	p := skinnyL2() / 8 / (4 * max(lda, 1))
	return max(r, p/r*r)
}

// skinnySpan reports whether the rows×cols matrix at stride lda spans more
// than skinnyBytes.
func skinnySpan(rows, cols, lda int) bool {
	if rows == 0 || cols == 0 {
		return false
	}
	return ((rows-1)*lda+cols)*4 > skinnyBytes
}
