package main

import . "github.com/heedml/heed/asmgen/arm64"

func init() {
	registerNEON("softmax", genExpShiftSumNEON)
	registerNEON("additive", genAdditiveNEON)
}

// neonMathTmp returns k sets of the 6 temporaries neonMath needs, from V2 up
// (V0, V1 hold the inputs).
func neonMathTmp(k int) [][]Reg {
	t := make([][]Reg, k)
	for j := range t {
		for i := 0; i < 6; i++ {
			t[j] = append(t[j], Reg(2+6*j+i))
		}
	}
	return t
}

// genExpShiftSumNEON emits the exp pass of softmax: dst[i] = e^(x[i]−m),
// returning Σ dst[i]. The Go side has checked that m = max x is finite, so
// x[i] − m is ≤ 0 or −Inf, never NaN: only the flush to +0 of exp applies.
func genExpShiftSumNEON(f *neonFile) {
	f.text("expShiftSumNEON", "(dst []float32, x []float32, m float32) float32", "$0-60",
		"sets dst[i] = e^(x[i]−m) for i < len(x) and returns their sum; m is finite and ≥ every x[i]; dst may be x.")
	f.op("MOVD dst_base+0(FP), R1")
	f.op("MOVD x_base+24(FP), R0")
	f.op("MOVD x_len+32(FP), R2")
	f.op("FMOVS m+48(FP), F22")
	f.op("VDUP V22.S[0], V22.S4")
	m := newNEONMath(f, neonExpFlush)
	f.zero(20, 21)
	f.countLoop("sm8", "R2", "R11", 3, func() {
		f.op("VLD1.P 32(R0), %s", neonList(0, 2))
		f.w(FSUB(0, 0, 22))
		f.w(FSUB(1, 1, 22))
		res := m.exp([]Reg{0, 1}, neonMathTmp(2), false)
		f.op("VST1.P [%s], 16(R1)", neonVec(res[0]))
		f.op("VST1.P [%s], 16(R1)", neonVec(res[1]))
		f.w(FADD(20, 20, res[0]))
		f.w(FADD(21, 21, res[1]))
	})
	f.op("TBZ $2, R2, sm4Done")
	f.op("VLD1.P 16(R0), %s", neonList(0, 1))
	f.w(FSUB(0, 0, 22))
	res := m.exp([]Reg{0}, neonMathTmp(1), false)
	f.op("VST1.P [%s], 16(R1)", neonVec(res[0]))
	f.w(FADD(20, 20, res[0]))
	f.label("sm4Done")
	f.op("AND $3, R2, R2")
	f.w(FADD(20, 20, 21))
	f.hsum(20)
	f.comment("one element at a time in lane 0; only lane 0 is summed")
	f.tailLoop("sm1", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FSUBS F22, F0, F0")
		res := m.exp([]Reg{0}, neonMathTmp(1), false)
		f.op("FMOVS.P F%d, 4(R1)", res[0])
		f.op("FADDS F%d, F20, F20", res[0])
	})
	f.op("FMOVS F20, ret+56(FP)")
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
	rows := func(p string, k int) {
		f.op("MOVD R1, R7")
		if k == 2 {
			f.op("ADD R2, R1, R8")
		}
		f.op("MOVD R3, R9")
		f.op("MOVD R6, R10")
		f.op("MOVD R4, R12")
		f.zero(20, 21)
		xs := []Reg{0, 1}[:k]
		body := func() {
			for _, x := range xs {
				f.w(FADD(x, x, 16)) // q + K[s]
			}
			ys := m.tanh(xs, neonMathTmp(k))
			for j, y := range ys {
				f.fmla(20+Reg(j), y, 17)
			}
		}
		f.countLoop(p+"cols4", "R12", "R11", 2, func() {
			f.op("VLD1.P 16(R9), %s", neonList(16, 1))
			f.op("VLD1.P 16(R10), %s", neonList(17, 1))
			for j := range xs {
				f.op("VLD1.P 16(R%d), %s", 7+j, neonList(Reg(j), 1))
			}
			body()
		})
		f.tailLoop(p+"cols1", "R12", func() {
			f.op("FMOVS.P 4(R9), F16")
			f.op("FMOVS.P 4(R10), F17")
			for j := range xs {
				f.op("FMOVS.P 4(R%d), F%d", 7+j, j)
			}
			body()
		})
	}
	f.comment("two rows at a time")
	f.op("LSR $1, R5, R13")
	f.op("CBZ R13, rows1")
	f.label("rows2")
	rows("r2", 2)
	f.w(FADDP(20, 20, 21))
	f.w(FADDP(20, 20, 20))
	f.op("FMOVD.P F20, 8(R0) // dst[s], dst[s+1]")
	f.op("ADD R2<<1, R1, R1")
	f.op("SUBS $1, R13, R13")
	f.op("BNE rows2")
	f.label("rows1")
	f.op("TBZ $0, R5, done")
	rows("r1", 1)
	f.hsum(20)
	f.op("FMOVS F20, (R0)")
	f.label("done")
	f.op("RET")
}
