package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// batchTile returns the register tile of matVecBatch on s: rows of A × vectors
// of X, one accumulator each. Each column step loads rows+vectors vectors for
// rows·vectors FMAs, so the loop is FMA-bound, and the accumulators cover the
// FMA latency (8 chains for 2 FMAs per cycle × 4 cycles).
//
// AVX2 has 16 registers: a 3×4 tile (12 accumulators + 3 rows of A + 1 vector
// of X, the tail mask read from memory) loads 7 vectors per 12 FMAs and reads
// each panel of A from L2 once per 4 vectors; a 4×2 tile loads 6 per 8 and
// reads A twice as often (asmgen/DESIGN.md, "Generator constants").
func batchTile(s *isa) (rows, vectors int) {
	if s.evex {
		return 4, 4 // 16 accumulators + 4 + 1 of 32 registers
	}
	return 3, 4 // 12 accumulators + 3 + 1 of 16 registers
}

// batchISA returns the ISA the matVecBatch kernel named for s computes in:
// evexYMM for AVX-512. 512-bit vectors would double the cost of the
// horizontal sums that end every tile (16 per 4×4 tile); the 32 registers are
// what pays, holding a 4×4 tile that reads A half as often as a 4×2 one.
func batchISA(s *isa) *isa { return evexYMM(s) }

// batchPanel returns the number of rows of A in a panel of matVecBatch with
// tiles of R rows: the largest multiple of R up to 64 (64 rows of 1024 columns
// are 256 KiB, a quarter of a 1 MiB L2).
func batchPanel(R int) int { return 64 / R * R }

// genMatVecBatch emits matVecBatch<ISA>(d, ldd, a, lda, x, ldx, rows, cols,
// batch): D = X·Aᵀ for the rows×cols matrix A, batch×cols X and batch×rows D
// (strides in elements). A tile of R rows of A × B rows of X is computed in
// R·B accumulators, each element of A loaded once per B vectors; leftover
// rows take 1-row tiles and leftover vectors tiles of B/2, B/4, …, 1. The
// column loop takes two vectors of columns per iteration. The AVX2 kernel
// needs cols ≥ 8.
func genMatVecBatch(s *isa) {
	TEXT(s.name("matVecBatch"), NOSPLIT, "func(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int)")
	asm.Doc(s.name("matVecBatch") + " sets D = X·Aᵀ for the rows×cols A, batch×cols X and batch×rows D.")
	R, B := batchTile(s)
	s = batchISA(s)
	rowsLeft, batchLeft := asm.AllocLocal(8), asm.AllocLocal(8)

	// The AVX-512 tail mask lives in an opmask register for the whole call;
	// the AVX2 one is read from the table in each tile's tail (all 16 vector
	// registers hold the tile).
	var t tail
	if s.evex {
		rem := load(asm.Param("cols"))
		asm.ANDQ(U32(s.lanes-1), rem)
		asm.JZ(LabelRef("maskDone"))
		t = s.tailMask(rem)
		asm.Label("maskDone")
	}

	// stride loads the stride argument name in bytes, times 2^shift.
	stride := func(name string, shift int) GPVirtual {
		r := load(asm.Param(name))
		asm.SHLQ(U8(2+shift), r)
		return r
	}

	// scaled loads the stride argument name in bytes, times n.
	scaled := func(name string, n int) GPVirtual {
		if n&(n-1) == 0 {
			return stride(name, bits.TrailingZeros(uint(n)))
		}
		r := load(asm.Param(name))
		asm.IMUL3Q(U32(4*n), r, r)
		return r
	}

	// tile emits D[b..b+nb, r..r+nr] for the A rows at ap, X rows at xp and
	// D element at dp.
	tile := func(pfx string, nr, nb int, ap, xp, dp GPVirtual) {
		ar, xr := []GPVirtual{ap}, []GPVirtual{xp}
		if nr > 1 {
			ldaB := stride("lda", 0)
			for len(ar) < nr {
				r := asm.GP64()
				asm.LEAQ(Mem{Base: ar[len(ar)-1], Index: ldaB, Scale: 1}, r)
				ar = append(ar, r)
			}
		}
		if nb > 1 {
			ldxB := stride("ldx", 0)
			for len(xr) < nb {
				r := asm.GP64()
				asm.LEAQ(Mem{Base: xr[len(xr)-1], Index: ldxB, Scale: 1}, r)
				xr = append(xr, r)
			}
		}
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
		// step emits one column step at byte offset off+disp.
		step := func(off GPVirtual, disp int) {
			for i := range ar {
				asm.VMOVUPS(Mem{Base: ar[i], Index: off, Scale: 1, Disp: disp}, av[i])
			}
			for j := range xr {
				xv := s.vec()
				asm.VMOVUPS(Mem{Base: xr[j], Index: off, Scale: 1, Disp: disp}, xv)
				for i := range ar {
					asm.VFMADD231PS(av[i], xv, acc[i][j])
				}
			}
		}
		// Two column steps per iteration, then the odd one.
		off, cnt := asm.GP64(), load(asm.Param("cols"))
		asm.XORQ(off, off)
		asm.SHRQ(U8(bits.TrailingZeros(uint(2*s.lanes))), cnt)
		asm.JZ(LabelRef(pfx + "Odd"))
		asm.Label(pfx + "Loop")
		step(off, 0)
		step(off, s.bytes())
		asm.ADDQ(U32(2*s.bytes()), off)
		asm.DECQ(cnt)
		asm.JNZ(LabelRef(pfx + "Loop"))

		asm.Label(pfx + "Odd")
		odd := load(asm.Param("cols"))
		asm.TESTQ(U32(s.lanes), odd)
		asm.JZ(LabelRef(pfx + "Tail"))
		step(off, 0)
		asm.ADDQ(U32(s.bytes()), off)

		asm.Label(pfx + "Tail")
		rem := load(asm.Param("cols"))
		asm.ANDQ(U32(s.lanes-1), rem)
		asm.JZ(LabelRef(pfx + "Reduce"))
		toff := s.tailOffset(off, rem)
		loadTail := func(m Mem, dst VecVirtual) { s.loadTailAt(m, t, dst) }
		if !s.evex {
			// tailmask<> at rem: its 8 int32s end with rem all-ones lanes.
			base := asm.GP64()
			asm.LEAQ(tailTable(), base)
			mask := Mem{Base: base, Index: rem, Scale: 4}
			loadTail = func(m Mem, dst VecVirtual) {
				asm.VMOVUPS(m, dst)
				asm.VANDPS(mask, dst, dst)
			}
		}
		for i := range ar {
			loadTail(Mem{Base: ar[i], Index: toff, Scale: 1}, av[i])
		}
		for j := range xr {
			xv := s.vec()
			loadTail(Mem{Base: xr[j], Index: toff, Scale: 1}, xv)
			for i := range ar {
				asm.VFMADD231PS(av[i], xv, acc[i][j])
			}
		}

		asm.Label(pfx + "Reduce")
		q := asm.GP64()
		asm.MOVQ(dp, q)
		var lddB GPVirtual
		if nb > 1 {
			lddB = stride("ldd", 0)
		}
		for j := 0; j < nb; j++ {
			switch nr {
			case 4:
				asm.VMOVUPS(s.hsum4(acc[0][j], acc[1][j], acc[2][j], acc[3][j]), Mem{Base: q})
			case 3: // three sums: lanes 0–1 as a quadword, lane 2 alone
				v := s.hsum4(acc[0][j], acc[1][j], acc[2][j], acc[2][j])
				asm.VMOVQ(v, Mem{Base: q})
				asm.VEXTRACTPS(U8(2), v, Mem{Base: q, Disp: 8})
			case 1:
				asm.VMOVSS(s.hsum(acc[0][j]), Mem{Base: q})
			default:
				panic(fmt.Sprintf("matVecBatch: no reduction for %d-row tiles", nr))
			}
			if j+1 < nb {
				asm.ADDQ(lddB, q)
			}
		}
	}

	// Panels of batchPanel rows of A: every vector of X goes through a panel
	// while it is in L2, so A comes from memory once whatever the batch.
	panelA, panelD, panelRows, rowsTotal := asm.AllocLocal(8), asm.AllocLocal(8), asm.AllocLocal(8), asm.AllocLocal(8)
	{
		pa, pd, rt := load(asm.Param("a").Base()), load(asm.Param("d").Base()), load(asm.Param("rows"))
		asm.MOVQ(pa, panelA)
		asm.MOVQ(pd, panelD)
		asm.MOVQ(rt, rowsTotal)
	}
	asm.Label("panel")
	{
		pr, lim := load(asm.Param("rows")), asm.GP64()
		asm.MOVQ(rowsTotal, pr)
		asm.TESTQ(pr, pr)
		asm.JZ(LabelRef("done"))
		asm.MOVQ(U32(batchPanel(R)), lim)
		asm.CMPQ(pr, lim)
		asm.CMOVQGT(lim, pr)
		asm.MOVQ(pr, panelRows)
	}
	xp, dBlk := load(asm.Param("x").Base()), asm.GP64()
	asm.MOVQ(panelD, dBlk)
	bl := load(asm.Param("batch"))
	asm.MOVQ(bl, batchLeft)
	for _, nb := range halves(B) {
		pfx := fmt.Sprintf("b%d", nb)
		asm.Label(pfx)
		asm.CMPQ(batchLeft, U32(nb))
		asm.JB(LabelRef(pfx + "End"))
		ap, dp := asm.GP64(), asm.GP64()
		asm.MOVQ(panelA, ap)
		asm.MOVQ(dBlk, dp)
		rl := asm.GP64()
		asm.MOVQ(panelRows, rl)
		asm.MOVQ(rl, rowsLeft)
		for _, nr := range []int{R, 1} {
			rp := fmt.Sprintf("%sr%d", pfx, nr)
			asm.Label(rp)
			asm.CMPQ(rowsLeft, U32(nr))
			asm.JB(LabelRef(rp + "End"))
			tile(rp+"t", nr, nb, ap, xp, dp)
			asm.ADDQ(scaled("lda", nr), ap)
			asm.ADDQ(U32(4*nr), dp)
			asm.SUBQ(U32(nr), rowsLeft)
			asm.JMP(LabelRef(rp))
			asm.Label(rp + "End")
		}
		asm.ADDQ(stride("ldx", bits.TrailingZeros(uint(nb))), xp)
		asm.ADDQ(stride("ldd", bits.TrailingZeros(uint(nb))), dBlk)
		asm.SUBQ(U32(nb), batchLeft)
		asm.JMP(LabelRef(pfx))
		asm.Label(pfx + "End")
	}
	{
		asm.ADDQ(scaled("lda", batchPanel(R)), panelA)
		asm.ADDQ(U32(4*batchPanel(R)), panelD)
		pr := asm.GP64()
		asm.MOVQ(panelRows, pr)
		asm.SUBQ(pr, rowsTotal)
		asm.JMP(LabelRef("panel"))
	}
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()
}

// halves returns n, n/2, n/4, …, 1: the widths of the tiles that cover n
// vectors, then whatever is left of them.
func halves(n int) []int {
	var h []int
	for ; n > 1; n /= 2 {
		h = append(h, n)
	}
	return append(h, 1)
}
