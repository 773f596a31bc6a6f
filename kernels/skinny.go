package kernels

import "sync"

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
// products are taken (skinnyFrom in the dispatch files; tests set it to 0 to
// take them at every size).
var skinnyBytes = skinnyFrom()

// skinnyPanel returns the rows of A in a panel of skinnyNT for tiles of r
// rows: the rows whose bytes (at stride lda) fill a sixteenth of L2, a
// multiple of r and at least r. A panel stays in L2 while every group of
// rows of X passes over it, and the kernel prefetches one panel ahead.
func skinnyPanel(r, lda int) int {
	p := skinnyL2() / 16 / (4 * max(lda, 1))
	return max(r, p/r*r)
}

// skinnyNTChunks is the number of chunks skinnyNT reads A's rows in: rows
// r, r + q and r + 2q of A (q = rows/3) go in one tile, so that A streams from
// memory as three sequences in address order, each with its own hardware
// prefetch stream, where three adjacent rows would share theirs.
const skinnyNTChunks = 3

// skinnyNTPairsLeast and skinnyNTPairsGroup are the fewest and the most rows
// of X that skinnyNTPairsAVX512 takes, in one group (asmgen's skinnyNTPairs
// tile: 2 rows of A × 12 of X, with code for groups of 9 to 12 rows).
const (
	skinnyNTPairsLeast = 9
	skinnyNTPairsGroup = 12
)

// skinnyNTSteps returns the steps (one row of each chunk) of a panel of
// skinnyNT at stride lda for groups groups of rows of X: with one group, A
// is read once and a panel is only the prefetch distance, ahead bytes of
// each chunk (the route's ntAhead); with more, the panel spans a sixteenth
// of L2 (skinnyPanel's rows), which every group passes over while it stays
// in L2.
func skinnyNTSteps(lda, groups, ahead int) int {
	if groups == 1 {
		return max(1, ahead/(4*max(lda, 1)))
	}
	return max(1, skinnyPanel(skinnyNTChunks, lda)/skinnyNTChunks)
}

// skinnyNNCols is the columns of W in a block of skinnyNN: four strips of 3
// ZMM, 768 bytes (12 lines) of each row, so that the prefetches of the next
// block read W in runs of 12 lines where a strip's row is 3.
const skinnyNNCols = 192

// skinnyNNBlockRows returns the rows of W in a block of skinnyNN for k rows
// in all: the fewest blocks of equal rows that span up to a quarter of L2
// each, with the next block in L2 as it is prefetched.
func skinnyNNBlockRows(k int) int {
	most := max(1, skinnyL2()/4/(4*skinnyNNCols))
	blocks := (k + most - 1) / most
	return (k + blocks - 1) / blocks
}

// skinnyNNBand returns the rows of W in a band of skinnyNN's banded route
// (route.nnBands) for batch rows of X in groups of group: 8 while one
// group's strips are wider than 3 vectors (batch ≤ 6 on AVX-512, ≤ 2 on
// AVX2: the kernel's ⌊31/(B+1)⌋ ZMM or ⌊15/(B+1)⌋ YMM), 12 for 3-vector
// strips (measured on Zen 4: kernels/DESIGN.md).
func skinnyNNBand(batch, group int) int {
	regs := 31 // vector registers free for a strip: AVX-512
	if group == 4 {
		regs = 15 // AVX2
	}
	if batch <= group && regs/(batch+1) > 3 {
		return 8
	}
	return 12
}

// skinnyNNBandCols returns the columns of C that skinnyNN's banded route
// takes through all the bands of W before the next columns, from column c0
// of n, for batch rows of X in groups of group and an L2 of l2 bytes. Each
// band reads and writes the columns it covers in D. Bands of 8 rows
// (skinnyNNBand), and a D of at most half of L2, take all n at once. Bands
// of 12 over a larger D take blocks whose rows of D span an eighth of L2, in
// whole 3-ZMM strips (48 columns), so that the block of D stays in L2 across
// the bands instead of crossing L3 at every band; the rest of the row when
// fewer than 8 columns would be left after the block (AVX2's last vector
// needs 8).
func skinnyNNBandCols(batch, group, c0, n, l2 int) int {
	if skinnyNNBand(batch, group) == 8 || 4*batch*n <= l2/2 {
		return n - c0
	}
	cn := min(max(48, l2/8/(4*batch)/48*48), n-c0)
	if r := n - c0 - cn; r > 0 && r < 8 {
		cn = n - c0
	}
	return cn
}

// skinnyNNWalkSlots is the most lines skinnyNN's prefetch walk takes per
// step (asmgen's skinnyNNWalkSlots).
const skinnyNNWalkSlots = 3

// skinnyNNSpan returns the columns of the block of skinnyNN from column c0
// of n: skinnyNNCols, or the rest of the row when fewer than 8 columns would
// be left after it (AVX2's last vector needs 8).
func skinnyNNSpan(c0, n int) int {
	cn := min(skinnyNNCols, n-c0)
	if r := n - c0 - cn; r > 0 && r < 8 {
		cn = n - c0
	}
	return cn
}

// skinnyWindow returns w, the steps of each group's prefetch window.
// skinnyNT prefetches the next panel while it walks the columns in `steps`
// steps (vectors of A's rows); group g of the ⌈batch/group⌉ groups of rows
// of X prefetches in the steps [g·w, (g+1)·w) only, so the prefetches spread
// over the work of all groups and memory overlaps the FMAs instead of
// stalling the first group.
func skinnyWindow(steps, batch, group int) int {
	groups := (batch + group - 1) / group
	return max(1, (steps+groups-1)/groups)
}

// skinnyGroups splits batch ≥ 1 rows of X into ⌈batch/group⌉ groups of at
// most group rows whose sizes differ by at most one: nbig groups of gs rows
// first, then groups of gs − 1 (6 rows in groups of 4 are 3 + 3, not 4 + 2),
// so that the groups' shares of the work match their equal prefetch windows.
func skinnyGroups(batch, group int) (gs, nbig int) {
	g := (batch + group - 1) / group
	q, r := batch/g, batch%g
	if r == 0 {
		return q, g
	}
	return q + 1, r
}

// groupRows returns the rows of group grp of skinnyGroups' split (gs, nbig).
func groupRows(grp, gs, nbig int) int {
	if grp < nbig {
		return gs
	}
	return gs - 1
}

// skinnySpan reports whether the rows×cols matrix at stride lda spans more
// than skinnyBytes.
func skinnySpan(rows, cols, lda int) bool {
	if rows == 0 || cols == 0 {
		return false
	}
	return ((rows-1)*lda+cols)*4 > skinnyBytes
}

// skinnyJob is a skinny Gemm split by columns of C over goroutines: part p
// of parts computes the columns [cols(p), cols(p+1)), whole multiples of
// skinnySplitCols, each reading its own share of the large matrix.
type skinnyJob struct {
	g     gemmOp
	nt    bool
	parts int
	wg    sync.WaitGroup
}

// skinnySplitCols is the unit of the columns of C a split hands each part.
const skinnySplitCols = 64

var skinnyJobs = sync.Pool{New: func() any { return new(skinnyJob) }}

// cols returns the first column of part p.
func (j *skinnyJob) cols(p int) int {
	units := (j.g.n + skinnySplitCols - 1) / skinnySplitCols
	return min(j.g.n, units*p/j.parts*skinnySplitCols)
}

func (j *skinnyJob) run(p int) {
	g := &j.g
	c0, c1 := j.cols(p), j.cols(p+1)
	if c0 == c1 {
		return
	}
	if j.nt {
		skinnyNT(g.c[c0:], g.ldc, g.b[c0*g.ldb:], g.ldb, g.a, g.lda, c1-c0, g.k, g.m, g.alpha, g.beta)
		return
	}
	skinnyNN(g.c[c0:], g.ldc, g.a, g.lda, g.b[c0:], g.ldb, g.m, g.k, c1-c0, g.alpha, g.beta)
}

// runSkinny computes g through skinnyNT (nt) or skinnyNN, with split split
// over up to gemmParts goroutines by columns of C (at least skinnySplitCols
// each).
func (g *gemmOp) runSkinny(nt, split bool) {
	parts := 1
	if split {
		parts = min(gemmParts(g.m, g.n, g.k), (g.n+skinnySplitCols-1)/skinnySplitCols)
	}
	if parts <= 1 {
		if nt {
			skinnyNT(g.c, g.ldc, g.b, g.ldb, g.a, g.lda, g.n, g.k, g.m, g.alpha, g.beta)
		} else {
			skinnyNN(g.c, g.ldc, g.a, g.lda, g.b, g.ldb, g.m, g.k, g.n, g.alpha, g.beta)
		}
		return
	}
	j := skinnyJobs.Get().(*skinnyJob)
	j.g, j.nt, j.parts = *g, nt, parts
	runParallel(j, parts, &j.wg)
	j.g = gemmOp{}
	skinnyJobs.Put(j)
}
