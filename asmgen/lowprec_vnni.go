package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Q8 scores with a quantised query (VPDPBUSD, AVX512_VNNI): the keys are
// 8-bit blocks and so is the query, each 32-value block with its own float32
// scale, and each block's dot product of the two int8 vectors is an exact
// integer, converted once and multiplied by the product of the two scales.
//
// VPDPBUSD multiplies unsigned bytes by signed ones. The key byte k (−127 …
// 127) is made unsigned by flipping its top bit (k XOR 0x80 = k + 128), so a
// lane sums (k+128)·h over four bytes; the accumulator starts at −128·Σh of
// the query's four bytes (one more VPDPBUSD of 0x80 bytes against the query,
// once per query block for every row), so that it ends at Σk·h exactly
// (|Σ| ≤ 32·127² < 2²⁴: the conversion to float32 is exact too). That is two
// instructions per 32 values and row (the XOR with the load folded in, and
// the VPDPBUSD), against four for |k| with h·sign(k) (VPABSB, VPMOVB2M, a
// masked VPSUBB, VPDPBUSD). Both computations are in YMM (one block per
// vector) on both AVX-512 widths.
//
// AVX-VNNI (the VEX form, for AVX2-only CPUs) is not emitted: avo v0.6.0 and
// Go's assembler encode VPDPBUSD in EVEX only, and a BYTE-encoded VEX form
// would need fixed physical registers outside avo's allocator.

// q8q8Consts is what q8q8Block needs of its caller: the 0x80 bytes, the YMM
// ISA entry and its vectors.
type q8q8Consts struct {
	y   *isa
	c80 VecVirtual
}

// newQ8Q8Consts broadcasts 0x80 from a general-purpose register (EVEX): the
// file's constant table cannot grow once the bfloat16 kernels have opened
// their own data section (evenOdd), since DATA adds to the last one.
func newQ8Q8Consts(y *isa) q8q8Consts {
	r, c80 := asm.GP32(), y.vec()
	asm.MOVL(U32(0x80808080), r)
	asm.VPBROADCASTD(r, c80)
	return q8q8Consts{y: y, c80: c80}
}

// block emits, for one 32-value block: the query block at hb (36 bytes:
// scale, then 32 int8), the key blocks at rows (same layout), acc[i] +=
// float32(Σ_j kᵢ[j]·h[j] over each lane's four bytes)·(Scale_kᵢ·Scale_h).
func (c q8q8Consts) block(hb Mem, rows []Mem, acc []VecVirtual) {
	y := c.y
	h, corr, shv := y.vec(), y.vec(), y.vec()
	asm.VMOVDQU32(hb.Offset(4), h)
	y.zero(corr)
	asm.VPDPBUSD(h, c.c80, corr) // 128·Σh per lane
	zero := y.vec()
	y.zero(zero)
	asm.VPSUBD(corr, zero, corr) // −128·Σh
	asm.VBROADCASTSS(hb, shv)
	for i, m := range rows {
		t, u, sc := y.vec(), y.vec(), y.vec()
		asm.VMOVDQA32(corr, t)
		asm.VPXORD(m.Offset(4), c.c80, u)
		asm.VPDPBUSD(h, u, t)
		asm.VCVTDQ2PS(t, t)
		asm.VMULPS_BCST(m, shv, sc)
		asm.VFMADD231PS(sc, t, acc[i])
	}
}

// genMatVecQ8Q8 emits matVecQ8Q8<ISA>(dst []float32, a []byte, lda int, x
// []byte) for AVX-512 (with AVX512_VNNI): dst[r] = Σ_b Scale_a·Scale_x·(Σ_i
// Q_a[i]·Q_x[i]) for the len(dst) rows of 8-bit blocks at a (stride lda
// blocks) and the len(x)/36 blocks of the query x.
func genMatVecQ8Q8(s *isa) {
	y := ymmOf(s)
	lowText(s, "matVecQ8Q8", "func(dst []float32, a []byte, lda int, x []byte)",
		"sets dst = A·x for the len(dst) rows of 8-bit blocks A (row stride lda blocks) and the len(x)/36 8-bit blocks x, by VPDPBUSD (AVX512_VNNI).")
	dst, rows := load(asm.Param("dst").Base()), load(asm.Param("dst").Len())
	a, lda := load(asm.Param("a").Base()), load(asm.Param("lda"))
	x, nbytes := load(asm.Param("x").Base()), load(asm.Param("x").Len())
	asm.IMUL3Q(U32(q8Bytes), lda, lda)
	lda3 := asm.GP64()
	asm.LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	c := newQ8Q8Consts(y)
	dot := func(prefix string, n int) []VecVirtual {
		acc := make([]VecVirtual, n)
		for r := range acc {
			acc[r] = y.vec()
			y.zero(acc[r])
		}
		p, xp, left := asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(a, p)
		asm.MOVQ(x, xp)
		asm.MOVQ(nbytes, left)
		asm.Label(prefix + "blocks")
		asm.TESTQ(left, left)
		asm.JZ(LabelRef(prefix + "end"))
		rs := make([]Mem, n)
		for r := range rs {
			rs[r] = rowAddr(p, lda, lda3, r, 0)
		}
		c.block(Mem{Base: xp}, rs, acc)
		asm.ADDQ(U32(q8Bytes), p)
		asm.ADDQ(U32(q8Bytes), xp)
		asm.SUBQ(U32(q8Bytes), left)
		asm.JMP(LabelRef(prefix + "blocks"))
		asm.Label(prefix + "end")
		return acc
	}
	rowLoops(a, lda, rows, func() {
		acc := dot("g", decodeRows)
		asm.VMOVUPS(y.hsum4(acc[0], acc[1], acc[2], acc[3]), Mem{Base: dst})
		asm.ADDQ(U32(4*decodeRows), dst)
	}, func() {
		acc := dot("s", 1)
		asm.VMOVSS(y.hsum(acc[0]), Mem{Base: dst})
		asm.ADDQ(U32(4), dst)
	})
}

// genFromQ8 emits fromQ8<ISA>(dst []float32, src []byte): dst[i] =
// Scale·Q[i mod 32] of block i/32 of the 8-bit blocks at src, rounded to
// float32 (one VMULPS: the fallback's product), for len(dst) a multiple of
// 32.
func genFromQ8(s *isa) {
	lowText(s, "fromQ8", "func(dst []float32, src []byte)",
		"sets dst[i] to the value of element i of the 8-bit blocks at src for len(dst) a multiple of 32.")
	dst, src, n := load(asm.Param("dst").Base()), load(asm.Param("src").Base()), load(asm.Param("dst").Len())
	asm.SHRQ(U8(5), n)
	asm.Label("blocks")
	asm.TESTQ(n, n)
	asm.JZ(LabelRef("done"))
	sc := s.vec()
	asm.VBROADCASTSS(Mem{Base: src}, sc)
	for j := 0; j < 32/s.lanes; j++ {
		v := q8Widen(s, Mem{Base: src, Disp: 4 + s.lanes*j})
		asm.VMULPS(sc, v, v)
		asm.VMOVUPS(v, Mem{Base: dst, Disp: s.bytes() * j})
	}
	asm.ADDQ(U32(q8Bytes), src)
	asm.ADDQ(U32(4*32), dst)
	asm.DECQ(n)
	asm.JMP(LabelRef("blocks"))
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()
}
