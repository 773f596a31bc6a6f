package main

import (
	"fmt"

	. "github.com/heedml/heed/asmgen/arm64"
)

func init() {
	registerNEON("backward", func(f *neonFile) {
		genRowsReduceNEON(f, softmaxBackwardNEONOp)
		genRowsReduceNEON(f, logSoftmaxBackwardNEONOp)
		for _, op := range backwardBinOpsNEON {
			genBackwardBinOpNEON(f, op)
		}
		genSoftmaxRecomputeNEON(f)
		genSoftmaxBackwardBlockNEON(f)
	})
	registerNEON("additive_backward", func(f *neonFile) {
		genAdditiveBackwardNEON(f, true)
		genAdditiveBackwardNEON(f, false)
	})
}

// The NEON backward kernels, the algorithms of backward.go and
// additive_backward.go four lanes at a time. Tails go one element at a time
// in lane 0 of whole vectors (FMOVS zeroes the other lanes; only lane 0 is
// stored or summed).

// neonZero is the register the backward kernels keep zero in, for the
// compares with 0.
const neonZero = vAcc + 6 // V22

// rowsReduceNEONOp is a rowsReduceOp for NEON: term adds the contribution of
// the vectors y, dy to acc (tmp is a free register); out sets d (which holds
// dy) to dx from y, with c broadcast; m, if not nil, is the neonMath the
// kernel sets up (its constants from vConst up) and tmp the temporaries.
type rowsReduceNEONOp struct {
	kernel, doc string
	math        int // the neonMath kind, or −1 for none
	perIter     int // vectors of the element-wise pass per iteration (≤ 4)
	readsY      bool
	term        func(f *neonFile, y, dy, acc, tmp Reg)
	out         func(f *neonFile, m *neonMath, y []Reg, d []Reg, c Reg, tmp [][]Reg)
}

var softmaxBackwardNEONOp = rowsReduceNEONOp{
	kernel: "softmaxBackwardNEON", math: -1, perIter: 4, readsY: true,
	doc: "sets each of rows rows of dx (row stride ldx) to y∘(dy − ⟨y, dy⟩) of the same rows of y and dy (strides ldy, lddy), cols ≥ 1 columns, the terms where y = 0 left out of the sum and dx = +0 there; dx may be y or dy.",
	term: func(f *neonFile, y, dy, acc, tmp Reg) {
		f.v(FCMEQ(tmp, y, neonZero)) // y = 0 (false for NaN)
		f.v(BIC(tmp, dy, tmp))
		f.v(FMLA(acc, y, tmp))
	},
	out: func(f *neonFile, _ *neonMath, y, d []Reg, c Reg, tmp [][]Reg) {
		for j := range d {
			f.v(FSUB(d[j], d[j], c))
			f.v(FMUL(d[j], d[j], y[j]))
			f.v(FCMEQ(tmp[j][0], y[j], neonZero))
			f.v(BIC(d[j], d[j], tmp[j][0]))
		}
	},
}

var logSoftmaxBackwardNEONOp = rowsReduceNEONOp{
	kernel: "logSoftmaxBackwardNEON", math: neonExp, perIter: 2,
	doc:  "sets each of rows rows of dx (row stride ldx) to dy − e^y·Σ dy of the same rows of y and dy (strides ldy, lddy), cols ≥ 1 columns; dx may be y or dy.",
	term: func(f *neonFile, _, dy, acc, _ Reg) { f.v(FADD(acc, acc, dy)) },
	out: func(f *neonFile, m *neonMath, y, d []Reg, c Reg, tmp [][]Reg) {
		e := m.exp(y, tmp, true)
		for j := range d {
			f.v(FMLS(d[j], e[j], c)) // dy − e^y·Σ, rounded once
		}
	},
}

// genRowsReduceNEON emits op.kernel(dx, y, dy []float32, rows, cols, ldx,
// ldy, lddy int): genRowsReduce's two passes per row, sixteen elements per
// iteration of the reduction (four accumulators) and 4·perIter of the
// element-wise pass, then four, then one at a time.
func genRowsReduceNEON(f *neonFile, op rowsReduceNEONOp) {
	f.text(op.kernel, "(dx []float32, y []float32, dy []float32, rows int, cols int, ldx int, ldy int, lddy int)", "$0-112", op.doc)
	f.op("MOVD dx_base+0(FP), R0")
	f.op("MOVD y_base+24(FP), R1")
	f.op("MOVD dy_base+48(FP), R2")
	f.op("MOVD ldx+88(FP), R3")
	f.op("MOVD ldy+96(FP), R4")
	f.op("MOVD lddy+104(FP), R5")
	f.op("MOVD rows+72(FP), R6")
	f.op("MOVD cols+80(FP), R7")
	for _, r := range []string{"R3", "R4", "R5"} {
		f.op("LSL $2, %s, %s", r, r)
	}
	var m *neonMath
	if op.math >= 0 {
		m = newNEONMath(f, op.math)
	}
	f.zero(neonZero)
	c := vAcc + 5 // V21: the reduction, broadcast
	acc := neonSeq(vAcc, 4)
	yv, dyv, tv := vIn, vIn+4, vIn+8
	p := op.kernel[:len(op.kernel)-4]
	f.label(p + "Row")

	// Pass 1.
	f.op("MOVD R1, R8")
	f.op("MOVD R2, R9")
	f.op("MOVD R7, R12")
	f.zero(acc...)
	load := func(k int) {
		if op.readsY {
			f.op("VLD1.P %d(R8), %s", 16*k, neonList(yv, k))
		}
		f.op("VLD1.P %d(R9), %s", 16*k, neonList(dyv, k))
	}
	f.countLoop(p+"Sum16", "R12", "R11", 4, func() {
		load(4)
		for j := Reg(0); j < 4; j++ {
			op.term(f, yv+j, dyv+j, acc[j], tv+j)
		}
	})
	f.countLoop(p+"Sum4", "R12", "R11", 2, func() {
		load(1)
		op.term(f, yv, dyv, acc[0], tv)
	})
	f.sumTree(FADD, acc...)
	f.hsum(acc[0])
	f.tailLoop(p+"Sum1", "R12", func() {
		if op.readsY {
			f.op("FMOVS.P 4(R8), F%d", yv)
		}
		f.op("FMOVS.P 4(R9), F%d", dyv)
		op.term(f, yv, dyv, acc[0], tv)
	})
	f.v(DUPE(c, acc[0], 0))

	// Pass 2.
	f.op("MOVD R1, R8")
	f.op("MOVD R2, R9")
	f.op("MOVD R0, R10")
	f.op("MOVD R7, R12")
	// y in V0 up; dy, then dx, above neonMath's temporaries (V14, V15 for
	// two vectors), or in V4–V7 for four vectors without neonMath.
	k := op.perIter
	x := neonSeq(vIn, k)
	d := neonSeq(vIn+14, k)
	if k == 4 {
		d = neonSeq(vIn+4, 4)
	}
	tmp := func(n int) [][]Reg {
		if op.math < 0 {
			t := make([][]Reg, n)
			for j := range t {
				t[j] = []Reg{vIn + 8 + Reg(j)}
			}
			return t
		}
		return neonMathTmp(n)
	}
	body := func(n int) {
		f.op("VLD1.P %d(R8), %s", 16*n, neonList(x[0], n))
		f.op("VLD1.P %d(R9), %s", 16*n, neonList(d[0], n))
		op.out(f, m, x[:n], d[:n], c, tmp(n))
		f.op("VST1.P %s, %d(R10)", neonList(d[0], n), 16*n)
	}
	shift := uint(2)
	for 1<<shift < 4*k {
		shift++
	}
	f.countLoop(fmt.Sprintf("%sOut%d", p, 4*k), "R12", "R11", shift, func() { body(k) })
	if k > 1 {
		f.countLoop(p+"Out4", "R12", "R11", 2, func() { body(1) })
	}
	f.tailLoop(p+"Out1", "R12", func() {
		f.op("FMOVS.P 4(R8), F%d", x[0])
		f.op("FMOVS.P 4(R9), F%d", d[0])
		op.out(f, m, x[:1], d[:1], c, tmp(1))
		f.op("FMOVS.P F%d, 4(R10)", d[0])
	})
	f.op("ADD R3, R0, R0")
	f.op("ADD R4, R1, R1")
	f.op("ADD R5, R2, R2")
	f.op("SUBS $1, R6, R6")
	f.op("BNE %sRow", p)
	f.op("RET")
}

// backwardBinOpNEON is an activation's backward kernel for NEON: d = f(y, dy)
// for vectors y and dy (d may be dy's register), one the constant 1.
type backwardBinOpNEON struct {
	kernel, what string
	vec          func(f *neonFile, d, y, dy, one Reg)
}

var backwardBinOpsNEON = []backwardBinOpNEON{
	{kernel: "tanhBackwardNEON", what: "(1 − x[i]²)·y[i] (1 − x² fused, rounded once)",
		vec: func(f *neonFile, d, y, dy, one Reg) {
			f.v(MOV(d, one))
			f.v(FMLS(d, y, y)) // 1 − y²
			f.v(FMUL(d, d, dy))
		}},
	{kernel: "sigmoidBackwardNEON", what: "(x[i] − x[i]²)·y[i] (x − x² fused, rounded once)",
		vec: func(f *neonFile, d, y, dy, _ Reg) {
			f.v(MOV(d, y))
			f.v(FMLS(d, y, y)) // y − y²
			f.v(FMUL(d, d, dy))
		}},
}

// genBackwardBinOpNEON emits op.kernel(dst, x, y []float32): sixteen
// elements per iteration, then four, then one; every iteration loads before
// it stores, so dst may be x or y.
func genBackwardBinOpNEON(f *neonFile, op backwardBinOpNEON) {
	f.text(op.kernel, "(dst []float32, x []float32, y []float32)", "$0-72",
		"sets dst[i] = "+op.what+" for i < len(x); len(dst), len(y) ≥ len(x); dst may be x or y.")
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD x_base+24(FP), R1")
	f.op("MOVD x_len+32(FP), R3")
	f.op("MOVD y_base+48(FP), R2")
	one := vAlpha
	f.dupConst(one, 0x3f800000, "1")
	xv, yv, dv := vIn, vIn+4, vIn+8
	p := op.kernel[:len(op.kernel)-4]
	body := func(k int) {
		f.op("VLD1.P %d(R1), %s", 16*k, neonList(xv, k))
		f.op("VLD1.P %d(R2), %s", 16*k, neonList(yv, k))
		for i := Reg(0); i < Reg(k); i++ {
			op.vec(f, dv+i, xv+i, yv+i, one)
		}
		f.op("VST1.P %s, %d(R0)", neonList(dv, k), 16*k)
	}
	f.countLoop(p+"16", "R3", "R11", 4, func() { body(4) })
	f.countLoop(p+"4", "R3", "R11", 2, func() { body(1) })
	f.tailLoop(p+"1", "R3", func() {
		f.op("FMOVS.P 4(R1), F%d", xv)
		f.op("FMOVS.P 4(R2), F%d", yv)
		op.vec(f, dv, xv, yv, one)
		f.op("FMOVS.P F%d, 4(R0)", dv)
	})
	f.op("RET")
}

// genSoftmaxRecomputeNEON emits softmaxRecomputeNEON(p, s []float32, rows,
// cols, ldp, lds, d int, scale float32, lse []float32): genSoftmaxRecompute's
// rows, the argument −lse + s·scale one FMLA, Exp's code (expNEON's, every
// special value), eight elements per iteration, then four, then one; the
// zeros past the band four at a time, then one.
func genSoftmaxRecomputeNEON(f *neonFile) {
	f.text("softmaxRecomputeNEON", "(p []float32, s []float32, rows int, cols int, ldp int, lds int, d int, scale float32, lse []float32)", "$0-120",
		"sets p[i][j] = e^(scale·s[i][j] − lse[i]) for j < min(cols, max(0, d+i)) and 0 for the other j (every j where lse[i] = −Inf), for rows ≥ 1 rows of cols ≥ 1 columns (row strides ldp, lds); p may be s.")
	f.op("MOVD p_base+0(FP), R0")
	f.op("MOVD s_base+24(FP), R1")
	f.op("MOVD ldp+64(FP), R2")
	f.op("MOVD lds+72(FP), R3")
	f.op("MOVD rows+48(FP), R4")
	f.op("MOVD cols+56(FP), R5")
	f.op("MOVD d+80(FP), R6")
	f.op("MOVD lse_base+96(FP), R7")
	f.op("LSL $2, R2, R2")
	f.op("LSL $2, R3, R3")
	vscale, negL := vAcc+5, vAcc+4 // V21, V20
	f.op("FMOVS scale+88(FP), F%d", vscale)
	f.v(DUPE(vscale, vscale, 0))
	m := newNEONMath(f, neonExp)
	f.zero(neonZero)
	f.op("MOVD $0, R8") // the row
	f.label("rcRow")
	f.comment("n = min(cols, max(0, d+i)), 0 where lse[i] = −Inf")
	f.op("ADD R8, R6, R9")
	f.op("CMP $0, R9")
	f.op("CSEL LT, ZR, R9, R9")
	f.op("CMP R5, R9")
	f.op("CSEL GT, R5, R9, R9")
	f.op("ADD R8<<2, R7, R10")
	f.op("MOVWU (R10), R10")
	f.op("MOVW $0xff800000, R11")
	f.op("CMPW R11, R10")
	f.op("CSEL EQ, ZR, R9, R9")
	f.op("FMOVS R10, F%d", negL)
	f.op("FNEGS F%d, F%d", negL, negL)
	f.v(DUPE(negL, negL, 0))
	f.op("MOVD R1, R12")
	f.op("MOVD R0, R13")
	f.op("MOVD R9, R14")
	in := neonSeq(vIn+14, 2) // the scores as loaded
	x := neonSeq(vIn, 2)     // the arguments
	arg := func(k int) {
		for j := 0; j < k; j++ {
			f.v(MOV(x[j], negL))
			f.v(FMLA(x[j], in[j], vscale)) // scale·s − lse, rounded once
		}
	}
	f.countLoop("rc8", "R14", "R11", 3, func() {
		f.op("VLD1.P 32(R12), %s", neonList(in[0], 2))
		arg(2)
		e := m.exp(x, neonMathTmp(2), true)
		f.op("VST1.P [%s], 16(R13)", neonVec(e[0]))
		f.op("VST1.P [%s], 16(R13)", neonVec(e[1]))
	})
	f.countLoop("rc4", "R14", "R11", 2, func() {
		f.op("VLD1.P 16(R12), %s", neonList(in[0], 1))
		arg(1)
		e := m.exp(x[:1], neonMathTmp(1), true)
		f.op("VST1.P [%s], 16(R13)", neonVec(e[0]))
	})
	f.tailLoop("rc1", "R14", func() {
		f.op("FMOVS.P 4(R12), F%d", in[0])
		arg(1)
		e := m.exp(x[:1], neonMathTmp(1), true)
		f.op("FMOVS.P F%d, 4(R13)", e[0])
	})
	f.comment("the zeros past the band")
	f.op("SUB R9, R5, R14")
	f.countLoop("rcZero4", "R14", "R11", 2, func() { f.op("VST1.P [%s], 16(R13)", neonVec(neonZero)) })
	f.tailLoop("rcZero1", "R14", func() { f.op("MOVW.P ZR, 4(R13)") })
	f.op("ADD R2, R0, R0")
	f.op("ADD R3, R1, R1")
	f.op("ADD $1, R8, R8")
	f.op("CMP R4, R8")
	f.op("BLT rcRow")
	f.op("RET")
}

// genSoftmaxBackwardBlockNEON emits softmaxBackwardBlockNEON(ds, p, dp
// []float32, rows, cols, ldds, ldp, lddp int, delta []float32): ds =
// (dp − delta[i])·p, +0 where p = 0, sixteen elements per iteration, then
// four, then one.
func genSoftmaxBackwardBlockNEON(f *neonFile) {
	f.text("softmaxBackwardBlockNEON", "(ds []float32, p []float32, dp []float32, rows int, cols int, ldds int, ldp int, lddp int, delta []float32)", "$0-136",
		"sets ds[i][j] = (dp[i][j] − delta[i])·p[i][j], +0 where p[i][j] = 0, for rows ≥ 1 rows of cols ≥ 1 columns (row strides ldds, ldp, lddp); ds may be p or dp.")
	f.op("MOVD ds_base+0(FP), R0")
	f.op("MOVD p_base+24(FP), R1")
	f.op("MOVD dp_base+48(FP), R2")
	f.op("MOVD ldds+88(FP), R3")
	f.op("MOVD ldp+96(FP), R4")
	f.op("MOVD lddp+104(FP), R5")
	f.op("MOVD rows+72(FP), R6")
	f.op("MOVD cols+80(FP), R7")
	f.op("MOVD delta_base+112(FP), R8")
	for _, r := range []string{"R3", "R4", "R5"} {
		f.op("LSL $2, %s, %s", r, r)
	}
	f.zero(neonZero)
	dl := vAcc + 5
	pv, gv, tv := vIn, vIn+4, vIn+8
	f.label("sbRow")
	f.op("FMOVS.P 4(R8), F%d", dl)
	f.v(DUPE(dl, dl, 0))
	f.op("MOVD R1, R9")
	f.op("MOVD R2, R10")
	f.op("MOVD R0, R12")
	f.op("MOVD R7, R13")
	out := func(k int) {
		for j := Reg(0); j < Reg(k); j++ {
			f.v(FSUB(gv+j, gv+j, dl))
			f.v(FMUL(gv+j, gv+j, pv+j))
			f.v(FCMEQ(tv+j, pv+j, neonZero))
			f.v(BIC(gv+j, gv+j, tv+j))
		}
	}
	body := func(k int) {
		f.op("VLD1.P %d(R9), %s", 16*k, neonList(pv, k))
		f.op("VLD1.P %d(R10), %s", 16*k, neonList(gv, k))
		out(k)
		f.op("VST1.P %s, %d(R12)", neonList(gv, k), 16*k)
	}
	f.countLoop("sb16", "R13", "R11", 4, func() { body(4) })
	f.countLoop("sb4", "R13", "R11", 2, func() { body(1) })
	f.tailLoop("sb1", "R13", func() {
		f.op("FMOVS.P 4(R9), F%d", pv)
		f.op("FMOVS.P 4(R10), F%d", gv)
		out(1)
		f.op("FMOVS.P F%d, 4(R12)", gv)
	})
	f.op("ADD R3, R0, R0")
	f.op("ADD R4, R1, R1")
	f.op("ADD R5, R2, R2")
	f.op("SUBS $1, R6, R6")
	f.op("BNE sbRow")
	f.op("RET")
}

// genAdditiveBackwardNEON emits additiveScoreBackwardNEON (or, without dk,
// additiveScoreBackwardNoDKNEON): genAdditiveBackward's algorithm, two rows
// with ds ≠ 0 at a time (then the one left), four columns per step, then one
// in lane 0.
func genAdditiveBackwardNEON(f *neonFile, withDK bool) {
	name, sig, frame := "additiveScoreBackwardNEON", "(dq []float32, dv []float32, dk []float32, lddk int, k []float32, ldk int, q []float32, v []float32, ds []float32)", "$0-184"
	doc := "adds, for the rows s of K with ds[s] ≠ 0, ds[s]·tanh(q + K_s) to dv and ds[s]·v∘(1 − tanh²(q + K_s)) to dq and to row s of dK (stride lddk), in increasing s, as fallback.AdditiveScoreBackwardAdd does."
	at := map[string]int{"dq": 0, "dv": 24, "dk": 48, "lddk": 72, "k": 80, "ldk": 104, "q": 112, "v": 136, "ds": 160}
	if !withDK {
		name, sig, frame = "additiveScoreBackwardNoDKNEON", "(dq []float32, dv []float32, k []float32, ldk int, q []float32, v []float32, ds []float32)", "$0-152"
		doc = "is additiveScoreBackwardNEON without dk."
		at = map[string]int{"dq": 0, "dv": 24, "k": 48, "ldk": 72, "q": 80, "v": 104, "ds": 128}
	}
	f.text(name, sig, frame, doc)
	f.op("MOVD dq_base+%d(FP), R0", at["dq"])
	f.op("MOVD dv_base+%d(FP), R1", at["dv"])
	f.op("MOVD q_base+%d(FP), R2", at["q"])
	f.op("MOVD v_base+%d(FP), R3", at["v"])
	f.op("MOVD q_len+%d(FP), R4", at["q"]+8)
	f.op("MOVD ds_base+%d(FP), R5", at["ds"])
	f.op("MOVD ds_len+%d(FP), R6", at["ds"]+8)
	f.op("MOVD k_base+%d(FP), R7", at["k"])
	f.op("MOVD ldk+%d(FP), R8", at["ldk"])
	f.op("LSL $2, R8, R8")
	if withDK {
		f.op("MOVD dk_base+%d(FP), R9", at["dk"])
		f.op("MOVD lddk+%d(FP), R10", at["lddk"])
		f.op("LSL $2, R10, R10")
	}
	m := newNEONMath(f, neonTanh)
	one := m.full["one"]
	ds := neonSeq(vAcc, 2) // V16, V17
	kr, dkr := []int{12, 13}, []int{14, 15}
	p := name[:len(name)-4]
	f.op("MOVD $0, R11") // the next row to look at
	f.label(p + "Gather")
	for r := 0; r < 2; r++ {
		look, found := fmt.Sprintf("%sLook%d", p, r), fmt.Sprintf("%sFound%d", p, r)
		f.label(look)
		f.op("CMP R6, R11")
		f.op("BHS %sLeft%d", p, r)
		f.op("ADD R11<<2, R5, R27")
		f.op("MOVWU (R27), R21")
		f.op("TSTW $0x7fffffff, R21") // ds ≠ 0, NaN included
		f.op("BNE %s", found)
		f.op("ADD $1, R11, R11")
		f.op("B %s", look)
		f.label(found)
		f.op("FMOVS (R27), F%d", ds[r])
		f.v(DUPE(ds[r], ds[r], 0))
		f.op("MUL R8, R11, R27")
		f.op("ADD R27, R7, R%d", kr[r])
		if withDK {
			f.op("MUL R10, R11, R27")
			f.op("ADD R27, R9, R%d", dkr[r])
		}
		f.op("ADD $1, R11, R11")
	}
	additiveColumnsNEON(f, m, p+"Two", kr, dkr, ds, one, withDK)
	f.op("B %sGather", p)
	f.label(p + "Left1")
	additiveColumnsNEON(f, m, p+"One", kr[:1], dkr[:1], ds[:1], one, withDK)
	f.label(p + "Left0")
	f.op("RET")
}

// additiveColumnsNEON emits the pass over the columns for the rows at the
// registers kr (dK rows at dkr), their gradients broadcast in ds. It moves
// the row registers along the rows, and q, v, dq and dv (R2, R3, R0, R1)
// along the columns and back.
func additiveColumnsNEON(f *neonFile, m *neonMath, p string, kr, dkr []int, ds []Reg, one Reg, withDK bool) {
	n := len(kr)
	f.op("MOVD R4, R20")
	x := neonSeq(vIn, n)
	qv, vv := vIn+14, vIn+15
	dvv, dqv, w, pv, dkv := vAcc+2, vAcc+3, vAcc+4, vAcc+5, vAcc+6
	step := func(ld func(reg Reg, ptr int, post bool), st func(reg Reg, ptr int)) {
		ld(qv, 2, true)
		ld(vv, 3, true)
		for r := 0; r < n; r++ {
			ld(x[r], kr[r], true)
			f.v(FADD(x[r], x[r], qv)) // q + K[s]
		}
		t := m.tanh(x, neonMathTmp(n))
		ld(dvv, 1, false)
		for r := 0; r < n; r++ {
			f.v(FMLA(dvv, t[r], ds[r])) // dv += ds·t
		}
		st(dvv, 1)
		ld(dqv, 0, false)
		for r := 0; r < n; r++ {
			f.v(MOV(w, one))
			f.v(FMLS(w, t[r], t[r])) // 1 − t²
			f.v(FMUL(pv, vv, ds[r])) // ds·v
			f.v(FMLA(dqv, pv, w))
			if withDK {
				ld(dkv, dkr[r], false)
				f.v(FMLA(dkv, pv, w))
				st(dkv, dkr[r])
			}
		}
		st(dqv, 0)
	}
	f.countLoop(p+"Cols4", "R20", "R19", 2, func() {
		step(func(reg Reg, ptr int, post bool) {
			if post {
				f.op("VLD1.P 16(R%d), %s", ptr, neonList(reg, 1))
			} else {
				f.op("VLD1 (R%d), %s", ptr, neonList(reg, 1))
			}
		}, func(reg Reg, ptr int) { f.op("VST1.P %s, 16(R%d)", neonList(reg, 1), ptr) })
	})
	f.tailLoop(p+"Cols1", "R20", func() {
		step(func(reg Reg, ptr int, post bool) {
			if post {
				f.op("FMOVS.P 4(R%d), F%d", ptr, reg)
			} else {
				f.op("FMOVS (R%d), F%d", ptr, reg)
			}
		}, func(reg Reg, ptr int) { f.op("FMOVS.P F%d, 4(R%d)", reg, ptr) })
	})
	for _, r := range []string{"R0", "R1", "R2", "R3"} {
		f.op("SUB R4<<2, %s, %s", r, r)
	}
}
