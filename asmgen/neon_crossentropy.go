package main

import . "github.com/heedml/heed/asmgen/arm64"

func init() { registerNEON("crossentropy", genCrossEntropyExpNEON) }

// genCrossEntropyExpNEON emits crossEntropyExpNEON, the NEON crossEntropyExp
// (asmgen/crossentropy.go; fallback.CrossEntropyExp is the contract): the
// exponential pass of softmax (genExpShiftSumNEON) that also sums x[i] − m,
// then e_t, c = scale/Σ (FDIVS) and the gradient pass dst[i] = −shift +
// dst[i]·c, one FMLA (fused) per vector, sixteen elements an iteration, then
// four, then one in lane 0 (FMADDS, the same rounding). The Go side has
// checked that m = max x is finite and x free of NaN.
func genCrossEntropyExpNEON(f *neonFile) {
	f.text("crossEntropyExpNEON", "(dst []float32, x []float32, t int, m float32, scale float32, shift float32) (sum float32, dsum float32, et float32)", "$0-84",
		"sets eᵢ = e^(x[i]−m), returns Σeᵢ, Σ(x[i]−m) and e_t, and sets dst[i] = fma(eᵢ, scale/Σeᵢ, −shift); len(x) ≥ 1, m = max x finite, x free of NaN; dst may be x.")
	x := neonSeq(vIn, 2)      // inputs, below neonMathTmp's temporaries
	sum := neonSeq(vAcc+4, 2) // the running sums of eᵢ
	dsum := neonSeq(vAcc, 2)  // the running sums of x[i] − m
	vm := vConst - 1          // m broadcast, below neonMath's constants
	et, cv := vAcc+2, vAcc+3  // e_t; c broadcast
	nb := Reg(29)             // −shift broadcast, above neonExpFlush's constants
	f.op("MOVD dst_base+0(FP), R1")
	f.op("MOVD R1, R3")
	f.op("MOVD x_base+24(FP), R0")
	f.op("MOVD x_len+32(FP), R2")
	f.op("MOVD R2, R4")
	f.op("FMOVS m+56(FP), F%d", vm)
	f.v(DUPE(vm, vm, 0))
	m := newNEONMath(f, neonExpFlush)
	f.zero(sum...)
	f.zero(dsum...)
	f.countLoop("xe8", "R2", "R11", 3, func() {
		f.op("VLD1.P 32(R0), %s", neonList(x[0], 2))
		f.v(FSUB(x[0], x[0], vm))
		f.v(FSUB(x[1], x[1], vm))
		res := m.exp(x, neonMathTmp(2), false)
		f.op("VST1.P [%s], 16(R1)", neonVec(res[0]))
		f.op("VST1.P [%s], 16(R1)", neonVec(res[1]))
		f.v(FADD(sum[0], sum[0], res[0]))
		f.v(FADD(sum[1], sum[1], res[1]))
		f.v(FADD(dsum[0], dsum[0], x[0]))
		f.v(FADD(dsum[1], dsum[1], x[1]))
	})
	f.op("TBZ $2, R2, xe4Done")
	f.op("VLD1.P 16(R0), %s", neonList(x[0], 1))
	f.v(FSUB(x[0], x[0], vm))
	res := m.exp(x[:1], neonMathTmp(1), false)
	f.op("VST1.P [%s], 16(R1)", neonVec(res[0]))
	f.v(FADD(sum[0], sum[0], res[0]))
	f.v(FADD(dsum[0], dsum[0], x[0]))
	f.label("xe4Done")
	f.op("AND $3, R2, R2")
	f.v(FADD(sum[0], sum[0], sum[1]))
	f.hsum(sum[0])
	f.v(FADD(dsum[0], dsum[0], dsum[1]))
	f.hsum(dsum[0])
	f.comment("one element at a time in lane 0; only lane 0 is summed")
	f.tailLoop("xe1", "R2", func() {
		f.op("FMOVS.P 4(R0), F%d", x[0])
		f.op("FSUBS F%d, F%d, F%d", vm, x[0], x[0])
		res := m.exp(x[:1], neonMathTmp(1), false)
		f.op("FMOVS.P F%d, 4(R1)", res[0])
		f.op("FADDS F%d, F%d, F%d", res[0], sum[0], sum[0])
		f.op("FADDS F%d, F%d, F%d", x[0], dsum[0], dsum[0])
	})

	f.comment("e_t, c = scale/Σ, −shift")
	f.op("MOVD t+48(FP), R5")
	f.op("ADD R5<<2, R3, R6")
	f.op("FMOVS (R6), F%d", et)
	f.op("FMOVS scale+60(FP), F%d", cv)
	f.op("FDIVS F%d, F%d, F%d", sum[0], cv, cv)
	f.v(DUPE(cv, cv, 0))
	f.op("FMOVS shift+64(FP), F%d", nb)
	f.op("FNEGS F%d, F%d", nb, nb)
	f.v(DUPE(nb, nb, 0))

	f.comment("dst[i] = −shift + dst[i]·c")
	in, out := neonSeq(vIn, 4), neonSeq(vIn+4, 4)
	body := func(k int) {
		f.op("VLD1 (R3), %s", neonList(in[0], k))
		for i := 0; i < k; i++ {
			f.v(MOV(out[i], nb))
		}
		for i := 0; i < k; i++ {
			f.v(FMLA(out[i], in[i], cv))
		}
		f.op("VST1.P %s, %d(R3)", neonList(out[0], k), 16*k)
	}
	f.countLoop("xg16", "R4", "R11", 4, func() { body(4) })
	f.countLoop("xg4", "R4", "R11", 2, func() { body(1) })
	f.tailLoop("xg1", "R4", func() {
		f.op("FMOVS (R3), F%d", in[0])
		f.op("FMADDS F%d, F%d, F%d, F%d", cv, nb, in[0], in[0])
		f.op("FMOVS.P F%d, 4(R3)", in[0])
	})
	f.op("FMOVS F%d, sum+72(FP)", sum[0])
	f.op("FMOVS F%d, dsum+76(FP)", dsum[0])
	f.op("FMOVS F%d, et+80(FP)", et)
	f.op("RET")
}
