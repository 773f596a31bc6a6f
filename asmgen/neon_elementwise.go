package main

import (
	"fmt"

	. "github.com/heedml/heed/asmgen/arm64"
)

func init() {
	registerNEON("elementwise", func(f *neonFile) {
		for _, op := range neonBinOps {
			genBinOpNEON(f, op)
		}
	})
}

// neonBinOp is the NEON form of a binOp (elementwise.go): dst[i] = f(x[i],
// y[i]), one IEEE operation per lane, so the results are fallback's bit for
// bit.
type neonBinOp struct {
	kernel, sig, frame, what string
	param                    string // the float32 parameter at 24(FP) before x at 32(FP), if any
	unary                    bool   // reads x only
	// vec sets vector d = f(x, y); a is the broadcast parameter.
	vec func(d, x, y, a Reg) Inst
	// scalar is the Go assembler instruction that sets Fd = f(Fx, Fy) (Fa
	// the parameter).
	scalar func(d, x, y, a Reg) string
}

var neonBinOps = []neonBinOp{
	{
		kernel: "scaleTo", sig: "(dst []float32, alpha float32, x []float32)", frame: "$0-56",
		what: "alpha·x[i]", param: "alpha", unary: true,
		vec:    func(d, x, _, a Reg) Inst { return FMUL(d, x, a) },
		scalar: func(d, x, _, a Reg) string { return fmt.Sprintf("FMULS F%d, F%d, F%d", a, x, d) },
	},
	{
		kernel: "axpyTo", sig: "(dst []float32, alpha float32, x []float32, y []float32)", frame: "$0-80",
		what: "alpha·x[i] + y[i] (fused, rounded once)", param: "alpha",
		// d is y's register: the FMA accumulates into it.
		vec:    func(d, x, _, a Reg) Inst { return FMLA(d, x, a) },
		scalar: func(d, x, _, a Reg) string { return fmt.Sprintf("FMADDS F%d, F%d, F%d, F%d", a, d, x, d) },
	},
	{
		kernel: "addConstTo", sig: "(dst []float32, c float32, x []float32)", frame: "$0-56",
		what: "x[i] + c", param: "c", unary: true,
		vec:    func(d, x, _, c Reg) Inst { return FADD(d, x, c) },
		scalar: func(d, x, _, c Reg) string { return fmt.Sprintf("FADDS F%d, F%d, F%d", c, x, d) },
	},
	{
		kernel: "add", sig: "(dst []float32, x []float32, y []float32)", frame: "$0-72", what: "x[i] + y[i]",
		vec:    func(d, x, y, _ Reg) Inst { return FADD(d, x, y) },
		scalar: func(d, x, y, _ Reg) string { return fmt.Sprintf("FADDS F%d, F%d, F%d", y, x, d) },
	},
	{
		kernel: "sub", sig: "(dst []float32, x []float32, y []float32)", frame: "$0-72", what: "x[i] − y[i]",
		vec:    func(d, x, y, _ Reg) Inst { return FSUB(d, x, y) },
		scalar: func(d, x, y, _ Reg) string { return fmt.Sprintf("FSUBS F%d, F%d, F%d", y, x, d) },
	},
	{
		kernel: "mul", sig: "(dst []float32, x []float32, y []float32)", frame: "$0-72", what: "x[i]·y[i]",
		vec:    func(d, x, y, _ Reg) Inst { return FMUL(d, x, y) },
		scalar: func(d, x, y, _ Reg) string { return fmt.Sprintf("FMULS F%d, F%d, F%d", y, x, d) },
	},
	{
		kernel: "div", sig: "(dst []float32, x []float32, y []float32)", frame: "$0-72", what: "x[i]/y[i]",
		vec:    func(d, x, y, _ Reg) Inst { return FDIV(d, x, y) },
		scalar: func(d, x, y, _ Reg) string { return fmt.Sprintf("FDIVS F%d, F%d, F%d", y, x, d) },
	},
}

// genBinOpNEON emits op's NEON kernel: sixteen elements (four vectors of
// each operand) per iteration, then four, then one at a time. Every
// iteration loads its inputs before it stores, so dst may be x or y.
func genBinOpNEON(f *neonFile, op neonBinOp) {
	name := op.kernel + "NEON"
	doc := "sets dst[i] = " + op.what + " for i < len(x); len(dst), len(y) ≥ len(x); dst may be x or y."
	if op.unary {
		doc = "sets dst[i] = " + op.what + " for i < len(x); len(dst) ≥ len(x); dst may be x."
	}
	f.text(name, op.sig, op.frame, doc)
	xOff := 24
	if op.param != "" {
		xOff = 32
		f.op("FMOVS %s+24(FP), F%d", op.param, vAlpha)
		f.v(DUPE(vAlpha, vAlpha, 0))
	}
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD x_base+%d(FP), R1", xOff)
	f.op("MOVD x_len+%d(FP), R3", xOff+8)
	if !op.unary {
		f.op("MOVD y_base+%d(FP), R2", xOff+24)
	}
	xv, yv, dv := vIn, vIn+4, vIn+8
	if op.kernel == "axpyTo" {
		dv = yv // the FMA accumulates into y's registers
	}
	body := func(k int) {
		f.op("VLD1.P %d(R1), %s", 16*k, neonList(xv, k))
		if !op.unary {
			f.op("VLD1.P %d(R2), %s", 16*k, neonList(yv, k))
		}
		for i := Reg(0); i < Reg(k); i++ {
			f.v(op.vec(dv+i, xv+i, yv+i, vAlpha))
		}
		f.op("VST1.P %s, %d(R0)", neonList(dv, k), 16*k)
	}
	f.countLoop(op.kernel+"16", "R3", "R11", 4, func() { body(4) })
	f.countLoop(op.kernel+"4", "R3", "R11", 2, func() { body(1) })
	f.tailLoop(op.kernel+"1", "R3", func() {
		f.op("FMOVS.P 4(R1), F%d", xv)
		if !op.unary {
			f.op("FMOVS.P 4(R2), F%d", yv)
		}
		f.op("%s", op.scalar(dv, xv, yv, vAlpha))
		f.op("FMOVS.P F%d, 4(R0)", dv)
	})
	f.op("RET")
}
