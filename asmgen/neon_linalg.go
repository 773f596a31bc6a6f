package main

import . "github.com/heedml/heed/asmgen/arm64"

func init() {
	registerNEON("dot", func(f *neonFile) { genDotNEON(f) })
	registerNEON("vector", func(f *neonFile) {
		genAxpyNEON(f)
		genScaleNEON(f)
		genSumNEON(f)
		genMaxNEON(f)
	})
}

// neonNegInf is the bit pattern of float32 −Inf.
const neonNegInf = 0xff800000

func genDotNEON(f *neonFile) {
	f.text("dotNEON", "(x []float32, y []float32) float32", "$0-52",
		"returns Σ x[i]·y[i] for i < len(x); len(y) ≥ len(x).")
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD y_base+24(FP), R1")
	f.op("MOVD x_len+8(FP), R2")
	dotBodyNEON(f, "dot", "R0", "R1", "R2")
	f.op("FMOVS F%d, ret+48(FP)", vAcc)
	f.op("RET")
}

// dotBodyNEON emits S16 (lane 0 of vAcc) = Σ x[i]·y[i] over n elements,
// advancing x and y and consuming n. It uses V0–V23; labels start with name.
func dotBodyNEON(f *neonFile, name, x, y, n string) {
	// Two blocks of four vectors of x and y per iteration, one accumulator
	// per vector.
	xa, ya, xb, yb := vIn, vIn+4, vIn+8, vIn+12
	acc := neonSeq(vAcc, 8)
	f.zero(acc...)
	f.comment("32 elements per iteration into 8 accumulators")
	f.countLoop(name+"32", n, "R11", 5, func() {
		f.op("VLD1.P 64(%s), %s", x, neonList(xa, 4))
		f.op("VLD1.P 64(%s), %s", y, neonList(ya, 4))
		f.op("VLD1.P 64(%s), %s", x, neonList(xb, 4))
		f.op("VLD1.P 64(%s), %s", y, neonList(yb, 4))
		for i := Reg(0); i < 4; i++ {
			f.v(FMLA(acc[i], xa+i, ya+i))
			f.v(FMLA(acc[4+i], xb+i, yb+i))
		}
	})
	f.countLoop(name+"4", n, "R11", 2, func() {
		f.op("VLD1.P 16(%s), %s", x, neonList(xa, 1))
		f.op("VLD1.P 16(%s), %s", y, neonList(ya, 1))
		f.v(FMLA(acc[0], xa, ya))
	})
	f.sumTree(FADD, acc...)
	f.hsum(acc[0])
	f.tailLoop(name+"1", n, func() {
		f.op("FMOVS.P 4(%s), F%d", x, xa)
		f.op("FMOVS.P 4(%s), F%d", y, xa+1)
		f.fmlaS(acc[0], xa, xa+1)
	})
}

func genAxpyNEON(f *neonFile) {
	f.text("axpyNEON", "(alpha float32, x []float32, y []float32)", "$0-56",
		"sets y[i] += alpha·x[i] for i < len(x); len(y) ≥ len(x); x and y are disjoint or equal.")
	xv, yv := vIn, vIn+4 // four vectors of x, then of y
	f.op("FMOVS alpha+0(FP), F%d", vAlpha)
	f.v(DUPE(vAlpha, vAlpha, 0))
	f.op("MOVD x_base+8(FP), R0")
	f.op("MOVD x_len+16(FP), R2")
	f.op("MOVD y_base+32(FP), R1")
	f.countLoop("axpy16", "R2", "R11", 4, func() {
		f.op("VLD1.P 64(R0), %s", neonList(xv, 4))
		f.op("VLD1 (R1), %s", neonList(yv, 4))
		for i := Reg(0); i < 4; i++ {
			f.v(FMLA(yv+i, xv+i, vAlpha))
		}
		f.op("VST1.P %s, 64(R1)", neonList(yv, 4))
	})
	f.countLoop("axpy4", "R2", "R11", 2, func() {
		f.op("VLD1.P 16(R0), %s", neonList(xv, 1))
		f.op("VLD1 (R1), %s", neonList(yv, 1))
		f.v(FMLA(yv, xv, vAlpha))
		f.op("VST1.P %s, 16(R1)", neonList(yv, 1))
	})
	f.tailLoop("axpy1", "R2", func() {
		f.op("FMOVS.P 4(R0), F%d", xv)
		f.op("FMOVS (R1), F%d", xv+1)
		f.fmlaS(xv+1, xv, vAlpha)
		f.op("FMOVS.P F%d, 4(R1)", xv+1)
	})
	f.op("RET")
}

func genScaleNEON(f *neonFile) {
	f.text("scaleNEON", "(alpha float32, x []float32)", "$0-32", "sets x[i] *= alpha.")
	xv := vIn
	f.op("FMOVS alpha+0(FP), F%d", vAlpha)
	f.v(DUPE(vAlpha, vAlpha, 0))
	f.op("MOVD x_base+8(FP), R0")
	f.op("MOVD x_len+16(FP), R2")
	f.countLoop("scale16", "R2", "R11", 4, func() {
		f.op("VLD1 (R0), %s", neonList(xv, 4))
		for i := Reg(0); i < 4; i++ {
			f.v(FMUL(xv+i, xv+i, vAlpha))
		}
		f.op("VST1.P %s, 64(R0)", neonList(xv, 4))
	})
	f.countLoop("scale4", "R2", "R11", 2, func() {
		f.op("VLD1 (R0), %s", neonList(xv, 1))
		f.v(FMUL(xv, xv, vAlpha))
		f.op("VST1.P %s, 16(R0)", neonList(xv, 1))
	})
	f.tailLoop("scale1", "R2", func() {
		f.op("FMOVS (R0), F%d", xv)
		f.op("FMULS F%d, F%d, F%d", vAlpha, xv, xv)
		f.op("FMOVS.P F%d, 4(R0)", xv)
	})
	f.op("RET")
}

func genSumNEON(f *neonFile) {
	f.text("sumNEON", "(x []float32) float32", "$0-28", "returns Σ x[i].")
	xv, acc := vIn, neonSeq(vAcc, 8)
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD x_len+8(FP), R2")
	f.zero(acc...)
	f.countLoop("sum32", "R2", "R11", 5, func() {
		f.op("VLD1.P 64(R0), %s", neonList(xv, 4))
		f.op("VLD1.P 64(R0), %s", neonList(xv+4, 4))
		for i := Reg(0); i < 8; i++ {
			f.v(FADD(acc[i], acc[i], xv+i))
		}
	})
	f.countLoop("sum4", "R2", "R11", 2, func() {
		f.op("VLD1.P 16(R0), %s", neonList(xv, 1))
		f.v(FADD(acc[0], acc[0], xv))
	})
	f.sumTree(FADD, acc...)
	f.hsum(acc[0])
	f.tailLoop("sum1", "R2", func() {
		f.op("FMOVS.P 4(R0), F%d", xv)
		f.op("FADDS F%d, F%d, F%d", xv, acc[0], acc[0])
	})
	f.op("FMOVS F%d, ret+24(FP)", acc[0])
	f.op("RET")
}

// genMaxNEON relies on FMAX's semantics, which are fallback.Max's: a NaN
// operand gives NaN, and +0 is larger than −0.
func genMaxNEON(f *neonFile) {
	f.text("maxOfNEON", "(x []float32) float32", "$0-28",
		"returns the largest x[i]: −Inf if x is empty, NaN if any is NaN, +0 over −0.")
	xv, acc := vIn, neonSeq(vAcc, 4)
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD x_len+8(FP), R2")
	for _, r := range acc {
		f.dupConst(r, neonNegInf, "-Inf")
	}
	f.countLoop("max16", "R2", "R11", 4, func() {
		f.op("VLD1.P 64(R0), %s", neonList(xv, 4))
		for i := Reg(0); i < 4; i++ {
			f.v(FMAX(acc[i], acc[i], xv+i))
		}
	})
	f.countLoop("max4", "R2", "R11", 2, func() {
		f.op("VLD1.P 16(R0), %s", neonList(xv, 1))
		f.v(FMAX(acc[0], acc[0], xv))
	})
	f.sumTree(FMAX, acc...)
	f.v(FMAXV(acc[0], acc[0]))
	f.tailLoop("max1", "R2", func() {
		f.op("FMOVS.P 4(R0), F%d", xv)
		f.op("FMAXS F%d, F%d, F%d", xv, acc[0], acc[0])
	})
	f.op("FMOVS F%d, ret+24(FP)", acc[0])
	f.op("RET")
}
