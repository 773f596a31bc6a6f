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
	f.op("LSR $2, R5, R13")
	f.op("CBZ R13, %srows1", p)
	f.label(p + "rows4")
	f.op("MOVD R1, R6")
	f.op("ADD R2, R6, R7")
	f.op("ADD R2, R7, R8")
	f.op("ADD R2, R8, R9")
	f.op("MOVD R3, R10")
	f.op("MOVD R4, R12")
	f.zero(16, 17, 18, 19, 20, 21, 22, 23)
	f.comment("8 columns of 4 rows per iteration; V16+2r, V17+2r accumulate row r")
	f.countLoop(p+"cols8", "R12", "R11", 3, func() {
		f.op("VLD1.P 32(R10), %s", neonList(0, 2))
		for r := Reg(0); r < 4; r++ {
			f.op("VLD1.P 32(R%d), %s", 6+r, neonList(2+2*r, 2))
		}
		for r := Reg(0); r < 4; r++ {
			f.fmla(16+2*r, 2+2*r, 0)
			f.fmla(17+2*r, 3+2*r, 1)
		}
	})
	f.op("TBZ $2, R12, %scols4", p)
	f.op("VLD1.P 16(R10), %s", neonList(0, 1))
	for r := Reg(0); r < 4; r++ {
		f.op("VLD1.P 16(R%d), %s", 6+r, neonList(2+2*r, 1))
		f.fmla(16+2*r, 2+2*r, 0)
	}
	f.label(p + "cols4")
	f.op("AND $3, R12, R12")
	for r := Reg(0); r < 4; r++ {
		f.w(FADD(16+2*r, 16+2*r, 17+2*r))
	}
	f.comment("V16 = the four row sums")
	f.w(FADDP(16, 16, 18))
	f.w(FADDP(20, 20, 22))
	f.w(FADDP(16, 16, 20))
	f.comment("last cols%4 columns: gather a column of the 4 rows, times x[c]")
	f.tailLoop(p+"cols1", "R12", func() {
		for r := Reg(0); r < 4; r++ {
			f.op("VLD1.P 4(R%d), V2.S[%d]", 6+r, r)
		}
		f.op("VLD1R.P 4(R10), %s", neonList(0, 1))
		f.fmla(16, 2, 0)
	})
	f.op("VST1.P %s, 16(R0)", neonList(16, 1))
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
		f.op("FMOVS.P F16, 4(R0)")
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
	acc := func(r, b, h Reg) Reg { return 16 + 4*r + 2*b + h }
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
	for r := Reg(16); r < 32; r++ {
		f.zero(r)
	}
	f.countLoop("pcols8", "R12", "R11", 3, func() {
		f.op("VLD1.P 32(R10), %s", neonList(0, 2))
		f.op("VLD1.P 32(R25), %s", neonList(2, 2))
		for r := Reg(0); r < 4; r++ {
			f.op("VLD1.P 32(R%d), %s", 6+r, neonList(4+2*r, 2))
		}
		for r := Reg(0); r < 4; r++ {
			for b := Reg(0); b < 2; b++ {
				for h := Reg(0); h < 2; h++ {
					f.fmla(acc(r, b, h), 4+2*r+h, 2*b+h)
				}
			}
		}
	})
	f.op("TBZ $2, R12, pcols4")
	f.op("VLD1.P 16(R10), %s", neonList(0, 1))
	f.op("VLD1.P 16(R25), %s", neonList(2, 1))
	for r := Reg(0); r < 4; r++ {
		f.op("VLD1.P 16(R%d), %s", 6+r, neonList(4+2*r, 1))
		for b := Reg(0); b < 2; b++ {
			f.fmla(acc(r, b, 0), 4+2*r, 2*b)
		}
	}
	f.label("pcols4")
	f.op("AND $3, R12, R12")
	for r := Reg(0); r < 4; r++ {
		for b := Reg(0); b < 2; b++ {
			f.w(FADD(acc(r, b, 0), acc(r, b, 0), acc(r, b, 1)))
		}
	}
	for b := Reg(0); b < 2; b++ {
		f.w(FADDP(acc(0, b, 0), acc(0, b, 0), acc(1, b, 0)))
		f.w(FADDP(acc(2, b, 0), acc(2, b, 0), acc(3, b, 0)))
		f.w(FADDP(acc(0, b, 0), acc(0, b, 0), acc(2, b, 0)))
	}
	f.comment("V16, V18 = the four row sums for x0, x1; last cols%4 columns by gathering")
	f.tailLoop("pcols1", "R12", func() {
		for r := Reg(0); r < 4; r++ {
			f.op("VLD1.P 4(R%d), V4.S[%d]", 6+r, r)
		}
		f.op("VLD1R.P 4(R10), %s", neonList(0, 1))
		f.op("VLD1R.P 4(R25), %s", neonList(2, 1))
		f.fmla(acc(0, 0, 0), 4, 0)
		f.fmla(acc(0, 1, 0), 4, 2)
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
			f.op("FMOVS.P F16, 4(%s)", pair[1])
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
	f.op("VLD1.P 16(R3), %s", neonList(28, 1))
	for r := Reg(0); r < 4; r++ {
		f.op("VDUP V28.S[%d], %s", r, neonVec(24+r))
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
		f.op("VLD1R.P 4(R3), %s", neonList(24, 1))
		f.op("MOVD R1, R6")
		f.op("MOVD R0, R10")
		f.op("MOVD R4, R12")
		matTVecColsNEON(f, "r1", 1)
		f.op("ADD R2, R1, R1")
	})
	f.op("RET")
}

// matTVecColsNEON emits dst[c] += Σ_r x_r·A[r,c] over R12 columns for the
// first rows rows at R6, R7, … (advanced), with x_r broadcast in V24+r and
// dst at R10 (advanced).
func matTVecColsNEON(f *neonFile, p string, rows Reg) {
	f.countLoop(p+"cols16", "R12", "R11", 4, func() {
		f.op("VLD1 (R10), %s", neonList(0, 4))
		for r := Reg(0); r < rows; r++ {
			f.op("VLD1.P 64(R%d), %s", 6+r, neonList(4+4*r, 4))
		}
		for r := Reg(0); r < rows; r++ {
			for j := Reg(0); j < 4; j++ {
				f.fmla(j, 4+4*r+j, 24+r)
			}
		}
		f.op("VST1.P %s, 64(R10)", neonList(0, 4))
	})
	f.countLoop(p+"cols4", "R12", "R11", 2, func() {
		f.op("VLD1 (R10), %s", neonList(0, 1))
		for r := Reg(0); r < rows; r++ {
			f.op("VLD1.P 16(R%d), %s", 6+r, neonList(4+4*r, 1))
		}
		for r := Reg(0); r < rows; r++ {
			f.fmla(0, 4+4*r, 24+r)
		}
		f.op("VST1.P %s, 16(R10)", neonList(0, 1))
	})
	f.tailLoop(p+"cols1", "R12", func() {
		f.op("FMOVS (R10), F0")
		for r := Reg(0); r < rows; r++ {
			f.op("FMOVS.P 4(R%d), F%d", 6+r, 4+4*r)
		}
		for r := Reg(0); r < rows; r++ {
			f.fmlaS(0, 4+4*r, 24+r)
		}
		f.op("FMOVS.P F0, 4(R10)")
	})
}
