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

// Register conventions of the NEON kernels: V0–V15 hold loaded data, V16–V23
// accumulators, V24–V31 broadcast scalars and constants.

// neonNegInf is the bit pattern of float32 −Inf.
const neonNegInf = 0xff800000

func genDotNEON(f *neonFile) {
	f.text("dotNEON", "(x []float32, y []float32) float32", "$0-52",
		"returns Σ x[i]·y[i] for i < len(x); len(y) ≥ len(x).")
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD y_base+24(FP), R1")
	f.op("MOVD x_len+8(FP), R2")
	dotBodyNEON(f, "dot", "R0", "R1", "R2")
	f.op("FMOVS F16, ret+48(FP)")
	f.op("RET")
}

// dotBodyNEON emits S16 = Σ x[i]·y[i] over n elements, advancing x and y and
// consuming n. It uses V0–V23; labels start with name.
func dotBodyNEON(f *neonFile, name, x, y, n string) {
	f.zero(16, 17, 18, 19, 20, 21, 22, 23)
	f.comment("32 elements per iteration into 8 accumulators")
	f.countLoop(name+"32", n, "R11", 5, func() {
		f.op("VLD1.P 64(%s), %s", x, neonList(0, 4))
		f.op("VLD1.P 64(%s), %s", y, neonList(4, 4))
		f.op("VLD1.P 64(%s), %s", x, neonList(8, 4))
		f.op("VLD1.P 64(%s), %s", y, neonList(12, 4))
		for i := Reg(0); i < 4; i++ {
			f.fmla(16+i, i, 4+i)
			f.fmla(20+i, 8+i, 12+i)
		}
	})
	f.countLoop(name+"4", n, "R11", 2, func() {
		f.op("VLD1.P 16(%s), %s", x, neonList(0, 1))
		f.op("VLD1.P 16(%s), %s", y, neonList(4, 1))
		f.fmla(16, 0, 4)
	})
	f.sumTree(FADD, 16, 17, 18, 19, 20, 21, 22, 23)
	f.hsum(16)
	f.tailLoop(name+"1", n, func() {
		f.op("FMOVS.P 4(%s), F0", x)
		f.op("FMOVS.P 4(%s), F1", y)
		f.fmlaS(16, 0, 1)
	})
}

func genAxpyNEON(f *neonFile) {
	f.text("axpyNEON", "(alpha float32, x []float32, y []float32)", "$0-56",
		"sets y[i] += alpha·x[i] for i < len(x); len(y) ≥ len(x); x and y are disjoint or equal.")
	f.op("FMOVS alpha+0(FP), F31")
	f.op("VDUP V31.S[0], V31.S4")
	f.op("MOVD x_base+8(FP), R0")
	f.op("MOVD x_len+16(FP), R2")
	f.op("MOVD y_base+32(FP), R1")
	f.countLoop("axpy16", "R2", "R11", 4, func() {
		f.op("VLD1.P 64(R0), %s", neonList(0, 4))
		f.op("VLD1 (R1), %s", neonList(4, 4))
		for i := Reg(0); i < 4; i++ {
			f.fmla(4+i, i, 31)
		}
		f.op("VST1.P %s, 64(R1)", neonList(4, 4))
	})
	f.countLoop("axpy4", "R2", "R11", 2, func() {
		f.op("VLD1.P 16(R0), %s", neonList(0, 1))
		f.op("VLD1 (R1), %s", neonList(4, 1))
		f.fmla(4, 0, 31)
		f.op("VST1.P %s, 16(R1)", neonList(4, 1))
	})
	f.tailLoop("axpy1", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FMOVS (R1), F1")
		f.fmlaS(1, 0, 31)
		f.op("FMOVS.P F1, 4(R1)")
	})
	f.op("RET")
}

func genScaleNEON(f *neonFile) {
	f.text("scaleNEON", "(alpha float32, x []float32)", "$0-32", "sets x[i] *= alpha.")
	f.op("FMOVS alpha+0(FP), F31")
	f.op("VDUP V31.S[0], V31.S4")
	f.op("MOVD x_base+8(FP), R0")
	f.op("MOVD x_len+16(FP), R2")
	f.countLoop("scale16", "R2", "R11", 4, func() {
		f.op("VLD1 (R0), %s", neonList(0, 4))
		for i := Reg(0); i < 4; i++ {
			f.w(FMUL(i, i, 31))
		}
		f.op("VST1.P %s, 64(R0)", neonList(0, 4))
	})
	f.countLoop("scale4", "R2", "R11", 2, func() {
		f.op("VLD1 (R0), %s", neonList(0, 1))
		f.w(FMUL(0, 0, 31))
		f.op("VST1.P %s, 16(R0)", neonList(0, 1))
	})
	f.tailLoop("scale1", "R2", func() {
		f.op("FMOVS (R0), F0")
		f.op("FMULS F31, F0, F0")
		f.op("FMOVS.P F0, 4(R0)")
	})
	f.op("RET")
}

func genSumNEON(f *neonFile) {
	f.text("sumNEON", "(x []float32) float32", "$0-28", "returns Σ x[i].")
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD x_len+8(FP), R2")
	f.zero(16, 17, 18, 19, 20, 21, 22, 23)
	f.countLoop("sum32", "R2", "R11", 5, func() {
		f.op("VLD1.P 64(R0), %s", neonList(0, 4))
		f.op("VLD1.P 64(R0), %s", neonList(4, 4))
		for i := Reg(0); i < 8; i++ {
			f.w(FADD(16+i, 16+i, i))
		}
	})
	f.countLoop("sum4", "R2", "R11", 2, func() {
		f.op("VLD1.P 16(R0), %s", neonList(0, 1))
		f.w(FADD(16, 16, 0))
	})
	f.sumTree(FADD, 16, 17, 18, 19, 20, 21, 22, 23)
	f.hsum(16)
	f.tailLoop("sum1", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FADDS F0, F16, F16")
	})
	f.op("FMOVS F16, ret+24(FP)")
	f.op("RET")
}

// genMaxNEON relies on FMAX's semantics, which are fallback.Max's: a NaN
// operand gives NaN, and +0 is larger than −0.
func genMaxNEON(f *neonFile) {
	f.text("maxOfNEON", "(x []float32) float32", "$0-28",
		"returns the largest x[i]: −Inf if x is empty, NaN if any is NaN, +0 over −0.")
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD x_len+8(FP), R2")
	for r := Reg(16); r < 20; r++ {
		f.dupConst(r, neonNegInf, "-Inf")
	}
	f.countLoop("max16", "R2", "R11", 4, func() {
		f.op("VLD1.P 64(R0), %s", neonList(0, 4))
		for i := Reg(0); i < 4; i++ {
			f.w(FMAX(16+i, 16+i, i))
		}
	})
	f.countLoop("max4", "R2", "R11", 2, func() {
		f.op("VLD1.P 16(R0), %s", neonList(0, 1))
		f.w(FMAX(16, 16, 0))
	})
	f.sumTree(FMAX, 16, 17, 18, 19)
	f.w(FMAXV(16, 16))
	f.tailLoop("max1", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FMAXS F0, F16, F16")
	})
	f.op("FMOVS F16, ret+24(FP)")
	f.op("RET")
}
