package main

import (
	"fmt"

	. "github.com/heedml/heed/asmgen/arm64"
)

func init() {
	registerNEON("gemm", genGemmNEON)
}

// The NEON GEMM micro-kernel computes an 8×12 tile of C: 24 accumulators of
// four lanes, more than the role plan's V16–V23 give, so it has its own plan:
// V8–V31 accumulate (row i, vector j in V8+3i+j), V0–V2 hold a step of packed
// B, V3–V4 take turns holding a broadcast element of packed A, V5 and V6 α
// and β.
const (
	gemmNEONRows     = 8
	gemmNEONVecs     = 3
	vGemmB       Reg = 0
	vGemmA       Reg = 3
	vGemmAlpha   Reg = 5
	vGemmBeta    Reg = 6
	vGemmAcc     Reg = 8
)

// genGemmNEON emits gemmMicroNEON(k, a, b, c, ldc, alpha, beta): the 8×12
// block of C at c (row stride ldc elements) is set to α·Σₚ a[p]⊗b[p] + β·C
// for the packed panels a (k×8) and b (k×12); β = 0 (either sign) does not
// read C. k ≥ 1.
func genGemmNEON(f *neonFile) {
	R, V := gemmNEONRows, gemmNEONVecs
	nr := 4 * V
	f.text("gemmMicroNEON", "(k int, a *float32, b *float32, c *float32, ldc int, alpha float32, beta float32)", "$0-48",
		fmt.Sprintf("sets the %d×%d block of C at c to α·A·B + β·C for the packed k×%d panel a and k×%d panel b; β = 0 does not read C.", R, nr, R, nr))
	acc := func(i, j int) Reg { return vGemmAcc + Reg(V*i+j) }
	f.op("MOVD k+0(FP), R0")
	f.op("MOVD a+8(FP), R1")
	f.op("MOVD b+16(FP), R2")
	f.op("MOVD c+24(FP), R3")
	f.op("MOVD ldc+32(FP), R4")
	f.op("LSL $2, R4, R4")
	f.zero(neonSeq(vGemmAcc, R*V)...)
	f.comment(fmt.Sprintf("one step: %d vectors of B, each of %d elements of A broadcast and multiplied into them", V, R))
	f.label("step")
	f.op("VLD1.P %d(R2), %s", 4*nr, neonList(vGemmB, V))
	for i := 0; i < R; i++ {
		a := vGemmA + Reg(i%2)
		f.op("VLD1R.P 4(R1), [%s]", neonVec(a))
		for j := 0; j < V; j++ {
			f.v(FMLA(acc(i, j), vGemmB+Reg(j), a))
		}
	}
	f.op("SUBS $1, R0, R0")
	f.op("BNE step")

	f.op("MOVD $alpha+40(FP), R5")
	f.op("VLD1R (R5), [%s]", neonVec(vGemmAlpha))
	f.op("MOVWU beta+44(FP), R6")
	f.op("LSLW $1, R6, R6") // drops the sign: ±0 → 0
	f.op("CBZW R6, nobeta")
	f.op("MOVD $beta+44(FP), R5")
	f.op("VLD1R (R5), [%s]", neonVec(vGemmBeta))
	f.comment("C = β·C + α·acc, row by row")
	for i := 0; i < R; i++ {
		f.op("VLD1 (R3), %s", neonList(vGemmB, V))
		for j := 0; j < V; j++ {
			f.v(FMUL(vGemmB+Reg(j), vGemmB+Reg(j), vGemmBeta))
			f.v(FMLA(vGemmB+Reg(j), acc(i, j), vGemmAlpha))
		}
		f.op("VST1 %s, (R3)", neonList(vGemmB, V))
		f.op("ADD R4, R3, R3")
	}
	f.op("RET")
	f.label("nobeta")
	f.comment("C = α·acc, row by row, C not read")
	for i := 0; i < R; i++ {
		for j := 0; j < V; j++ {
			f.v(FMUL(acc(i, j), acc(i, j), vGemmAlpha))
		}
		f.op("VST1 %s, (R3)", neonList(acc(i, 0), V))
		f.op("ADD R4, R3, R3")
	}
	f.op("RET")
}
