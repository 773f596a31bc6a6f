package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("elementwise", genElementwiseFamily) }

// binOp is one out-of-place element-wise kernel: dst[i] = f(x[i], y[i]) (or
// f(x[i]) when unary), every lane one IEEE operation rounded once, so the
// vector and scalar forms give the bits of the Go loop in package fallback.
type binOp struct {
	kernel string // assembly name before the ISA suffix
	sig    string // Go signature
	what   string // the doc's formula
	param  string // the name of its float32 parameter, if any
	one    bool   // without a parameter: a is the constant 1
	unary  bool   // reads x only
	// vec sets v = f(x, y) for whole vectors; x and y are memory or vector
	// operands, a the broadcast parameter (nil without one).
	vec func(a VecVirtual, x, y Op, v VecVirtual)
	// scalar does the same in lane 0 of the XMM v, from x and y in lane 0
	// of XMM registers (QEMU emulates some scalar memory operands as 16-byte
	// loads, which could cross into an unmapped page).
	scalar func(a, x, y, v VecVirtual)
}

// loadThen returns a binOp body that loads x into v and applies op(y, v, v),
// for the instructions whose memory operand is the second source.
func loadThen(op func(y, x, dst Op)) func(VecVirtual, Op, Op, VecVirtual) {
	return func(_ VecVirtual, x, y Op, v VecVirtual) {
		asm.VMOVUPS(x, v)
		op(y, v, v)
	}
}

// scalarOp returns a binOp scalar body that sets v = op's x (op) y.
func scalarOp(op func(y, x, dst Op)) func(a, x, y, v VecVirtual) {
	return func(_, x, y, v VecVirtual) { op(y, x, v) }
}

var binOps = []binOp{
	{
		kernel: "scaleTo", sig: "func(dst []float32, alpha float32, x []float32)",
		what: "alpha·x[i]", param: "alpha", unary: true,
		vec:    func(a VecVirtual, x, _ Op, v VecVirtual) { asm.VMULPS(x, a, v) },
		scalar: func(a, x, _, v VecVirtual) { asm.VMULSS(x, a.AsX(), v) },
	},
	{
		kernel: "axpyTo", sig: "func(dst []float32, alpha float32, x, y []float32)",
		what: "alpha·x[i] + y[i] (fused, rounded once)", param: "alpha",
		vec: func(a VecVirtual, x, y Op, v VecVirtual) {
			asm.VMOVUPS(y, v)
			asm.VFMADD231PS(x, a, v)
		},
		scalar: func(a, x, y, v VecVirtual) {
			asm.VMOVAPS(y, v)
			asm.VFMADD231SS(x, a.AsX(), v)
		},
	},
	{
		kernel: "addConstTo", sig: "func(dst []float32, c float32, x []float32)",
		what: "x[i] + c", param: "c", unary: true,
		vec:    func(c VecVirtual, x, _ Op, v VecVirtual) { asm.VADDPS(x, c, v) },
		scalar: func(c, x, _, v VecVirtual) { asm.VADDSS(c.AsX(), x, v) },
	},
	{
		kernel: "add", sig: "func(dst, x, y []float32)", what: "x[i] + y[i]",
		vec: loadThen(func(a, b, c Op) { asm.VADDPS(a, b, c) }), scalar: scalarOp(func(a, b, c Op) { asm.VADDSS(a, b, c) }),
	},
	{
		kernel: "sub", sig: "func(dst, x, y []float32)", what: "x[i] − y[i]",
		vec: loadThen(func(a, b, c Op) { asm.VSUBPS(a, b, c) }), scalar: scalarOp(func(a, b, c Op) { asm.VSUBSS(a, b, c) }),
	},
	{
		kernel: "mul", sig: "func(dst, x, y []float32)", what: "x[i]·y[i]",
		vec: loadThen(func(a, b, c Op) { asm.VMULPS(a, b, c) }), scalar: scalarOp(func(a, b, c Op) { asm.VMULSS(a, b, c) }),
	},
	{
		kernel: "div", sig: "func(dst, x, y []float32)", what: "x[i]/y[i]",
		vec: loadThen(func(a, b, c Op) { asm.VDIVPS(a, b, c) }), scalar: scalarOp(func(a, b, c Op) { asm.VDIVSS(a, b, c) }),
	},
}

// elementwiseUnroll is the number of vectors of each operand per loop
// iteration.
const elementwiseUnroll = 4

// genElementwiseFamily emits the out-of-place element-wise kernels in both
// AVX-512 widths: they stream like Scale and Axpy (DESIGN.md, two widths).
func genElementwiseFamily() {
	for _, op := range binOps {
		for _, s := range dualISAs {
			genBinOp(s, op)
		}
	}
}

// genBinOp emits op<ISA>: dst[i] = f(x[i], y[i]) for i < len(x); the caller
// checks that dst and y are that long. dst may be x or y (in place); inputs
// are read before the store of the same element, and the AVX2 tail's last
// full vector is computed from its inputs before the loop stores over them.
//
// Loop: stream's blocks of elementwiseUnroll vectors, then single vectors;
// the tail is an opmask load and store on AVX-512, and on AVX2 the slice's
// last full vector, stored after the loop (its lanes stored twice get the
// same values). AVX2 slices shorter than a vector go one element at a time.
func genBinOp(s *isa, op binOp) {
	name := s.name(op.kernel)
	TEXT(name, NOSPLIT, op.sig)
	alias := "len(dst), len(y) ≥ len(x); dst may be x or y."
	if op.unary {
		alias = "len(dst) ≥ len(x); dst may be x."
	}
	asm.Doc(name + " sets dst[i] = " + op.what + " for i < len(x); " + alias)
	s = evexYMM(s)
	var a VecVirtual
	if op.param != "" {
		a = s.broadcast(op.param)
	} else if op.one {
		a = newConst(s, 1).reg()
	}
	dst := load(asm.Param("dst").Base())
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	var y GPVirtual
	ptrs := []GPVirtual{dst, x}
	if !op.unary {
		y = load(asm.Param("y").Base())
		ptrs = append(ptrs, y)
	}
	// yAt is y's operand at the displacement of x's operand m.
	yAt := func(m Mem) Op {
		if op.unary {
			return nil
		}
		m.Base = y
		return m
	}
	lbl := func(l string) string { return op.kernel + l }

	var last VecVirtual
	var lastAt GPVirtual
	if !s.evex {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef(lbl("Scalar")))
		last, lastAt = s.vec(), asm.GP64()
		xm := Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}
		op.vec(a, xm, yAt(xm), last)
		asm.LEAQ(Mem{Base: dst, Index: n, Scale: 4, Disp: -s.bytes()}, lastAt)
	}
	s.stream(op.kernel, n, ptrs, elementwiseUnroll, func(j, d int, _ bool) {
		v := s.vec()
		xm := Mem{Base: x, Disp: d}
		op.vec(a, xm, yAt(xm), v)
		asm.VMOVUPS(v, Mem{Base: dst, Disp: d})
	})
	asm.JZ(LabelRef(lbl("Done")))
	if s.evex {
		t := s.tailMask(n)
		xv, v := s.vec(), s.vec()
		asm.VMOVUPS_Z(Mem{Base: x}, t.k, xv)
		var yv Op
		if !op.unary {
			w := s.vec()
			asm.VMOVUPS_Z(Mem{Base: y}, t.k, w)
			yv = w
		}
		op.vec(a, xv, yv, v)
		asm.VMOVUPS(v, t.k, Mem{Base: dst})
	} else {
		asm.VMOVUPS(last, Mem{Base: lastAt})
	}
	asm.Label(lbl("Done"))
	asm.VZEROUPPER()
	asm.RET()

	if s.evex {
		return
	}
	asm.Label(lbl("Scalar"))
	asm.TESTQ(n, n)
	asm.JZ(LabelRef(lbl("Done")))
	asm.Label(lbl("ScalarLoop"))
	v, xs := asm.XMM(), asm.XMM()
	var ys VecVirtual
	asm.VMOVSS(Mem{Base: x}, xs)
	if !op.unary {
		ys = asm.XMM()
		asm.VMOVSS(Mem{Base: y}, ys)
	}
	op.scalar(a, xs, ys, v)
	asm.VMOVSS(v, Mem{Base: dst})
	for _, p := range ptrs {
		asm.ADDQ(U32(4), p)
	}
	asm.DECQ(n)
	asm.JNZ(LabelRef(lbl("ScalarLoop")))
	asm.JMP(LabelRef(lbl("Done")))
}
