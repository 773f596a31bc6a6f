package main

import (
	"fmt"
	"github.com/mmcloughlin/avo/gotypes"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// isa describes one x86 vector ISA for the generators: every kernel family
// loops over isas and emits one function per entry, named with its suffix.
type isa struct {
	suffix  string            // appended to kernel names: dotAVX2, dotAVX512
	lanes   int               // float32 lanes in a vector
	vec     func() VecVirtual // allocates a vector register
	evex    bool              // EVEX encoding (AVX-512): opmask tails, 32 vector registers
	keepZMM bool              // evexYMM leaves it in ZMM: the 512-bit twin of a dual-width kernel
}

var (
	avx2   = &isa{suffix: "AVX2", lanes: 8, vec: ymm}
	avx512 = &isa{suffix: "AVX512", lanes: 16, vec: zmm, evex: true}
	// avx512z names the ZMM variants of the dual-width kernels: those whose
	// avx512 version computes in YMM (evexYMM). The kernels package picks
	// one width at start-up (AVX512Width).
	avx512z = &isa{suffix: "AVX512Z", lanes: 16, vec: zmm, evex: true, keepZMM: true}

	isas     = []*isa{avx2, avx512}
	dualISAs = []*isa{avx2, avx512, avx512z} // for the dual-width kernels
)

// bytes is the size of a vector in bytes.
func (s *isa) bytes() int { return 4 * s.lanes }

// zero clears v.
func (s *isa) zero(v VecVirtual) { asm.VXORPS(v, v, v) }

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
	if s.evex {
		ones, k := asm.GP32(), asm.K()
		asm.MOVL(U32(0xffff), ones)
		asm.BZHIL(rem.As32(), ones, ones)
		asm.KMOVW(ones, k)
		return tail{k: k}
	}
	// tailmask<> is 8 zero int32s then 8 all-ones: the 8 at index rem end with rem ones.
	base, m := asm.GP64(), asm.YMM()
	asm.LEAQ(tailTable(), base)
	asm.VMOVDQU(Mem{Base: base, Index: rem, Scale: 4}, m)
	return tail{y: m}
}

// lastMask returns, for AVX-512, the opmask of the lanes of the last vector of
// cols ≥ 1 elements: ((cols−1) mod lanes) + 1 of them, all when it is full.
func (s *isa) lastMask(cols GPVirtual) OpmaskVirtual {
	n, ones := asm.GP64(), asm.GP32()
	asm.LEAQ(Mem{Base: cols, Disp: -1}, n)
	asm.ANDQ(U32(s.lanes-1), n)
	asm.INCQ(n)
	asm.MOVL(U32(0xffff), ones)
	asm.BZHIL(n.As32(), ones, ones)
	k := asm.K()
	asm.KMOVW(ones, k)
	return k
}

// loadTail loads the rem-element tail that starts at ptr into dst, with the
// lanes that hold no tail element zeroed (see tailMask for where they are).
// Nothing outside [ptr, ptr+4·rem) is read, except, for AVX2, the elements just
// before ptr, which belong to the same slice.
func (s *isa) loadTail(ptr, rem GPVirtual, t tail, dst VecVirtual) {
	if s.evex {
		s.loadTailAt(Mem{Base: ptr}, t, dst)
		return
	}
	s.loadTailAt(Mem{Base: ptr, Index: rem, Scale: 4, Disp: -s.bytes()}, t, dst)
}

// tailOffset returns, for a tail of rem elements at byte offset off, the byte
// offset loadTailAt loads from: off itself for AVX-512, the last full vector
// (off + 4·rem − vector bytes) for AVX2.
func (s *isa) tailOffset(off, rem GPVirtual) GPVirtual {
	if s.evex {
		return off
	}
	r := asm.GP64()
	asm.LEAQ(Mem{Base: off, Index: rem, Scale: 4, Disp: -s.bytes()}, r)
	return r
}

// loadTailAt loads a tail vector from m, an address made with tailOffset.
func (s *isa) loadTailAt(m Mem, t tail, dst VecVirtual) {
	if s.evex {
		asm.VMOVUPS_Z(m, t.k, dst)
		return
	}
	asm.VMOVUPS(m, dst)
	asm.VANDPS(t.y, dst, dst)
}

// fold reduces the lanes of v (a ZMM, YMM or XMM) with op, a lane-wise
// operation where op(src, acc) sets acc, and returns an XMM holding the result
// in lane 0. It works by the register's width, so it serves kernels that
// compute in YMM on AVX-512 too, and on AVX-512 it uses only instructions with
// EVEX forms, so any of the 32 registers may hold v.
func (s *isa) fold(v VecVirtual, op func(src, acc VecVirtual)) VecVirtual {
	if v.Size() == 64 {
		hi := asm.YMM()
		asm.VEXTRACTF64X4(U8(1), v, hi)
		v = v.AsY().(VecVirtual)
		op(hi, v)
	}
	if v.Size() == 32 {
		hi := s.extractHi(v)
		v = v.AsX().(VecVirtual)
		op(hi, v)
	}
	for _, swap := range []uint8{0x4e, 0xb1} { // swap halves, then neighbours
		t := asm.XMM()
		asm.VSHUFPS(U8(swap), v, v, t)
		op(t, v)
	}
	return v
}

// hsum returns an XMM holding the sum of the lanes of v in lane 0.
func (s *isa) hsum(v VecVirtual) VecVirtual {
	return s.fold(v, func(src, acc VecVirtual) { asm.VADDPS(src, acc, acc) })
}

// hsum4 returns an XMM holding the lane sums of a, b, c and d, in that order.
// Like fold it works by register width and is valid on any AVX-512 register.
func (s *isa) hsum4(a, b, c, d VecVirtual) VecVirtual {
	y := make([]VecVirtual, 4)
	for i, v := range []VecVirtual{a, b, c, d} {
		if v.Size() == 64 {
			hi := asm.YMM()
			asm.VEXTRACTF64X4(U8(1), v, hi)
			v = v.AsY().(VecVirtual)
			asm.VADDPS(hi, v, v)
		}
		y[i] = v
	}
	v := haddPairs(haddPairs(y[0], y[1]), haddPairs(y[2], y[3]))
	hi := s.extractHi(v)
	x := v.AsX().(VecVirtual)
	asm.VADDPS(hi, x, x)
	return x
}

// haddPairs returns [a0+a1, a2+a3, b0+b1, b2+b3] in each 128-bit lane of the
// YMMs a, b, as VHADDPS does, with instructions that have EVEX forms.
func haddPairs(a, b VecVirtual) VecVirtual {
	even, odd := asm.YMM(), asm.YMM()
	asm.VSHUFPS(U8(0x88), b, a, even)
	asm.VSHUFPS(U8(0xdd), b, a, odd)
	asm.VADDPS(odd, even, even)
	return even
}

// extractHi returns an XMM holding the upper 128 bits of the YMM v: VEX
// VEXTRACTF128 for AVX2, EVEX VEXTRACTF32X4 (any register) for AVX-512.
func (s *isa) extractHi(v VecVirtual) VecVirtual {
	hi := asm.XMM()
	if s.evex {
		asm.VEXTRACTF32X4(U8(1), v, hi)
	} else {
		asm.VEXTRACTF128(U8(1), v, hi)
	}
	return hi
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
	r := asm.GP64()
	asm.Load(c, r)
	return r
}

// ymm and zmm allocate a vector register of that width in the current file.
func ymm() VecVirtual { return asm.YMM() }
func zmm() VecVirtual { return asm.ZMM() }

// ymmOf returns the 8-lane entry of s: s itself for avx2, the EVEX YMM
// entry for avx512 and avx512z.
func ymmOf(s *isa) *isa {
	if s.lanes == 8 {
		return s
	}
	return &isa{suffix: s.suffix, lanes: 8, vec: ymm, evex: s.evex}
}

// halfMask returns an opmask of the low 8 lanes, for the last half vector of
// a ZMM loop over a multiple of 8 floats.
func halfMask() OpmaskVirtual {
	r, k := asm.GP32(), asm.K()
	asm.MOVL(U32(0xff), r)
	asm.KMOVW(r, k)
	return k
}

// evexYMM returns, for avx512, the ISA entry that computes in YMM vectors
// with AVX-512's EVEX features (opmask tails, 32 registers: AVX512VL), under
// the same kernel name; other entries, avx512z among them, are returned as
// they are. The dual-width kernels call it: 512-bit vectors are not worth
// their cost on every AVX-512 core (DESIGN.md).
func evexYMM(s *isa) *isa {
	if s.evex && s.lanes == 16 && !s.keepZMM {
		return &isa{suffix: s.suffix, lanes: 8, vec: ymm, evex: true}
	}
	return s
}
