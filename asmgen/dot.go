package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("dot", genDotFamily) }

// dotUnroll is the number of independent accumulators in the dot product: it
// hides the FMA latency and keeps two loads per cycle in flight.
const dotUnroll = 4

func genDotFamily() {
	for _, s := range isas {
		genDot(s)
	}
}

// genDot emits dot<ISA>(x, y []float32) float32 = Σ x[i]·y[i] over len(x)
// elements (the Go wrapper checks len(y) == len(x)).
func genDot(s *isa) {
	TEXT(s.name("dot"), NOSPLIT, "func(x, y []float32) float32")
	Doc(s.name("dot") + " returns Σ x[i]·y[i] for i < len(x); len(y) ≥ len(x).")
	// YMM on AVX-512 too: Dot is bound by the L1 loads, 64 bytes per cycle on
	// Zen 4 for either width, and ZMM measured up to 3% slower (longer
	// horizontal sum); the AVX-512 kernel keeps its opmask tail.
	s = ymmWide(s)
	x := load(Param("x").Base())
	y := load(Param("y").Base())
	n := load(Param("x").Len())
	if !s.wide {
		CMPQ(n, U32(s.lanes))
		JB(LabelRef("scalar"))
	}
	acc := s.vec()
	dotBody(s, x, y, n, acc)
	Store(s.hsum(acc), ReturnIndex(0))
	VZEROUPPER()
	RET()
	if !s.wide {
		Label("scalar")
		Store(scalarDot(x, y, n), ReturnIndex(0))
		VZEROUPPER()
		RET()
	}
}

// dotBody emits the dot product of n floats at x and y into acc, advancing both
// pointers and consuming n. For AVX2 n must be at least one vector.
//
// The count-down loop keeps dotUnroll FMA chains; at two loads per FMA the
// loop runs at the L1 load bandwidth on both ISAs (Zen 4 loads 2×256 bits per
// cycle, one 512-bit vector or two 256-bit ones).
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
		VMOVUPS(Mem{Base: x, Disp: d}, v)
		VFMADD231PS(Mem{Base: y, Disp: d}, v, accs[j])
	})
	JZ(LabelRef("dotReduce"))
	t := s.tailMask(n)
	vx, vy := s.vec(), s.vec()
	s.loadTail(x, n, t, vx)
	s.loadTail(y, n, t, vy)
	VFMADD231PS(vy, vx, accs[1])

	Label("dotReduce")
	for w := len(accs) / 2; w > 0; w /= 2 {
		for i := 0; i < w; i++ {
			VADDPS(accs[i+w], accs[i], accs[i])
		}
	}
}

// scalarDot emits a one-element-at-a-time dot product of n floats at x and y,
// for AVX2 slices shorter than a vector, and returns the XMM holding it.
func scalarDot(x, y, n GPVirtual) VecVirtual {
	acc, v, w := XMM(), XMM(), XMM()
	VXORPS(acc, acc, acc)
	TESTQ(n, n)
	JZ(LabelRef("scalarDone"))
	Label("scalarLoop")
	// Both operands go through VMOVSS: QEMU reads 16 bytes for the memory
	// operand of VFMADD231SS, which would fault at the end of a page.
	VMOVSS(Mem{Base: x}, v)
	VMOVSS(Mem{Base: y}, w)
	VFMADD231SS(w, v, acc)
	ADDQ(U32(4), x)
	ADDQ(U32(4), y)
	DECQ(n)
	JNZ(LabelRef("scalarLoop"))
	Label("scalarDone")
	return acc
}
