package main

import (
	"fmt"

	. "github.com/heedml/heed/asmgen/arm64"
)

func init() {
	registerNEON("matvec", func(f *neonFile) {
		genMatVecNEON(f)
		genMatTVecNEON(f)
		genMatVecBatchNEON(f)
	})
}

func genMatVecNEON(f *neonFile) {
	f.text("matVecNEON", "(dst []float32, a []float32, lda int, x []float32)", "$0-80",
		"sets dst = A·x for the len(dst)×len(x) matrix A with row stride lda.")
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD dst_len+8(FP), R5")
	f.op("MOVD a_base+24(FP), R1")
	f.op("MOVD lda+48(FP), R2")
	f.op("MOVD x_base+56(FP), R3")
	f.op("MOVD x_len+64(FP), R4")
	f.op("LSL $2, R2, R2")
	matVecBodyNEON(f, "")
	f.op("RET")
}

// matVecBodyNEON emits dst = A·x with R0 = dst (advanced), R1 = A (advanced),
// R2 = row stride in bytes, R3 = x, R4 = cols, R5 = rows (consumed). Four rows
// go together, sharing each load of x; the rest one at a time. It uses R6–R13
// and V0–V23.
func matVecBodyNEON(f *neonFile, p string) {
	xv := vIn                                       // two vectors of x
	row := func(r Reg) Reg { return vIn + 2 + 2*r } // two vectors of row r
	acc := func(r, h Reg) Reg { return vAcc + 2*r + h }
	f.op("LSR $2, R5, R13")
	f.op("CBZ R13, %srows1", p)
	f.label(p + "rows4")
	f.op("MOVD R1, R6")
	f.op("ADD R2, R6, R7")
	f.op("ADD R2, R7, R8")
	f.op("ADD R2, R8, R9")
	f.op("MOVD R3, R10")
	f.op("MOVD R4, R12")
	f.zero(neonSeq(vAcc, 8)...)
	f.comment("8 columns of 4 rows per iteration; V16+2r, V17+2r accumulate row r")
	f.countLoop(p+"cols8", "R12", "R11", 3, func() {
		f.op("VLD1.P 32(R10), %s", neonList(xv, 2))
		for r := Reg(0); r < 4; r++ {
			f.op("VLD1.P 32(R%d), %s", 6+r, neonList(row(r), 2))
		}
		for r := Reg(0); r < 4; r++ {
			f.v(FMLA(acc(r, 0), row(r), xv))
			f.v(FMLA(acc(r, 1), row(r)+1, xv+1))
		}
	})
	f.op("TBZ $2, R12, %scols4", p)
	f.op("VLD1.P 16(R10), %s", neonList(xv, 1))
	for r := Reg(0); r < 4; r++ {
		f.op("VLD1.P 16(R%d), %s", 6+r, neonList(row(r), 1))
		f.v(FMLA(acc(r, 0), row(r), xv))
	}
	f.label(p + "cols4")
	f.op("AND $3, R12, R12")
	for r := Reg(0); r < 4; r++ {
		f.v(FADD(acc(r, 0), acc(r, 0), acc(r, 1)))
	}
	f.comment("V16 = the four row sums")
	f.v(FADDP(acc(0, 0), acc(0, 0), acc(1, 0)))
	f.v(FADDP(acc(2, 0), acc(2, 0), acc(3, 0)))
	f.v(FADDP(acc(0, 0), acc(0, 0), acc(2, 0)))
	f.comment("last cols%4 columns: gather a column of the 4 rows, times x[c]")
	f.tailLoop(p+"cols1", "R12", func() {
		for r := Reg(0); r < 4; r++ {
			f.op("VLD1.P 4(R%d), V%d.S[%d]", 6+r, row(0), r)
		}
		f.op("VLD1R.P 4(R10), %s", neonList(xv, 1))
		f.v(FMLA(acc(0, 0), row(0), xv))
	})
	f.op("VST1.P %s, 16(R0)", neonList(acc(0, 0), 1))
	f.op("ADD R2<<2, R1, R1")
	f.op("SUBS $1, R13, R13")
	f.op("BNE %srows4", p)

	f.label(p + "rows1")
	f.op("AND $3, R5, R5")
	f.tailLoop(p+"row", "R5", func() {
		f.op("MOVD R1, R6")
		f.op("MOVD R3, R10")
		f.op("MOVD R4, R12")
		dotBodyNEON(f, p+"dot", "R10", "R6", "R12")
		f.op("FMOVS.P F%d, 4(R0)", vAcc)
		f.op("ADD R2, R1, R1")
	})
}

func genMatVecBatchNEON(f *neonFile) {
	f.text("matVecBatchNEON",
		"(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows int, cols int, batch int)",
		"$0-120", "sets row b of D to A·(row b of X) for b < batch.")
	f.op("MOVD d_base+0(FP), R19")
	f.op("MOVD ldd+24(FP), R20")
	f.op("MOVD a_base+32(FP), R21")
	f.op("MOVD lda+56(FP), R2")
	f.op("MOVD x_base+64(FP), R22")
	f.op("MOVD ldx+88(FP), R23")
	f.op("MOVD batch+112(FP), R24")
	f.op("LSL $2, R2, R2")
	f.op("LSL $2, R20, R20")
	f.op("LSL $2, R23, R23")
	f.comment("two vectors at a time: each load of A serves both")
	f.op("LSR $1, R24, R24")
	f.op("CBZ R24, batch1")
	f.label("batch2")
	f.op("MOVD R19, R0")
	f.op("ADD R20, R19, R14")
	f.op("MOVD R21, R1")
	f.op("MOVD R22, R3")
	f.op("ADD R23, R22, R15")
	f.op("MOVD cols+104(FP), R4")
	f.op("MOVD rows+96(FP), R5")
	matVecPairNEON(f)
	f.op("ADD R20<<1, R19, R19")
	f.op("ADD R23<<1, R22, R22")
	f.op("SUBS $1, R24, R24")
	f.op("BNE batch2")
	f.label("batch1")
	f.op("MOVD batch+112(FP), R24")
	f.op("TBZ $0, R24, done")
	f.op("MOVD R19, R0")
	f.op("MOVD R21, R1")
	f.op("MOVD R22, R3")
	f.op("MOVD cols+104(FP), R4")
	f.op("MOVD rows+96(FP), R5")
	matVecBodyNEON(f, "mv")
	f.label("done")
	f.op("RET")
}

// matVecPairNEON emits D0 = A·x0 and D1 = A·x1 with R0, R14 = D0, D1
// (advanced), R1 = A, R2 = row stride in bytes, R3, R15 = x0, x1, R4 = cols,
// R5 = rows (consumed): tiles of 4 rows × 2 vectors with 16 accumulators,
// acc(r, b, h) = V16 + 4r + 2b + h. It uses R6–R13, R25 and V0–V31.
func matVecPairNEON(f *neonFile) {
	acc := func(r, b, h Reg) Reg { return vAcc + 4*r + 2*b + h }
	xv := func(b Reg) Reg { return vIn + 2*b }      // two vectors of x_b
	row := func(r Reg) Reg { return vIn + 4 + 2*r } // two vectors of row r
	f.op("LSR $2, R5, R13")
	f.op("CBZ R13, prows1")
	f.label("prows4")
	f.op("MOVD R1, R6")
	f.op("ADD R2, R6, R7")
	f.op("ADD R2, R7, R8")
	f.op("ADD R2, R8, R9")
	f.op("MOVD R3, R10")
	f.op("MOVD R15, R25")
	f.op("MOVD R4, R12")
	f.zero(neonSeq(acc(0, 0, 0), 16)...)
	f.countLoop("pcols8", "R12", "R11", 3, func() {
		f.op("VLD1.P 32(R10), %s", neonList(xv(0), 2))
		f.op("VLD1.P 32(R25), %s", neonList(xv(1), 2))
		for r := Reg(0); r < 4; r++ {
			f.op("VLD1.P 32(R%d), %s", 6+r, neonList(row(r), 2))
		}
		for r := Reg(0); r < 4; r++ {
			for b := Reg(0); b < 2; b++ {
				for h := Reg(0); h < 2; h++ {
					f.v(FMLA(acc(r, b, h), row(r)+h, xv(b)+h))
				}
			}
		}
	})
	f.op("TBZ $2, R12, pcols4")
	f.op("VLD1.P 16(R10), %s", neonList(xv(0), 1))
	f.op("VLD1.P 16(R25), %s", neonList(xv(1), 1))
	for r := Reg(0); r < 4; r++ {
		f.op("VLD1.P 16(R%d), %s", 6+r, neonList(row(r), 1))
		for b := Reg(0); b < 2; b++ {
			f.v(FMLA(acc(r, b, 0), row(r), xv(b)))
		}
	}
	f.label("pcols4")
	f.op("AND $3, R12, R12")
	for r := Reg(0); r < 4; r++ {
		for b := Reg(0); b < 2; b++ {
			f.v(FADD(acc(r, b, 0), acc(r, b, 0), acc(r, b, 1)))
		}
	}
	for b := Reg(0); b < 2; b++ {
		f.v(FADDP(acc(0, b, 0), acc(0, b, 0), acc(1, b, 0)))
		f.v(FADDP(acc(2, b, 0), acc(2, b, 0), acc(3, b, 0)))
		f.v(FADDP(acc(0, b, 0), acc(0, b, 0), acc(2, b, 0)))
	}
	f.comment("V16, V18 = the four row sums for x0, x1; last cols%4 columns by gathering")
	f.tailLoop("pcols1", "R12", func() {
		for r := Reg(0); r < 4; r++ {
			f.op("VLD1.P 4(R%d), V%d.S[%d]", 6+r, row(0), r)
		}
		f.op("VLD1R.P 4(R10), %s", neonList(xv(0), 1))
		f.op("VLD1R.P 4(R25), %s", neonList(xv(1), 1))
		f.v(FMLA(acc(0, 0, 0), row(0), xv(0)))
		f.v(FMLA(acc(0, 1, 0), row(0), xv(1)))
	})
	f.op("VST1.P %s, 16(R0)", neonList(acc(0, 0, 0), 1))
	f.op("VST1.P %s, 16(R14)", neonList(acc(0, 1, 0), 1))
	f.op("ADD R2<<2, R1, R1")
	f.op("SUBS $1, R13, R13")
	f.op("BNE prows4")

	f.label("prows1")
	f.op("AND $3, R5, R5")
	f.tailLoop("prow", "R5", func() {
		for b, pair := range [][2]string{{"R3", "R0"}, {"R15", "R14"}} {
			f.op("MOVD R1, R6")
			f.op("MOVD %s, R10", pair[0])
			f.op("MOVD R4, R12")
			dotBodyNEON(f, fmt.Sprintf("pdot%d", b), "R10", "R6", "R12")
			f.op("FMOVS.P F%d, 4(%s)", vAcc, pair[1])
		}
		f.op("ADD R2, R1, R1")
	})
}

func genMatTVecNEON(f *neonFile) {
	f.text("matTVecNEON", "(dst []float32, a []float32, lda int, x []float32)", "$0-80",
		"sets dst += Aᵀ·x for the len(x)×len(dst) matrix A with row stride lda.")
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD dst_len+8(FP), R4")
	f.op("MOVD a_base+24(FP), R1")
	f.op("MOVD lda+48(FP), R2")
	f.op("MOVD x_base+56(FP), R3")
	f.op("MOVD x_len+64(FP), R5")
	f.op("LSL $2, R2, R2")
	f.comment("four rows at a time: dst += x[r]·A[r] for r = 0..3 in order, as fallback")
	f.op("LSR $2, R5, R13")
	f.op("CBZ R13, rows1")
	f.label("rows4")
	xs := vBcast + 4 // four elements of x, broadcast to vBcast+r
	f.op("VLD1.P 16(R3), %s", neonList(xs, 1))
	for r := Reg(0); r < 4; r++ {
		f.v(DUPE(vBcast+r, xs, uint(r)))
	}
	f.op("MOVD R1, R6")
	f.op("ADD R2, R6, R7")
	f.op("ADD R2, R7, R8")
	f.op("ADD R2, R8, R9")
	f.op("MOVD R0, R10")
	f.op("MOVD R4, R12")
	matTVecColsNEON(f, "r4", 4)
	f.op("ADD R2<<2, R1, R1")
	f.op("SUBS $1, R13, R13")
	f.op("BNE rows4")
	f.label("rows1")
	f.op("AND $3, R5, R5")
	f.tailLoop("row", "R5", func() {
		f.op("VLD1R.P 4(R3), %s", neonList(vBcast, 1))
		f.op("MOVD R1, R6")
		f.op("MOVD R0, R10")
		f.op("MOVD R4, R12")
		matTVecColsNEON(f, "r1", 1)
		f.op("ADD R2, R1, R1")
	})
	f.op("RET")
}

// matTVecColsNEON emits dst[c] += Σ_r x_r·A[r,c] over R12 columns for the
// first rows rows at R6, R7, … (advanced), with x_r broadcast in vBcast+r and
// dst at R10 (advanced).
func matTVecColsNEON(f *neonFile, p string, rows Reg) {
	d := vIn                                        // four vectors of dst
	row := func(r Reg) Reg { return vIn + 4 + 4*r } // four vectors of row r
	x := func(r Reg) Reg { return vBcast + r }
	f.countLoop(p+"cols16", "R12", "R11", 4, func() {
		f.op("VLD1 (R10), %s", neonList(d, 4))
		for r := Reg(0); r < rows; r++ {
			f.op("VLD1.P 64(R%d), %s", 6+r, neonList(row(r), 4))
		}
		for r := Reg(0); r < rows; r++ {
			for j := Reg(0); j < 4; j++ {
				f.v(FMLA(d+j, row(r)+j, x(r)))
			}
		}
		f.op("VST1.P %s, 64(R10)", neonList(d, 4))
	})
	f.countLoop(p+"cols4", "R12", "R11", 2, func() {
		f.op("VLD1 (R10), %s", neonList(d, 1))
		for r := Reg(0); r < rows; r++ {
			f.op("VLD1.P 16(R%d), %s", 6+r, neonList(row(r), 1))
		}
		for r := Reg(0); r < rows; r++ {
			f.v(FMLA(d, row(r), x(r)))
		}
		f.op("VST1.P %s, 16(R10)", neonList(d, 1))
	})
	f.tailLoop(p+"cols1", "R12", func() {
		f.op("FMOVS (R10), F%d", d)
		for r := Reg(0); r < rows; r++ {
			f.op("FMOVS.P 4(R%d), F%d", 6+r, row(r))
		}
		for r := Reg(0); r < rows; r++ {
			f.fmlaS(d, row(r), x(r))
		}
		f.op("FMOVS.P F%d, 4(R10)", d)
	})
}
