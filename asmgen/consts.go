package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// constTable is the per-file RODATA table of broadcast float32 constants: each
// value is stored once, replicated to 32 bytes, so AVX2 code can use it as a
// YMM memory operand and AVX-512 code can VBROADCASTSS it into a ZMM.
var constTable struct {
	mem    *Mem
	offset map[uint32]int
	size   int
}

// constMem returns the 32-byte memory operand holding v in every lane.
func constMem(v float32) Mem {
	return constBits(math.Float32bits(v))
}

// constBits is constMem for a raw bit pattern.
func constBits(bits uint32) Mem {
	t := &constTable
	if t.mem == nil {
		m := GLOBL("consts", RODATA|NOPTR)
		t.mem, t.offset = &m, map[uint32]int{}
	}
	off, ok := t.offset[bits]
	if !ok {
		off = t.size
		for i := 0; i < 8; i++ {
			DATA(off+4*i, U32(bits))
		}
		t.offset[bits] = off
		t.size += 32
	}
	return t.mem.Offset(off)
}

// vconst is a broadcast constant for ISA s: a memory operand on AVX2 (16
// registers are too few to hold them), a register on AVX-512 (32 registers).
// Its op is usable wherever an instruction accepts a memory source; reg is
// the register form (loaded on demand for AVX2) for operands that must be one.
type vconst struct {
	s   *isa
	mem Mem
	r   VecVirtual // AVX-512 only
}

// newConst materialises v for s; for AVX-512 it emits a VBROADCASTSS here.
func newConst(s *isa, v float32) vconst {
	return newConstBits(s, math.Float32bits(v))
}

func newConstBits(s *isa, bits uint32) vconst {
	c := vconst{s: s, mem: constBits(bits)}
	if s.wide {
		c.r = s.vec()
		VBROADCASTSS(c.mem, c.r)
	}
	return c
}

// op returns the constant as an instruction source operand.
func (c vconst) op() Op {
	if c.s.wide {
		return c.r
	}
	return c.mem
}

// reg returns the constant in a register (a fresh load on AVX2).
func (c vconst) reg() VecVirtual {
	if c.s.wide {
		return c.r
	}
	r := c.s.vec()
	VMOVUPS(c.mem, r)
	return r
}
