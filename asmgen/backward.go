package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("backward", genBackwardFamily) }

// genBackwardFamily emits the backward kernels of softmax, log-softmax, tanh
// and sigmoid, and the element-wise work of a flash-attention backward tile.
// The streaming ones (the softmax backward, the flash tile's dS and the
// activations' backward, whose work per element is a few operations) come in
// both AVX-512 widths like the element-wise kernels; those bound by Exp
// (the log-softmax backward, SoftmaxRecompute) compute in ZMM, as Exp does.
func genBackwardFamily() {
	for _, s := range dualISAs {
		genRowsReduce(evexYMM(s), softmaxBackwardOp)
	}
	for _, s := range isas {
		genRowsReduce(s, logSoftmaxBackwardOp)
	}
	for _, op := range backwardBinOps {
		for _, s := range dualISAs {
			genBinOp(s, op)
		}
	}
	for _, s := range isas {
		genSoftmaxRecompute(s)
	}
	for _, s := range dualISAs {
		genSoftmaxBackwardBlock(s)
	}
}

// cmpNEQUQ is VCMPPS's "not equal, unordered": true for x ≠ 0 and for NaN.
const cmpNEQUQ = 0x04

// backwardBinOps are the activations' backward kernels, dst = f(x, y) with x
// the forward's outputs and y their gradient: genBinOp's loops, so every ISA
// gives the bits of package fallback.
var backwardBinOps = []binOp{
	{
		kernel: "tanhBackward", sig: "func(dst, x, y []float32)", what: "(1 − x[i]²)·y[i] (1 − x² fused, rounded once)",
		one: true,
		vec: func(one VecVirtual, x, y Op, v VecVirtual) {
			asm.VMOVUPS(x, v)
			asm.VFNMADD213PS(one, v, v) // 1 − x²
			asm.VMULPS(y, v, v)
		},
		scalar: func(one, x, y, v VecVirtual) {
			asm.VMOVAPS(x, v)
			asm.VFNMADD213SS(one.AsX(), v, v)
			asm.VMULSS(y, v, v)
		},
	},
	{
		kernel: "sigmoidBackward", sig: "func(dst, x, y []float32)", what: "(x[i] − x[i]²)·y[i] (x − x² fused, rounded once)",
		vec: func(_ VecVirtual, x, y Op, v VecVirtual) {
			asm.VMOVUPS(x, v)
			asm.VFNMADD213PS(x, v, v) // x − x²
			asm.VMULPS(y, v, v)
		},
		scalar: func(_, x, y, v VecVirtual) {
			asm.VMOVAPS(x, v)
			asm.VFNMADD213SS(x, v, v)
			asm.VMULSS(y, v, v)
		},
	},
}

// rowsReduceOp is a backward kernel of two passes over each row of y and
// dy: a reduction c over the row, then dx = out(y, dy, c) element-wise.
type rowsReduceOp struct {
	kernel string
	doc    []string
	readsY bool // the reduction reads y
	// setup declares the operation's constants for s (before the row loop)
	// and returns what term and out get as st.
	setup func(s *isa) any
	// term adds one vector's contribution to acc; y and dy are memory or
	// vector operands (vectors in the tails, where lanes past the row are
	// zero).
	term func(s *isa, st any, y, dy Op, acc VecVirtual)
	// out returns dx for one vector, c broadcast in every lane; it may
	// overwrite y and dy when they are registers.
	out func(s *isa, st any, y, dy Op, c VecVirtual) VecVirtual
}

// softmaxBackwardOp: c = Σ y·dy over y ≠ 0 (masked FMAs), dx = (dy − c)·y,
// +0 where y = 0. Its state is a zeroed vector, for the compares.
var softmaxBackwardOp = rowsReduceOp{
	kernel: "softmaxBackward", readsY: true,
	doc: []string{"sets each of rows rows of dx (row stride ldx) to y∘(dy − ⟨y, dy⟩) of the same",
		"rows of y and dy (strides ldy, lddy), cols ≥ 1 columns, the terms where y = 0 left out",
		"of the sum and dx = +0 there; dx may be y or dy."},
	setup: func(s *isa) any {
		zero := s.vec()
		s.zero(zero)
		return zero
	},
	term: func(s *isa, st any, y, dy Op, acc VecVirtual) {
		zero := st.(VecVirtual)
		yv := regOf(s, y)
		if s.evex {
			k := asm.K()
			asm.VCMPPS(U8(cmpNEQUQ), zero, yv, k)
			asm.VFMADD231PS(dy, yv, k, acc)
			return
		}
		m := s.vec()
		asm.VCMPPS(U8(cmpNEQUQ), zero, yv, m)
		asm.VANDPS(dy, m, m)
		asm.VFMADD231PS(m, yv, acc)
	},
	out: func(s *isa, st any, y, dy Op, c VecVirtual) VecVirtual {
		zero := st.(VecVirtual)
		yv := regOf(s, y)
		d := regOf(s, dy)
		asm.VSUBPS(c, d, d)
		if s.evex {
			k := asm.K()
			asm.VCMPPS(U8(cmpNEQUQ), zero, yv, k)
			asm.VMULPS_Z(yv, d, k, d)
			return d
		}
		m := s.vec()
		asm.VMULPS(yv, d, d)
		asm.VCMPPS(U8(cmpNEQUQ), zero, yv, m)
		asm.VANDPS(m, d, d)
		return d
	},
}

// logSoftmaxBackwardOp: c = Σ dy, dx = dy − e^y·c (one fused multiply-add).
// Its state is the expGen; on AVX2 the constants that are operands of its
// main path stay in registers (keepOperands).
var logSoftmaxBackwardOp = rowsReduceOp{
	kernel: "logSoftmaxBackward",
	doc: []string{"sets each of rows rows of dx (row stride ldx) to dy − e^y·Σ dy of the same",
		"rows of y and dy (strides ldy, lddy), cols ≥ 1 columns; dx may be y or dy."},
	setup: func(s *isa) any {
		e := newExpGen(s)
		if !s.evex {
			e.keepOperands()
		}
		return e
	},
	term: func(s *isa, _ any, _, dy Op, acc VecVirtual) {
		asm.VADDPS(dy, acc, acc)
	},
	out: func(s *isa, st any, y, dy Op, c VecVirtual) VecVirtual {
		e := st.(*expGen).apply(regOf(s, y))
		d := regOf(s, dy)
		asm.VFNMADD231PS(e, c, d)
		return d
	},
}

// keepOperands makes the constants that are operands of the AVX2 main path
// of apply resident: the shifter (used twice), the Cody–Waite constants and
// the polynomial's coefficients but the last. log₂e and the last coefficient
// start a register of their own and stay in memory: a copy saves no more
// than the load. Nine registers, where keep takes eleven.
func (e *expGen) keepOperands() {
	cs := []*vconst{&e.shifter, &e.ln2hi, &e.ln2lo}
	for i := range e.c[:len(e.c)-1] {
		cs = append(cs, &e.c[i])
	}
	keep(cs...)
}

// regOf returns o in a vector register of s: o itself if it is one (which
// the caller may then overwrite), else a new register loaded from memory.
func regOf(s *isa, o Op) VecVirtual {
	if v, ok := o.(VecVirtual); ok {
		return v
	}
	v := s.vec()
	asm.VMOVUPS(o, v)
	return v
}

// reduceAccs is the number of accumulators (and vectors per iteration) of
// the reduction pass.
const reduceAccs = 4

// rowPtr is one matrix argument of a rows kernel: its row pointer and its
// row stride in bytes.
type rowPtr struct{ p, ld GPVirtual }

// loadRowPtr loads the data pointer of slice parameter name and the stride
// parameter ld, in bytes.
func loadRowPtr(name, ld string) rowPtr {
	r := rowPtr{p: load(asm.Param(name).Base()), ld: load(asm.Param(ld))}
	asm.SHLQ(U8(2), r.ld)
	return r
}

// nextRow advances every matrix to its next row.
func nextRow(ms ...rowPtr) {
	for _, m := range ms {
		asm.ADDQ(m.ld, m.p)
	}
}

// vecLoop emits a loop over the whole vectors of the elements from index i
// (a register counting elements) to n: unroll vectors an iteration, then
// single vectors. body(j, at) emits vector j of the group; at(p) is its
// operand in the row at p. It leaves i at the first element it did not take
// (n − i < one vector).
func (s *isa) vecLoop(prefix string, i, n GPVirtual, unroll int, body func(j int, at func(p GPVirtual) Mem)) {
	lim := asm.GP64()
	group := func(k int) {
		for j := 0; j < k; j++ {
			body(j, func(p GPVirtual) Mem { return Mem{Base: p, Index: i, Scale: 4, Disp: j * s.bytes()} })
		}
	}
	if unroll > 1 {
		asm.LEAQ(Mem{Base: n, Disp: -unroll * s.lanes}, lim)
		asm.Label(prefix + "Block")
		asm.CMPQ(i, lim)
		asm.JG(LabelRef(prefix + "Single"))
		group(unroll)
		asm.ADDQ(U32(unroll*s.lanes), i)
		asm.JMP(LabelRef(prefix + "Block"))
		asm.Label(prefix + "Single")
	}
	asm.LEAQ(Mem{Base: n, Disp: -s.lanes}, lim)
	asm.Label(prefix + "Vector")
	asm.CMPQ(i, lim)
	asm.JG(LabelRef(prefix + "End"))
	group(1)
	asm.ADDQ(U32(s.lanes), i)
	asm.JMP(LabelRef(prefix + "Vector"))
	asm.Label(prefix + "End")
}

// genRowsReduce emits op.kernel<ISA>(dx, y, dy []float32, rows, cols, ldx,
// ldy, lddy int), in the vectors of s (evexYMM(s) for the dual-width
// kernels): for each of rows ≥ 1 rows, the reduction pass (reduceAccs
// accumulators, summed pairwise, then across lanes), then the element-wise
// pass. One call takes every row: the rows of attention are short, and a call
// per row would cost as much as its work.
//
// Tails: AVX-512 loads them zero-masked and stores them masked. AVX2 rows of
// at least a vector reduce the row's last full vector with its lanes before
// the tail zeroed, and compute its outputs from the inputs loaded before the
// element-wise loop (dx may be y or dy) and store them after it, over the end
// (the lanes stored twice get the same values); shorter rows go one element
// at a time in lane 0 of whole vectors.
func genRowsReduce(s *isa, op rowsReduceOp) {
	name := s.name(op.kernel)
	TEXT(name, NOSPLIT, "func(dx, y, dy []float32, rows, cols, ldx, ldy, lddy int)")
	asm.Doc(append([]string{name + " " + op.doc[0]}, op.doc[1:]...)...)
	dx, y, dy := loadRowPtr("dx", "ldx"), loadRowPtr("y", "ldy"), loadRowPtr("dy", "lddy")
	rows, cols := load(asm.Param("rows")), load(asm.Param("cols"))
	st := op.setup(s)
	lbl := func(l string) string { return op.kernel + l }
	rem := asm.GP64()
	asm.MOVQ(cols, rem)
	asm.ANDQ(U32(s.lanes-1), rem)
	var t tail
	var lastAt Mem // AVX2: the outputs of a row's last full vector
	if s.evex {
		t = s.tailMask(rem)
	} else {
		asm.CMPQ(cols, U32(s.lanes))
		asm.JB(LabelRef(lbl("Short")))
		t = s.tailMask(rem)
		lastAt = asm.AllocLocal(s.bytes())
	}

	asm.Label(lbl("Row"))
	i := asm.GP64()
	// Pass 1: the reduction.
	accs := make([]VecVirtual, reduceAccs)
	for j := range accs {
		accs[j] = s.vec()
		s.zero(accs[j])
	}
	asm.XORQ(i, i)
	s.vecLoop(lbl("Reduce"), i, cols, reduceAccs, func(j int, at func(GPVirtual) Mem) {
		op.term(s, st, at(y.p), at(dy.p), accs[j])
	})
	asm.TESTQ(rem, rem)
	asm.JZ(LabelRef(lbl("Sum")))
	var yv VecVirtual
	dyv := s.vec()
	if op.readsY {
		yv = s.vec()
	}
	if s.evex {
		if op.readsY {
			asm.VMOVUPS_Z(Mem{Base: y.p, Index: i, Scale: 4}, t.k, yv)
		}
		asm.VMOVUPS_Z(Mem{Base: dy.p, Index: i, Scale: 4}, t.k, dyv)
	} else {
		if op.readsY {
			asm.VANDPS(Mem{Base: y.p, Index: cols, Scale: 4, Disp: -s.bytes()}, t.y, yv)
		}
		asm.VANDPS(Mem{Base: dy.p, Index: cols, Scale: 4, Disp: -s.bytes()}, t.y, dyv)
	}
	op.term(s, st, yv, dyv, accs[1])
	asm.Label(lbl("Sum"))
	asm.VADDPS(accs[2], accs[0], accs[0])
	asm.VADDPS(accs[3], accs[1], accs[1])
	asm.VADDPS(accs[1], accs[0], accs[0])
	c := s.vec()
	asm.VBROADCASTSS(s.hsum(accs[0]), c)

	// Pass 2: the outputs.
	if !s.evex {
		asm.TESTQ(rem, rem)
		asm.JZ(LabelRef(lbl("Whole")))
		asm.VMOVUPS(op.out(s, st, Mem{Base: y.p, Index: cols, Scale: 4, Disp: -s.bytes()},
			Mem{Base: dy.p, Index: cols, Scale: 4, Disp: -s.bytes()}, c), lastAt)
		asm.Label(lbl("Whole"))
	}
	asm.XORQ(i, i)
	s.vecLoop(lbl("Out"), i, cols, reduceAccs, func(j int, at func(GPVirtual) Mem) {
		asm.VMOVUPS(op.out(s, st, at(y.p), at(dy.p), c), at(dx.p))
	})
	asm.TESTQ(rem, rem)
	asm.JZ(LabelRef(lbl("Next")))
	if s.evex {
		yt, dyt := s.vec(), s.vec()
		asm.VMOVUPS_Z(Mem{Base: y.p, Index: i, Scale: 4}, t.k, yt)
		asm.VMOVUPS_Z(Mem{Base: dy.p, Index: i, Scale: 4}, t.k, dyt)
		asm.VMOVUPS(op.out(s, st, yt, dyt, c), t.k, Mem{Base: dx.p, Index: i, Scale: 4})
	} else {
		last := s.vec()
		asm.VMOVUPS(lastAt, last)
		asm.VMOVUPS(last, Mem{Base: dx.p, Index: cols, Scale: 4, Disp: -s.bytes()})
	}
	asm.Label(lbl("Next"))
	nextRow(dx, y, dy)
	asm.DECQ(rows)
	asm.JNZ(LabelRef(lbl("Row")))
	asm.VZEROUPPER()
	asm.RET()

	if s.evex {
		return
	}
	// AVX2 rows shorter than a vector: one element at a time in lane 0.
	asm.Label(lbl("Short"))
	{
		j := asm.GP64()
		acc := s.vec()
		s.zero(acc)
		asm.XORQ(j, j)
		asm.Label(lbl("ShortReduce"))
		var yv VecVirtual
		dyv := s.vec()
		if op.readsY {
			yv = s.vec()
			asm.VMOVSS(Mem{Base: y.p, Index: j, Scale: 4}, yv.AsX())
		}
		asm.VMOVSS(Mem{Base: dy.p, Index: j, Scale: 4}, dyv.AsX())
		op.term(s, st, yv, dyv, acc)
		asm.INCQ(j)
		asm.CMPQ(j, cols)
		asm.JB(LabelRef(lbl("ShortReduce")))
		c := s.vec()
		asm.VBROADCASTSS(acc.AsX(), c)
		asm.XORQ(j, j)
		asm.Label(lbl("ShortOut"))
		yo, dyo := s.vec(), s.vec()
		asm.VMOVSS(Mem{Base: y.p, Index: j, Scale: 4}, yo.AsX())
		asm.VMOVSS(Mem{Base: dy.p, Index: j, Scale: 4}, dyo.AsX())
		asm.VMOVSS(op.out(s, st, yo, dyo, c).AsX(), Mem{Base: dx.p, Index: j, Scale: 4})
		asm.INCQ(j)
		asm.CMPQ(j, cols)
		asm.JB(LabelRef(lbl("ShortOut")))
		nextRow(dx, y, dy)
		asm.DECQ(rows)
		asm.JNZ(LabelRef(lbl("Short")))
	}
	asm.VZEROUPPER()
	asm.RET()
}

// genSoftmaxRecompute emits softmaxRecompute<ISA>(p, s []float32, rows, cols,
// ldp, lds, d int, scale float32, lse []float32): for each row i < rows,
// p[i][j] = Exp(scale·s[i][j] − lse[i]) (the argument one fused multiply-add,
// Exp's code with every special value) for j < nᵢ = min(cols, max(0, d+i)),
// and 0 for the other j, every j when lse[i] = −Inf; cols ≥ 1, p may be s.
//
// Tails as genRowsReduce's, per row (nᵢ changes from row to row): AVX-512
// masks; AVX2 computes the last full vector of a row of nᵢ ≥ 8 before the
// loop and stores it after, and takes shorter rows one element at a time.
// The zeros past nᵢ are whole-vector stores (the last one masked on AVX-512,
// over the end on AVX2, or single floats when fewer than a vector).
func genSoftmaxRecompute(s *isa) {
	name := s.name("softmaxRecompute")
	TEXT(name, NOSPLIT, "func(p, s []float32, rows, cols, ldp, lds, d int, scale float32, lse []float32)")
	asm.Doc(name+" sets p[i][j] = e^(scale·s[i][j] − lse[i]) for j < min(cols, max(0, d+i))",
		"and 0 for the other j (every j where lse[i] = −Inf), for rows ≥ 1 rows of",
		"cols ≥ 1 columns (row strides ldp, lds); p may be s.")
	pm, sm := loadRowPtr("p", "ldp"), loadRowPtr("s", "lds")
	lse := load(asm.Param("lse").Base())
	cols := load(asm.Param("cols"))
	i := asm.GP64() // the row
	asm.XORQ(i, i)
	e := newExpGen(s)
	var lastAt Mem // AVX2: the last full vector of a row's band, computed before the loop
	unroll := 2
	if !s.evex {
		lastAt = asm.AllocLocal(s.bytes())
		e.keepOperands()
		unroll = 1
	}
	sc := s.broadcast("scale")
	n, j := asm.GP64(), asm.GP64()

	asm.Label("row")
	// n = min(cols, max(0, d+i)), 0 where lse[i] = −Inf.
	zero := asm.GP64()
	asm.XORQ(zero, zero)
	asm.MOVQ(paramAddr("d"), n)
	asm.ADDQ(i, n)
	asm.CMPQ(n, zero)
	asm.CMOVQLT(zero, n)
	asm.CMPQ(n, cols)
	asm.CMOVQGT(cols, n)
	asm.CMPL(Mem{Base: lse, Index: i, Scale: 4}, U32(0xff800000))
	asm.CMOVQEQ(zero, n)
	negL := s.vec()
	negate(Mem{Base: lse, Index: i, Scale: 4}, negL)
	arg := func(x Op) VecVirtual {
		v := regOf(s, x)
		asm.VFMADD213PS(negL, sc, v) // scale·s − lse
		return v
	}
	asm.XORQ(j, j)
	zeroVec := func() VecVirtual {
		z := s.vec()
		s.zero(z)
		return z
	}
	if s.evex {
		s.vecLoop("exp", j, n, unroll, func(_ int, at func(GPVirtual) Mem) {
			asm.VMOVUPS(e.apply(arg(at(sm.p))), at(pm.p))
		})
		rem := asm.GP64()
		asm.MOVQ(n, rem)
		asm.SUBQ(j, rem)
		asm.JZ(LabelRef("zeros"))
		t := s.tailMask(rem)
		x := s.vec()
		asm.VMOVUPS_Z(Mem{Base: sm.p, Index: j, Scale: 4}, t.k, x)
		asm.VMOVUPS(e.apply(arg(x)), t.k, Mem{Base: pm.p, Index: j, Scale: 4})
		asm.MOVQ(n, j)
		asm.Label("zeros")
		z := zeroVec()
		s.vecLoop("zero", j, cols, 1, func(_ int, at func(GPVirtual) Mem) { asm.VMOVUPS(z, at(pm.p)) })
		asm.MOVQ(cols, rem)
		asm.SUBQ(j, rem)
		asm.JZ(LabelRef("next"))
		t = s.tailMask(rem)
		asm.VMOVUPS(z, t.k, Mem{Base: pm.p, Index: j, Scale: 4})
	} else {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef("short"))
		asm.TESTQ(U32(s.lanes-1), n)
		asm.JZ(LabelRef("whole"))
		asm.VMOVUPS(e.apply(arg(Mem{Base: sm.p, Index: n, Scale: 4, Disp: -s.bytes()})), lastAt)
		asm.Label("whole")
		s.vecLoop("exp", j, n, unroll, func(_ int, at func(GPVirtual) Mem) {
			asm.VMOVUPS(e.apply(arg(at(sm.p))), at(pm.p))
		})
		asm.CMPQ(j, n)
		asm.JAE(LabelRef("zeros"))
		last := s.vec()
		asm.VMOVUPS(lastAt, last)
		asm.VMOVUPS(last, Mem{Base: pm.p, Index: n, Scale: 4, Disp: -s.bytes()})
		asm.MOVQ(n, j)
		asm.JMP(LabelRef("zeros"))

		asm.Label("short") // fewer than a vector: one element at a time
		asm.TESTQ(n, n)
		asm.JZ(LabelRef("zeros"))
		asm.Label("shortLoop")
		x := s.vec()
		asm.VMOVSS(Mem{Base: sm.p, Index: j, Scale: 4}, x.AsX())
		asm.VMOVSS(e.apply(arg(x)).AsX(), Mem{Base: pm.p, Index: j, Scale: 4})
		asm.INCQ(j)
		asm.CMPQ(j, n)
		asm.JB(LabelRef("shortLoop"))

		asm.Label("zeros")
		end := asm.GP64()
		asm.MOVQ(cols, end)
		asm.SUBQ(j, end)
		asm.CMPQ(end, U32(s.lanes))
		asm.JB(LabelRef("zeroShort"))
		z := zeroVec()
		s.vecLoop("zero", j, cols, 1, func(_ int, at func(GPVirtual) Mem) { asm.VMOVUPS(z, at(pm.p)) })
		asm.VMOVUPS(z, Mem{Base: pm.p, Index: cols, Scale: 4, Disp: -s.bytes()})
		asm.JMP(LabelRef("next"))
		asm.Label("zeroShort")
		asm.CMPQ(j, cols)
		asm.JAE(LabelRef("next"))
		asm.MOVL(U32(0), Mem{Base: pm.p, Index: j, Scale: 4})
		asm.INCQ(j)
		asm.JMP(LabelRef("zeroShort"))
	}
	asm.Label("next")
	nextRow(pm, sm)
	asm.INCQ(i)
	asm.CMPQ(i, paramAddr("rows"))
	asm.JB(LabelRef("row"))
	asm.VZEROUPPER()
	asm.RET()
}

// genSoftmaxBackwardBlock emits softmaxBackwardBlock<ISA>(ds, p, dp []float32,
// rows, cols, ldds, ldp, lddp int, delta []float32): for each of rows ≥ 1
// rows and cols ≥ 1 columns, ds = (dp − delta[i])·p, +0 where p = 0; ds may
// be p or dp. Tails as genRowsReduce's element-wise pass.
func genSoftmaxBackwardBlock(s *isa) {
	name := s.name("softmaxBackwardBlock")
	TEXT(name, NOSPLIT, "func(ds, p, dp []float32, rows, cols, ldds, ldp, lddp int, delta []float32)")
	asm.Doc(name+" sets ds[i][j] = (dp[i][j] − delta[i])·p[i][j], +0 where p[i][j] = 0, for",
		"rows ≥ 1 rows of cols ≥ 1 columns (row strides ldds, ldp, lddp); ds may be p or dp.")
	s = evexYMM(s)
	ds, p, dp := loadRowPtr("ds", "ldds"), loadRowPtr("p", "ldp"), loadRowPtr("dp", "lddp")
	delta := load(asm.Param("delta").Base())
	rows, cols := load(asm.Param("rows")), load(asm.Param("cols"))
	zero := s.vec()
	s.zero(zero)
	rem := asm.GP64()
	asm.MOVQ(cols, rem)
	asm.ANDQ(U32(s.lanes-1), rem)
	out := func(pv Op, g Op, dl VecVirtual) VecVirtual {
		pr := regOf(s, pv)
		d := regOf(s, g)
		asm.VSUBPS(dl, d, d)
		if s.evex {
			k := asm.K()
			asm.VCMPPS(U8(cmpNEQUQ), zero, pr, k)
			asm.VMULPS_Z(pr, d, k, d)
			return d
		}
		m := s.vec()
		asm.VMULPS(pr, d, d)
		asm.VCMPPS(U8(cmpNEQUQ), zero, pr, m)
		asm.VANDPS(m, d, d)
		return d
	}
	var t tail
	if s.evex {
		t = s.tailMask(rem)
	} else {
		asm.CMPQ(cols, U32(s.lanes))
		asm.JB(LabelRef("short"))
	}
	asm.Label("row")
	dl := s.vec()
	asm.VBROADCASTSS(Mem{Base: delta}, dl)
	var last VecVirtual
	if !s.evex {
		last = s.vec()
		asm.TESTQ(rem, rem)
		asm.JZ(LabelRef("whole"))
		asm.VMOVUPS(out(Mem{Base: p.p, Index: cols, Scale: 4, Disp: -s.bytes()}, Mem{Base: dp.p, Index: cols, Scale: 4, Disp: -s.bytes()}, dl), last)
		asm.Label("whole")
	}
	j := asm.GP64()
	asm.XORQ(j, j)
	s.vecLoop("block", j, cols, 4, func(_ int, at func(GPVirtual) Mem) {
		asm.VMOVUPS(out(at(p.p), at(dp.p), dl), at(ds.p))
	})
	asm.TESTQ(rem, rem)
	asm.JZ(LabelRef("next"))
	if s.evex {
		pt, gt := s.vec(), s.vec()
		asm.VMOVUPS_Z(Mem{Base: p.p, Index: j, Scale: 4}, t.k, pt)
		asm.VMOVUPS_Z(Mem{Base: dp.p, Index: j, Scale: 4}, t.k, gt)
		asm.VMOVUPS(out(pt, gt, dl), t.k, Mem{Base: ds.p, Index: j, Scale: 4})
	} else {
		asm.VMOVUPS(last, Mem{Base: ds.p, Index: cols, Scale: 4, Disp: -s.bytes()})
	}
	asm.Label("next")
	nextRow(ds, p, dp)
	asm.ADDQ(U32(4), delta)
	asm.DECQ(rows)
	asm.JNZ(LabelRef("row"))
	asm.VZEROUPPER()
	asm.RET()
	if s.evex {
		return
	}
	// Rows shorter than a vector: one element at a time in lane 0.
	asm.Label("short")
	dls := s.vec()
	asm.VBROADCASTSS(Mem{Base: delta}, dls)
	asm.XORQ(j, j)
	asm.Label("shortLoop")
	pv, gv := s.vec(), s.vec()
	asm.VMOVSS(Mem{Base: p.p, Index: j, Scale: 4}, pv.AsX())
	asm.VMOVSS(Mem{Base: dp.p, Index: j, Scale: 4}, gv.AsX())
	asm.VMOVSS(out(pv, gv, dls).AsX(), Mem{Base: ds.p, Index: j, Scale: 4})
	asm.INCQ(j)
	asm.CMPQ(j, cols)
	asm.JB(LabelRef("shortLoop"))
	nextRow(ds, p, dp)
	asm.ADDQ(U32(4), delta)
	asm.DECQ(rows)
	asm.JNZ(LabelRef("short"))
	asm.VZEROUPPER()
	asm.RET()
}
