package main

import . "github.com/heedml/heed/asmgen/arm64"

func init() {
	registerNEON("logsoftmax", func(f *neonFile) {
		genExpSumNEON(f)
		genShift2NEON(f)
	})
}

// genExpSumNEON emits the sum pass of LogSoftmax, Σ e^(x[i]−m), the exp pass
// of softmax (genExpShiftSumNEON) without its stores. The Go side has checked
// that m = max x is finite, so x[i] − m is ≤ 0 or −Inf, never NaN: only the
// flush to +0 of exp applies.
func genExpSumNEON(f *neonFile) {
	f.text("expSumNEON", "(x []float32, m float32) float32", "$0-36",
		"returns Σ e^(x[i]−m) for a finite m ≥ max x and x free of NaN.")
	x := neonSeq(vIn, 2)      // inputs, below neonMathTmp's temporaries
	sum := neonSeq(vAcc+4, 2) // the running sums
	vm := vConst - 1          // m broadcast, below neonMath's constants
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD x_len+8(FP), R2")
	f.op("FMOVS m+24(FP), F%d", vm)
	f.v(DUPE(vm, vm, 0))
	m := newNEONMath(f, neonExpFlush)
	f.zero(sum...)
	f.countLoop("es8", "R2", "R11", 3, func() {
		f.op("VLD1.P 32(R0), %s", neonList(x[0], 2))
		f.v(FSUB(x[0], x[0], vm))
		f.v(FSUB(x[1], x[1], vm))
		res := m.exp(x, neonMathTmp(2), false)
		f.v(FADD(sum[0], sum[0], res[0]))
		f.v(FADD(sum[1], sum[1], res[1]))
	})
	f.op("TBZ $2, R2, es4Done")
	f.op("VLD1.P 16(R0), %s", neonList(x[0], 1))
	f.v(FSUB(x[0], x[0], vm))
	res := m.exp(x[:1], neonMathTmp(1), false)
	f.v(FADD(sum[0], sum[0], res[0]))
	f.label("es4Done")
	f.op("AND $3, R2, R2")
	f.v(FADD(sum[0], sum[0], sum[1]))
	f.hsum(sum[0])
	f.comment("one element at a time in lane 0; only lane 0 is summed")
	f.tailLoop("es1", "R2", func() {
		f.op("FMOVS.P 4(R0), F%d", x[0])
		f.op("FSUBS F%d, F%d, F%d", vm, x[0], x[0])
		res := m.exp(x[:1], neonMathTmp(1), false)
		f.op("FADDS F%d, F%d, F%d", res[0], sum[0], sum[0])
	})
	f.op("FMOVS F%d, ret+32(FP)", sum[0])
	f.op("RET")
}

// genShift2NEON emits shift2NEON(dst, x, a, b): dst[i] = (x[i] − a) − b, each
// subtraction rounded, sixteen elements per iteration, then four, then one;
// every iteration loads before it stores, so dst may be x.
func genShift2NEON(f *neonFile) {
	f.text("shift2NEON", "(dst []float32, x []float32, a float32, b float32)", "$0-56",
		"sets dst[i] = (x[i] − a) − b for i < len(x); len(dst) ≥ len(x), dst may be x.")
	va, vb := vAlpha, vAlpha-1
	f.op("FMOVS a+48(FP), F%d", va)
	f.v(DUPE(va, va, 0))
	f.op("FMOVS b+52(FP), F%d", vb)
	f.v(DUPE(vb, vb, 0))
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD x_base+24(FP), R1")
	f.op("MOVD x_len+32(FP), R3")
	xv := vIn
	body := func(k int) {
		f.op("VLD1.P %d(R1), %s", 16*k, neonList(xv, k))
		for i := Reg(0); i < Reg(k); i++ {
			f.v(FSUB(xv+i, xv+i, va))
		}
		for i := Reg(0); i < Reg(k); i++ {
			f.v(FSUB(xv+i, xv+i, vb))
		}
		f.op("VST1.P %s, %d(R0)", neonList(xv, k), 16*k)
	}
	f.countLoop("sh16", "R3", "R11", 4, func() { body(4) })
	f.countLoop("sh4", "R3", "R11", 2, func() { body(1) })
	f.tailLoop("sh1", "R3", func() {
		f.op("FMOVS.P 4(R1), F%d", xv)
		f.op("FSUBS F%d, F%d, F%d", va, xv, xv)
		f.op("FSUBS F%d, F%d, F%d", vb, xv, xv)
		f.op("FMOVS.P F%d, 4(R0)", xv)
	})
	f.op("RET")
}
