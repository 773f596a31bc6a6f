package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("onlinesoftmax", genOnlineSoftmaxFamily) }

func genOnlineSoftmaxFamily() {
	for _, s := range isas {
		genOnlineSoftmax(s)
	}
}

// genOnlineSoftmax emits onlineSoftmax<ISA>(x []float32, m float32) (float32,
// float32, int), one block of an online softmax in two passes over x: the
// maximum m' = max(m, max x); then x = exp(x − m') in place, summed. It
// returns m', the sum and softmaxDone. It returns softmaxSpecial without
// writing anything when m' is not finite (and, on AVX2, when x is shorter
// than a vector), and softmaxNaN (x clobbered) when x holds a NaN; the Go
// wrapper (kernels/onlinesoftmax.go) finishes both. m must not be NaN.
//
// The passes are softmax's (softmaxMax, softmaxExpSum): the same bits as
// x + (−m') and Exp.
func genOnlineSoftmax(s *isa) {
	name := s.name("onlineSoftmax")
	TEXT(name, NOSPLIT, "func(x []float32, m float32) (float32, float32, int)")
	asm.Doc(name+" sets m' = max(m, max x) and x[i] = e^(x[i]−m'), and returns m', Σx and 0",
		"when m' is finite; it returns status 1 (nothing written) when m' is not finite",
		"or, on AVX2, len(x) is below one vector, and 2 (x clobbered) when x holds a NaN.",
		"m is not NaN.")
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	minLen := 1
	if !s.evex {
		minLen = s.lanes // softmaxMax reads the last whole vector for the tail
	}
	asm.CMPQ(n, U32(minLen))
	asm.JB(LabelRef("special"))
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

	// Pass 1: m' = max(m, max x). VMAXSS returns its second source m when
	// either is NaN; a NaN of x lost here is found by pass 2.
	mx := softmaxMax(s, x, n, rem, k, nil)
	asm.VMAXSS(paramAddr("m"), mx, mx) // VEX: no legacy-SSE load after a 256-bit write
	t := asm.XMM()
	asm.VSUBSS(mx, mx, t) // 0 when m' is finite, NaN for ±Inf and NaN
	asm.VUCOMISS(t, t)
	asm.JP(LabelRef("special"))

	// Pass 2: x = exp(x − m'), summed; a NaN in x jumps to nan.
	negM := s.vec()
	negate(mx, negM)
	total := softmaxExpSum(s, x, x, n, rem, k, negM, stash)
	// VEX stores: asm.Store's MOVSS is legacy SSE (see isa.broadcast).
	for i, v := range []VecVirtual{mx, total} {
		b, err := asm.ReturnIndex(i).Resolve()
		if err != nil {
			panic(err)
		}
		asm.VMOVSS(v.AsX(), b.Addr)
	}
	onlineSoftmaxReturn(softmaxDone)

	asm.Label("special")
	onlineSoftmaxReturn(softmaxSpecial)
	asm.Label("nan")
	onlineSoftmaxReturn(softmaxNaN)
}

// onlineSoftmaxReturn emits the return of status code (the floats are left
// as they are unless stored before).
func onlineSoftmaxReturn(code int) {
	status := asm.GP64()
	asm.MOVQ(U32(code), status)
	asm.Store(status, asm.ReturnIndex(2))
	asm.VZEROUPPER()
	asm.RET()
}
