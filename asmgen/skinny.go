package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("skinny", genSkinnyFamily) }

// skinnyISAs are the ISAs of the skinny products: AVX2 in YMM and AVX-512 in
// ZMM (the products are FMA-bound at large batches, so the widest FMA pays).
var skinnyISAs = []*isa{avx2, {suffix: "AVX512", lanes: 16, vec: zmm, evex: true, keepZMM: true}}

// genSkinnyFamily emits the skinny products: few rows of X against a large
// matrix that is read from memory once per call (kernels/DESIGN.md,
// "Skinny products").
func genSkinnyFamily() {
	for _, s := range skinnyISAs {
		for _, l := range prefetchLevels {
			genSkinnyNT(s, l, skinnyNTTile(s))
		}
	}
	genSkinnyNT(skinnyISAs[1], pfL1, skinnyNTPairs)
	for _, t := range skinnyNTPanelTiles {
		genSkinnyNTPanel(skinnyISAs[1], t[0], t[1])
	}
	for _, s := range skinnyISAs {
		genSkinnyNN(s)
	}
}

// ntTile is a register tile of skinnyNT: rows of A (one from each chunk) ×
// rows of X (a group), one accumulator each, plus one register per row of A
// and one for the vector of X. The kernel has code for groups of least to
// group rows.
type ntTile struct{ rows, group, least int }

// skinnyNTTile returns the register tile of skinnyNT on s: 3 rows of A × 8
// of X on AVX-512, × 4 on AVX2, the most rows of X the vector registers
// hold beside the rows of A and X's vector. The wide group of AVX-512 makes
// fewer passes over each panel.
func skinnyNTTile(s *isa) ntTile {
	if s.evex {
		return ntTile{3, 8, 1}
	}
	return ntTile{3, 4, 1}
}

// skinnyNTPairs is the tile of skinnyNTPairsAVX512: 2 rows of A × 12 of X,
// so that groups of least to group rows of X (kernels' skinnyNTPairsLeast
// and skinnyNTPairsGroup) read A once as one group, two chunks side by
// side, where skinnyNTTile's takes two groups over panels in L2. A larger
// group would need another base register for X's rows (one per three),
// more than the general-purpose registers left hold.
var skinnyNTPairs = ntTile{2, 12, 9}

// paramF32 broadcasts the float32 argument name into a new vector of s.
func paramF32(s *isa, name string) VecVirtual {
	v := s.vec()
	asm.VBROADCASTSS(paramAddr(name), v)
	return v
}

// betaZero jumps to label when the float32 argument beta is ±0.
func betaZero(label string) {
	bits := asm.GP32()
	asm.MOVL(paramAddr("beta"), bits)
	asm.ANDL(U32(0x7fffffff), bits)
	asm.JZ(LabelRef(label))
}

// genSkinnyNT emits skinnyNT<ISA>(d, ldd, a, lda, x, ldx, rows, chunk, cols,
// batch, panel, pfw, gs, nbig, alpha, beta) for the tile tl of R rows of A ×
// G rows of X (skinnyNTTile's; skinnyNTPairs as skinnyNTPairs<ISA>):
// D = α·X·Aᵀ + β·D for the rows×cols A, batch×cols X and batch×rows D
// (strides in elements; β = ±0 never reads D). A's first R·chunk rows are R
// chunks of chunk rows, read side by side: step r of a tile takes rows
// r + i·chunk (i < R), so that A streams as R sequences in address order.
// They go in panels of up to `panel` steps (from Go: a panel stays in L2
// while every group of X passes over it, so A comes from memory once), then
// the rows after the chunks one at a time. In a panel, each group of up to G
// rows of X takes the tiles, each tile's dot products in registers over the
// whole of cols, reduced horizontally at its end (AVX-512's R-row tiles all
// together, columnSums). A load of a line of an R-row tile is paired with a prefetch
// (PREFETCHT0; PREFETCHT1 for skinnyNTL2<ISA>, lvl pfL2) of the same line one
// panel ahead, in the group's window of the steps only
// (pfw steps per group, resetWindow; the steps before, in and after it are
// three loops), so the next panel's lines are prefetched once, spread over
// all groups. The AVX2 kernel needs cols ≥ 8: its tails reload the last full
// vector and mask it.
func genSkinnyNT(s *isa, lvl pfLevel, tl ntTile) {
	base := "skinnyNT"
	if tl != skinnyNTTile(s) {
		base += "Pairs"
	}
	name := s.name(base + lvl.suffix())
	TEXT(name, NOSPLIT, "func(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, chunk, cols, batch, panel, pfw, gs, nbig int, alpha, beta float32)")
	doc := name + " sets D = α·X·Aᵀ + β·D for the rows×cols A, batch×cols X and batch×rows D, reading A once."
	if tl.least > 1 {
		doc += fmt.Sprintf(" It takes one group (gs = batch, nbig = 1) of %d to %d rows.", tl.least, tl.group)
	}
	asm.Doc(doc)
	R, G := tl.rows, tl.group
	regs := 16
	if s.evex {
		regs = 32
	}
	if R < 2 || R > 3 || R*G+R+1 > regs {
		panic(fmt.Sprintf("skinnyNT: no %d×%d tile", R, G))
	}
	curLanes = s.lanes
	local := func() Mem { return asm.AllocLocal(8) }
	fetch := func(m Mem) GPVirtual {
		r := asm.GP64()
		asm.MOVQ(m, r)
		return r
	}
	stepsLeft, singlesLeft, batchLeft, bigLeft := local(), local(), local(), local()
	panelA, panelD, panelSteps, panelSingles, stepsTotal, singlesTotal := local(), local(), local(), local(), local(), local()
	pfDist, chunkA, chunkD, pfHi, pfLo := local(), local(), local(), local(), local()

	var t tail
	if s.evex {
		rem := load(asm.Param("cols"))
		asm.ANDQ(U32(s.lanes-1), rem)
		asm.JZ(LabelRef("maskDone"))
		t = s.tailMask(rem)
		asm.Label("maskDone")
	}
	bytesOf := func(name string) GPVirtual {
		r := load(asm.Param(name))
		asm.SHLQ(U8(2), r)
		return r
	}
	{
		r := bytesOf("lda")
		p := load(asm.Param("panel"))
		asm.IMULQ(r, p)
		asm.MOVQ(p, pfDist)
		c := load(asm.Param("chunk"))
		asm.IMULQ(c, r)
		asm.MOVQ(r, chunkA)
		asm.SHLQ(U8(2), c)
		asm.MOVQ(c, chunkD)
	}

	// tile emits the nb×nr block of D for the A rows at ap, X rows at xp
	// and the D element at dp: a step's rows r + i·chunk (nr = R) or one
	// row. Rows are addressed as base + (0, 1 or 2)·stride from one base
	// per three rows, the stride chunkA bytes for A's rows; the bases move
	// along the rows. Only R-row tiles prefetch.
	tile := func(pfx string, nr, nb int, ap, xp, dp GPVirtual) {
		ldaB, ldxB := fetch(chunkA), bytesOf("ldx")
		bases := func(p GPVirtual, st GPVirtual, n int) []GPVirtual {
			var bs []GPVirtual
			for i := 0; i < n; i += 3 {
				b := asm.GP64()
				if i == 0 {
					asm.MOVQ(p, b)
				} else {
					asm.LEAQ(Mem{Base: bs[len(bs)-1], Index: st, Scale: 2}, b)
					asm.ADDQ(st, b)
				}
				bs = append(bs, b)
			}
			return bs
		}
		ab, xb := bases(ap, ldaB, nr), bases(xp, ldxB, nb)
		acc := make([][]VecVirtual, nr)
		for i := range acc {
			acc[i] = make([]VecVirtual, nb)
			for j := range acc[i] {
				acc[i][j] = s.vec()
				s.zero(acc[i][j])
			}
		}
		av := make([]VecVirtual, nr)
		for i := range av {
			av[i] = s.vec()
		}
		fma := func(load func(m Mem, v VecVirtual)) {
			for i := 0; i < nr; i++ {
				load(rowMem(ab, ldaB, i), av[i])
			}
			for j := 0; j < nb; j++ {
				xv := s.vec()
				load(rowMem(xb, ldxB, j), xv)
				for i := 0; i < nr; i++ {
					asm.VFMADD231PS(av[i], xv, acc[i][j])
				}
			}
		}
		advance := func(by Op) {
			for _, b := range append(append([]GPVirtual{}, ab...), xb...) {
				asm.ADDQ(by, b)
			}
		}
		// The steps count down from n = cols/lanes in three phases: before
		// this group's prefetch window (n ≥ count > hi), in it (hi ≥ count
		// > lo) and after it, hi and lo clamped to [0, n]; only the middle
		// phase prefetches, so no step tests the window.
		n := load(asm.Param("cols"))
		asm.SHRQ(U8(log2(s.lanes)), n)
		asm.JZ(LabelRef(pfx + "Tail"))
		clamp := func(m Mem) GPVirtual {
			r, z := asm.GP64(), asm.GP64()
			asm.MOVQ(m, r)
			asm.XORQ(z, z)
			asm.TESTQ(r, r)
			asm.CMOVQLT(z, r)
			asm.CMPQ(r, n)
			asm.CMOVQGT(n, r)
			return r
		}
		hi, lo := clamp(pfHi), clamp(pfLo)
		asm.SUBQ(hi, n)  // the steps before the window
		asm.SUBQ(lo, hi) // the steps in it; lo: the steps after it
		pf := asm.GP64()
		phase := func(name string, cnt GPVirtual, prefetch bool) {
			asm.TESTQ(cnt, cnt)
			asm.JZ(LabelRef(name + "End"))
			if prefetch {
				// pf: one panel ahead of the tile's first row.
				// Prefetches never fault.
				asm.MOVQ(pfDist, pf)
				asm.ADDQ(ab[0], pf)
			}
			asm.Label(name)
			fma(func(m Mem, v VecVirtual) { asm.VMOVUPS(m, v) })
			if prefetch {
				// One prefetch per row of the tile and per line:
				// every other step on AVX2, whose vectors are half
				// a line.
				if !s.evex {
					asm.TESTQ(U32(32), pf)
					asm.JNZ(LabelRef(name + "NoPF"))
				}
				for i := 0; i < nr; i++ {
					lvl.prefetch(rowMem([]GPVirtual{pf}, ldaB, i))
				}
				asm.Label(name + "NoPF")
				asm.ADDQ(U32(s.bytes()), pf)
			}
			advance(U32(s.bytes()))
			asm.DECQ(cnt)
			asm.JNZ(LabelRef(name))
			asm.Label(name + "End")
		}
		phase(pfx+"Before", n, false)
		phase(pfx+"Window", hi, nr == R)
		phase(pfx+"After", lo, false)

		asm.Label(pfx + "Tail")
		rem := load(asm.Param("cols"))
		asm.ANDQ(U32(s.lanes-1), rem)
		asm.JZ(LabelRef(pfx + "Reduce"))
		if s.evex {
			fma(func(m Mem, v VecVirtual) { asm.VMOVUPS_Z(m, t.k, v) })
		} else {
			// The last full vector of each row, which ends at the row's
			// end; tailmask<> at rem: its 8 int32s end with rem all-ones
			// lanes.
			sh := asm.GP64()
			asm.LEAQ(Mem{Base: rem, Index: rem, Scale: 2, Disp: 0}, sh)
			asm.ADDQ(rem, sh)
			asm.SUBQ(U32(s.bytes()), sh)
			advance(sh)
			base := asm.GP64()
			asm.LEAQ(tailTable(), base)
			mask := Mem{Base: base, Index: rem, Scale: 4}
			fma(func(m Mem, v VecVirtual) {
				asm.VMOVUPS(m, v)
				asm.VANDPS(mask, v, v)
			})
		}

		asm.Label(pfx + "Reduce")
		var sums []VecVirtual
		if s.evex && nr == R {
			sums = columnSums(fmt.Sprintf("%sperm%d", name, nb), acc)
		}
		if sums == nil {
			sums = make([]VecVirtual, nb)
		}
		for j := 0; j < nb && sums[j] == nil; j++ {
			switch nr {
			case 3:
				sums[j] = s.hsum4(acc[0][j], acc[1][j], acc[2][j], acc[2][j])
			case 1:
				sums[j] = s.hsum(acc[0][j])
			default:
				panic(fmt.Sprintf("skinnyNT: no reduction for %d-row tiles", nr))
			}
		}
		// move writes the nr sums of v to the D elements m + i·chunkD
		// (i < nr), or with load reads them into v.
		var cd GPVirtual
		if nr > 1 {
			cd = fetch(chunkD)
		}
		move := func(v VecVirtual, m Mem, load bool) {
			at := func(i int) Mem { return Mem{Base: m.Base, Index: cd, Scale: uint8(i)} }
			if load {
				asm.VMOVSS(m, v)
			} else {
				asm.VMOVSS(v, m)
			}
			for i := 1; i < nr; i++ {
				if load {
					asm.VINSERTPS(U8(i<<4), at(i), v, v)
				} else {
					asm.VEXTRACTPS(U8(i), v, at(i))
				}
			}
		}
		xs := &isa{lanes: 4, vec: asm.XMM, evex: s.evex}
		va := paramF32(xs, "alpha")
		lddB := bytesOf("ldd")
		q := asm.GP64()
		asm.MOVQ(dp, q)
		betaZero(pfx + "NoBeta")
		vb := paramF32(xs, "beta")
		for j := 0; j < nb; j++ {
			c := xs.vec()
			move(c, Mem{Base: q}, true)
			asm.VMULPS(vb, c, c)
			asm.VFMADD231PS(va, sums[j], c)
			move(c, Mem{Base: q}, false)
			if j+1 < nb {
				asm.ADDQ(lddB, q)
			}
		}
		asm.JMP(LabelRef(pfx + "Done"))
		asm.Label(pfx + "NoBeta")
		for j := 0; j < nb; j++ {
			asm.VMULPS(va, sums[j], sums[j])
			move(sums[j], Mem{Base: q}, false)
			if j+1 < nb {
				asm.ADDQ(lddB, q)
			}
		}
		asm.Label(pfx + "Done")
	}

	// The panels: ⌈chunk/panel⌉ of up to panel steps (R-row tiles), then
	// one of the rows − R·chunk rows after the chunks (single rows).
	{
		pa, pd := load(asm.Param("a").Base()), load(asm.Param("d").Base())
		asm.MOVQ(pa, panelA)
		asm.MOVQ(pd, panelD)
		c, r := load(asm.Param("chunk")), load(asm.Param("rows"))
		asm.MOVQ(c, stepsTotal)
		asm.IMUL3Q(U32(R), c, c)
		asm.SUBQ(c, r)
		asm.MOVQ(r, singlesTotal)
	}
	asm.Label("panel")
	{
		pr, lim, zero := asm.GP64(), load(asm.Param("panel")), asm.GP64()
		asm.XORQ(zero, zero)
		asm.MOVQ(stepsTotal, pr)
		asm.CMPQ(pr, lim)
		asm.CMOVQGT(lim, pr)
		asm.MOVQ(pr, panelSteps)
		asm.MOVQ(zero, panelSingles)
		asm.TESTQ(pr, pr)
		asm.JNZ(LabelRef("panelSet"))
		// The single rows: at row and D column R·chunk.
		n := asm.GP64()
		asm.MOVQ(singlesTotal, n)
		asm.TESTQ(n, n)
		asm.JZ(LabelRef("done"))
		asm.MOVQ(n, panelSingles)
		asm.MOVQ(zero, singlesTotal)
		for _, p := range []struct {
			off, at Mem
			param   string
		}{{chunkA, panelA, "a"}, {chunkD, panelD, "d"}} {
			off, base := fetch(p.off), load(asm.Param(p.param).Base())
			asm.LEAQ(Mem{Base: base, Index: off, Scale: uint8(R - 1)}, base)
			asm.ADDQ(off, base)
			asm.MOVQ(base, p.at)
		}
		asm.Label("panelSet")
		resetWindow(pfHi, pfLo)
	}
	xp, dBlk := load(asm.Param("x").Base()), asm.GP64()
	asm.MOVQ(panelD, dBlk)
	bl := load(asm.Param("batch"))
	asm.MOVQ(bl, batchLeft)
	startGroups(bigLeft)
	for nb := G; nb >= tl.least; nb-- {
		pfx := fmt.Sprintf("b%d", nb)
		asm.Label(pfx)
		groupGate(pfx, nb, batchLeft, bigLeft)
		ap, dp := asm.GP64(), asm.GP64()
		asm.MOVQ(panelA, ap)
		asm.MOVQ(dBlk, dp)
		for _, c := range [][2]Mem{{panelSteps, stepsLeft}, {panelSingles, singlesLeft}} {
			r := asm.GP64()
			asm.MOVQ(c[0], r)
			asm.MOVQ(r, c[1])
		}
		for _, tr := range []struct {
			nr   int
			left Mem
		}{{R, stepsLeft}, {1, singlesLeft}} {
			rp := fmt.Sprintf("%sr%d", pfx, tr.nr)
			asm.Label(rp)
			asm.CMPQ(tr.left, U32(0))
			asm.JE(LabelRef(rp + "End"))
			tile(rp+"t", tr.nr, nb, ap, xp, dp)
			// A step or a single row: the next row of A, the next
			// column of D.
			asm.ADDQ(bytesOf("lda"), ap)
			asm.ADDQ(U32(4), dp)
			asm.DECQ(tr.left)
			asm.JMP(LabelRef(rp))
			asm.Label(rp + "End")
		}
		for _, p := range []struct {
			name string
			r    GPVirtual
		}{{"ldx", xp}, {"ldd", dBlk}} {
			st := load(asm.Param(p.name))
			asm.IMUL3Q(U32(4*nb), st, st)
			asm.ADDQ(st, p.r)
		}
		nextWindow(pfHi, pfLo)
		groupDone(pfx, bigLeft)
		asm.SUBQ(U32(nb), batchLeft)
		asm.JMP(LabelRef(pfx))
		asm.Label(pfx + "End")
	}
	{
		pr := asm.GP64()
		asm.MOVQ(panelSteps, pr)
		st := bytesOf("lda")
		asm.IMULQ(pr, st)
		asm.ADDQ(st, panelA)
		asm.SUBQ(pr, stepsTotal)
		asm.SHLQ(U8(2), pr)
		asm.ADDQ(pr, panelD)
		asm.JMP(LabelRef("panel"))
	}
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()
}

// The rows of X go in groups of balanced sizes, from Go: nbig groups of gs
// rows, then groups of gs − 1 (⌈batch/G⌉ groups whose sizes differ by at
// most one, so that each group's share of the prefetch window matches its
// share of the work). Each size has its own code, the sizes in descending
// order: startGroups sets the count of big groups, groupGate enters the code
// of nb rows while the next group has nb rows, groupDone counts a group.

func startGroups(bigLeft Mem) {
	n := load(asm.Param("nbig"))
	asm.MOVQ(n, bigLeft)
}

func groupGate(pfx string, nb int, batchLeft, bigLeft Mem) {
	asm.CMPQ(batchLeft, U32(nb))
	asm.JB(LabelRef(pfx + "End"))
	want := load(asm.Param("gs"))
	asm.CMPQ(bigLeft, U32(0))
	asm.JNE(LabelRef(pfx + "Big"))
	asm.DECQ(want)
	asm.Label(pfx + "Big")
	asm.CMPQ(want, U32(nb))
	asm.JNE(LabelRef(pfx + "End"))
}

func groupDone(pfx string, bigLeft Mem) {
	asm.CMPQ(bigLeft, U32(0))
	asm.JE(LabelRef(pfx + "Small"))
	asm.DECQ(bigLeft)
	asm.Label(pfx + "Small")
}

// resetWindow sets skinnyNT's prefetch window of the first group of rows of
// X: the steps counted down from cols/lanes vectors while hi ≥ count > lo,
// hi = cols/lanes and lo = hi − pfw. Each following group takes the next pfw
// steps (nextWindow), so the prefetches of the next panel are spread over
// all its groups (pfw = ⌈steps/groups⌉, from Go) instead of issued in a
// burst by the first.
func resetWindow(hi, lo Mem) {
	n, w := load(asm.Param("cols")), load(asm.Param("pfw"))
	asm.SHRQ(U8(log2(curLanes)), n)
	asm.MOVQ(n, hi)
	asm.SUBQ(w, n)
	asm.MOVQ(n, lo)
}

// nextWindow moves the prefetch window to the next group.
func nextWindow(hi, lo Mem) {
	w := load(asm.Param("pfw"))
	asm.SUBQ(w, hi)
	asm.SUBQ(w, lo)
}

// curLanes is the lanes of the ISA being generated (resetWindow's vector
// count for skinnyNT).
var curLanes int

// rowMem returns the address of row i of rows addressed from bases, one per
// three rows, at stride st bytes: bases[i/3] + (i mod 3)·st.
func rowMem(bases []GPVirtual, st GPVirtual, i int) Mem {
	m := Mem{Base: bases[i/3]}
	if i%3 > 0 {
		m.Index, m.Scale = st, uint8(i%3)
	}
	return m
}

// log2 returns the base-2 logarithm of the power of two n.
func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

// skinnyNNRunLines is the run of lines per row of W from which a strip of
// skinnyNN leaves the next strip to the hardware prefetcher: the strips as
// wide as the registers hold of one or two rows of X on AVX-512 read 15 and
// 10 consecutive lines of each row and do not prefetch in software.
const skinnyNNRunLines = 10

// skinnyNNWalkSlots is the most lines skinnyNN's prefetch walk takes per
// step (lps ≤ 3 from Go: a strip's row of 3 ZMM is 3 lines).
const skinnyNNWalkSlots = 3

// skinnyNNTile returns the register tile of skinnyNN on s: rows of X ×
// vectors of columns of D, one accumulator each, plus one register per
// vector of W and one for the broadcast element of X: 8×3 (24 + 3 + 1 of 32)
// on AVX-512, 4×3 (12 + 3 + 1 of 16) on AVX2.
func skinnyNNTile(s *isa) (group, vectors int) {
	if s.evex {
		return 8, 3
	}
	return 4, 3
}

// genSkinnyNN emits skinnyNN<ISA>(d, ldd, x, ldx, w, ldw, batch, k, n, pf,
// pfRows, pfRowBytes, lps, next, gs, nbig, alpha, beta): D = α·X·W + β·D for
// the batch×k X, k×n W and batch×n D (strides in elements; β = ±0 never
// reads D), all of W or one block of Go's sequence (kernels/skinny.go). W
// goes in strips of V vectors of columns; a batch of one group of nb rows
// whose strips as wide as the registers hold are wider first takes those
// (nb ≤ 2 on AVX2, ≤ 6 on AVX-512), so that each row of W is read in longer
// runs. For each strip,
// each group of up to G rows of X accumulates its block of D in registers
// over all k rows of the strip (one load of W per vector, one broadcast of X
// per row of the group). Leftover columns take one-vector strips, then a
// last partial vector: on AVX-512 under an opmask, on AVX2 as the last full
// vector of the row (n ≥ 8 required), of which only the new columns are
// stored. With next ≠ 0 (one group over all of W), the loads of a row of a
// strip narrower than skinnyNNRunLines come with PREFETCHT0s of the next
// strip's lines in that row; with next = 0, those of a full strip of V
// vectors come with up to lps PREFETCHT0s (skinnyNNWalkSlots) of a walk over
// the block Go names (pfRows rows of pfRowBytes from pf, the next block of
// the sequence), line by line in address order, so that W comes from memory
// in runs of a block's row.
func genSkinnyNN(s *isa) {
	name := s.name("skinnyNN")
	TEXT(name, NOSPLIT, "func(d []float32, ldd int, x []float32, ldx int, w []float32, ldw int, batch, k, n int, pf []float32, pfRows, pfRowBytes, lps, next, gs, nbig int, alpha, beta float32)")
	asm.Doc(name + " sets D = α·X·W + β·D for the batch×k X, k×n W and batch×n D, reading W once.")
	G, V := skinnyNNTile(s)
	col, batchLeft, bigLeft := asm.AllocLocal(8), asm.AllocLocal(8), asm.AllocLocal(8)
	pfPtr, pfCol, pfLeft, pfLps, pfJump := asm.AllocLocal(8), asm.AllocLocal(8), asm.AllocLocal(8), asm.AllocLocal(8), asm.AllocLocal(8)
	spill := asm.AllocLocal(4 * s.lanes)

	var t tail
	if s.evex {
		rem := load(asm.Param("n"))
		asm.ANDQ(U32(s.lanes-1), rem)
		asm.JZ(LabelRef("maskDone"))
		t = s.tailMask(rem)
		asm.Label("maskDone")
	}
	bytesOf := func(name string) GPVirtual {
		r := load(asm.Param(name))
		asm.SHLQ(U8(2), r)
		return r
	}

	// The prefetch walk: pfRows rows of pfRowBytes (a multiple of 64) at
	// stride ldw from pf, line by line in address order, lps lines per
	// step of the full strips' rows, until they are done (lps = 0 from then
	// on).
	{
		p, c, r, l := load(asm.Param("pf").Base()), load(asm.Param("pfRowBytes")), load(asm.Param("pfRows")), load(asm.Param("lps"))
		asm.MOVQ(p, pfPtr)
		asm.MOVQ(c, pfCol)
		asm.MOVQ(r, pfLeft)
		asm.MOVQ(l, pfLps)
		j := bytesOf("ldw")
		asm.SUBQ(c, j)
		asm.MOVQ(j, pfJump)
	}

	// kind of strip: full vectors, or the last partial vector (masked on
	// AVX-512, shifted to end at n on AVX2).
	const (
		full = iota
		partial
	)
	// block emits the nb×nv block of D at column offset colB (bytes) for the
	// X rows at xp and the D row at dp.
	// prefetch: the next strip's lines in each row (where next ≠ 0) or the
	// walk; next: the next strip's lines only.
	block := func(pfx string, nb, nv, kind int, colB, xp, dp GPVirtual, prefetch, next bool) {
		puts := 0
		ldxB := bytesOf("ldx")
		var xb []GPVirtual
		for j := 0; j < nb; j += 3 {
			b := asm.GP64()
			if j == 0 {
				asm.MOVQ(xp, b)
			} else {
				asm.LEAQ(Mem{Base: xb[len(xb)-1], Index: ldxB, Scale: 2}, b)
				asm.ADDQ(ldxB, b)
			}
			xb = append(xb, b)
		}
		acc := make([][]VecVirtual, nb)
		for j := range acc {
			acc[j] = make([]VecVirtual, nv)
			for v := range acc[j] {
				acc[j][v] = s.vec()
				s.zero(acc[j][v])
			}
		}
		wv := make([]VecVirtual, nv)
		for v := range wv {
			wv[v] = s.vec()
		}
		wp := load(asm.Param("w").Base())
		asm.ADDQ(colB, wp)
		ldwB := bytesOf("ldw")
		cnt := load(asm.Param("k"))
		// The walk's address and the bytes left in its row, in registers
		// over the loop.
		var pp, pc GPVirtual
		if prefetch {
			pp, pc = asm.GP64(), asm.GP64()
			asm.MOVQ(pfPtr, pp)
			asm.MOVQ(pfCol, pc)
		}
		asm.Label(pfx + "Loop")
		for v := 0; v < nv; v++ {
			m := Mem{Base: wp, Disp: v * s.bytes()}
			if kind == partial && s.evex {
				asm.VMOVUPS_Z(m, t.k, wv[v])
			} else {
				asm.VMOVUPS(m, wv[v])
			}
		}
		if prefetch || next {
			asm.CMPQ(load(asm.Param("next")), U32(0))
			asm.JE(LabelRef(pfx + "Walk"))
			for l := 0; l < (nv*s.bytes()+63)/64; l++ {
				asm.PREFETCHT0(Mem{Base: wp, Disp: nv*s.bytes() + 64*l})
			}
			asm.JMP(LabelRef(pfx + "NoPF"))
			asm.Label(pfx + "Walk")
		}
		if prefetch {
			for l := 0; l < skinnyNNWalkSlots; l++ {
				slot := fmt.Sprintf("%sPF%d", pfx, l)
				asm.CMPQ(pfLps, U32(l))
				asm.JLE(LabelRef(pfx + "NoPF"))
				asm.PREFETCHT0(Mem{Base: pp})
				asm.ADDQ(U32(64), pp)
				asm.SUBQ(U32(64), pc)
				asm.JNZ(LabelRef(slot))
				// The end of a row: the next one, or the walk is done.
				asm.ADDQ(pfJump, pp)
				asm.Load(asm.Param("pfRowBytes"), pc)
				asm.DECQ(pfLeft)
				asm.JNZ(LabelRef(slot))
				asm.MOVQ(U32(0), pfLps)
				asm.Label(slot)
			}
		}
		if prefetch || next {
			asm.Label(pfx + "NoPF")
		}
		for j := 0; j < nb; j++ {
			b := s.vec()
			asm.VBROADCASTSS(rowMem(xb, ldxB, j), b)
			for v := 0; v < nv; v++ {
				asm.VFMADD231PS(wv[v], b, acc[j][v])
			}
		}
		asm.ADDQ(ldwB, wp)
		for _, b := range xb {
			asm.ADDQ(U32(4), b)
		}
		asm.DECQ(cnt)
		asm.JNZ(LabelRef(pfx + "Loop"))
		if prefetch {
			asm.MOVQ(pp, pfPtr)
			asm.MOVQ(pc, pfCol)
		}

		va := paramF32(s, "alpha")
		lddB := bytesOf("ldd")
		q := asm.GP64()
		asm.MOVQ(dp, q)
		asm.ADDQ(colB, q)
		// put stores acc to D's row at q, v vectors in.
		put := func(a VecVirtual, v int) {
			m := Mem{Base: q, Disp: v * s.bytes()}
			switch {
			case kind == partial && s.evex:
				asm.VMOVUPS(a, t.k, m)
			case kind == partial:
				// The last n mod 8 lanes are new columns: store those
				// from a copy on the stack.
				asm.VMOVUPS(a, spill)
				rem, from := load(asm.Param("n")), asm.GP64()
				asm.ANDQ(U32(s.lanes-1), rem)
				asm.MOVQ(U32(s.lanes), from)
				asm.SUBQ(rem, from)
				lbl := fmt.Sprintf("%sPut%d", pfx, puts)
				puts++
				asm.Label(lbl)
				e := asm.GP32()
				asm.MOVL(Mem{Base: spill.Base, Disp: spill.Disp, Index: from, Scale: 4}, e)
				asm.MOVL(e, Mem{Base: q, Index: from, Scale: 4})
				asm.INCQ(from)
				asm.CMPQ(from, U32(s.lanes))
				asm.JB(LabelRef(lbl))
			default:
				asm.VMOVUPS(a, m)
			}
		}
		// get loads D's row at q, v vectors in (the partial vector masked
		// on AVX-512; on AVX2 the whole last vector, inside the row).
		get := func(c VecVirtual, v int) {
			m := Mem{Base: q, Disp: v * s.bytes()}
			if kind == partial && s.evex {
				asm.VMOVUPS_Z(m, t.k, c)
				return
			}
			asm.VMOVUPS(m, c)
		}
		betaZero(pfx + "NoBeta")
		vb := paramF32(s, "beta")
		for j := 0; j < nb; j++ {
			for v := 0; v < nv; v++ {
				c := s.vec()
				get(c, v)
				asm.VMULPS(vb, c, c)
				asm.VFMADD231PS(va, acc[j][v], c)
				put(c, v)
			}
			if j+1 < nb {
				asm.ADDQ(lddB, q)
			}
		}
		asm.JMP(LabelRef(pfx + "Done"))
		asm.Label(pfx + "NoBeta")
		for j := 0; j < nb; j++ {
			for v := 0; v < nv; v++ {
				asm.VMULPS(va, acc[j][v], acc[j][v])
				put(acc[j][v], v)
			}
			if j+1 < nb {
				asm.ADDQ(lddB, q)
			}
		}
		asm.Label(pfx + "Done")
	}

	// strips emits the loop over strips of nv vectors of the given kind
	// from column col while at least `need` columns are left.
	strips := func(pfx string, nv, kind, only int) {
		asm.Label(pfx)
		left := load(asm.Param("n"))
		asm.SUBQ(col, left)
		switch kind {
		case full:
			asm.CMPQ(left, U32(nv*s.lanes))
			asm.JB(LabelRef(pfx + "End"))
		case partial:
			asm.TESTQ(left, left)
			asm.JZ(LabelRef(pfx + "End"))
		}
		xp, dp := load(asm.Param("x").Base()), load(asm.Param("d").Base())
		bl := load(asm.Param("batch"))
		asm.MOVQ(bl, batchLeft)
		startGroups(bigLeft)
		for nb := G; nb >= 1; nb-- {
			if only > 0 && nb != only {
				continue
			}
			gp := fmt.Sprintf("%sb%d", pfx, nb)
			asm.Label(gp)
			groupGate(gp, nb, batchLeft, bigLeft)
			colB := asm.GP64()
			asm.MOVQ(col, colB)
			if kind == partial && !s.evex {
				// The last full vector of the row: n ≥ 8.
				n := load(asm.Param("n"))
				asm.MOVQ(n, colB)
				asm.SUBQ(U32(s.lanes), colB)
			}
			asm.SHLQ(U8(2), colB)
			block(gp+"k", nb, nv, kind, colB, xp, dp, kind == full && only == 0, kind == full && only > 0 && nv*s.bytes() < 64*skinnyNNRunLines)
			for _, p := range []struct {
				name string
				r    GPVirtual
			}{{"ldx", xp}, {"ldd", dp}} {
				st := load(asm.Param(p.name))
				asm.IMUL3Q(U32(4*nb), st, st)
				asm.ADDQ(st, p.r)
			}
			groupDone(gp, bigLeft)
			asm.SUBQ(U32(nb), batchLeft)
			asm.JMP(LabelRef(gp))
			asm.Label(gp + "End")
		}
		c := load(asm.Param("n"))
		if kind == full {
			asm.MOVQ(col, c)
			asm.ADDQ(U32(nv*s.lanes), c)
		}
		asm.MOVQ(c, col)
		if kind == full {
			asm.JMP(LabelRef(pfx))
		}
		asm.Label(pfx + "End")
	}
	z := asm.GP64()
	asm.XORQ(z, z)
	asm.MOVQ(z, col)
	// A batch of one group of nb rows takes strips as wide as the
	// registers hold (nb+1 per vector: nb accumulators and W's vector, and
	// one for the broadcast of X) first, where they are wider than V; then
	// the strips of every batch.
	regs := 15
	if s.evex {
		regs = 31
	}
	for nb := G; nb >= 1; nb-- {
		nv := regs / (nb + 1)
		if nv <= V {
			continue
		}
		skip := fmt.Sprintf("solo%dSkip", nb)
		asm.CMPQ(load(asm.Param("batch")), U32(nb))
		asm.JNE(LabelRef(skip))
		strips(fmt.Sprintf("solo%d", nb), nv, full, nb)
		asm.JMP(LabelRef("wide"))
		asm.Label(skip)
	}
	strips("wide", V, full, 0)
	strips("one", 1, full, 0)
	strips("last", 1, partial, 0)
	asm.VZEROUPPER()
	asm.RET()
}

// columnSums returns, for the ZMM accumulators acc[i][j] (i < len(acc) ≤ 4
// rows of A, j < len(acc[0]) rows of X), one XMM per j holding the lane sums
// of acc[0][j], acc[1][j], … in its first len(acc) lanes. It reduces all the
// accumulators together as a tree, halving the lanes per accumulator at each
// level with two shuffles and one add per pair of vectors (512 → 256 by
// 256-bit halves, → 128 by 128-bit blocks, → 64 and → 32 within blocks),
// where a sum per accumulator would take two ops per vector more at the
// first level and a lane wasted per four. The generator follows which
// accumulator each lane holds; a permute (table name, emitted here) then
// gathers each j's sums into one 128-bit block.
func columnSums(name string, acc [][]VecVirtual) []VecVirtual {
	type vec struct {
		v   VecVirtual
		ids [16]int // the accumulator each lane sums a part of
	}
	nr, nb := len(acc), len(acc[0])
	var vs []vec
	for j := 0; j < nb; j++ {
		for i := 0; i < nr; i++ {
			var ids [16]int
			for l := range ids {
				ids[l] = i + 4*j
			}
			vs = append(vs, vec{acc[i][j], ids})
		}
	}
	// block(imm) selects, as VSHUFF32X4 does, the 128-bit blocks imm[1:0],
	// imm[3:2] of p and imm[5:4], imm[7:6] of q; lane(imm) as VSHUFPS does
	// within each block.
	block := func(imm int, p, q [16]int) (r [16]int) {
		for b := 0; b < 4; b++ {
			src := p
			if b >= 2 {
				src = q
			}
			sel := imm >> (2 * b) & 3
			copy(r[4*b:4*b+4], src[4*sel:4*sel+4])
		}
		return r
	}
	lane := func(imm int, p, q [16]int) (r [16]int) {
		for l := 0; l < 16; l++ {
			src := p
			if l%4 >= 2 {
				src = q
			}
			r[l] = src[l&^3+imm>>(2*(l%4))&3]
		}
		return r
	}
	levels := []struct {
		lo, hi int
		blocks bool
	}{{0x44, 0xee, true}, {0x88, 0xdd, true}, {0x44, 0xee, false}, {0x88, 0xdd, false}}
	for _, lv := range levels {
		var next []vec
		for k := 0; k < len(vs); k += 2 {
			p, q := vs[k], vs[min(k+1, len(vs)-1)]
			a, b := asm.ZMM(), asm.ZMM()
			var ia, ib [16]int
			if lv.blocks {
				asm.VSHUFF32X4(U8(lv.lo), q.v, p.v, a)
				asm.VSHUFF32X4(U8(lv.hi), q.v, p.v, b)
				ia, ib = block(lv.lo, p.ids, q.ids), block(lv.hi, p.ids, q.ids)
			} else {
				asm.VSHUFPS(U8(lv.lo), q.v, p.v, a)
				asm.VSHUFPS(U8(lv.hi), q.v, p.v, b)
				ia, ib = lane(lv.lo, p.ids, q.ids), lane(lv.hi, p.ids, q.ids)
			}
			if ia != ib {
				panic("columnSums: the halves of a level disagree")
			}
			asm.VADDPS(b, a, a)
			next = append(next, vec{a, ia})
		}
		vs = next
	}
	// Each lane now holds a whole sum. Output block t of vector m gathers
	// j = 4m+t: lane 4t+i takes accumulator (i, j) from vs[0] (indices
	// 0–15) or vs[1] (16–31).
	where := map[int]int{}
	for k := len(vs) - 1; k >= 0; k-- {
		for l, id := range vs[k].ids {
			where[id] = 16*k + l
		}
	}
	m := GLOBL(name, RODATA|NOPTR)
	outs := (nb + 3) / 4
	for o := 0; o < outs; o++ {
		for l := 0; l < 16; l++ {
			j, i := 4*o+l/4, min(l%4, nr-1)
			idx, ok := where[i+4*min(j, nb-1)]
			if !ok {
				panic("columnSums: a sum is lost")
			}
			DATA(64*o+4*l, U32(uint32(idx)))
		}
	}
	sums := make([]VecVirtual, nb)
	for o := 0; o < outs; o++ {
		r := asm.ZMM()
		asm.VMOVUPS(m.Offset(64*o), r)
		if len(vs) == 1 {
			asm.VPERMPS(vs[0].v, r, r)
		} else {
			asm.VPERMI2PS(vs[1].v, vs[0].v, r)
		}
		for t := 0; t < 4 && 4*o+t < nb; t++ {
			x := r.AsX().(VecVirtual)
			if t > 0 {
				x = asm.XMM()
				asm.VEXTRACTF32X4(U8(t), r, x)
			}
			sums[4*o+t] = x
		}
	}
	return sums
}
