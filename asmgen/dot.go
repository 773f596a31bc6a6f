package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("dot", genDotFamily) }

// dotUnroll is the number of independent accumulators in the dot product: it
// hides the FMA latency and keeps two loads per cycle in flight.
const dotUnroll = 4

func genDotFamily() {
	for _, s := range dualISAs {
		genDot(s)
	}
}

// genDot emits dot<ISA>(x, y []float32) float32 = Σ x[i]·y[i] over len(x)
// elements (the Go wrapper checks len(y) == len(x)).
func genDot(s *isa) {
	TEXT(s.name("dot"), NOSPLIT, "func(x, y []float32) float32")
	asm.Doc(s.name("dot") + " returns Σ x[i]·y[i] for i < len(x); len(y) ≥ len(x).")
	// avx512 in YMM, avx512z in ZMM (DESIGN.md); both keep the opmask tail.
	s = evexYMM(s)
	x := load(asm.Param("x").Base())
	y := load(asm.Param("y").Base())
	n := load(asm.Param("x").Len())
	if !s.evex {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef("scalar"))
	}
	acc := s.vec()
	dotBody(s, x, y, n, acc)
	asm.Store(s.hsum(acc), asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
	if !s.evex {
		asm.Label("scalar")
		asm.Store(scalarDot(x, y, n), asm.ReturnIndex(0))
		asm.VZEROUPPER()
		asm.RET()
	}
}

// dotBody emits the dot product of n floats at x and y into acc, advancing both
// pointers and consuming n. For AVX2 n must be at least one vector.
//
// The count-down loop keeps dotUnroll FMA chains; at two loads per FMA the
// loop is bound by the L1 loads.
func dotBody(s *isa, x, y, n GPVirtual, acc VecVirtual) {
	accs := []VecVirtual{acc}
	for len(accs) < dotUnroll {
		accs = append(accs, s.vec())
	}
	for _, a := range accs {
		s.zero(a)
	}
	s.stream("dot", n, []GPVirtual{x, y}, dotUnroll, func(j, d int, _ bool) {
		v := s.vec()
		asm.VMOVUPS(Mem{Base: x, Disp: d}, v)
		asm.VFMADD231PS(Mem{Base: y, Disp: d}, v, accs[j])
	})
	asm.JZ(LabelRef("dotReduce"))
	t := s.tailMask(n)
	vx, vy := s.vec(), s.vec()
	s.loadTail(x, n, t, vx)
	s.loadTail(y, n, t, vy)
	asm.VFMADD231PS(vy, vx, accs[1])

	asm.Label("dotReduce")
	for w := len(accs) / 2; w > 0; w /= 2 {
		for i := 0; i < w; i++ {
			asm.VADDPS(accs[i+w], accs[i], accs[i])
		}
	}
}

// scalarDot emits a one-element-at-a-time dot product of n floats at x and y,
// for AVX2 slices shorter than a vector, and returns the XMM holding it.
func scalarDot(x, y, n GPVirtual) VecVirtual {
	acc, v, w := asm.XMM(), asm.XMM(), asm.XMM()
	asm.VXORPS(acc, acc, acc)
	asm.TESTQ(n, n)
	asm.JZ(LabelRef("scalarDone"))
	asm.Label("scalarLoop")
	// Both operands go through VMOVSS: QEMU reads 16 bytes for the memory
	// operand of VFMADD231SS, which would fault at the end of a page.
	asm.VMOVSS(Mem{Base: x}, v)
	asm.VMOVSS(Mem{Base: y}, w)
	asm.VFMADD231SS(w, v, acc)
	asm.ADDQ(U32(4), x)
	asm.ADDQ(U32(4), y)
	asm.DECQ(n)
	asm.JNZ(LabelRef("scalarLoop"))
	asm.Label("scalarDone")
	return acc
}
