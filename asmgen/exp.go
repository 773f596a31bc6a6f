package main

import (
	"fmt"

	"github.com/heedml/heed/internal/coef"

	. "github.com/mmcloughlin/avo/build"
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
// 16 YMM; 3 measured fastest on Zen 4 (n = 4096: 1190 ns against 1210 with 5
// and 1255 with none).
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
// broadcasts: resident registers measured no faster there.
func (e *expGen) keep() {
	if e.s.wide {
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
	VMOVAPS(x, r)
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
	if s.wide {
		// min(hi, x) keeps NaN (MINPS returns its second source then); every
		// x ≥ ExpHi computes e^ExpHi, which overflows to +Inf in VSCALEFPS.
		xc := e.hi.reg()
		VMINPS(x, xc, xc)
		return e.scaled(xc, x)
	}
	t, p := e.poly(x)
	if e.fixups == 0 {
		e.bias, e.lim = newConstBits(s, expBias), newConstBits(s, expLim)
	}
	out := s.vec()
	VPADDD(e.bias.op(), t, out)
	VPCMPGTD(e.lim.op(), out, out) // lanes outside the fast-path range
	e.scale(t, p)
	// The special-value fix-ups, only for vectors with a lane out of range.
	bits := GP32()
	VMOVMSKPS(out, bits)
	e.fixups++
	skip := fmt.Sprintf("expInRange%d", e.fixups)
	TESTL(bits, bits)
	JZ(LabelRef(skip))
	m := s.vec()
	e.hi.cmp(cmpGEOQ, x, m)
	VBLENDVPS(m, e.inf.mem, p, p)
	e.lo.cmp(cmpNLTUQ, x, m)
	VANDPS(m, p, p)
	// NaN: the shift above may have moved payload bits into the exponent;
	// max(p, x) is p for every other x (eˣ > x) and x itself for NaN (MAXPS
	// returns its second source when either is NaN).
	VMAXPS(x, p, p)
	Label(skip)
	return p
}

// applyNonPositive is apply for lanes ≤ 0, such as softmax's x − max: apply
// without the overflow handling (the clamp to ExpHi and the +Inf blend), which
// cannot change such lanes, so it gives the same bits with fewer instructions.
// A NaN lane gives an unspecified value (on AVX2 the exponent shift can turn a
// NaN with payload into a number): callers check their input for NaN.
func (e *expGen) applyNonPositive(x VecVirtual) VecVirtual {
	if e.s.wide {
		return e.scaled(x, x)
	}
	t, p := e.poly(x)
	e.scale(t, p)
	m := e.s.vec()
	e.lo.cmp(cmpNLTUQ, x, m)
	VANDPS(m, p, p)
	return p
}

// scaled emits, for AVX-512, eˣ for the lanes of xr by VRNDSCALEPS and
// VSCALEFPS, with the lanes where x < ExpLo zeroed (x ≥ ExpLo or NaN kept).
func (e *expGen) scaled(xr, x VecVirtual) VecVirtual {
	s := e.s
	n := s.vec()
	e.log2e.mul(xr, n)
	VRNDSCALEPS(U8(8), n, n) // round to nearest even, no precision exception
	p := horner(s, e.c, e.reduce(xr, n))
	k := K()
	e.lo.cmp(cmpNLTUQ, x, k) // x ≥ ExpLo or NaN
	VSCALEFPS_Z(n, p, k, p)
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
	VPSLLD(U8(23), t, t)
	VPADDD(t, p, p)
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
	Doc(name + " sets dst[i] = " + what + " for i < len(x); len(dst) ≥ len(x), dst may be x.")
	dst := load(Param("dst").Base())
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	f := newGen(s)
	lbl := func(l string) string { return kernel + l }
	if !s.wide {
		CMPQ(n, U32(s.lanes))
		JB(LabelRef(lbl("scalar")))
		// The last full vector, loaded before any store.
		last := s.vec()
		VMOVUPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, last)
		end := GP64()
		LEAQ(Mem{Base: dst, Index: n, Scale: 4, Disp: -s.bytes()}, end)
		i := elementwiseVectors(s, lbl, f, dst, x, n)
		CMPQ(i, n)
		JAE(LabelRef(lbl("done")))
		VMOVUPS(f(last)[0], Mem{Base: end})
		Label(lbl("done"))
		VZEROUPPER()
		RET()

		// Fewer than one vector: one element at a time in lane 0 (VMOVSS
		// zeroes the other lanes; QEMU-safe: no wide memory operand).
		Label(lbl("scalar"))
		TESTQ(n, n)
		JZ(LabelRef(lbl("scalarDone")))
		Label(lbl("scalarLoop"))
		w := s.vec()
		VMOVSS(Mem{Base: x}, w.AsX())
		VMOVSS(f(w)[0].AsX(), Mem{Base: dst})
		ADDQ(U32(4), x)
		ADDQ(U32(4), dst)
		DECQ(n)
		JNZ(LabelRef(lbl("scalarLoop")))
		Label(lbl("scalarDone"))
		VZEROUPPER()
		RET()
		return
	}
	i := elementwiseVectors(s, lbl, f, dst, x, n)
	rem := GP64()
	MOVQ(n, rem)
	SUBQ(i, rem)
	JZ(LabelRef(lbl("done")))
	t := s.tailMask(rem)
	w := s.vec()
	VMOVUPS_Z(Mem{Base: x, Index: i, Scale: 4}, t.k, w)
	VMOVUPS(f(w)[0], t.k, Mem{Base: dst, Index: i, Scale: 4})
	Label(lbl("done"))
	VZEROUPPER()
	RET()
}

// elementwiseVectors emits genElementwise's whole-vector loops, two vectors an
// iteration and then one, and returns the index of the first element they
// leave, at the label lbl("tail").
func elementwiseVectors(s *isa, lbl func(string) string, f func(...VecVirtual) []VecVirtual, dst, x, n GPVirtual) GPVirtual {
	i := GP64()
	XORQ(i, i)
	lim := GP64()
	MOVQ(n, lim)
	ANDQ(I32(-2*s.lanes), lim)
	Label(lbl("pair"))
	CMPQ(i, lim)
	JAE(LabelRef(lbl("single")))
	v0, v1 := s.vec(), s.vec()
	VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, v0)
	VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: s.bytes()}, v1)
	r := f(v0, v1)
	VMOVUPS(r[0], Mem{Base: dst, Index: i, Scale: 4})
	VMOVUPS(r[1], Mem{Base: dst, Index: i, Scale: 4, Disp: s.bytes()})
	ADDQ(U32(2*s.lanes), i)
	JMP(LabelRef(lbl("pair")))
	Label(lbl("single"))
	MOVQ(n, lim)
	ANDQ(I32(-s.lanes), lim)
	CMPQ(i, lim)
	JAE(LabelRef(lbl("tail")))
	v := s.vec()
	VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, v)
	VMOVUPS(f(v)[0], Mem{Base: dst, Index: i, Scale: 4})
	ADDQ(U32(s.lanes), i)
	Label(lbl("tail"))
	return i
}
