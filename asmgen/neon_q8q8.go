package main

import (
	"fmt"

	. "github.com/heedml/heed/asmgen/arm64"
)

// The Q8Q8 scores on NEON with the dot-product extension (kernels/DESIGN.md,
// "Q8Q8: a quantised query"): both the keys and the query are 8-bit blocks, so a
// block's dot product is an exact integer, two SDOTs per row. The kernel runs
// only where the dispatch has seen FEAT_DotProd (cpuid's ASIMDDP).

func init() {
	registerNEON("lowprec_q8q8", genMatVecQ8Q8NEON)
}

// genMatVecQ8Q8NEON emits matVecQ8Q8NEON(dst, a, lda, x): dst = A·x̂ for a
// matrix A and a vector x of 8-bit blocks. Rows go in groups of eight, then
// four, then one, a row per lane. For each block of x, shared by the group:
// per row two SDOTs of its 32 bytes against x's into an integer accumulator
// zeroed for the block, ADDP trees to one int32 P per lane (exact in any
// order), SCVTF (exact: |P| < 2²⁴), the row's key scale times x's scale
// (FMUL, one rounding), and s += that·P by FMLA: per row, the operations of
// kernels.matVecQ8Q8Go in its order, as the Go compiler emits them on arm64
// (FMULS, SCVTFWS, FMADDS), so that the results are the same bits.
func genMatVecQ8Q8NEON(f *neonFile) {
	f.text("matVecQ8Q8NEON", "(dst []float32, a []byte, lda int, x []byte)", "$0-80",
		"sets dst[r] = Σ_b (Scale_A[r,b]·Scale_x[b])·P_b, P_b the int32 dot product of the blocks' values, for the len(dst) rows of the matrix A of 8-bit blocks with row stride lda blocks and the vector x of len(x)/36 blocks, in block order (matVecQ8Q8Go's operations). It needs FEAT_DotProd.")
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD dst_len+8(FP), R5")
	f.op("MOVD a_base+24(FP), R1")
	f.op("MOVD lda+48(FP), R2")
	f.op("MOVD x_base+56(FP), R3")
	f.op("MOVD x_len+64(FP), R4")
	f.op("MOVD $%d, R11", q8BlockBytes)
	f.op("MUL R11, R2, R2")
	xq, sx := vIn, vIn+2 // the block of x (two vectors of 16 bytes), its scale broadcast
	// rowQ is the pair of registers row r's 32 bytes are loaded into: four
	// pairs, reused every four rows.
	rowQ := func(r int) Reg { return vIn + 4 + Reg(2*(r%4)) }
	acc := func(r int) Reg { return vAcc + Reg(r) } // row r's integer accumulator
	// scale(h) takes the rows' key scales lane by lane; prod(h) their
	// products with x's scale, in another register so that the next block's
	// lane loads do not wait for the FMUL.
	scale := func(h int) Reg { return vBcast + Reg(h) }
	sum := func(h int) Reg { return vBcast + 2 + Reg(h) }
	prod := func(h int) Reg { return vBcast + 4 + Reg(h) }
	rowPtr := func(r int) string { return fmt.Sprintf("R%d", 6+r) }
	// body computes rows rows (8, 4 or 1) whose pointers are in R6…: half h
	// covers rows 4h to 4h+3 in lanes 0–3 of scale(h), acc(4h) and sum(h).
	body := func(pre string, rows int) {
		halves := (rows + 3) / 4
		f.op("MOVD R3, R15")
		f.op("MOVD R4, R14")
		for h := 0; h < halves; h++ {
			f.zero(sum(h))
		}
		f.label(pre + "blocks")
		f.op("VLD1R.P 4(R15), %s", neonList(sx, 1))
		f.op("VLD1.P 32(R15), [V%d.B16, V%d.B16]", xq, xq+1)
		for r := 0; r < rows; r++ {
			if rows == 1 {
				f.op("VLD1R.P 4(%s), %s", rowPtr(r), neonList(scale(0), 1))
			} else {
				f.op("VLD1.P 4(%s), V%d.S[%d]", rowPtr(r), scale(r/4), r%4)
			}
			f.op("VLD1.P 32(%s), [V%d.B16, V%d.B16]", rowPtr(r), rowQ(r), rowQ(r)+1)
			f.zero(acc(r))
			f.v(SDOT(acc(r), rowQ(r), xq))
			f.v(SDOT(acc(r), rowQ(r)+1, xq+1))
		}
		for h := 0; h < halves; h++ {
			p := acc(4 * h)
			if rows == 1 {
				f.v(ADDP(p, p, p))
				f.v(ADDP(p, p, p))
			} else {
				f.v(ADDP(p, p, acc(4*h+1)))
				f.v(ADDP(acc(4*h+2), acc(4*h+2), acc(4*h+3)))
				f.v(ADDP(p, p, acc(4*h+2)))
			}
			f.v(SCVTF(p, p))
			f.v(FMUL(prod(h), scale(h), sx))
			f.v(FMLA(sum(h), prod(h), p))
		}
		f.op("SUBS $%d, R14, R14", q8BlockBytes)
		f.op("BNE %sblocks", pre)
	}
	rowPtrs := func(rows int) {
		f.op("MOVD R1, R6")
		for r := 1; r < rows; r++ {
			f.op("ADD R2, %s, %s", rowPtr(r-1), rowPtr(r))
		}
	}
	f.op("CBZ R4, zero")
	f.op("LSR $3, R5, R19")
	f.op("CBZ R19, rows4")
	f.label("rows8")
	rowPtrs(8)
	body("r8", 8)
	f.op("VST1.P [%s, %s], 32(R0)", neonVec(sum(0)), neonVec(sum(1)))
	f.op("ADD R2<<3, R1, R1")
	f.op("SUBS $1, R19, R19")
	f.op("BNE rows8")
	f.label("rows4")
	f.op("TBZ $2, R5, rows1")
	rowPtrs(4)
	body("r4", 4)
	f.op("VST1.P %s, 16(R0)", neonList(sum(0), 1))
	f.op("ADD R2<<2, R1, R1")
	f.label("rows1")
	f.op("AND $3, R5, R5")
	f.tailLoop("row", "R5", func() {
		rowPtrs(1)
		body("r1", 1)
		f.op("FMOVS.P F%d, 4(R0)", sum(0))
		f.op("ADD R2, R1, R1")
	})
	f.op("RET")
	f.comment("no blocks: dst = 0")
	f.label("zero")
	f.tailLoop("zrow", "R5", func() { f.op("MOVW.P ZR, 4(R0)") })
	f.op("RET")
}
