package main

import (
	"math"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// constTable is the per-file RODATA table of broadcast float32 constants: each
// value is stored once, replicated to 32 bytes, so AVX2 code can use it as a
// YMM memory operand and AVX-512 code can VBROADCASTSS it into a ZMM. Entries
// are collected as the kernels ask for them and the section is emitted once,
// at the end of the file (emitConsts): avo's DATA writes to the data section
// opened last, so a table that grew after another section (tailmask,
// evenodd, …) was opened would put its new entries in that one.
var constTable struct {
	offset map[uint32]int
	bits   []uint32 // in offset order, 32 bytes each
}

// constsSym is the symbol of the table.
var constsSym = NewStaticSymbol("consts")

// constBits returns the 32-byte memory operand holding bits in every lane.
func constBits(bits uint32) Mem {
	t := &constTable
	if t.offset == nil {
		t.offset = map[uint32]int{}
	}
	off, ok := t.offset[bits]
	if !ok {
		off = 32 * len(t.bits)
		t.offset[bits] = off
		t.bits = append(t.bits, bits)
	}
	return NewDataAddr(constsSym, off)
}

// emitConsts emits the table, if the file used it.
func emitConsts() {
	if len(constTable.bits) == 0 {
		return
	}
	GLOBL("consts", RODATA|NOPTR)
	for i, bits := range constTable.bits {
		for j := 0; j < 8; j++ {
			DATA(32*i+4*j, U32(bits))
		}
	}
}

// vconst is a broadcast float32 constant for ISA s, by default a memory
// operand: a 32-byte replicated entry for AVX2, an embedded {1to16} broadcast
// of its first 4 bytes for AVX-512 (no register and no setup per call, which
// matters for short slices). After keep it is resident in a register instead,
// which saves a load per use in loops that have the registers to spare. Its
// methods emit the instruction forms that take it as a source.
type vconst struct {
	s   *isa
	mem Mem
	r   VecVirtual // non-nil once kept in a register
}

// keep loads each constant into a register, used from then on; constants
// with the same value share one.
func keep(cs ...*vconst) {
	loaded := map[Mem]VecVirtual{}
	for _, c := range cs {
		if c.r == nil {
			if r, ok := loaded[c.mem]; ok {
				c.r = r
				continue
			}
			c.r = c.reg()
		}
		loaded[c.mem] = c.r
	}
}

// op is the constant as an AVX2 source operand: its register or its memory.
func (c vconst) op() Op {
	if c.r != nil {
		return c.r
	}
	return c.mem
}

// newConst returns v as a constant for s.
func newConst(s *isa, v float32) vconst { return newConstBits(s, math.Float32bits(v)) }

func newConstBits(s *isa, bits uint32) vconst { return vconst{s: s, mem: constBits(bits)} }

// reg loads the constant into a new register.
func (c vconst) reg() VecVirtual {
	r := c.s.vec()
	c.loadInto(r)
	return r
}

// loadInto loads the constant into r.
func (c vconst) loadInto(r VecVirtual) {
	if c.r != nil {
		asm.VMOVAPS(c.r, r)
	} else if c.s.evex {
		asm.VBROADCASTSS(c.mem, r)
	} else {
		asm.VMOVUPS(c.mem, r)
	}
}

// fma213 emits p = p·v + c.
func (c vconst) fma213(v, p VecVirtual) {
	if c.r != nil {
		asm.VFMADD213PS(c.r, v, p)
	} else if c.s.evex {
		asm.VFMADD213PS_BCST(c.mem, v, p)
	} else {
		asm.VFMADD213PS(c.mem, v, p)
	}
}

// fnmadd231 emits r = r − v·c.
func (c vconst) fnmadd231(v, r VecVirtual) {
	if c.r != nil {
		asm.VFNMADD231PS(c.r, v, r)
	} else if c.s.evex {
		asm.VFNMADD231PS_BCST(c.mem, v, r)
	} else {
		asm.VFNMADD231PS(c.mem, v, r)
	}
}

// mul emits dst = v·c.
func (c vconst) mul(v, dst VecVirtual) {
	if c.r != nil {
		asm.VMULPS(c.r, v, dst)
	} else if c.s.evex {
		asm.VMULPS_BCST(c.mem, v, dst)
	} else {
		asm.VMULPS(c.mem, v, dst)
	}
}

// add emits dst = v + c.
func (c vconst) add(v, dst VecVirtual) {
	if c.r != nil {
		asm.VADDPS(c.r, v, dst)
	} else if c.s.evex {
		asm.VADDPS_BCST(c.mem, v, dst)
	} else {
		asm.VADDPS(c.mem, v, dst)
	}
}

// sub emits dst = v − c.
func (c vconst) sub(v, dst VecVirtual) {
	if c.r != nil {
		asm.VSUBPS(c.r, v, dst)
	} else if c.s.evex {
		asm.VSUBPS_BCST(c.mem, v, dst)
	} else {
		asm.VSUBPS(c.mem, v, dst)
	}
}

// and emits dst = v & c.
func (c vconst) and(v, dst VecVirtual) {
	if c.r != nil {
		asm.VANDPS(c.r, v, dst)
	} else if c.s.evex {
		asm.VANDPS_BCST(c.mem, v, dst)
	} else {
		asm.VANDPS(c.mem, v, dst)
	}
}

// cmp emits mask = v <pred> c: an opmask for AVX-512, a vector of all-ones
// lanes for AVX2.
func (c vconst) cmp(pred uint8, v VecVirtual, mask Register) {
	if c.r != nil {
		asm.VCMPPS(U8(pred), c.r, v, mask)
	} else if c.s.evex {
		asm.VCMPPS_BCST(U8(pred), c.mem, v, mask)
	} else {
		asm.VCMPPS(U8(pred), c.mem, v, mask)
	}
}

// horner emits c[last]·v^last + … + c[0] and returns the register holding it.
func horner(s *isa, c []vconst, v VecVirtual) VecVirtual {
	last := len(c) - 1
	p := c[last].reg()
	for k := last - 1; k >= 0; k-- {
		c[k].fma213(v, p) // p = p·v + c_k
	}
	return p
}

// fmsub213 emits p = p·v − c.
func (c vconst) fmsub213(v, p VecVirtual) {
	if c.r != nil {
		asm.VFMSUB213PS(c.r, v, p)
	} else if c.s.evex {
		asm.VFMSUB213PS_BCST(c.mem, v, p)
	} else {
		asm.VFMSUB213PS(c.mem, v, p)
	}
}
