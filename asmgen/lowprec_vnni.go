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

// newQ8Q8Consts broadcasts 0x80 from a general-purpose register (EVEX), one
// MOVL and a broadcast instead of a load from the constant table.
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

// blockPairs is block for a ZMM step (c.y 16 lanes): rows i and i+4 share
// one ZMM, row i in the low half and row i+4 in the high half of acc[i]
// (i < 4), the query block broadcast to both halves. Each lane takes the same
// operations as block's, so the sums are the same bits; half the
// instructions, in 512-bit vectors, which leaves port 1 idle anyway once
// the step's 512-bit context runs. khi selects the high eight lanes.
func (c q8q8Consts) blockPairs(hb Mem, rows []Mem, acc []VecVirtual, khi OpmaskVirtual) {
	z := c.y
	h, corr, shv := z.vec(), z.vec(), z.vec()
	asm.VBROADCASTI64X4(hb.Offset(4), h)
	z.zero(corr)
	asm.VPDPBUSD(h, c.c80, corr) // 128·Σh per lane
	zero := z.vec()
	z.zero(zero)
	asm.VPSUBD(corr, zero, corr) // −128·Σh
	asm.VBROADCASTSS(hb, shv)
	for i := 0; i < 4; i++ {
		t, u, sc := z.vec(), z.vec(), z.vec()
		asm.VMOVDQA32(corr, t)
		asm.VMOVDQU32(rows[i].Offset(4), u.AsY())
		asm.VINSERTI64X4(U8(1), rows[i+4].Offset(4), u, u)
		asm.VPXORD(u, c.c80, u)
		asm.VPDPBUSD(h, u, t)
		asm.VCVTDQ2PS(t, t)
		asm.VBROADCASTSS(rows[i], sc)
		asm.VBROADCASTSS(rows[i+4], khi, sc)
		asm.VMULPS(shv, sc, sc)
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

// bcastGP returns a vector with bits in every 32-bit lane, broadcast from a
// general-purpose register (no constant table: see newQ8Q8Consts).
func bcastGP(s *isa, bits uint32) VecVirtual {
	r, v := asm.GP32(), s.vec()
	asm.MOVL(U32(bits), r)
	if s.evex {
		asm.VPBROADCASTD(r, v)
		return v
	}
	x := asm.XMM()
	asm.VMOVD(r, x)
	asm.VPBROADCASTD(x, v)
	return v
}

// genToQ8 emits toQ8<ISA>(dst []byte, src []float32): the len(src)/32 whole
// blocks of src as 8-bit blocks at dst, bit for bit as the fallback
// (fallback.QuantizeQ8): the block's largest magnitude m by an unsigned
// integer max of the magnitudes' bits (which orders them, ±Inf and NaN
// above every finite value); NaN or ±Inf → Scale NaN and Q 0; m = 0 → all 0;
// else Scale = float32(float64(m)/127) (VCVTSD2SS, to nearest even), moved
// up by one ulp if below m/127, and Q[i] = float64(x[i])/float64(Scale)
// (VDIVPD, correctly rounded as Go's division) converted to nearest even by
// VCVTPD2DQ (MXCSR's rounding, which Go keeps at nearest even), as
// math.RoundToEven does.
func genToQ8(s *isa) {
	lowText(s, "toQ8", "func(dst []byte, src []float32)",
		"stores the len(src)/32 whole blocks of src (len(src) a multiple of 32) at dst as 8-bit blocks, as fallback.QuantizeQ8.")
	dst, src, n := load(asm.Param("dst").Base()), load(asm.Param("src").Base()), load(asm.Param("src").Len())
	asm.SHRQ(U8(5), n)
	absMask := bcastGP(s, 0x7fffffff)
	c127, r127 := asm.XMM(), asm.GP64()
	asm.MOVQ(U64(0x405fc00000000000), r127) // 127.0
	asm.VMOVQ(r127, c127)
	zeroQ := asm.YMM()
	storeQ := func(m Mem) { asm.VMOVDQU(zeroQ, m) }
	if s.evex {
		asm.VPXORD(zeroQ, zeroQ, zeroQ)
		storeQ = func(m Mem) { asm.VMOVDQU32(zeroQ, m) }
	} else {
		asm.VPXOR(zeroQ, zeroQ, zeroQ)
	}
	and := func(a, b, c Op) { asm.VPAND(a, b, c) }
	if s.evex {
		and = func(a, b, c Op) { asm.VPANDD(a, b, c) }
	}
	per := 32 / s.lanes
	asm.Label("blocks")
	asm.TESTQ(n, n)
	asm.JZ(LabelRef("done"))
	mxv := s.vec()
	for j := 0; j < per; j++ {
		t := s.vec()
		asm.VMOVUPS(Mem{Base: src, Disp: s.bytes() * j}, t)
		if j == 0 {
			and(absMask, t, mxv)
			continue
		}
		and(absMask, t, t)
		asm.VPMAXUD(t, mxv, mxv)
	}
	mx := s.fold(mxv, func(src, acc VecVirtual) { asm.VPMAXUD(src, acc, acc) })
	m := asm.GP32()
	asm.VMOVD(mx, m)
	asm.CMPL(m, U32(0x7f800000))
	asm.JAE(LabelRef("special"))
	asm.TESTL(m, m)
	asm.JZ(LabelRef("zero"))
	sd, ss, back := asm.XMM(), asm.XMM(), asm.XMM()
	asm.VCVTSS2SD(mx, mx, sd)
	asm.VDIVSD(c127, sd, sd) // m/127
	asm.VCVTSD2SS(sd, sd, ss)
	asm.VCVTSS2SD(ss, ss, back)
	asm.VUCOMISD(sd, back)
	asm.JAE(LabelRef("scaled")) // float64(Scale) ≥ m/127
	{
		r := asm.GP32()
		asm.VMOVD(ss, r)
		asm.INCL(r) // the next float32 up (Scale is positive and finite)
		asm.VMOVD(r, ss)
		asm.VCVTSS2SD(ss, ss, back)
	}
	asm.Label("scaled")
	asm.VMOVSS(ss, Mem{Base: dst})
	if s.evex {
		d := asm.ZMM()
		asm.VBROADCASTSD(back, d)
		for j := 0; j < 4; j++ {
			z, y := asm.ZMM(), asm.YMM()
			asm.VCVTPS2PD(Mem{Base: src, Disp: 32 * j}, z)
			asm.VDIVPD(d, z, z)
			asm.VCVTPD2DQ(z, y)
			asm.VPMOVDB(y, Mem{Base: dst, Disp: 4 + 8*j})
		}
	} else {
		d := asm.YMM()
		asm.VBROADCASTSD(back, d)
		for j := 0; j < 4; j++ {
			var x [2]VecVirtual
			for h := range x {
				y := asm.YMM()
				asm.VCVTPS2PD(Mem{Base: src, Disp: 32*j + 16*h}, y)
				asm.VDIVPD(d, y, y)
				x[h] = asm.XMM()
				asm.VCVTPD2DQY(y, x[h])
			}
			asm.VPACKSSDW(x[1], x[0], x[0]) // the eight int32 → int16, in order
			asm.VPACKSSWB(x[0], x[0], x[0]) // → int8 (|Q| ≤ 127: no saturation)
			asm.VMOVQ(x[0], Mem{Base: dst, Disp: 4 + 8*j})
		}
	}
	asm.Label("next")
	asm.ADDQ(U32(q8Bytes), dst)
	asm.ADDQ(U32(4*32), src)
	asm.DECQ(n)
	asm.JMP(LabelRef("blocks"))
	asm.Label("special") // NaN or ±Inf: Scale NaN (float32(math.NaN())), Q 0
	asm.MOVL(U32(0x7fc00000), Mem{Base: dst})
	storeQ(Mem{Base: dst, Disp: 4})
	asm.JMP(LabelRef("next"))
	asm.Label("zero")
	asm.MOVL(U32(0), Mem{Base: dst})
	storeQ(Mem{Base: dst, Disp: 4})
	asm.JMP(LabelRef("next"))
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()
}
