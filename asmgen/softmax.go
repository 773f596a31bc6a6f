package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("softmax", genSoftmaxFamily) }

func genSoftmaxFamily() {
	for _, s := range isas {
		genSoftmax(s)
	}
}

const (
	softmaxMaxUnroll = 4 // max-pass accumulators
	softmaxExpUnroll = 2 // vectors per iteration of the exp-and-sum pass
)

// Status codes returned by the softmax kernels (kernels/softmax.go).
const (
	softmaxDone    = 0
	softmaxSpecial = 1
	softmaxNaN     = 2
)

// genSoftmax emits softmax<ISA>(dst, x []float32) int, the stable softmax of a
// row whose maximum is finite, in three passes: the maximum m; e = exp(x − m)
// stored in dst and summed; dst *= 1/Σe. It returns softmaxSpecial without
// writing anything when m is ±Inf or NaN, and softmaxNaN (dst clobbered) when
// x holds a NaN (found by summing x − m, whatever exp makes of it); the Go
// wrapper finishes both.
//
// dst may be x: each AVX2 tail (the last full vector, overlapping the one
// before) is computed from input read before the main loop overwrites it. Rows
// of at most one vector take softmaxOne, AVX-512 rows of at most four
// softmaxFew: short rows are latency-bound, and these keep them in registers.
func genSoftmax(s *isa) {
	name := s.name("softmax")
	TEXT(name, NOSPLIT, "func(dst, x []float32) int")
	Doc(name+" sets dst to the softmax of x when max x is finite and returns 0;",
		"it returns 1 (nothing written) when max x is not finite and 2 (dst clobbered)",
		"when x holds a NaN. len(dst) ≥ len(x); dst may be x.")
	dst := load(Param("dst").Base())
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	TESTQ(n, n)
	JZ(LabelRef("done"))
	softmaxPasses(s, dst, x, n, "done", nil)
	Label("done")
	softmaxReturn(softmaxDone)
	softmaxOutOfLine(s, dst, x, n, "done")
}

// softmaxPasses emits the softmax of the n ≥ 1 floats at x into dst and
// jumps (or falls through) to done; it jumps to special when max x is not
// finite and to nan when x holds a NaN. The caller also emits
// softmaxOutOfLine. afterMax, if not nil,
// is emitted where a row of more than softmaxOne's or softmaxFew's floats has
// its finite maximum m (lane 0 of an XMM), with nan the max pass's record of
// NaNs, and may jump elsewhere.
func softmaxPasses(s *isa, dst, x, n GPVirtual, done string, afterMax func(m VecVirtual, nan *nanFlag)) {
	// Rows of at most one vector stay in a register: softmaxOne; AVX-512
	// rows of at most softmaxFewVectors in registers too: softmaxFew.
	CMPQ(n, U32(s.lanes))
	JBE(LabelRef("one"))
	if s.wide {
		CMPQ(n, U32(softmaxFewVectors*s.lanes))
		JBE(LabelRef("few"))
	}
	var stash Mem
	if !s.wide {
		stash = AllocLocal(s.bytes())
	}

	rem := GP64()
	MOVQ(n, rem)
	ANDQ(U32(s.lanes-1), rem)
	var k tail
	if s.wide {
		k = s.tailMask(rem) // all-zero when rem = 0
	}

	// Pass 1: the maximum.
	var nan *nanFlag
	if afterMax != nil {
		nan = newNaNFlag(s)
	}
	m := softmaxMax(s, x, n, rem, k, nan)
	t := XMM()
	VSUBSS(m, m, t) // 0 when m is finite, NaN for ±Inf and NaN
	VUCOMISS(t, t)
	JP(LabelRef("special"))
	if afterMax != nil {
		afterMax(m, nan)
	}

	// Pass 2: dst = exp(x − m), summed.
	negM := s.vec()
	negate(m, negM)
	total := softmaxExpSum(s, dst, x, n, rem, k, negM, stash)

	// Pass 3: dst *= 1/Σ.
	scale := broadcastReciprocal(s, total)
	q, c := GP64(), GP64()
	MOVQ(dst, q)
	MOVQ(n, c)
	s.scaleBody("scale", q, c, scale)
	JMP(LabelRef(done))
}

// softmaxReturn emits the return of status code.
func softmaxReturn(code int) {
	status := GP64()
	MOVQ(U32(code), status)
	Store(status, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// softmaxOutOfLine emits what softmaxPasses jumps to out of line: the
// special and nan exits, and softmaxOne and softmaxFew, which go on to done.
func softmaxOutOfLine(s *isa, dst, x, n GPVirtual, done string) {
	Label("special")
	softmaxReturn(softmaxSpecial)
	Label("nan")
	softmaxReturn(softmaxNaN)
	softmaxOne(s, dst, x, n, done)
	if s.wide {
		softmaxFew(s, dst, x, n, done)
	}
}

// softmaxFewVectors is the most vectors softmaxFew keeps in registers.
const softmaxFewVectors = 4

// softmaxFew emits the AVX-512 softmax of a row of lanes < n ≤
// softmaxFewVectors·lanes floats held in registers: every vector is loaded
// once, merge-masked into −Inf (which adds e^−Inf = 0), before anything is
// stored, and stored once; the opmasks come from one 64-bit mask of n ones
// shifted by 16 per vector (all-zero masks access no memory). It jumps to
// done, or to the special and nan exits.
func softmaxFew(s *isa, dst, x, n GPVirtual, done string) {
	Label("few")
	e := newExpGen(s)
	bits := GP64()
	MOVQ(I32(-1), bits)
	BZHIQ(n, bits, bits) // n ≤ 64 low bits set
	k := make([]OpmaskVirtual, softmaxFewVectors)
	for i := range k {
		k[i] = K()
		if i == 0 {
			KMOVQ(bits, k[0])
		} else {
			KSHIFTRQ(U8(s.lanes*i), k[0], k[i])
		}
	}
	v := make([]VecVirtual, softmaxFewVectors)
	for i := range v {
		v[i] = s.vec()
		VBROADCASTSS(f32Const("softmaxNegInf", float32(math.Inf(-1))), v[i])
		VMOVUPS(Mem{Base: x, Disp: i * s.bytes()}, k[i], v[i])
	}
	mv, t2 := s.vec(), s.vec()
	VMAXPS(v[1], v[0], mv)
	VMAXPS(v[3], v[2], t2)
	VMAXPS(t2, mv, mv)
	mx := s.fold(mv, vmax)
	t := XMM()
	VSUBSS(mx, mx, t) // 0 when m is finite, NaN for ±Inf and NaN
	VUCOMISS(t, t)
	JP(LabelRef("special"))
	m := s.vec()
	VBROADCASTSS(mx, m)
	chk, sum := s.vec(), s.vec()
	ev := make([]VecVirtual, len(v))
	for i := range v {
		VSUBPS(m, v[i], v[i]) // x − m, the same bits as x + (−m) in the main path
		ev[i] = e.applyNonPositive(v[i])
		if i == 0 {
			VMOVAPS(v[0], chk)
			VMOVAPS(ev[0], sum)
		} else {
			VADDPS(v[i], chk, chk) // NaN exactly when x holds one (−Inf lanes stay −Inf)
			VADDPS(ev[i], sum, sum)
		}
	}
	jumpIfNaN(s, chk, "nan")
	total := s.hsum(sum)
	scale := broadcastReciprocal(s, total)
	for i := range ev {
		VMULPS(scale, ev[i], ev[i])
		VMOVUPS(ev[i], k[i], Mem{Base: dst, Disp: i * s.bytes()})
	}
	JMP(LabelRef(done))
}

// softmaxOne emits the softmax of a row of 1 ≤ n ≤ lanes floats in one
// register, loaded and stored once: a shorter chain than the three passes.
// The lanes past n hold −Inf, which adds e^−Inf = 0: AVX-512 loads them
// merge-masked into a −Inf vector; AVX2 copies a row shorter than a vector into
// a −Inf-padded local vector and the results back. It jumps to done, or to
// the special and nan exits.
func softmaxOne(s *isa, dst, x, n GPVirtual, done string) {
	Label("one")
	e := newExpGen(s)
	v := s.vec()
	VBROADCASTSS(f32Const("softmaxNegInf", float32(math.Inf(-1))), v)
	var k tail
	var buf Mem
	var b GPVirtual
	if s.wide {
		k = s.tailMask(n) // n = 16 gives all ones
		VMOVUPS(Mem{Base: x}, k.k, v)
	} else {
		buf, b = AllocLocal(s.bytes()), GP64()
		LEAQ(buf, b)
		CMPQ(n, U32(s.lanes))
		JB(LabelRef("oneCopyIn"))
		VMOVUPS(Mem{Base: x}, v)
		JMP(LabelRef("oneLoaded"))
		Label("oneCopyIn")
		VMOVUPS(v, buf)
		i, t := GP64(), XMM()
		XORQ(i, i)
		Label("oneCopyInLoop")
		VMOVSS(Mem{Base: x, Index: i, Scale: 4}, t)
		VMOVSS(t, Mem{Base: b, Index: i, Scale: 4})
		INCQ(i)
		CMPQ(i, n)
		JB(LabelRef("oneCopyInLoop"))
		VMOVUPS(buf, v)
		Label("oneLoaded")
	}
	c := s.vec()
	VMOVAPS(v, c)
	mx := s.fold(c, vmax)
	t := XMM()
	VSUBSS(mx, mx, t) // 0 when m is finite, NaN for ±Inf and NaN
	VUCOMISS(t, t)
	JP(LabelRef("special"))
	m := s.vec()
	VBROADCASTSS(mx, m)
	d := s.vec()
	VSUBPS(m, v, d) // x − m, the same bits as x + (−m) in the main path
	jumpIfNaN(s, d, "nan")
	ev := e.applyNonPositive(d)
	VMOVAPS(ev, c)
	sum := s.hsum(c)
	scale := broadcastReciprocal(s, sum)
	VMULPS(scale, ev, ev)
	if s.wide {
		VMOVUPS(ev, k.k, Mem{Base: dst})
	} else {
		CMPQ(n, U32(s.lanes))
		JB(LabelRef("oneCopyOut"))
		VMOVUPS(ev, Mem{Base: dst})
		JMP(LabelRef(done))
		Label("oneCopyOut")
		VMOVUPS(ev, buf)
		i, t := GP64(), XMM()
		XORQ(i, i)
		Label("oneCopyOutLoop")
		VMOVSS(Mem{Base: b, Index: i, Scale: 4}, t)
		VMOVSS(t, Mem{Base: dst, Index: i, Scale: 4})
		INCQ(i)
		CMPQ(i, n)
		JB(LabelRef("oneCopyOutLoop"))
	}
	JMP(LabelRef(done))
}

// jumpIfNaN jumps to label if any lane of v is NaN.
func jumpIfNaN(s *isa, v VecVirtual, label string) {
	if s.wide {
		k := K()
		VCMPPS(U8(cmpUnord), v, v, k)
		KORTESTW(k, k)
	} else {
		m, bits := s.vec(), GP32()
		VCMPPS(U8(cmpUnord), v, v, m)
		VMOVMSKPS(m, bits)
		TESTL(bits, bits)
	}
	JNZ(LabelRef(label))
}

// cmpUnord is the VCMPPS predicate true when either operand is NaN.
const cmpUnord = 0x03

// nanFlag records whether any vector tested holds a NaN: for AVX2 a vector
// whose lanes become all ones (themselves a NaN) where one is met, by the
// unordered VCMPPS of the flag against each vector, one instruction that keeps
// the flag once set; for AVX-512 an opmask ORed with each vector's unordered
// compare against zero.
type nanFlag struct {
	s    *isa
	v    VecVirtual    // AVX2
	zero VecVirtual    // AVX-512
	k    OpmaskVirtual // AVX-512
}

func newNaNFlag(s *isa) *nanFlag {
	f := &nanFlag{s: s}
	if s.wide {
		f.zero, f.k = s.vec(), K()
		s.zero(f.zero)
		KXORW(f.k, f.k, f.k)
	} else {
		f.v = s.vec()
		s.zero(f.v)
	}
	return f
}

// test records a NaN in the vector m (a register or memory).
func (f *nanFlag) test(m Op) {
	if f.s.wide {
		t := K()
		VCMPPS(U8(cmpUnord), m, f.zero, t)
		KORW(t, f.k, f.k)
		return
	}
	VCMPPS(U8(cmpUnord), m, f.v, f.v)
}

// jumpIfSet jumps to label if a NaN was recorded.
func (f *nanFlag) jumpIfSet(label string) {
	if f.s.wide {
		KORTESTW(f.k, f.k)
	} else {
		bits := GP32()
		VMOVMSKPS(f.v, bits)
		TESTL(bits, bits)
	}
	JNZ(LabelRef(label))
}

// softmaxMax emits the maximum of the n floats at x (n ≥ one vector for AVX2)
// and returns the XMM holding it in lane 0. A NaN may or may not survive.
// If nan is not nil, it records whether x holds a NaN.
func softmaxMax(s *isa, x, n, rem GPVirtual, k tail, nan *nanFlag) VecVirtual {
	flag := func(m Op) {
		if nan != nil {
			nan.test(m)
		}
	}
	acc := make([]VecVirtual, softmaxMaxUnroll)
	for i := range acc {
		acc[i] = s.vec()
		if i == 0 {
			VBROADCASTSS(f32Const("softmaxNegInf", float32(math.Inf(-1))), acc[0])
		} else {
			VMOVAPS(acc[0], acc[i])
		}
	}
	p, c := GP64(), GP64()
	MOVQ(x, p)
	MOVQ(n, c)
	block := softmaxMaxUnroll * s.lanes

	Label("maxBlock")
	CMPQ(c, U32(block))
	JB(LabelRef("maxVector"))
	for i, a := range acc {
		VMAXPS(Mem{Base: p, Disp: i * s.bytes()}, a, a)
		flag(Mem{Base: p, Disp: i * s.bytes()})
	}
	ADDQ(U32(block*4), p)
	SUBQ(U32(block), c)
	JMP(LabelRef("maxBlock"))

	Label("maxVector")
	CMPQ(c, U32(s.lanes))
	JB(LabelRef("maxTail"))
	VMAXPS(Mem{Base: p}, acc[0], acc[0])
	flag(Mem{Base: p})
	ADDQ(U32(s.bytes()), p)
	SUBQ(U32(s.lanes), c)
	JMP(LabelRef("maxVector"))

	Label("maxTail")
	TESTQ(rem, rem)
	JZ(LabelRef("maxReduce"))
	if s.wide {
		v := s.vec()
		VMOVUPS_Z(Mem{Base: p}, k.k, v)
		VMAXPS(v, acc[1], k.k, acc[1])
		flag(v) // masked-out lanes are 0
	} else {
		// The last full vector: its extra lanes are elements already seen.
		VMAXPS(Mem{Base: p, Index: rem, Scale: 4, Disp: -s.bytes()}, acc[1], acc[1])
		flag(Mem{Base: p, Index: rem, Scale: 4, Disp: -s.bytes()})
	}

	Label("maxReduce")
	for w := len(acc) / 2; w >= 1; w /= 2 {
		for i := 0; i < w; i++ {
			VMAXPS(acc[i+w], acc[i], acc[i])
		}
	}
	return s.fold(acc[0], vmax)
}

// softmaxExpSum emits dst = exp(x + negM) over n floats and returns the XMM
// holding their sum in lane 0; it jumps to nan if x holds a NaN.
func softmaxExpSum(s *isa, dst, x, n, rem GPVirtual, k tail, negM VecVirtual, stash Mem) VecVirtual {
	e := newExpGen(s)
	sums := make([]VecVirtual, softmaxExpUnroll)
	for i := range sums {
		sums[i] = s.vec()
		s.zero(sums[i])
	}
	// chk sums x − m, all ≤ 0 or NaN: it ends NaN exactly when x holds a NaN,
	// whatever exp makes of NaN.
	chk := s.vec()
	s.zero(chk)
	if !s.wide {
		// The tail first, before any store: dst may be x.
		TESTQ(rem, rem)
		JZ(LabelRef("expMain"))
		v := s.vec()
		VADDPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, negM, v)
		VADDPS(v, chk, chk)
		ev := e.applyNonPositive(v)
		VMOVUPS(ev, stash)
		mask := s.tailMask(rem)
		VANDPS(mask.y, ev, ev)
		VADDPS(ev, sums[0], sums[0])
		Label("expMain")
	}
	p, q, c := GP64(), GP64(), GP64()
	MOVQ(x, p)
	MOVQ(dst, q)
	MOVQ(n, c)
	block := softmaxExpUnroll * s.lanes

	Label("expBlock")
	CMPQ(c, U32(block))
	JB(LabelRef("expVector"))
	for i, sum := range sums {
		v := s.vec()
		VADDPS(Mem{Base: p, Disp: i * s.bytes()}, negM, v)
		VADDPS(v, chk, chk)
		ev := e.applyNonPositive(v)
		VMOVUPS(ev, Mem{Base: q, Disp: i * s.bytes()})
		VADDPS(ev, sum, sum)
	}
	ADDQ(U32(block*4), p)
	ADDQ(U32(block*4), q)
	SUBQ(U32(block), c)
	JMP(LabelRef("expBlock"))

	Label("expVector")
	CMPQ(c, U32(s.lanes))
	JB(LabelRef("expTail"))
	{
		v := s.vec()
		VADDPS(Mem{Base: p}, negM, v)
		VADDPS(v, chk, chk)
		ev := e.applyNonPositive(v)
		VMOVUPS(ev, Mem{Base: q})
		VADDPS(ev, sums[0], sums[0])
		ADDQ(U32(s.bytes()), p)
		ADDQ(U32(s.bytes()), q)
		SUBQ(U32(s.lanes), c)
		JMP(LabelRef("expVector"))
	}

	Label("expTail")
	TESTQ(rem, rem)
	JZ(LabelRef("expReduce"))
	if s.wide {
		v := s.vec()
		VMOVUPS_Z(Mem{Base: p}, k.k, v)
		VADDPS(negM, v, v)
		VADDPS(v, chk, chk) // masked lanes add −m, finite
		ev := e.applyNonPositive(v)
		VMOVUPS(ev, k.k, Mem{Base: q})
		VADDPS(ev, sums[0], k.k, sums[0])
	} else {
		v := s.vec()
		VMOVUPS(stash, v)
		VMOVUPS(v, Mem{Base: dst, Index: n, Scale: 4, Disp: -s.bytes()})
	}

	Label("expReduce")
	jumpIfNaN(s, chk, "nan")
	for i := 1; i < len(sums); i++ {
		VADDPS(sums[i], sums[0], sums[0])
	}
	return s.hsum(sums[0])
}

var f32Consts = map[string]Mem{}

// f32Const returns a 4-byte read-only constant holding v, emitted once per file.
func f32Const(name string, v float32) Mem {
	if m, ok := f32Consts[name]; ok {
		return m
	}
	m := GLOBL(name, RODATA|NOPTR)
	DATA(0, U32(math.Float32bits(v)))
	f32Consts[name] = m
	return m
}

// broadcastReciprocal returns a vector of s holding 1/t in every lane, for t
// in lane 0 of an XMM.
func broadcastReciprocal(s *isa, t VecVirtual) VecVirtual {
	one, r := XMM(), XMM()
	VMOVSS(f32Const("softmaxOne", 1), one)
	VDIVSS(t, one, r)
	v := s.vec()
	VBROADCASTSS(r, v)
	return v
}

// vmax is the lane-wise maximum for fold.
func vmax(src, acc VecVirtual) { VMAXPS(src, acc, acc) }

// negate broadcasts −m into v, for m a float32 in memory or lane 0 of an XMM.
func negate(m Op, v VecVirtual) {
	t, zero := XMM(), XMM()
	VXORPS(zero, zero, zero)
	VSUBSS(m, zero, t)
	VBROADCASTSS(t, v)
}

// laneBroadcaster emits the two 128-bit halves of the YMM v, each in both
// halves, and returns a function that emits and returns a YMM holding lane j
// of v in every lane: its half's lane in all four.
func laneBroadcaster(s *isa, v VecVirtual) func(j int) VecVirtual {
	half := [2]VecVirtual{s.vec(), s.vec()}
	for h := range half {
		if s.wide {
			VSHUFF32X4(U8(3*h), v, v, half[h])
		} else {
			VPERM2F128(U8(0x11*h), v, v, half[h])
		}
	}
	return func(j int) VecVirtual {
		b := s.vec()
		VSHUFPS(U8(0x55*(j%4)), half[j/4], half[j/4], b)
		return b
	}
}
