package main

import (
	"math"

	. "github.com/mmcloughlin/avo/attr"
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
	asm.Doc(name+" sets dst to the softmax of x when max x is finite and returns 0;",
		"it returns 1 (nothing written) when max x is not finite and 2 (dst clobbered)",
		"when x holds a NaN. len(dst) ≥ len(x); dst may be x.")
	dst := load(asm.Param("dst").Base())
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	ex := softmaxExits{done: "done", special: "special", nan: "nan", one: "one", few: "few"}
	asm.TESTQ(n, n)
	asm.JZ(LabelRef(ex.done))
	softmaxPasses(s, dst, x, n, ex, nil)
	asm.Label(ex.done)
	softmaxReturn(softmaxDone)
	softmaxOutOfLine(s, dst, x, n, ex)
}

// softmaxExits names the labels softmaxPasses jumps to. The generator of the
// function owns them: it places done, and softmaxOutOfLine places the others.
type softmaxExits struct {
	done    string // the softmax is in dst
	special string // max x is not finite: nothing written
	nan     string // x holds a NaN: dst clobbered
	one     string // softmaxOne's row of at most one vector
	few     string // softmaxFew's row of at most softmaxFewVectors (AVX-512)
}

// softmaxPasses emits the softmax of the n ≥ 1 floats at x into dst and
// jumps to ex.done; it jumps to ex.special when max x is not finite and to
// ex.nan when x holds a NaN. The caller also emits softmaxOutOfLine with the
// same exits. afterMax, if not nil,
// is emitted where a row of more than softmaxOne's or softmaxFew's floats has
// its finite maximum m (lane 0 of an XMM), with nan the max pass's record of
// NaNs, and may jump elsewhere.
func softmaxPasses(s *isa, dst, x, n GPVirtual, ex softmaxExits, afterMax func(m VecVirtual, nan *nanFlag)) {
	// Rows of at most one vector stay in a register: softmaxOne; AVX-512
	// rows of at most softmaxFewVectors in registers too: softmaxFew.
	asm.CMPQ(n, U32(s.lanes))
	asm.JBE(LabelRef(ex.one))
	if s.evex {
		asm.CMPQ(n, U32(softmaxFewVectors*s.lanes))
		asm.JBE(LabelRef(ex.few))
	}
	var stash Mem
	if !s.evex {
		stash = asm.AllocLocal(s.bytes())
	}

	rem := asm.GP64()
	asm.MOVQ(n, rem)
	asm.ANDQ(U32(s.lanes-1), rem)
	var k tail
	if s.evex {
		k = s.tailMask(rem) // all-zero when rem = 0
	}

	// Pass 1: the maximum.
	var nan *nanFlag
	if afterMax != nil {
		nan = newNaNFlag(s)
	}
	m := softmaxMax(s, x, n, rem, k, nan)
	t := asm.XMM()
	asm.VSUBSS(m, m, t) // 0 when m is finite, NaN for ±Inf and NaN
	asm.VUCOMISS(t, t)
	asm.JP(LabelRef(ex.special))
	if afterMax != nil {
		afterMax(m, nan)
	}

	// Pass 2: dst = exp(x − m), summed.
	negM := s.vec()
	negate(m, negM)
	total := softmaxExpSum(s, dst, x, n, rem, k, negM, stash)

	// Pass 3: dst *= 1/Σ.
	scale := broadcastReciprocal(s, total)
	q, c := asm.GP64(), asm.GP64()
	asm.MOVQ(dst, q)
	asm.MOVQ(n, c)
	s.scaleBody("scale", q, c, scale)
	asm.JMP(LabelRef(ex.done))
}

// softmaxReturn emits the return of status code.
func softmaxReturn(code int) {
	status := asm.GP64()
	asm.MOVQ(U32(code), status)
	asm.Store(status, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
}

// softmaxOutOfLine emits what softmaxPasses jumps to out of line: the
// special and nan exits, and softmaxOne and softmaxFew, which go on to done.
func softmaxOutOfLine(s *isa, dst, x, n GPVirtual, ex softmaxExits) {
	asm.Label(ex.special)
	softmaxReturn(softmaxSpecial)
	asm.Label(ex.nan)
	softmaxReturn(softmaxNaN)
	asm.Label(ex.one)
	softmaxOne(s, dst, x, n, ex)
	if s.evex {
		asm.Label(ex.few)
		softmaxFew(s, dst, x, n, ex)
	}
}

// softmaxFewVectors is the most vectors softmaxFew keeps in registers.
const softmaxFewVectors = 4

// softmaxFew emits the AVX-512 softmax of a row of lanes < n ≤
// softmaxFewVectors·lanes floats held in registers: every vector is loaded
// once, merge-masked into −Inf (which adds e^−Inf = 0), before anything is
// stored, and stored once; the opmasks come from one 64-bit mask of n ones
// shifted by 16 per vector (all-zero masks access no memory). It jumps to
// ex.done, or to ex.special or ex.nan.
func softmaxFew(s *isa, dst, x, n GPVirtual, ex softmaxExits) {
	e := newExpGen(s)
	bits := asm.GP64()
	asm.MOVQ(I32(-1), bits)
	asm.BZHIQ(n, bits, bits) // n ≤ 64 low bits set
	k := make([]OpmaskVirtual, softmaxFewVectors)
	for i := range k {
		k[i] = asm.K()
		if i == 0 {
			asm.KMOVQ(bits, k[0])
		} else {
			asm.KSHIFTRQ(U8(s.lanes*i), k[0], k[i])
		}
	}
	v := make([]VecVirtual, softmaxFewVectors)
	for i := range v {
		v[i] = s.vec()
		asm.VBROADCASTSS(f32Const("softmaxNegInf", float32(math.Inf(-1))), v[i])
		asm.VMOVUPS(Mem{Base: x, Disp: i * s.bytes()}, k[i], v[i])
	}
	mv, t2 := s.vec(), s.vec()
	asm.VMAXPS(v[1], v[0], mv)
	asm.VMAXPS(v[3], v[2], t2)
	asm.VMAXPS(t2, mv, mv)
	mx := s.fold(mv, vmax)
	t := asm.XMM()
	asm.VSUBSS(mx, mx, t) // 0 when m is finite, NaN for ±Inf and NaN
	asm.VUCOMISS(t, t)
	asm.JP(LabelRef(ex.special))
	m := s.vec()
	asm.VBROADCASTSS(mx, m)
	chk, sum := s.vec(), s.vec()
	ev := make([]VecVirtual, len(v))
	for i := range v {
		asm.VSUBPS(m, v[i], v[i]) // x − m, the same bits as x + (−m) in the main path
		ev[i] = e.applyNonPositive(v[i])
		if i == 0 {
			asm.VMOVAPS(v[0], chk)
			asm.VMOVAPS(ev[0], sum)
		} else {
			asm.VADDPS(v[i], chk, chk) // NaN exactly when x holds one (−Inf lanes stay −Inf)
			asm.VADDPS(ev[i], sum, sum)
		}
	}
	jumpIfNaN(s, chk, ex.nan)
	total := s.hsum(sum)
	scale := broadcastReciprocal(s, total)
	for i := range ev {
		asm.VMULPS(scale, ev[i], ev[i])
		asm.VMOVUPS(ev[i], k[i], Mem{Base: dst, Disp: i * s.bytes()})
	}
	asm.JMP(LabelRef(ex.done))
}

// softmaxOne emits the softmax of a row of 1 ≤ n ≤ lanes floats in one
// register, loaded and stored once: a shorter chain than the three passes.
// The lanes past n hold −Inf, which adds e^−Inf = 0: AVX-512 loads them
// merge-masked into a −Inf vector; AVX2 copies a row shorter than a vector into
// a −Inf-padded local vector and the results back. It jumps to ex.done, or
// to ex.special or ex.nan.
func softmaxOne(s *isa, dst, x, n GPVirtual, ex softmaxExits) {
	e := newExpGen(s)
	v := s.vec()
	asm.VBROADCASTSS(f32Const("softmaxNegInf", float32(math.Inf(-1))), v)
	var k tail
	var buf Mem
	var b GPVirtual
	if s.evex {
		k = s.tailMask(n) // n = 16 gives all ones
		asm.VMOVUPS(Mem{Base: x}, k.k, v)
	} else {
		buf, b = asm.AllocLocal(s.bytes()), asm.GP64()
		asm.LEAQ(buf, b)
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef("oneCopyIn"))
		asm.VMOVUPS(Mem{Base: x}, v)
		asm.JMP(LabelRef("oneLoaded"))
		asm.Label("oneCopyIn")
		asm.VMOVUPS(v, buf)
		i, t := asm.GP64(), asm.XMM()
		asm.XORQ(i, i)
		asm.Label("oneCopyInLoop")
		asm.VMOVSS(Mem{Base: x, Index: i, Scale: 4}, t)
		asm.VMOVSS(t, Mem{Base: b, Index: i, Scale: 4})
		asm.INCQ(i)
		asm.CMPQ(i, n)
		asm.JB(LabelRef("oneCopyInLoop"))
		asm.VMOVUPS(buf, v)
		asm.Label("oneLoaded")
	}
	c := s.vec()
	asm.VMOVAPS(v, c)
	mx := s.fold(c, vmax)
	t := asm.XMM()
	asm.VSUBSS(mx, mx, t) // 0 when m is finite, NaN for ±Inf and NaN
	asm.VUCOMISS(t, t)
	asm.JP(LabelRef(ex.special))
	m := s.vec()
	asm.VBROADCASTSS(mx, m)
	d := s.vec()
	asm.VSUBPS(m, v, d) // x − m, the same bits as x + (−m) in the main path
	jumpIfNaN(s, d, ex.nan)
	ev := e.applyNonPositive(d)
	asm.VMOVAPS(ev, c)
	sum := s.hsum(c)
	scale := broadcastReciprocal(s, sum)
	asm.VMULPS(scale, ev, ev)
	if s.evex {
		asm.VMOVUPS(ev, k.k, Mem{Base: dst})
	} else {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef("oneCopyOut"))
		asm.VMOVUPS(ev, Mem{Base: dst})
		asm.JMP(LabelRef(ex.done))
		asm.Label("oneCopyOut")
		asm.VMOVUPS(ev, buf)
		i, t := asm.GP64(), asm.XMM()
		asm.XORQ(i, i)
		asm.Label("oneCopyOutLoop")
		asm.VMOVSS(Mem{Base: b, Index: i, Scale: 4}, t)
		asm.VMOVSS(t, Mem{Base: dst, Index: i, Scale: 4})
		asm.INCQ(i)
		asm.CMPQ(i, n)
		asm.JB(LabelRef("oneCopyOutLoop"))
	}
	asm.JMP(LabelRef(ex.done))
}

// jumpIfNaN jumps to label if any lane of v is NaN.
func jumpIfNaN(s *isa, v VecVirtual, label string) {
	if s.evex {
		k := asm.K()
		asm.VCMPPS(U8(cmpUnord), v, v, k)
		asm.KORTESTW(k, k)
	} else {
		m, bits := s.vec(), asm.GP32()
		asm.VCMPPS(U8(cmpUnord), v, v, m)
		asm.VMOVMSKPS(m, bits)
		asm.TESTL(bits, bits)
	}
	asm.JNZ(LabelRef(label))
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
	if s.evex {
		f.zero, f.k = s.vec(), asm.K()
		s.zero(f.zero)
		asm.KXORW(f.k, f.k, f.k)
	} else {
		f.v = s.vec()
		s.zero(f.v)
	}
	return f
}

// test records a NaN in the vector m (a register or memory).
func (f *nanFlag) test(m Op) {
	if f.s.evex {
		t := asm.K()
		asm.VCMPPS(U8(cmpUnord), m, f.zero, t)
		asm.KORW(t, f.k, f.k)
		return
	}
	asm.VCMPPS(U8(cmpUnord), m, f.v, f.v)
}

// jumpIfSet jumps to label if a NaN was recorded.
func (f *nanFlag) jumpIfSet(label string) {
	if f.s.evex {
		asm.KORTESTW(f.k, f.k)
	} else {
		bits := asm.GP32()
		asm.VMOVMSKPS(f.v, bits)
		asm.TESTL(bits, bits)
	}
	asm.JNZ(LabelRef(label))
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
			asm.VBROADCASTSS(f32Const("softmaxNegInf", float32(math.Inf(-1))), acc[0])
		} else {
			asm.VMOVAPS(acc[0], acc[i])
		}
	}
	p, c := asm.GP64(), asm.GP64()
	asm.MOVQ(x, p)
	asm.MOVQ(n, c)
	block := softmaxMaxUnroll * s.lanes

	asm.Label("maxBlock")
	asm.CMPQ(c, U32(block))
	asm.JB(LabelRef("maxVector"))
	for i, a := range acc {
		asm.VMAXPS(Mem{Base: p, Disp: i * s.bytes()}, a, a)
		flag(Mem{Base: p, Disp: i * s.bytes()})
	}
	asm.ADDQ(U32(block*4), p)
	asm.SUBQ(U32(block), c)
	asm.JMP(LabelRef("maxBlock"))

	asm.Label("maxVector")
	asm.CMPQ(c, U32(s.lanes))
	asm.JB(LabelRef("maxTail"))
	asm.VMAXPS(Mem{Base: p}, acc[0], acc[0])
	flag(Mem{Base: p})
	asm.ADDQ(U32(s.bytes()), p)
	asm.SUBQ(U32(s.lanes), c)
	asm.JMP(LabelRef("maxVector"))

	asm.Label("maxTail")
	asm.TESTQ(rem, rem)
	asm.JZ(LabelRef("maxReduce"))
	if s.evex {
		v := s.vec()
		asm.VMOVUPS_Z(Mem{Base: p}, k.k, v)
		asm.VMAXPS(v, acc[1], k.k, acc[1])
		flag(v) // masked-out lanes are 0
	} else {
		// The last full vector: its extra lanes are elements already seen.
		asm.VMAXPS(Mem{Base: p, Index: rem, Scale: 4, Disp: -s.bytes()}, acc[1], acc[1])
		flag(Mem{Base: p, Index: rem, Scale: 4, Disp: -s.bytes()})
	}

	asm.Label("maxReduce")
	for w := len(acc) / 2; w >= 1; w /= 2 {
		for i := 0; i < w; i++ {
			asm.VMAXPS(acc[i+w], acc[i], acc[i])
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
	// On AVX2 chk sums x − m, all ≤ 0 or NaN: it ends NaN exactly when x
	// holds a NaN, whatever exp makes of NaN. AVX-512's exp keeps a NaN lane
	// NaN (applyNonPositive), and every other lane is in [0, 1], so there the
	// sum itself is NaN exactly when x holds a NaN: no chk.
	var chk VecVirtual
	check := func(v VecVirtual) {
		if chk != nil {
			asm.VADDPS(v, chk, chk)
		}
	}
	if !s.evex {
		chk = s.vec()
		s.zero(chk)
	}
	if !s.evex {
		// The tail first, before any store: dst may be x.
		asm.TESTQ(rem, rem)
		asm.JZ(LabelRef("expMain"))
		v := s.vec()
		asm.VADDPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, negM, v)
		check(v)
		ev := e.applyNonPositive(v)
		asm.VMOVUPS(ev, stash)
		mask := s.tailMask(rem)
		asm.VANDPS(mask.y, ev, ev)
		asm.VADDPS(ev, sums[0], sums[0])
		asm.Label("expMain")
	}
	p, q, c := asm.GP64(), asm.GP64(), asm.GP64()
	asm.MOVQ(x, p)
	asm.MOVQ(dst, q)
	asm.MOVQ(n, c)
	block := softmaxExpUnroll * s.lanes

	asm.Label("expBlock")
	asm.CMPQ(c, U32(block))
	asm.JB(LabelRef("expVector"))
	for i, sum := range sums {
		v := s.vec()
		asm.VADDPS(Mem{Base: p, Disp: i * s.bytes()}, negM, v)
		check(v)
		ev := e.applyNonPositive(v)
		asm.VMOVUPS(ev, Mem{Base: q, Disp: i * s.bytes()})
		asm.VADDPS(ev, sum, sum)
	}
	asm.ADDQ(U32(block*4), p)
	asm.ADDQ(U32(block*4), q)
	asm.SUBQ(U32(block), c)
	asm.JMP(LabelRef("expBlock"))

	asm.Label("expVector")
	asm.CMPQ(c, U32(s.lanes))
	asm.JB(LabelRef("expTail"))
	{
		v := s.vec()
		asm.VADDPS(Mem{Base: p}, negM, v)
		check(v)
		ev := e.applyNonPositive(v)
		asm.VMOVUPS(ev, Mem{Base: q})
		asm.VADDPS(ev, sums[0], sums[0])
		asm.ADDQ(U32(s.bytes()), p)
		asm.ADDQ(U32(s.bytes()), q)
		asm.SUBQ(U32(s.lanes), c)
		asm.JMP(LabelRef("expVector"))
	}

	asm.Label("expTail")
	asm.TESTQ(rem, rem)
	asm.JZ(LabelRef("expReduce"))
	if s.evex {
		v := s.vec()
		asm.VMOVUPS_Z(Mem{Base: p}, k.k, v)
		asm.VADDPS(negM, v, v)
		ev := e.applyNonPositive(v)
		asm.VMOVUPS(ev, k.k, Mem{Base: q})
		asm.VADDPS(ev, sums[0], k.k, sums[0])
	} else {
		v := s.vec()
		asm.VMOVUPS(stash, v)
		asm.VMOVUPS(v, Mem{Base: dst, Index: n, Scale: 4, Disp: -s.bytes()})
	}

	asm.Label("expReduce")
	if chk != nil {
		jumpIfNaN(s, chk, "nan")
	}
	for i := 1; i < len(sums); i++ {
		asm.VADDPS(sums[i], sums[0], sums[0])
	}
	if chk == nil {
		jumpIfNaN(s, sums[0], "nan") // every lane's sum: NaN where x held one
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
	one, r := asm.XMM(), asm.XMM()
	asm.VMOVSS(f32Const("softmaxOne", 1), one)
	asm.VDIVSS(t, one, r)
	v := s.vec()
	asm.VBROADCASTSS(r, v)
	return v
}

// vmax is the lane-wise maximum for fold.
func vmax(src, acc VecVirtual) { asm.VMAXPS(src, acc, acc) }

// negate broadcasts −m into v, for m a float32 in memory or lane 0 of an XMM.
func negate(m Op, v VecVirtual) {
	t, zero := asm.XMM(), asm.XMM()
	asm.VXORPS(zero, zero, zero)
	asm.VSUBSS(m, zero, t)
	asm.VBROADCASTSS(t, v)
}

// laneBroadcaster emits the two 128-bit halves of the YMM v, each in every
// 128-bit block of a vector of s (YMM, or ZMM for a 16-lane s), and returns a
// function that emits and returns a vector of s holding lane j of v in every
// lane: its half's lane in all four of each block.
func laneBroadcaster(s *isa, v VecVirtual) func(j int) VecVirtual {
	half := [2]VecVirtual{s.vec(), s.vec()}
	for h := range half {
		switch {
		case s.lanes == 16:
			vz := v.AsZ()
			asm.VSHUFF32X4(U8(0x55*h), vz, vz, half[h])
		case s.evex:
			asm.VSHUFF32X4(U8(3*h), v, v, half[h])
		default:
			asm.VPERM2F128(U8(0x11*h), v, v, half[h])
		}
	}
	return func(j int) VecVirtual {
		b := s.vec()
		asm.VSHUFPS(U8(0x55*(j%4)), half[j/4], half[j/4], b)
		return b
	}
}
