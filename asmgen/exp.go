package main

import (
	"fmt"

	"github.com/heedml/heed/internal/coef"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("exp", genExpFamily) }

// VCMPPS predicates.
const (
	cmpLTOQ  = 0x11 // <, false on NaN
	cmpGEOQ  = 0x1d // ≥, false on NaN
	cmpNLTUQ = 0x15 // not <, true on NaN
	cmpNGEUQ = 0x19 // not ≥, true on NaN
)

func genExpFamily() {
	for _, s := range isas {
		genElementwise(s, "exp", "e^x[i]", func(s *isa) func(...VecVirtual) []VecVirtual {
			e := newExpGen(s)
			e.keep()
			return func(xs ...VecVirtual) []VecVirtual {
				var ys []VecVirtual
				for _, x := range xs {
					ys = append(ys, e.apply(x))
				}
				return ys
			}
		})
		genElementwise(s, "tanh", "tanh(x[i])", func(s *isa) func(...VecVirtual) []VecVirtual {
			t := newTanhGen(s)
			t.keep(tanhKeepAVX2)
			return t.applyN
		})
	}
}

// tanhKeepAVX2 is how many of tanh's constants the AVX2 kernel keeps in
// registers: its two vectors interleaved (tanhGen.applyN) leave room for 5 in
// 16 YMM, of which it takes 3 (asmgen/DESIGN.md, "Generator constants").
const tanhKeepAVX2 = 3

// expGen emits a lane-wise exp for ISA s; its constants are declared by
// newExpGen and optionally loaded into registers by keep (call both before
// the loop), so apply can sit in a loop body.
//
// The algorithm (the same as fallback.Exp): n = round(x·log₂e) by the 1.5·2²³
// shifter, r = x − n·ln2 with the Cody–Waite split Ln2Hi + Ln2Lo, eʳ by the
// degree-6 polynomial of internal/coef, and 2ⁿ added to the exponent bits
// (AVX2) or applied by VSCALEFPS (AVX-512). x < ExpLo gives +0 (results below
// 2⁻¹²⁶ flush to zero), x ≥ ExpHi gives +Inf, NaN stays NaN.
type expGen struct {
	s                            *isa
	log2e, shifter, ln2hi, ln2lo vconst
	c                            []vconst // c[0] = 1, c[k] = coef.Exp<k>
	lo, hi, inf                  vconst
	bias, lim                    vconst // AVX2 range check on the bits of x·log₂e + shifter, declared by apply
	fixups                       int    // labels emitted by apply
}

// newExpGen declares the constants of exp for s as RODATA memory operands
// (nothing is emitted); keep, called before the loop, moves the hot ones into
// registers where the caller has the registers to spare.
func newExpGen(s *isa) *expGen {
	e := &expGen{s: s}
	e.log2e, e.ln2hi, e.ln2lo = newConst(s, coef.Log2e), newConst(s, coef.Ln2Hi), newConst(s, coef.Ln2Lo)
	e.shifter = newConst(s, coef.Shifter)
	e.inf = newConstBits(s, 0x7f800000)
	for _, c := range []float32{1, coef.Exp1, coef.Exp2, coef.Exp3, coef.Exp4, coef.Exp5, coef.Exp6} {
		e.c = append(e.c, newConst(s, c))
	}
	e.lo, e.hi = newConst(s, coef.ExpLo), newConst(s, coef.ExpHi)
	return e
}

// The AVX2 fast-path range: the bits of t = x·log₂e + shifter are
// 0x4B400000 + n for |n| < 2²², and adding expBias maps n ∈ [−125, 127] to
// the signed int32s [−2³¹, expLim], every other t (other n, ±Inf, NaN) above
// expLim. There x ∈ (ExpLo, ExpHi), so the result is normal and finite and
// the special-value fix-ups leave it unchanged.
const (
	expBias = 0x80000000 - 0x4B400000 + 125
	expLim  = 0x80000000 + 127 + 125
)

// keep makes the constants of the AVX2 apply's main path resident in
// registers (for loops with registers to spare). AVX-512 keeps its embedded
// broadcasts (DESIGN.md).
func (e *expGen) keep() {
	if e.s.evex {
		return
	}
	cs := []*vconst{&e.log2e, &e.shifter, &e.ln2hi, &e.ln2lo}
	for i := range e.c {
		cs = append(cs, &e.c[i])
	}
	keep(cs...)
}

// reduce emits r = x − n·ln2 for n (a float holding an integer).
func (e *expGen) reduce(x, n VecVirtual) VecVirtual {
	r := e.s.vec()
	asm.VMOVAPS(x, r)
	e.ln2hi.fnmadd231(n, r) // exact
	e.ln2lo.fnmadd231(n, r)
	return r
}

// apply emits dst = exp(x) lane-wise with the full special-value semantics;
// x is not modified. On AVX2 the fix-ups for ±Inf, NaN, overflow and
// underflow are branched over when no lane needs them (one VMOVMSKPS test per
// vector, labels numbered per expGen).
func (e *expGen) apply(x VecVirtual) VecVirtual {
	s := e.s
	if s.evex {
		// min(hi, x) keeps NaN (MINPS returns its second source then); every
		// x ≥ ExpHi computes e^ExpHi, which overflows to +Inf in VSCALEFPS.
		xc := e.hi.reg()
		asm.VMINPS(x, xc, xc)
		return e.scaled(xc, x)
	}
	t, p := e.poly(x)
	if e.fixups == 0 {
		e.bias, e.lim = newConstBits(s, expBias), newConstBits(s, expLim)
	}
	out := s.vec()
	asm.VPADDD(e.bias.op(), t, out)
	asm.VPCMPGTD(e.lim.op(), out, out) // lanes outside the fast-path range
	e.scale(t, p)
	// The special-value fix-ups, only for vectors with a lane out of range.
	bits := asm.GP32()
	asm.VMOVMSKPS(out, bits)
	e.fixups++
	skip := fmt.Sprintf("expInRange%d", e.fixups)
	asm.TESTL(bits, bits)
	asm.JZ(LabelRef(skip))
	m := s.vec()
	e.hi.cmp(cmpGEOQ, x, m)
	asm.VBLENDVPS(m, e.inf.mem, p, p)
	e.lo.cmp(cmpNLTUQ, x, m)
	asm.VANDPS(m, p, p)
	// NaN: the shift above may have moved payload bits into the exponent;
	// max(p, x) is p for every other x (eˣ > x) and x itself for NaN (MAXPS
	// returns its second source when either is NaN).
	asm.VMAXPS(x, p, p)
	asm.Label(skip)
	return p
}

// applyNonPositive is apply for lanes ≤ 0, such as softmax's x − max: apply
// without the overflow handling (the clamp to ExpHi and the +Inf blend), which
// cannot change such lanes, so it gives the same bits with fewer instructions.
// A NaN lane gives NaN on AVX-512 (every step keeps it, and the mask keeps
// NaN lanes: softmaxExpSum relies on it) and an unspecified value on AVX2
// (the exponent shift can turn a NaN with payload into a number), where
// callers check their input for NaN.
func (e *expGen) applyNonPositive(x VecVirtual) VecVirtual {
	if e.s.evex {
		return e.scaled(x, x)
	}
	t, p := e.poly(x)
	e.scale(t, p)
	m := e.s.vec()
	e.lo.cmp(cmpNLTUQ, x, m)
	asm.VANDPS(m, p, p)
	return p
}

// scaled emits, for AVX-512, eˣ for the lanes of xr by VRNDSCALEPS and
// VSCALEFPS, with the lanes where x < ExpLo zeroed (x ≥ ExpLo or NaN kept).
func (e *expGen) scaled(xr, x VecVirtual) VecVirtual {
	s := e.s
	n := s.vec()
	e.log2e.mul(xr, n)
	asm.VRNDSCALEPS(U8(8), n, n) // round to nearest even, no precision exception
	p := horner(s, e.c, e.reduce(xr, n))
	k := asm.K()
	e.lo.cmp(cmpNLTUQ, x, k) // x ≥ ExpLo or NaN
	asm.VSCALEFPS_Z(n, p, k, p)
	return p
}

// poly emits, for AVX2, t = x·log₂e + shifter (n in its low bits) and p = eʳ
// for r = x − n·ln2, the polynomial before scaling by 2ⁿ.
func (e *expGen) poly(x VecVirtual) (t, p VecVirtual) {
	t, n := e.log2e.reg(), e.s.vec()
	e.shifter.fma213(x, t)
	e.shifter.sub(t, n)
	return t, horner(e.s, e.c, e.reduce(x, n))
}

// scale emits p = p·2ⁿ for AVX2 by adding n (the low bits of t) to p's
// exponent bits: exact while the result is normal. It clobbers t.
func (e *expGen) scale(t, p VecVirtual) {
	asm.VPSLLD(U8(23), t, t)
	asm.VPADDD(t, p, p)
}

// genElementwise emits name<ISA>(dst, x []float32), dst[i] = f(x[i]) for
// i < len(x), with f emitted by the apply function newGen(s) returns (which
// materialises its constants first): given several vectors, it may interleave
// their instructions. len(dst) ≥ len(x); dst may be x.
//
// AVX2 runs whole vectors, then recomputes the slice's last full vector from
// its original input, loaded before the loop could overwrite it in place, and
// stores it over the end: the lanes stored twice get identical values.
// Shorter slices go one lane at a time. AVX-512 finishes with an opmask tail.
func genElementwise(s *isa, kernel, what string, newGen func(*isa) func(...VecVirtual) []VecVirtual) {
	name := s.name(kernel)
	TEXT(name, NOSPLIT, "func(dst, x []float32)")
	asm.Doc(name + " sets dst[i] = " + what + " for i < len(x); len(dst) ≥ len(x), dst may be x.")
	dst := load(asm.Param("dst").Base())
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	f := newGen(s)
	lbl := func(l string) string { return kernel + l }
	if !s.evex {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef(lbl("scalar")))
		// The last full vector, loaded before any store.
		last := s.vec()
		asm.VMOVUPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, last)
		end := asm.GP64()
		asm.LEAQ(Mem{Base: dst, Index: n, Scale: 4, Disp: -s.bytes()}, end)
		i := elementwiseVectors(s, lbl, f, dst, x, n)
		asm.CMPQ(i, n)
		asm.JAE(LabelRef(lbl("done")))
		asm.VMOVUPS(f(last)[0], Mem{Base: end})
		asm.Label(lbl("done"))
		asm.VZEROUPPER()
		asm.RET()

		// Fewer than one vector: one element at a time in lane 0 (VMOVSS
		// zeroes the other lanes; QEMU-safe: no wide memory operand).
		asm.Label(lbl("scalar"))
		asm.TESTQ(n, n)
		asm.JZ(LabelRef(lbl("scalarDone")))
		asm.Label(lbl("scalarLoop"))
		w := s.vec()
		asm.VMOVSS(Mem{Base: x}, w.AsX())
		asm.VMOVSS(f(w)[0].AsX(), Mem{Base: dst})
		asm.ADDQ(U32(4), x)
		asm.ADDQ(U32(4), dst)
		asm.DECQ(n)
		asm.JNZ(LabelRef(lbl("scalarLoop")))
		asm.Label(lbl("scalarDone"))
		asm.VZEROUPPER()
		asm.RET()
		return
	}
	i := elementwiseVectors(s, lbl, f, dst, x, n)
	rem := asm.GP64()
	asm.MOVQ(n, rem)
	asm.SUBQ(i, rem)
	asm.JZ(LabelRef(lbl("done")))
	t := s.tailMask(rem)
	w := s.vec()
	asm.VMOVUPS_Z(Mem{Base: x, Index: i, Scale: 4}, t.k, w)
	asm.VMOVUPS(f(w)[0], t.k, Mem{Base: dst, Index: i, Scale: 4})
	asm.Label(lbl("done"))
	asm.VZEROUPPER()
	asm.RET()
}

// elementwiseVectors emits genElementwise's whole-vector loops, two vectors an
// iteration and then one, and returns the index of the first element they
// leave, at the label lbl("tail").
func elementwiseVectors(s *isa, lbl func(string) string, f func(...VecVirtual) []VecVirtual, dst, x, n GPVirtual) GPVirtual {
	i := asm.GP64()
	asm.XORQ(i, i)
	lim := asm.GP64()
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-2*s.lanes), lim)
	asm.Label(lbl("pair"))
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef(lbl("single")))
	v0, v1 := s.vec(), s.vec()
	asm.VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, v0)
	asm.VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: s.bytes()}, v1)
	r := f(v0, v1)
	asm.VMOVUPS(r[0], Mem{Base: dst, Index: i, Scale: 4})
	asm.VMOVUPS(r[1], Mem{Base: dst, Index: i, Scale: 4, Disp: s.bytes()})
	asm.ADDQ(U32(2*s.lanes), i)
	asm.JMP(LabelRef(lbl("pair")))
	asm.Label(lbl("single"))
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-s.lanes), lim)
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef(lbl("tail")))
	v := s.vec()
	asm.VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, v)
	asm.VMOVUPS(f(v)[0], Mem{Base: dst, Index: i, Scale: 4})
	asm.ADDQ(U32(s.lanes), i)
	asm.Label(lbl("tail"))
	return i
}
