package main

import (
	"fmt"
	"github.com/mmcloughlin/avo/gotypes"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// isa describes one x86 vector ISA for the generators: every kernel family
// loops over isas and emits one function per entry, named with its suffix.
type isa struct {
	suffix string            // appended to kernel names: dotAVX2, dotAVX512
	lanes  int               // float32 lanes in a vector
	vec    func() VecVirtual // allocates a vector register
	wide   bool              // AVX-512: opmask tails, 32 vector registers
}

var (
	avx2   = &isa{suffix: "AVX2", lanes: 8, vec: YMM}
	avx512 = &isa{suffix: "AVX512", lanes: 16, vec: ZMM, wide: true}
	isas   = []*isa{avx2, avx512}
)

// bytes is the size of a vector in bytes.
func (s *isa) bytes() int { return 4 * s.lanes }

// zero clears v.
func (s *isa) zero(v VecVirtual) { VXORPS(v, v, v) }

// tail is the lane mask of a partial vector: a YMM of all-ones int32 lanes for
// AVX2, an opmask for AVX-512.
type tail struct {
	y VecVirtual
	k OpmaskVirtual
}

// tailMask returns the mask for a tail of rem elements, 0 < rem < lanes.
//
// AVX-512 selects the first rem lanes of an opmask-masked load, which never
// touches the unselected lanes. AVX2 has no load that architecturally does
// that (VMASKMOVPS may fault on masked-out lanes on AMD, and does under QEMU),
// so an AVX2 tail reloads the last full vector of the slice, which ends at the
// slice's end, and the mask selects its last rem lanes. AVX2 kernels therefore
// need the slice to hold at least one full vector and take a scalar path below.
func (s *isa) tailMask(rem GPVirtual) tail {
	if s.wide {
		ones, k := GP32(), K()
		MOVL(U32(0xffff), ones)
		BZHIL(rem.As32(), ones, ones)
		KMOVW(ones, k)
		return tail{k: k}
	}
	// tailmask<> is 8 zero int32s then 8 all-ones: the 8 at index rem end with rem ones.
	base, m := GP64(), YMM()
	LEAQ(tailTable(), base)
	VMOVDQU(Mem{Base: base, Index: rem, Scale: 4}, m)
	return tail{y: m}
}

// loadTail loads the rem-element tail that starts at ptr into dst, with the
// lanes that hold no tail element zeroed (see tailMask for where they are).
// Nothing outside [ptr, ptr+4·rem) is read, except, for AVX2, the elements just
// before ptr, which belong to the same slice.
func (s *isa) loadTail(ptr, rem GPVirtual, t tail, dst VecVirtual) {
	if s.wide {
		s.loadTailAt(Mem{Base: ptr}, t, dst)
		return
	}
	s.loadTailAt(Mem{Base: ptr, Index: rem, Scale: 4, Disp: -s.bytes()}, t, dst)
}

// tailOffset returns, for a tail of rem elements at byte offset off, the byte
// offset loadTailAt loads from: off itself for AVX-512, the last full vector
// (off + 4·rem − vector bytes) for AVX2.
func (s *isa) tailOffset(off, rem GPVirtual) GPVirtual {
	if s.wide {
		return off
	}
	r := GP64()
	LEAQ(Mem{Base: off, Index: rem, Scale: 4, Disp: -s.bytes()}, r)
	return r
}

// loadTailAt loads a tail vector from m, an address made with tailOffset.
func (s *isa) loadTailAt(m Mem, t tail, dst VecVirtual) {
	if s.wide {
		VMOVUPS_Z(m, t.k, dst)
		return
	}
	VMOVUPS(m, dst)
	VANDPS(t.y, dst, dst)
}

// half folds v into its lower 256 bits (AVX-512) and returns that YMM.
func (s *isa) half(v VecVirtual) VecVirtual {
	if !s.wide {
		return v
	}
	hi := YMM()
	VEXTRACTF64X4(U8(1), v, hi)
	VADDPS(hi, v.AsY(), v.AsY())
	return v.AsY().(VecVirtual)
}

// hsum adds the lanes of v and returns an XMM holding the sum in lane 0.
func (s *isa) hsum(v VecVirtual) VecVirtual {
	y := s.half(v)
	hi := XMM()
	VEXTRACTF128(U8(1), y, hi)
	x := y.AsX().(VecVirtual)
	VADDPS(hi, x, x)
	VMOVHLPS(x, x, hi)
	VADDPS(hi, x, x)
	VMOVSHDUP(x, hi)
	VADDSS(hi, x, x)
	return x
}

// hsum4 adds the lanes of each of a, b, c, d and returns an XMM holding the
// four sums in that order.
func (s *isa) hsum4(a, b, c, d VecVirtual) VecVirtual {
	ya, yb, yc, yd := s.half(a), s.half(b), s.half(c), s.half(d)
	VHADDPS(yb, ya, ya) // a01 a23 b01 b23 | a45 a67 b45 b67
	VHADDPS(yd, yc, yc)
	VHADDPS(yc, ya, ya) // a0..3 b0..3 c0..3 d0..3 | a4..7 b4..7 c4..7 d4..7
	hi := XMM()
	VEXTRACTF128(U8(1), ya, hi)
	VADDPS(hi, ya.AsX(), ya.AsX())
	return ya.AsX().(VecVirtual)
}

var tailTableMem *Mem

// tailTable returns the AVX2 tail-mask table, emitting it once per file.
func tailTable() Mem {
	if tailTableMem == nil {
		m := GLOBL("tailmask", RODATA|NOPTR)
		for i := 0; i < 16; i++ {
			v := uint32(0)
			if i >= 8 {
				v = 0xffffffff
			}
			DATA(4*i, U32(v))
		}
		tailTableMem = &m
	}
	return *tailTableMem
}

// name returns kernel+suffix, the assembly name of kernel on s.
func (s *isa) name(kernel string) string { return fmt.Sprintf("%s%s", kernel, s.suffix) }

// load loads a Go argument into a new general-purpose register.
func load(c gotypes.Component) GPVirtual {
	r := GP64()
	Load(c, r)
	return r
}
