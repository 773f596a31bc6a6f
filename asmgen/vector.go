package main

import (
	"math/bits"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("vector", genVectorFamily) }

func genVectorFamily() {
	for _, s := range dualISAs {
		genSum(s)
	}
	for _, s := range isas {
		genMax(s)
	}
	for _, s := range dualISAs {
		genAxpy(s)
	}
	for _, s := range dualISAs {
		genScale(s)
	}
}

// stream emits a count-down loop over the whole vectors of the n elements at
// ptrs: blocks of unroll vectors, then (unroll ≥ 4) at most one half block,
// then single vectors. body(j, disp, last) emits the work on vector j of the
// current group at byte displacement disp from every pointer; last marks the
// group's final vector. Afterwards the pointers address the tail, n holds its
// length (< lanes) and the flags are set by that length (JZ: no tail); a
// length of whole blocks skips the half and single steps.
func (s *isa) stream(prefix string, n GPVirtual, ptrs []GPVirtual, unroll int, body func(j, disp int, last bool)) {
	block := unroll * s.lanes
	cnt := asm.GP64()
	asm.MOVQ(n, cnt)
	asm.SHRQ(U8(bits.TrailingZeros(uint(block))), cnt)
	asm.JZ(LabelRef(prefix + "Half"))
	asm.Label(prefix + "Block")
	for j := 0; j < unroll; j++ {
		body(j, j*s.bytes(), j == unroll-1)
	}
	for _, p := range ptrs {
		asm.ADDQ(U32(block*4), p)
	}
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(prefix + "Block"))

	asm.Label(prefix + "Half")
	asm.ANDQ(U32(block-1), n)
	asm.JZ(LabelRef(prefix + "Whole")) // whole blocks only (d = 64, 128, …)
	if unroll >= 4 {
		half := unroll / 2
		asm.TESTQ(U32(half*s.lanes), n)
		asm.JZ(LabelRef(prefix + "Single"))
		for j := 0; j < half; j++ {
			body(j, j*s.bytes(), j == half-1)
		}
		for _, p := range ptrs {
			asm.ADDQ(U32(half*s.bytes()), p)
		}
		block = half * s.lanes
		asm.ANDQ(U32(block-1), n)
	}

	asm.Label(prefix + "Single")
	asm.MOVQ(n, cnt)
	asm.SHRQ(U8(bits.TrailingZeros(uint(s.lanes))), cnt)
	asm.JZ(LabelRef(prefix + "Rest"))
	asm.Label(prefix + "SingleLoop")
	body(0, 0, true)
	for _, p := range ptrs {
		asm.ADDQ(U32(s.bytes()), p)
	}
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(prefix + "SingleLoop"))
	asm.Label(prefix + "Rest")
	asm.ANDQ(U32(s.lanes-1), n)
	asm.Label(prefix + "Whole")
}

// broadcast returns a vector of the float32 argument name, loaded by the
// (VEX or EVEX) broadcast itself: a legacy-SSE MOVSS load while the upper
// halves of the vector registers are dirty costs a state transition of
// hundreds of cycles on some Intel cores (asmgen/DESIGN.md, "The ISA table").
func (s *isa) broadcast(name string) VecVirtual {
	v := s.vec()
	asm.VBROADCASTSS(paramAddr(name), v)
	return v
}

// sumAccs is the number of accumulators of the sum and max loops: VADDPS
// latency 3 × 2 per cycle needs 6 chains.
const sumAccs = 8

// genSum emits sum<ISA>(x []float32) float32 = Σ x[i].
func genSum(s *isa) {
	TEXT(s.name("sum"), NOSPLIT, "func(x []float32) float32")
	asm.Doc(s.name("sum") + " returns Σ x[i].")
	s = evexYMM(s)
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	if !s.evex {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef("scalar"))
	}
	accs := make([]VecVirtual, sumAccs)
	for i := range accs {
		accs[i] = s.vec()
		s.zero(accs[i])
	}
	s.stream("sum", n, []GPVirtual{x}, len(accs), func(j, d int, _ bool) {
		asm.VADDPS(Mem{Base: x, Disp: d}, accs[j], accs[j])
	})
	asm.JZ(LabelRef("reduce"))
	t := s.tailMask(n)
	v := s.vec()
	s.loadTail(x, n, t, v)
	asm.VADDPS(v, accs[1], accs[1])
	asm.Label("reduce")
	for w := len(accs) / 2; w > 0; w /= 2 {
		for i := 0; i < w; i++ {
			asm.VADDPS(accs[i+w], accs[i], accs[i])
		}
	}
	asm.Store(s.hsum(accs[0]), asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()

	if !s.evex {
		asm.Label("scalar")
		acc, e := asm.XMM(), asm.XMM()
		asm.VXORPS(acc, acc, acc)
		asm.TESTQ(n, n)
		asm.JZ(LabelRef("scalarDone"))
		asm.Label("scalarLoop")
		asm.VMOVSS(Mem{Base: x}, e)
		asm.VADDSS(e, acc, acc)
		asm.ADDQ(U32(4), x)
		asm.DECQ(n)
		asm.JNZ(LabelRef("scalarLoop"))
		asm.Label("scalarDone")
		asm.Store(acc, asm.ReturnIndex(0))
		asm.VZEROUPPER()
		asm.RET()
	}
}

// genMax emits max<ISA>(x []float32) float32 with the contract of fallback.Max:
// −Inf for an empty slice, NaN if any element is NaN, +0 over −0.
//
// VMAXPS returns its second source when either is NaN or both are zeros, so
// the kernel also ORs an unordered compare of each pair of vectors into a NaN
// flag, and when the maximum is a zero rescans x for a +0. (AVX-512's VRANGEPS
// orders −0 below +0 but drops quiet NaNs too, and is slower: DESIGN.md.)
func genMax(s *isa) {
	TEXT(s.name("max"), NOSPLIT, "func(x []float32) float32")
	asm.Doc(s.name("max") + " returns the largest element of x (see fallback.Max).")
	x0 := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	x := asm.GP64()
	asm.MOVQ(x0, x)
	ninf := asm.GP32()
	asm.MOVL(U32(0xff800000), ninf)
	if !s.evex {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef("scalar"))
	}
	const accN = sumAccs / 2 // two vectors per accumulator per block
	accs := make([]VecVirtual, accN)
	accs[0] = s.vec()
	asm.VMOVD(ninf, accs[0].AsX())
	asm.VBROADCASTSS(accs[0].AsX(), accs[0])
	for i := 1; i < accN; i++ {
		accs[i] = s.vec()
		asm.VMOVAPS(accs[0], accs[i])
	}
	maxOp := func(src, acc VecVirtual) { asm.VMAXPS(src, acc, acc) }
	// unord ORs into the NaN flag the lanes where a or b is NaN.
	// nanTest sets ZF unless the flag has a lane set.
	var unord func(a, b VecVirtual)
	var nanTest func()
	if s.evex {
		nan := asm.K()
		asm.KXORW(nan, nan, nan)
		unord = func(a, b VecVirtual) {
			c := asm.K()
			asm.VCMPPS(U8(3), b, a, c) // UNORD_Q
			asm.KORW(c, nan, nan)
		}
		nanTest = func() { asm.KORTESTW(nan, nan) }
	} else {
		nan := s.vec()
		s.zero(nan)
		unord = func(a, b VecVirtual) {
			c := s.vec()
			asm.VCMPPS(U8(3), b, a, c) // UNORD_Q
			asm.VORPS(c, nan, nan)
		}
		nanTest = func() {
			mask := asm.GP32()
			asm.VMOVMSKPS(nan, mask)
			asm.TESTL(mask, mask)
		}
	}
	vs := make([]VecVirtual, 2*accN)
	s.stream("max", n, []GPVirtual{x}, 2*accN, func(j, d int, last bool) {
		vs[j] = s.vec()
		asm.VMOVUPS(Mem{Base: x, Disp: d}, vs[j])
		maxOp(vs[j], accs[j%accN])
		switch {
		case j%2 == 1:
			unord(vs[j-1], vs[j])
		case last:
			unord(vs[j], vs[j])
		}
	})
	asm.JZ(LabelRef("reduce"))
	v := s.vec()
	if s.evex {
		// Merge-masked: the lanes past the tail keep acc0's values.
		t := s.tailMask(n)
		asm.VMOVAPS(accs[0], v)
		asm.VMOVUPS(Mem{Base: x}, t.k, v)
	} else {
		// The last full vector: max is idempotent, so the overlap is harmless.
		asm.VMOVUPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, v)
	}
	unord(v, v)
	maxOp(v, accs[1])

	asm.Label("reduce")
	for w := accN / 2; w > 0; w /= 2 {
		for i := 0; i < w; i++ {
			maxOp(accs[i+w], accs[i])
		}
	}
	m := s.fold(accs[0], maxOp)
	nanTest()
	asm.JNZ(LabelRef("isNaN"))
	z := asm.XMM()
	asm.VXORPS(z, z, z)
	asm.VUCOMISS(z, m)
	asm.JE(LabelRef("zero"))
	asm.Store(m, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()

	asm.Label("isNaN")
	q, qx := asm.GP32(), asm.XMM()
	asm.MOVL(U32(0x7fc00000), q)
	asm.VMOVD(q, qx)
	asm.Store(qx, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()

	// The maximum is ±0, so every element is ≤ 0: it is +0 if any element's
	// bits are all zero.
	asm.Label("zero")
	zv := s.vec()
	s.zero(zv)
	var found VecVirtual
	var foundK OpmaskVirtual
	// isZero ORs into found the lanes of v that are +0; m masks them for AVX-512.
	isZero := func(v Op, k OpmaskVirtual) {
		if s.evex {
			c := asm.K()
			if k != nil {
				asm.VPCMPEQD(v, zv, k, c)
			} else {
				asm.VPCMPEQD(v, zv, c)
			}
			asm.KORW(c, foundK, foundK)
			return
		}
		c := s.vec()
		asm.VPCMPEQD(v, zv, c)
		asm.VPOR(c, found, found)
	}
	if s.evex {
		foundK = asm.K()
		asm.KXORW(foundK, foundK, foundK)
	} else {
		found = s.vec()
		s.zero(found)
	}
	p, cnt := asm.GP64(), load(asm.Param("x").Len())
	asm.MOVQ(x0, p)
	asm.SHRQ(U8(bits.TrailingZeros(uint(s.lanes))), cnt)
	asm.JZ(LabelRef("zeroTail"))
	asm.Label("zeroLoop")
	isZero(Mem{Base: p}, nil)
	asm.ADDQ(U32(s.bytes()), p)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef("zeroLoop"))
	asm.Label("zeroTail")
	rem := load(asm.Param("x").Len())
	asm.ANDQ(U32(s.lanes-1), rem)
	asm.JZ(LabelRef("zeroCheck"))
	if s.evex {
		t := s.tailMask(rem)
		v := s.vec()
		asm.VMOVUPS_Z(Mem{Base: p}, t.k, v)
		isZero(v, t.k)
	} else {
		// The last full vector (x has ≥ 8 elements) covers the tail.
		isZero(Mem{Base: p, Index: rem, Scale: 4, Disp: -s.bytes()}, nil)
	}
	asm.Label("zeroCheck")
	if s.evex {
		asm.KORTESTW(foundK, foundK)
	} else {
		asm.VPTEST(found, found)
	}
	asm.JNZ(LabelRef("plusZero"))
	mz, mzx := asm.GP32(), asm.XMM()
	asm.MOVL(U32(0x80000000), mz)
	asm.VMOVD(mz, mzx)
	asm.Store(mzx, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
	asm.Label("plusZero")
	asm.Store(z, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
	if s.evex {
		return
	}

	// Fewer than 8 elements: the same rules one at a time. VMAXSS(e, m) gives
	// e when either is NaN or both are zero, so NaN is tested explicitly and a
	// zero is taken unless it would replace +0.
	asm.Label("scalar")
	sm, e := asm.XMM(), asm.XMM()
	asm.VMOVD(ninf, sm)
	asm.TESTQ(n, n)
	asm.JZ(LabelRef("scalarDone"))
	asm.Label("scalarLoop")
	asm.VMOVSS(Mem{Base: x}, e)
	asm.VUCOMISS(e, e)
	asm.JP(LabelRef("isNaN"))
	asm.VUCOMISS(sm, e)
	asm.JA(LabelRef("scalarTake"))
	asm.JNE(LabelRef("scalarNext"))
	// Equal: take e only when it is +0 (bits zero).
	eb := asm.GP32()
	asm.VMOVD(e, eb)
	asm.TESTL(eb, eb)
	asm.JNZ(LabelRef("scalarNext"))
	asm.Label("scalarTake")
	asm.VMOVAPS(e, sm)
	asm.Label("scalarNext")
	asm.ADDQ(U32(4), x)
	asm.DECQ(n)
	asm.JNZ(LabelRef("scalarLoop"))
	asm.Label("scalarDone")
	asm.Store(sm, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
}

const axpyUnroll = 4

// genAxpy emits axpy<ISA>(alpha float32, x, y []float32): y[i] += alpha·x[i]
// over len(x) elements (the wrapper checks len(y)). x and y may be the same
// slice: the AVX2 tail's overlapping last vector is computed before the main
// loop stores over it.
func genAxpy(s *isa) {
	TEXT(s.name("axpy"), NOSPLIT, "func(alpha float32, x, y []float32)")
	asm.Doc(s.name("axpy") + " sets y[i] += alpha·x[i] for i < len(x).")
	s = evexYMM(s)

	a := s.broadcast("alpha")
	x := load(asm.Param("x").Base())
	y := load(asm.Param("y").Base())
	n := load(asm.Param("x").Len())
	var last VecVirtual
	var lastAt GPVirtual
	if !s.evex {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef("scalar"))
		last, lastAt = s.vec(), asm.GP64()
		asm.LEAQ(Mem{Base: y, Index: n, Scale: 4, Disp: -s.bytes()}, lastAt)
		asm.VMOVUPS(Mem{Base: lastAt}, last)
		asm.VFMADD231PS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, a, last)
	}
	s.stream("axpy", n, []GPVirtual{x, y}, axpyUnroll, func(j, d int, _ bool) {
		v := s.vec()
		asm.VMOVUPS(Mem{Base: y, Disp: d}, v)
		asm.VFMADD231PS(Mem{Base: x, Disp: d}, a, v)
		asm.VMOVUPS(v, Mem{Base: y, Disp: d})
	})
	asm.JZ(LabelRef("done"))
	if s.evex {
		t := s.tailMask(n)
		v, w := s.vec(), s.vec()
		asm.VMOVUPS_Z(Mem{Base: y}, t.k, v)
		asm.VMOVUPS_Z(Mem{Base: x}, t.k, w)
		asm.VFMADD231PS(w, a, v)
		asm.VMOVUPS(v, t.k, Mem{Base: y})
	} else {
		asm.VMOVUPS(last, Mem{Base: lastAt})
	}
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()

	if !s.evex {
		asm.Label("scalar")
		asm.TESTQ(n, n)
		asm.JZ(LabelRef("done"))
		asm.Label("scalarLoop")
		v, w := asm.XMM(), asm.XMM()
		asm.VMOVSS(Mem{Base: y}, v)
		asm.VMOVSS(Mem{Base: x}, w)
		asm.VFMADD231SS(w, a.AsX(), v)
		asm.VMOVSS(v, Mem{Base: y})
		asm.ADDQ(U32(4), x)
		asm.ADDQ(U32(4), y)
		asm.DECQ(n)
		asm.JNZ(LabelRef("scalarLoop"))
		asm.JMP(LabelRef("done"))
	}
}

// genScale emits scale<ISA>(alpha float32, x []float32): x[i] *= alpha. As in
// axpy, the AVX2 tail's last vector is computed before the loop.
func genScale(s *isa) {
	TEXT(s.name("scale"), NOSPLIT, "func(alpha float32, x []float32)")
	asm.Doc(s.name("scale") + " sets x[i] *= alpha.")
	s = evexYMM(s)

	a := s.broadcast("alpha")
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	if !s.evex {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef("scalar"))
	}
	s.scaleBody("scale", x, n, a)
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()

	if !s.evex {
		asm.Label("scalar")
		asm.TESTQ(n, n)
		asm.JZ(LabelRef("done"))
		asm.Label("scalarLoop")
		v := asm.XMM()
		asm.VMOVSS(Mem{Base: x}, v)
		asm.VMULSS(v, a.AsX(), v)
		asm.VMOVSS(v, Mem{Base: x})
		asm.ADDQ(U32(4), x)
		asm.DECQ(n)
		asm.JNZ(LabelRef("scalarLoop"))
		asm.JMP(LabelRef("done"))
	}
}

// scaleBody emits x[i] *= a over the n floats at x, tail included, with labels
// named after prefix; it advances x and consumes n. AVX2 needs n ≥ lanes: its
// tail rewrites the slice's last full vector, scaled before the loop scales
// its head (so the overlap is scaled once).
func (s *isa) scaleBody(prefix string, x, n GPVirtual, a VecVirtual) {
	var last VecVirtual
	var lastAt GPVirtual
	if !s.evex {
		last, lastAt = s.vec(), asm.GP64()
		asm.LEAQ(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, lastAt)
		asm.VMULPS(Mem{Base: lastAt}, a, last)
	}
	s.stream(prefix, n, []GPVirtual{x}, axpyUnroll, func(j, d int, _ bool) {
		v := s.vec()
		asm.VMULPS(Mem{Base: x, Disp: d}, a, v)
		asm.VMOVUPS(v, Mem{Base: x, Disp: d})
	})
	asm.JZ(LabelRef(prefix + "Done"))
	if s.evex {
		t := s.tailMask(n)
		v := s.vec()
		asm.VMOVUPS_Z(Mem{Base: x}, t.k, v)
		asm.VMULPS(v, a, v)
		asm.VMOVUPS(v, t.k, Mem{Base: x})
	} else {
		asm.VMOVUPS(last, Mem{Base: lastAt})
	}
	asm.Label(prefix + "Done")
}
