package main

import . "github.com/heedml/heed/asmgen/arm64"

func init() {
	registerNEON("softmax", genExpShiftSumNEON)
	registerNEON("additive", genAdditiveNEON)
}

// neonMathTmp returns k ≤ 2 sets of the 6 temporaries neonMath needs, from
// vIn+2 up (vIn, vIn+1 hold the inputs).
func neonMathTmp(k int) [][]Reg {
	t := make([][]Reg, k)
	for j := range t {
		t[j] = neonSeq(vIn+2+Reg(6*j), 6)
	}
	return t
}

// genExpShiftSumNEON emits the exp pass of softmax: dst[i] = e^(x[i]−m),
// returning Σ dst[i]. The Go side has checked that m = max x is finite, so
// x[i] − m is ≤ 0 or −Inf, never NaN: only the flush to +0 of exp applies.
func genExpShiftSumNEON(f *neonFile) {
	f.text("expShiftSumNEON", "(dst []float32, x []float32, m float32) float32", "$0-60",
		"sets dst[i] = e^(x[i]−m) for i < len(x) and returns their sum; m is finite and ≥ every x[i]; dst may be x.")
	x := neonSeq(vIn, 2)      // inputs, below neonMathTmp's temporaries
	sum := neonSeq(vAcc+4, 2) // the running sums
	vm := vConst - 1          // m broadcast, below neonMath's constants
	f.op("MOVD dst_base+0(FP), R1")
	f.op("MOVD x_base+24(FP), R0")
	f.op("MOVD x_len+32(FP), R2")
	f.op("FMOVS m+48(FP), F%d", vm)
	f.v(DUPE(vm, vm, 0))
	m := newNEONMath(f, neonExpFlush)
	f.zero(sum...)
	f.countLoop("sm8", "R2", "R11", 3, func() {
		f.op("VLD1.P 32(R0), %s", neonList(x[0], 2))
		f.v(FSUB(x[0], x[0], vm))
		f.v(FSUB(x[1], x[1], vm))
		res := m.exp(x, neonMathTmp(2), false)
		f.op("VST1.P [%s], 16(R1)", neonVec(res[0]))
		f.op("VST1.P [%s], 16(R1)", neonVec(res[1]))
		f.v(FADD(sum[0], sum[0], res[0]))
		f.v(FADD(sum[1], sum[1], res[1]))
	})
	f.op("TBZ $2, R2, sm4Done")
	f.op("VLD1.P 16(R0), %s", neonList(x[0], 1))
	f.v(FSUB(x[0], x[0], vm))
	res := m.exp(x[:1], neonMathTmp(1), false)
	f.op("VST1.P [%s], 16(R1)", neonVec(res[0]))
	f.v(FADD(sum[0], sum[0], res[0]))
	f.label("sm4Done")
	f.op("AND $3, R2, R2")
	f.v(FADD(sum[0], sum[0], sum[1]))
	f.hsum(sum[0])
	f.comment("one element at a time in lane 0; only lane 0 is summed")
	f.tailLoop("sm1", "R2", func() {
		f.op("FMOVS.P 4(R0), F%d", x[0])
		f.op("FSUBS F%d, F%d, F%d", vm, x[0], x[0])
		res := m.exp(x[:1], neonMathTmp(1), false)
		f.op("FMOVS.P F%d, 4(R1)", res[0])
		f.op("FADDS F%d, F%d, F%d", res[0], sum[0], sum[0])
	})
	f.op("FMOVS F%d, ret+56(FP)", sum[0])
	f.op("RET")
}

// genAdditiveNEON emits additiveScoreNEON: two rows of K at a time share the
// loads of q and v; the tanh stays in registers. The last len(q)%4 columns
// run in lane 0 only (FMOVS zeroes the other lanes, where tanh(0+0)·0 adds 0).
func genAdditiveNEON(f *neonFile) {
	f.text("additiveScoreNEON", "(dst []float32, k []float32, ldk int, q []float32, v []float32)", "$0-104",
		"sets dst[s] = Σ_i v[i]·tanh(q[i] + k[s·ldk+i]) for s < len(dst), i < len(q) (≥ 1).")
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD dst_len+8(FP), R5")
	f.op("MOVD k_base+24(FP), R1")
	f.op("MOVD ldk+48(FP), R2")
	f.op("MOVD q_base+56(FP), R3")
	f.op("MOVD q_len+64(FP), R4")
	f.op("MOVD v_base+80(FP), R6")
	f.op("LSL $2, R2, R2")
	m := newNEONMath(f, neonTanh)
	x := neonSeq(vIn, 2)      // q + a column of each row, below neonMathTmp's temporaries
	qv, vv := vAcc, vAcc+1    // q and v
	acc := neonSeq(vAcc+4, 2) // one accumulator per row
	rows := func(p string, k int) {
		f.op("MOVD R1, R7")
		if k == 2 {
			f.op("ADD R2, R1, R8")
		}
		f.op("MOVD R3, R9")
		f.op("MOVD R6, R10")
		f.op("MOVD R4, R12")
		f.zero(acc...)
		xs := x[:k]
		body := func() {
			for _, x := range xs {
				f.v(FADD(x, x, qv)) // q + K[s]
			}
			ys := m.tanh(xs, neonMathTmp(k))
			for j, y := range ys {
				f.v(FMLA(acc[j], y, vv))
			}
		}
		f.countLoop(p+"cols4", "R12", "R11", 2, func() {
			f.op("VLD1.P 16(R9), %s", neonList(qv, 1))
			f.op("VLD1.P 16(R10), %s", neonList(vv, 1))
			for j, x := range xs {
				f.op("VLD1.P 16(R%d), %s", 7+j, neonList(x, 1))
			}
			body()
		})
		f.tailLoop(p+"cols1", "R12", func() {
			f.op("FMOVS.P 4(R9), F%d", qv)
			f.op("FMOVS.P 4(R10), F%d", vv)
			for j, x := range xs {
				f.op("FMOVS.P 4(R%d), F%d", 7+j, x)
			}
			body()
		})
	}
	f.comment("two rows at a time")
	f.op("LSR $1, R5, R13")
	f.op("CBZ R13, rows1")
	f.label("rows2")
	rows("r2", 2)
	f.v(FADDP(acc[0], acc[0], acc[1]))
	f.v(FADDP(acc[0], acc[0], acc[0]))
	f.op("FMOVD.P F%d, 8(R0) // dst[s], dst[s+1]", acc[0])
	f.op("ADD R2<<1, R1, R1")
	f.op("SUBS $1, R13, R13")
	f.op("BNE rows2")
	f.label("rows1")
	f.op("TBZ $0, R5, done")
	rows("r1", 1)
	f.hsum(acc[0])
	f.op("FMOVS F%d, (R0)", acc[0])
	f.label("done")
	f.op("RET")
}
