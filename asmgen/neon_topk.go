package main

import . "github.com/heedml/heed/asmgen/arm64"

// TopK's two passes on NEON (kernels/topk.go, kernels/DESIGN.md), as the amd64
// kernels of topk.go: the maxima of the spans of topKSpan elements with a NaN
// report, and the scan for the first element not ≤ a threshold.

func init() {
	registerNEON("topk", func(f *neonFile) {
		genSpanMaxNEON(f)
		genFirstAboveNEON(f)
	})
}

// genSpanMaxNEON emits spanMaxNEON(dst, x []float32) bool: dst[j] = the
// largest of x[j·topKSpan : (j+1)·topKSpan] for j < len(dst) (len(x) ≥
// topKSpan·len(dst)), and whether any of those elements is NaN. FMAX and
// FMAXV return NaN when an operand is NaN, so a span's maximum is NaN exactly
// when the span holds one (FCMP of the maximum with itself, unordered, ORed
// into the result); +0 ranks above −0.
func genSpanMaxNEON(f *neonFile) {
	f.text("spanMaxNEON", "(dst []float32, x []float32) bool", "$0-49",
		"sets dst[j] = max x[j·512 : (j+1)·512] for j < len(dst) (len(x) ≥ 512·len(dst)) and reports whether any of those x is NaN.")
	const unroll = 4
	if topKSpan%(unroll*4) != 0 {
		panic("spanMaxNEON: span not a multiple of the unrolled block")
	}
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD dst_len+8(FP), R1")
	f.op("MOVD x_base+24(FP), R2")
	f.op("MOVD $0, R7")
	f.op("CBZ R1, done")
	acc, xv := vAcc, vIn
	f.label("span")
	f.op("VLD1.P 64(R2), %s", neonList(acc, unroll))
	f.op("MOVD $%d, R12", topKSpan/(unroll*4)-1)
	f.label("block")
	f.op("VLD1.P 64(R2), %s", neonList(xv, unroll))
	for j := Reg(0); j < unroll; j++ {
		f.v(FMAX(acc+j, acc+j, xv+j))
	}
	f.op("SUBS $1, R12, R12")
	f.op("BNE block")
	f.sumTree(FMAX, neonSeq(acc, unroll)...)
	f.v(FMAXV(acc, acc))
	f.op("FMOVS.P F%d, 4(R0)", acc)
	f.op("FCMPS F%d, F%d", acc, acc)
	f.op("CSET VS, R8")
	f.op("ORR R8, R7, R7")
	f.op("SUBS $1, R1, R1")
	f.op("BNE span")
	f.label("done")
	f.op("MOVB R7, ret+48(FP)")
	f.op("RET")
}

// genFirstAboveNEON emits firstAboveNEON(x []float32, t float32) int, the
// smallest i with !(x[i] ≤ t) (x[i] > t or NaN), or len(x). Sixteen elements
// a step are compared (FCMGE t ≥ x, false on NaN) and the four masks ANDed;
// a lane left clear (UMINV) means a hit among them, which the scalar loop
// then locates; it also takes the last len(x) mod 16 elements.
func genFirstAboveNEON(f *neonFile) {
	f.text("firstAboveNEON", "(x []float32, t float32) int", "$0-40",
		"returns the smallest i with !(x[i] ≤ t), or len(x).")
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD x_len+8(FP), R1")
	tv := vBcast
	f.op("FMOVS t+24(FP), F%d", tv)
	f.v(DUPE(tv, tv, 0))
	f.op("MOVD R0, R2") // the start of x
	f.op("LSR $4, R1, R12")
	f.op("CBZ R12, scalar")
	xv, c := vIn, vIn+4
	f.label("block")
	f.op("VLD1 (R0), %s", neonList(xv, 4))
	for j := Reg(0); j < 4; j++ {
		f.v(FCMGE(c+j, tv, xv+j))
	}
	f.v(AND(c, c, c+1))
	f.v(AND(c+2, c+2, c+3))
	f.v(AND(c, c, c+2))
	f.v(UMINV(c, c))
	f.op("FMOVS F%d, R9", c)
	f.op("CBNZW R9, miss") // every lane ≤ t
	f.comment("a hit among these 16: the scalar loop finds it")
	f.op("MOVD $16, R12")
	f.op("B scan")
	f.label("miss")
	f.op("ADD $64, R0, R0")
	f.op("SUBS $1, R12, R12")
	f.op("BNE block")
	f.label("scalar")
	f.op("AND $15, R1, R12")
	f.label("scan")
	f.op("CBZ R12, none")
	f.label("scanLoop")
	f.op("FMOVS (R0), F%d", xv)
	f.comment("x[i] > t or unordered: HI")
	f.op("FCMPS F%d, F%d", tv, xv)
	f.op("BHI hit")
	f.op("ADD $4, R0, R0")
	f.op("SUBS $1, R12, R12")
	f.op("BNE scanLoop")
	f.label("none")
	f.op("MOVD R1, ret+32(FP)")
	f.op("RET")
	f.label("hit")
	f.op("SUB R2, R0, R0")
	f.op("LSR $2, R0, R0")
	f.op("MOVD R0, ret+32(FP)")
	f.op("RET")
}
