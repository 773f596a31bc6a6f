package main

import (
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("vector", genVectorFamily) }

func genVectorFamily() {
	for _, s := range isas {
		genSum(s)
	}
	for _, s := range isas {
		genMax(s)
	}
	for _, s := range isas {
		genAxpy(s)
	}
	for _, s := range isas {
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
	cnt := GP64()
	MOVQ(n, cnt)
	SHRQ(U8(bits.TrailingZeros(uint(block))), cnt)
	JZ(LabelRef(prefix + "Half"))
	Label(prefix + "Block")
	for j := 0; j < unroll; j++ {
		body(j, j*s.bytes(), j == unroll-1)
	}
	for _, p := range ptrs {
		ADDQ(U32(block*4), p)
	}
	DECQ(cnt)
	JNZ(LabelRef(prefix + "Block"))

	Label(prefix + "Half")
	ANDQ(U32(block-1), n)
	JZ(LabelRef(prefix + "Whole")) // whole blocks only (d = 64, 128, …)
	if unroll >= 4 {
		half := unroll / 2
		TESTQ(U32(half*s.lanes), n)
		JZ(LabelRef(prefix + "Single"))
		for j := 0; j < half; j++ {
			body(j, j*s.bytes(), j == half-1)
		}
		for _, p := range ptrs {
			ADDQ(U32(half*s.bytes()), p)
		}
		block = half * s.lanes
		ANDQ(U32(block-1), n)
	}

	Label(prefix + "Single")
	MOVQ(n, cnt)
	SHRQ(U8(bits.TrailingZeros(uint(s.lanes))), cnt)
	JZ(LabelRef(prefix + "Rest"))
	Label(prefix + "SingleLoop")
	body(0, 0, true)
	for _, p := range ptrs {
		ADDQ(U32(s.bytes()), p)
	}
	DECQ(cnt)
	JNZ(LabelRef(prefix + "SingleLoop"))
	Label(prefix + "Rest")
	ANDQ(U32(s.lanes-1), n)
	Label(prefix + "Whole")
}

// broadcast loads the float32 argument name and returns a vector of it.
func (s *isa) broadcast(name string) VecVirtual {
	x, v := XMM(), s.vec()
	Load(Param(name), x)
	VBROADCASTSS(x, v)
	return v
}

// sumAccs is the number of accumulators of the sum and max loops: VADDPS
// latency 3 × 2 per cycle needs 6 chains (measured on Zen 4: 4 ZMM chains run
// Sum n=1024 20% slower than 8).
const sumAccs = 8

// genSum emits sum<ISA>(x []float32) float32 = Σ x[i].
func genSum(s *isa) {
	TEXT(s.name("sum"), NOSPLIT, "func(x []float32) float32")
	Doc(s.name("sum") + " returns Σ x[i].")
	s = ymmWide(s) // ZMM measured 2-4% slower at n=1024, 4096 on Zen 4
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	if !s.wide {
		CMPQ(n, U32(s.lanes))
		JB(LabelRef("scalar"))
	}
	accs := make([]VecVirtual, sumAccs)
	for i := range accs {
		accs[i] = s.vec()
		s.zero(accs[i])
	}
	s.stream("sum", n, []GPVirtual{x}, len(accs), func(j, d int, _ bool) {
		VADDPS(Mem{Base: x, Disp: d}, accs[j], accs[j])
	})
	JZ(LabelRef("reduce"))
	t := s.tailMask(n)
	v := s.vec()
	s.loadTail(x, n, t, v)
	VADDPS(v, accs[1], accs[1])
	Label("reduce")
	for w := len(accs) / 2; w > 0; w /= 2 {
		for i := 0; i < w; i++ {
			VADDPS(accs[i+w], accs[i], accs[i])
		}
	}
	Store(s.hsum(accs[0]), ReturnIndex(0))
	VZEROUPPER()
	RET()

	if !s.wide {
		Label("scalar")
		acc, e := XMM(), XMM()
		VXORPS(acc, acc, acc)
		TESTQ(n, n)
		JZ(LabelRef("scalarDone"))
		Label("scalarLoop")
		VMOVSS(Mem{Base: x}, e)
		VADDSS(e, acc, acc)
		ADDQ(U32(4), x)
		DECQ(n)
		JNZ(LabelRef("scalarLoop"))
		Label("scalarDone")
		Store(acc, ReturnIndex(0))
		VZEROUPPER()
		RET()
	}
}

// genMax emits max<ISA>(x []float32) float32 with the contract of fallback.Max:
// −Inf for an empty slice, NaN if any element is NaN, +0 over −0.
//
// VMAXPS returns its second source when either is NaN or both are zeros, so
// the kernel also ORs an unordered compare of each pair of vectors into a NaN
// flag, and when the maximum is a zero rescans x for a +0. (AVX-512's VRANGEPS
// orders −0 below +0 but drops quiet NaNs too, and on Zen 4 it halves the
// throughput of the loop.)
func genMax(s *isa) {
	TEXT(s.name("max"), NOSPLIT, "func(x []float32) float32")
	Doc(s.name("max") + " returns the largest element of x (see fallback.Max).")
	x0 := load(Param("x").Base())
	n := load(Param("x").Len())
	x := GP64()
	MOVQ(x0, x)
	ninf := GP32()
	MOVL(U32(0xff800000), ninf)
	if !s.wide {
		CMPQ(n, U32(s.lanes))
		JB(LabelRef("scalar"))
	}
	const accN = sumAccs / 2 // two vectors per accumulator per block
	accs := make([]VecVirtual, accN)
	accs[0] = s.vec()
	VMOVD(ninf, accs[0].AsX())
	VBROADCASTSS(accs[0].AsX(), accs[0])
	for i := 1; i < accN; i++ {
		accs[i] = s.vec()
		VMOVAPS(accs[0], accs[i])
	}
	maxOp := func(src, acc VecVirtual) { VMAXPS(src, acc, acc) }
	// unord ORs into the NaN flag the lanes where a or b is NaN.
	// nanTest sets ZF unless the flag has a lane set.
	var unord func(a, b VecVirtual)
	var nanTest func()
	if s.wide {
		nan := K()
		KXORW(nan, nan, nan)
		unord = func(a, b VecVirtual) {
			c := K()
			VCMPPS(U8(3), b, a, c) // UNORD_Q
			KORW(c, nan, nan)
		}
		nanTest = func() { KORTESTW(nan, nan) }
	} else {
		nan := s.vec()
		s.zero(nan)
		unord = func(a, b VecVirtual) {
			c := s.vec()
			VCMPPS(U8(3), b, a, c) // UNORD_Q
			VORPS(c, nan, nan)
		}
		nanTest = func() {
			mask := GP32()
			VMOVMSKPS(nan, mask)
			TESTL(mask, mask)
		}
	}
	vs := make([]VecVirtual, 2*accN)
	s.stream("max", n, []GPVirtual{x}, 2*accN, func(j, d int, last bool) {
		vs[j] = s.vec()
		VMOVUPS(Mem{Base: x, Disp: d}, vs[j])
		maxOp(vs[j], accs[j%accN])
		switch {
		case j%2 == 1:
			unord(vs[j-1], vs[j])
		case last:
			unord(vs[j], vs[j])
		}
	})
	JZ(LabelRef("reduce"))
	v := s.vec()
	if s.wide {
		// Merge-masked: the lanes past the tail keep acc0's values.
		t := s.tailMask(n)
		VMOVAPS(accs[0], v)
		VMOVUPS(Mem{Base: x}, t.k, v)
	} else {
		// The last full vector: max is idempotent, so the overlap is harmless.
		VMOVUPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, v)
	}
	unord(v, v)
	maxOp(v, accs[1])

	Label("reduce")
	for w := accN / 2; w > 0; w /= 2 {
		for i := 0; i < w; i++ {
			maxOp(accs[i+w], accs[i])
		}
	}
	m := s.fold(accs[0], maxOp)
	nanTest()
	JNZ(LabelRef("isNaN"))
	z := XMM()
	VXORPS(z, z, z)
	VUCOMISS(z, m)
	JE(LabelRef("zero"))
	Store(m, ReturnIndex(0))
	VZEROUPPER()
	RET()

	Label("isNaN")
	q, qx := GP32(), XMM()
	MOVL(U32(0x7fc00000), q)
	VMOVD(q, qx)
	Store(qx, ReturnIndex(0))
	VZEROUPPER()
	RET()

	// The maximum is ±0, so every element is ≤ 0: it is +0 if any element's
	// bits are all zero.
	Label("zero")
	zv := s.vec()
	s.zero(zv)
	var found VecVirtual
	var foundK OpmaskVirtual
	// isZero ORs into found the lanes of v that are +0; m masks them for AVX-512.
	isZero := func(v Op, k OpmaskVirtual) {
		if s.wide {
			c := K()
			if k != nil {
				VPCMPEQD(v, zv, k, c)
			} else {
				VPCMPEQD(v, zv, c)
			}
			KORW(c, foundK, foundK)
			return
		}
		c := s.vec()
		VPCMPEQD(v, zv, c)
		VPOR(c, found, found)
	}
	if s.wide {
		foundK = K()
		KXORW(foundK, foundK, foundK)
	} else {
		found = s.vec()
		s.zero(found)
	}
	p, cnt := GP64(), load(Param("x").Len())
	MOVQ(x0, p)
	SHRQ(U8(bits.TrailingZeros(uint(s.lanes))), cnt)
	JZ(LabelRef("zeroTail"))
	Label("zeroLoop")
	isZero(Mem{Base: p}, nil)
	ADDQ(U32(s.bytes()), p)
	DECQ(cnt)
	JNZ(LabelRef("zeroLoop"))
	Label("zeroTail")
	rem := load(Param("x").Len())
	ANDQ(U32(s.lanes-1), rem)
	JZ(LabelRef("zeroCheck"))
	if s.wide {
		t := s.tailMask(rem)
		v := s.vec()
		VMOVUPS_Z(Mem{Base: p}, t.k, v)
		isZero(v, t.k)
	} else {
		// The last full vector (x has ≥ 8 elements) covers the tail.
		isZero(Mem{Base: p, Index: rem, Scale: 4, Disp: -s.bytes()}, nil)
	}
	Label("zeroCheck")
	if s.wide {
		KORTESTW(foundK, foundK)
	} else {
		VPTEST(found, found)
	}
	JNZ(LabelRef("plusZero"))
	mz, mzx := GP32(), XMM()
	MOVL(U32(0x80000000), mz)
	VMOVD(mz, mzx)
	Store(mzx, ReturnIndex(0))
	VZEROUPPER()
	RET()
	Label("plusZero")
	Store(z, ReturnIndex(0))
	VZEROUPPER()
	RET()
	if s.wide {
		return
	}

	// Fewer than 8 elements: the same rules one at a time. VMAXSS(e, m) gives
	// e when either is NaN or both are zero, so NaN is tested explicitly and a
	// zero is taken unless it would replace +0.
	Label("scalar")
	sm, e := XMM(), XMM()
	VMOVD(ninf, sm)
	TESTQ(n, n)
	JZ(LabelRef("scalarDone"))
	Label("scalarLoop")
	VMOVSS(Mem{Base: x}, e)
	VUCOMISS(e, e)
	JP(LabelRef("isNaN"))
	VUCOMISS(sm, e)
	JA(LabelRef("scalarTake"))
	JNE(LabelRef("scalarNext"))
	// Equal: take e only when it is +0 (bits zero).
	eb := GP32()
	VMOVD(e, eb)
	TESTL(eb, eb)
	JNZ(LabelRef("scalarNext"))
	Label("scalarTake")
	VMOVAPS(e, sm)
	Label("scalarNext")
	ADDQ(U32(4), x)
	DECQ(n)
	JNZ(LabelRef("scalarLoop"))
	Label("scalarDone")
	Store(sm, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

const axpyUnroll = 4

// genAxpy emits axpy<ISA>(alpha float32, x, y []float32): y[i] += alpha·x[i]
// over len(x) elements (the wrapper checks len(y)). x and y may be the same
// slice: the AVX2 tail's overlapping last vector is computed before the main
// loop stores over it.
func genAxpy(s *isa) {
	TEXT(s.name("axpy"), NOSPLIT, "func(alpha float32, x, y []float32)")
	Doc(s.name("axpy") + " sets y[i] += alpha·x[i] for i < len(x).")
	s = ymmWide(s) // ZMM measured 14% slower at n=1024 on Zen 4

	a := s.broadcast("alpha")
	x := load(Param("x").Base())
	y := load(Param("y").Base())
	n := load(Param("x").Len())
	var last VecVirtual
	var lastAt GPVirtual
	if !s.wide {
		CMPQ(n, U32(s.lanes))
		JB(LabelRef("scalar"))
		last, lastAt = s.vec(), GP64()
		LEAQ(Mem{Base: y, Index: n, Scale: 4, Disp: -s.bytes()}, lastAt)
		VMOVUPS(Mem{Base: lastAt}, last)
		VFMADD231PS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, a, last)
	}
	s.stream("axpy", n, []GPVirtual{x, y}, axpyUnroll, func(j, d int, _ bool) {
		v := s.vec()
		VMOVUPS(Mem{Base: y, Disp: d}, v)
		VFMADD231PS(Mem{Base: x, Disp: d}, a, v)
		VMOVUPS(v, Mem{Base: y, Disp: d})
	})
	JZ(LabelRef("done"))
	if s.wide {
		t := s.tailMask(n)
		v, w := s.vec(), s.vec()
		VMOVUPS_Z(Mem{Base: y}, t.k, v)
		VMOVUPS_Z(Mem{Base: x}, t.k, w)
		VFMADD231PS(w, a, v)
		VMOVUPS(v, t.k, Mem{Base: y})
	} else {
		VMOVUPS(last, Mem{Base: lastAt})
	}
	Label("done")
	VZEROUPPER()
	RET()

	if !s.wide {
		Label("scalar")
		TESTQ(n, n)
		JZ(LabelRef("done"))
		Label("scalarLoop")
		v, w := XMM(), XMM()
		VMOVSS(Mem{Base: y}, v)
		VMOVSS(Mem{Base: x}, w)
		VFMADD231SS(w, a.AsX(), v)
		VMOVSS(v, Mem{Base: y})
		ADDQ(U32(4), x)
		ADDQ(U32(4), y)
		DECQ(n)
		JNZ(LabelRef("scalarLoop"))
		JMP(LabelRef("done"))
	}
}

// genScale emits scale<ISA>(alpha float32, x []float32): x[i] *= alpha. As in
// axpy, the AVX2 tail's last vector is computed before the loop.
func genScale(s *isa) {
	TEXT(s.name("scale"), NOSPLIT, "func(alpha float32, x []float32)")
	Doc(s.name("scale") + " sets x[i] *= alpha.")
	s = ymmWide(s) // ZMM measured 4% slower at n=1024 on Zen 4

	a := s.broadcast("alpha")
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	if !s.wide {
		CMPQ(n, U32(s.lanes))
		JB(LabelRef("scalar"))
	}
	s.scaleBody("scale", x, n, a)
	Label("done")
	VZEROUPPER()
	RET()

	if !s.wide {
		Label("scalar")
		TESTQ(n, n)
		JZ(LabelRef("done"))
		Label("scalarLoop")
		v := XMM()
		VMOVSS(Mem{Base: x}, v)
		VMULSS(v, a.AsX(), v)
		VMOVSS(v, Mem{Base: x})
		ADDQ(U32(4), x)
		DECQ(n)
		JNZ(LabelRef("scalarLoop"))
		JMP(LabelRef("done"))
	}
}

// scaleBody emits x[i] *= a over the n floats at x, tail included, with labels
// named after prefix; it advances x and consumes n. AVX2 needs n ≥ lanes: its
// tail rewrites the slice's last full vector, scaled before the loop scales
// its head (so the overlap is scaled once).
func (s *isa) scaleBody(prefix string, x, n GPVirtual, a VecVirtual) {
	var last VecVirtual
	var lastAt GPVirtual
	if !s.wide {
		last, lastAt = s.vec(), GP64()
		LEAQ(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, lastAt)
		VMULPS(Mem{Base: lastAt}, a, last)
	}
	s.stream(prefix, n, []GPVirtual{x}, axpyUnroll, func(j, d int, _ bool) {
		v := s.vec()
		VMULPS(Mem{Base: x, Disp: d}, a, v)
		VMOVUPS(v, Mem{Base: x, Disp: d})
	})
	JZ(LabelRef(prefix + "Done"))
	if s.wide {
		t := s.tailMask(n)
		v := s.vec()
		VMOVUPS_Z(Mem{Base: x}, t.k, v)
		VMULPS(v, a, v)
		VMOVUPS(v, t.k, Mem{Base: x})
	} else {
		VMOVUPS(last, Mem{Base: lastAt})
	}
	Label(prefix + "Done")
}
