package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// skinnyNTPanelTiles are the tiles of the panel kernels: ZMM of the panel
// × rows of A. One vector takes 16 rows (16 accumulators), or 12 for rows
// a multiple of 4 KiB apart (lines 4 KiB apart share an L1 set: 12 ways on
// Zen 5); two take 12 (24 accumulators, beside the panel's two vectors and
// two broadcasts of 32). kernels' skinnyNTPanelRows chooses among them.
var skinnyNTPanelTiles = [][2]int{{1, 16}, {1, 12}, {2, 12}}

// genSkinnyNTPanel emits skinnyNTPanel<16·v>x<R><ISA>(d, ldd, a, lda, xt,
// tiles, cols, batch, alpha, beta) on AVX-512: D = α·X·Aᵀ + β·D (β = ±0
// never reads D) for the first tiles·R rows of A (R ≤ 16) and the 1 ≤ batch
// ≤ 16·v rows of X, which Go packs transposed into the panel xt: row p of it,
// 16·v floats, holds X[j][p] in lane j and zeros past batch. A tile of R rows
// of A keeps the R×16·v block of Dᵀ in registers over all cols ≥ 1 columns:
// each step loads the panel's row (v vectors, from L1 or L2) and broadcasts
// one element of each of the R rows of A against it, so no dot product needs
// a reduction and A streams from memory as R sequences of 4 bytes a step.
// Each step also prefetches (PREFETCHT0) one line of the next tile, its rows
// line by line in address order, the walk starting over in that tile when it
// is done before the steps are (a tile spans R/16 lines a step); the last
// tile walks itself, so nothing past A is touched. Each tile's block is
// transposed in registers (transpose16), 16 rows of D at a time, and its
// rows stored with α and β; with two vectors a row, the second vector of
// each row of the block waits on the stack (768 B, a frame too large for
// NOSPLIT).
func genSkinnyNTPanel(s *isa, v, R int) {
	lanes := 16 * v
	name := s.name(fmt.Sprintf("skinnyNTPanel%dx%d", lanes, R))
	TEXT(name, 0, "func(d []float32, ldd int, a []float32, lda int, xt []float32, tiles, cols, batch int, alpha, beta float32)")
	asm.Doc(name + fmt.Sprintf(" sets D = α·X·Aᵀ + β·D for tiles of %d rows of A against the panel of Xᵀ xt (%d lanes a row).", R, lanes))
	var block Mem
	if v > 1 {
		block = asm.AllocLocal(64 * R)
	}
	tileP, dCol, left := asm.AllocLocal(8), asm.AllocLocal(8), asm.AllocLocal(8)
	span, jump, back := asm.AllocLocal(8), asm.AllocLocal(8), asm.AllocLocal(8)

	ldaB := load(asm.Param("lda"))
	asm.SHLQ(U8(2), ldaB)
	{
		p := load(asm.Param("a").Base())
		asm.MOVQ(p, tileP)
		z := asm.GP64()
		asm.XORQ(z, z)
		asm.MOVQ(z, dCol)
		t := load(asm.Param("tiles"))
		asm.MOVQ(t, left)
		// span: a row's bytes rounded up to lines; jump: from the end of
		// one row's walk to the next row's start; back: from the end of
		// the tile's walk to its first row.
		sp := load(asm.Param("cols"))
		asm.SHLQ(U8(2), sp)
		asm.ADDQ(U32(63), sp)
		asm.ANDQ(I32(-64), sp)
		asm.MOVQ(sp, span)
		j := asm.GP64()
		asm.MOVQ(ldaB, j)
		asm.SUBQ(sp, j)
		asm.MOVQ(j, jump)
		b := asm.GP64()
		asm.IMUL3Q(U32(R), ldaB, b)
		asm.MOVQ(b, back)
		asm.TESTQ(t, t)
		asm.JZ(LabelRef("done"))
	}

	asm.Label("tile")
	acc := make([][]VecVirtual, R)
	for r := range acc {
		acc[r] = make([]VecVirtual, v)
		for i := range acc[r] {
			acc[r][i] = s.vec()
			s.zero(acc[r][i])
		}
	}
	L := load(asm.Param("lda"))
	asm.SHLQ(U8(2), L)
	L3, L5, L7 := asm.GP64(), asm.GP64(), asm.GP64()
	asm.LEAQ(Mem{Base: L, Index: L, Scale: 2}, L3)
	asm.LEAQ(Mem{Base: L, Index: L, Scale: 4}, L5)
	asm.LEAQ(Mem{Base: L3, Index: L, Scale: 4}, L7)
	P, P8 := asm.GP64(), asm.GP64()
	asm.MOVQ(tileP, P)
	asm.LEAQ(Mem{Base: P, Index: L, Scale: 8}, P8)
	X := load(asm.Param("xt").Base())
	cnt := load(asm.Param("cols"))
	// The walk: the next tile, or this one for the last.
	pp, pc, prow := asm.GP64(), asm.GP64(), asm.GP64()
	asm.MOVQ(P, pp)
	asm.CMPQ(left, U32(1))
	asm.JE(LabelRef("walkSet"))
	asm.ADDQ(back, pp)
	asm.Label("walkSet")
	asm.MOVQ(span, pc)
	asm.MOVQ(U32(R), prow)

	// rowMem returns row r of the tile at the current column.
	rowAt := func(r int) Mem {
		base := P
		if r >= 8 {
			base, r = P8, r-8
		}
		switch r {
		case 0:
			return Mem{Base: base}
		case 1:
			return Mem{Base: base, Index: L, Scale: 1}
		case 2:
			return Mem{Base: base, Index: L, Scale: 2}
		case 3:
			return Mem{Base: base, Index: L3, Scale: 1}
		case 4:
			return Mem{Base: base, Index: L, Scale: 4}
		case 5:
			return Mem{Base: base, Index: L5, Scale: 1}
		case 6:
			return Mem{Base: base, Index: L3, Scale: 2}
		default:
			return Mem{Base: base, Index: L7, Scale: 1}
		}
	}

	asm.Label("step")
	xv := make([]VecVirtual, v)
	for i := range xv {
		xv[i] = s.vec()
		asm.VMOVUPS(Mem{Base: X, Disp: 64 * i}, xv[i])
	}
	asm.PREFETCHT0(Mem{Base: pp})
	asm.ADDQ(U32(64), pp)
	asm.SUBQ(U32(64), pc)
	asm.JNZ(LabelRef("walked"))
	asm.ADDQ(jump, pp)
	asm.MOVQ(span, pc)
	asm.DECQ(prow)
	asm.JNZ(LabelRef("walked"))
	asm.MOVQ(U32(R), prow)
	asm.SUBQ(back, pp)
	asm.Label("walked")
	if v == 1 {
		for r := 0; r < R; r++ {
			asm.VFMADD231PS_BCST(rowAt(r), xv[0], acc[r][0])
		}
	} else {
		bs := []VecVirtual{s.vec(), s.vec()}
		for r := 0; r < R; r++ {
			b := bs[r%2]
			asm.VBROADCASTSS(rowAt(r), b)
			for i := 0; i < v; i++ {
				asm.VFMADD231PS(xv[i], b, acc[r][i])
			}
		}
	}
	asm.ADDQ(U32(4), P)
	asm.ADDQ(U32(4), P8)
	asm.ADDQ(U32(4*lanes), X)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef("step"))

	// Rows [16i, 16i+16) of D, columns [dCol, dCol+R): the block's vector
	// i of every row, transposed in registers. With two vectors, the
	// second waits on the stack while the first is transposed.
	for r := 0; r < R && v > 1; r++ {
		asm.VMOVUPS(acc[r][1], block.Offset(64*r))
	}
	va, vb := paramF32(s, "alpha"), paramF32(s, "beta")
	km := asm.K()
	if R < 16 {
		bits := asm.GP32()
		asm.MOVL(U32(1<<R-1), bits)
		asm.KMOVW(bits, km)
	}
	dp := load(asm.Param("d").Base())
	asm.ADDQ(dCol, dp)
	lddB := load(asm.Param("ldd"))
	asm.SHLQ(U8(2), lddB)
	j := load(asm.Param("batch"))
	zeroBeta := asm.GP32()
	asm.MOVL(paramAddr("beta"), zeroBeta)
	asm.ANDL(U32(0x7fffffff), zeroBeta)
	for i := 0; i < v; i++ {
		col := make([]VecVirtual, R)
		for r := range col {
			if i == 0 {
				col[r] = acc[r][0]
			} else {
				col[r] = s.vec()
				asm.VMOVUPS(block.Offset(64*r), col[r])
			}
		}
		rows := transpose16(s, col)
		for jj, o := range rows {
			done := fmt.Sprintf("row%d_%d", i, jj)
			asm.TESTL(zeroBeta, zeroBeta)
			asm.JZ(LabelRef(done + "z"))
			c := s.vec()
			if R == 16 {
				asm.VMOVUPS(Mem{Base: dp}, c)
			} else {
				asm.VMOVUPS_Z(Mem{Base: dp}, km, c)
			}
			asm.VMULPS(vb, c, c)
			asm.VFMADD231PS(va, o, c)
			asm.VMOVAPS(c, o)
			asm.JMP(LabelRef(done))
			asm.Label(done + "z")
			asm.VMULPS(va, o, o)
			asm.Label(done)
			if R == 16 {
				asm.VMOVUPS(o, Mem{Base: dp})
			} else {
				asm.VMOVUPS(o, km, Mem{Base: dp})
			}
			asm.ADDQ(lddB, dp)
			asm.DECQ(j)
			asm.JZ(LabelRef("stored"))
		}
	}
	asm.Label("stored")

	// The next tile.
	{
		t := asm.GP64()
		asm.MOVQ(tileP, t)
		asm.ADDQ(back, t)
		asm.MOVQ(t, tileP)
		asm.ADDQ(U32(4*R), dCol)
		asm.DECQ(left)
		asm.JNZ(LabelRef("tile"))
	}
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()
}
