package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The reduced-precision family: conversions between float32 and bfloat16 or
// binary16, and the decode kernels (matrix-vector products in both directions)
// on bfloat16, binary16 and 8-bit block matrices, with the float32 query and
// accumulation; plus expShift, the softmax weights of one block of scores.
// kernels/DESIGN.md ("Reduced-precision formats") records why the paths are
// what they are.
//
// AVX2 kernels take whole vectors of 8 (whole 32-value blocks for Q8) and the
// Go wrappers finish the rest; AVX-512 kernels mask their last vector (Q8:
// whole blocks on both). Every kernel is noescape: the streaming step passes
// slices of a stack array.

func init() { register("lowprec", genLowprecFamily) }

func genLowprecFamily() {
	evenOddIdx = nil
	for _, s := range isas {
		genFromBF16(s)
		genToBF16(s)
		genFromF16(s)
		genToF16(s)
		for _, f := range []half{bf16, f16} {
			genMatVecHalf(s, f)
			genMatTVecHalf(s, f)
		}
		genFromQ8(s)
		genToQ8(s)
		genMatVecQ8(s)
		genMatTVecQ8(s, q8ScaleVec)
		if s.evex {
			genMatTVecQ8(s, q8ScaleStack)
			genMatVecQ8Q8(s)
		}
		genExpShift(s)
	}
	genDecodeSteps()
}

// half is a 16-bit storage format: name and how to widen it to float32.
type half struct {
	name string
	// widen loads the len(v)/4 16-bit values at m into the float32 lanes of
	// v, only the lanes of k (zeroing the rest, loads suppressed) if k is
	// not nil.
	widen func(m Mem, k Op, v VecVirtual)
}

var (
	bf16 = half{"BF16", func(m Mem, k Op, v VecVirtual) {
		if k != nil {
			asm.VPMOVZXWD_Z(m, k, v)
		} else {
			asm.VPMOVZXWD(m, v)
		}
		asm.VPSLLD(U8(16), v, v)
	}}
	f16 = half{"F16", func(m Mem, k Op, v VecVirtual) {
		if k != nil {
			asm.VCVTPH2PS_Z(m, k, v)
		} else {
			asm.VCVTPH2PS(m, v)
		}
	}}
)

// lowText declares a kernel of this family.
func lowText(s *isa, kernel, sig, doc string) {
	TEXT(s.name(kernel), NOSPLIT, sig)
	asm.Doc(s.name(kernel) + " " + doc)
}

// bcastBits returns a vector with bits in every 32-bit lane.
func bcastBits(s *isa, bits uint32) VecVirtual {
	v := s.vec()
	asm.VPBROADCASTD(constBits(bits), v)
	return v
}

// convLoop emits a loop over n elements in steps of one vector: body(off16,
// off32, k) with the byte offsets of the current vector's first 16-bit and
// 32-bit element; for AVX-512 a last masked call with k the opmask of the
// remaining lanes (k is nil in the loop). AVX2 requires n a multiple of 8.
func convLoop(s *isa, n GPVirtual, body func(i GPVirtual, k Op)) {
	i := asm.GP64()
	asm.XORQ(i, i)
	lim := asm.GP64()
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-s.lanes), lim)
	asm.Label("loop")
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef("tail"))
	body(i, nil)
	asm.ADDQ(U32(s.lanes), i)
	asm.JMP(LabelRef("loop"))
	asm.Label("tail")
	if s.evex {
		rem := asm.GP64()
		asm.MOVQ(n, rem)
		asm.SUBQ(i, rem)
		asm.JZ(LabelRef("done"))
		t := s.tailMask(rem)
		body(i, t.k)
	}
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()
}

func genFromBF16(s *isa) {
	lowText(s, "fromBF16", "func(dst []float32, src []uint16)", "sets dst[i] to the value of the bfloat16 src[i] for i < len(dst).")
	dst, src, n := load(asm.Param("dst").Base()), load(asm.Param("src").Base()), load(asm.Param("dst").Len())
	convLoop(s, n, func(i GPVirtual, k Op) {
		v := s.vec()
		bf16.widen(Mem{Base: src, Index: i, Scale: 2}, k, v)
		store32(v, k, Mem{Base: dst, Index: i, Scale: 4})
	})
}

func genFromF16(s *isa) {
	lowText(s, "fromF16", "func(dst []float32, src []uint16)", "sets dst[i] to the value of the binary16 src[i] for i < len(dst).")
	dst, src, n := load(asm.Param("dst").Base()), load(asm.Param("src").Base()), load(asm.Param("dst").Len())
	convLoop(s, n, func(i GPVirtual, k Op) {
		v := s.vec()
		f16.widen(Mem{Base: src, Index: i, Scale: 2}, k, v)
		store32(v, k, Mem{Base: dst, Index: i, Scale: 4})
	})
}

// store32 stores the float32 vector v at m, only the lanes of k if not nil.
func store32(v VecVirtual, k Op, m Mem) {
	if k != nil {
		asm.VMOVUPS(v, k, m)
	} else {
		asm.VMOVUPS(v, m)
	}
}

// load32 loads the float32 vector at m, only the lanes of k if not nil
// (zeroing the rest).
func load32(m Mem, k Op, v VecVirtual) {
	if k != nil {
		asm.VMOVUPS_Z(m, k, v)
	} else {
		asm.VMOVUPS(m, v)
	}
}

// genToBF16 emits the integer round-to-nearest-even narrowing: t = (b +
// 0x7FFF + bit 16 of b) >> 16, and for NaN (|b| > 0x7F800000) the upper half
// with the quiet bit set. VCVTNEPS2BF16 (AVX512_BF16) is not used: it treats
// subnormal inputs as zero, and the format keeps them.
func genToBF16(s *isa) {
	lowText(s, "toBF16", "func(dst []uint16, src []float32)", "sets dst[i] to src[i] rounded to bfloat16 (nearest even, NaN quiet) for i < len(src).")
	dst, src, n := load(asm.Param("dst").Base()), load(asm.Param("src").Base()), load(asm.Param("src").Len())
	one, round, abs, inf, quiet := bcastBits(s, 1), bcastBits(s, 0x7fff), bcastBits(s, 0x7fffffff), bcastBits(s, 0x7f800000), bcastBits(s, 0x40)
	convLoop(s, n, func(i GPVirtual, k Op) {
		v, t, hi, a := s.vec(), s.vec(), s.vec(), s.vec()
		load32(Mem{Base: src, Index: i, Scale: 4}, k, v)
		asm.VPSRLD(U8(16), v, hi)
		and, or := func(a, b, c Op) { asm.VPAND(a, b, c) }, func(a, b, c Op) { asm.VPOR(a, b, c) }
		if s.evex {
			and, or = func(a, b, c Op) { asm.VPANDD(a, b, c) }, func(a, b, c Op) { asm.VPORD(a, b, c) }
		}
		and(one, hi, t)
		asm.VPADDD(round, t, t)
		asm.VPADDD(v, t, t)
		asm.VPSRLD(U8(16), t, t)
		and(abs, v, a)
		or(quiet, hi, hi)
		out := Mem{Base: dst, Index: i, Scale: 2}
		if s.evex {
			nan := asm.K()
			asm.VPCMPGTD(inf, a, nan)
			asm.VMOVDQA32(hi, nan, t) // merge: NaN lanes take the quiet upper half
			if k != nil {
				asm.VPMOVDW(t, k, out)
			} else {
				asm.VPMOVDW(t, out)
			}
			return
		}
		asm.VPCMPGTD(inf, a, a)
		asm.VPBLENDVB(a, hi, t, t)
		h := asm.XMM()
		asm.VEXTRACTI128(U8(1), t, h)
		asm.VPACKUSDW(h, t.AsX(), h)
		asm.VMOVDQU(h, out)
	})
}

// genToF16 narrows by VCVTPS2PH with immediate rounding to nearest even.
func genToF16(s *isa) {
	lowText(s, "toF16", "func(dst []uint16, src []float32)", "sets dst[i] to src[i] rounded to binary16 (nearest even) for i < len(src).")
	dst, src, n := load(asm.Param("dst").Base()), load(asm.Param("src").Base()), load(asm.Param("src").Len())
	convLoop(s, n, func(i GPVirtual, k Op) {
		v := s.vec()
		load32(Mem{Base: src, Index: i, Scale: 4}, k, v)
		out := Mem{Base: dst, Index: i, Scale: 2}
		if k != nil {
			asm.VCVTPS2PH(U8(0), v, k, out)
		} else {
			asm.VCVTPS2PH(U8(0), v, out)
		}
	})
}

// decodeRows is the number of rows the decode kernels take together: the
// matrix-vector product keeps one accumulator per row (R independent FMA
// chains) and reads the vector once for R rows; the transposed product loads
// and stores each vector of dst once per R rows.
const decodeRows = 4

// rowAddr returns the addresses of rows 0..3 from p with the row stride in
// bytes lda and 3·lda in lda3, plus disp.
func rowAddr(p, lda, lda3 GPVirtual, r, disp int) Mem {
	switch r {
	case 0:
		return Mem{Base: p, Disp: disp}
	case 1:
		return Mem{Base: p, Index: lda, Scale: 1, Disp: disp}
	case 2:
		return Mem{Base: p, Index: lda, Scale: 2, Disp: disp}
	}
	return Mem{Base: p, Index: lda3, Scale: 1, Disp: disp}
}

// rowLoops emits the loop over the rows: groups of decodeRows by group(a),
// then single rows by single(a), with a the first row's address, advanced by
// the loops; rows is consumed.
func rowLoops(a, lda, rows GPVirtual, group, single func()) {
	asm.Label("group")
	asm.CMPQ(rows, U32(decodeRows))
	asm.JB(LabelRef("single"))
	group()
	asm.LEAQ(Mem{Base: a, Index: lda, Scale: 4}, a)
	asm.SUBQ(U32(decodeRows), rows)
	asm.JMP(LabelRef("group"))
	asm.Label("single")
	asm.TESTQ(rows, rows)
	asm.JZ(LabelRef("done"))
	single()
	asm.ADDQ(lda, a)
	asm.DECQ(rows)
	asm.JMP(LabelRef("single"))
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()
}

// colLoop emits a loop over cols 16-bit columns, one vector a step: body(k)
// with k nil, then for AVX-512 a masked body for the remaining columns;
// advance moves the column pointers by one vector. cols is consumed.
func colLoop(s *isa, prefix string, cols GPVirtual, body func(k Op), advance func()) {
	asm.Label(prefix + "cols")
	asm.CMPQ(cols, U32(s.lanes))
	asm.JB(LabelRef(prefix + "tail"))
	body(nil)
	advance()
	asm.SUBQ(U32(s.lanes), cols)
	asm.JMP(LabelRef(prefix + "cols"))
	asm.Label(prefix + "tail")
	if s.evex {
		asm.TESTQ(cols, cols)
		asm.JZ(LabelRef(prefix + "end"))
		body(s.tailMask(cols).k)
	}
	asm.Label(prefix + "end")
}

// genMatVecHalf emits matVec<F><ISA>(dst, a, lda, x): dst[r] = Σ_c A[r,c]·x[c]
// for the len(dst)×len(x) matrix of 16-bit values with stride lda elements.
func genMatVecHalf(s *isa, f half) {
	lowText(s, "matVec"+f.name, "func(dst []float32, a []uint16, lda int, x []float32)",
		"sets dst = A·x for the len(dst)×len(x) "+f.name+" matrix A with row stride lda.")
	dst, rows := load(asm.Param("dst").Base()), load(asm.Param("dst").Len())
	a, lda := load(asm.Param("a").Base()), load(asm.Param("lda"))
	x, ncols := load(asm.Param("x").Base()), load(asm.Param("x").Len())
	asm.SHLQ(U8(1), lda)
	lda3 := asm.GP64()
	asm.LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	dot := func(prefix string, n int) []VecVirtual {
		acc := make([]VecVirtual, n)
		for r := range acc {
			acc[r] = s.vec()
			s.zero(acc[r])
		}
		p, xp, cols := asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(a, p)
		asm.MOVQ(x, xp)
		asm.MOVQ(ncols, cols)
		if f.name == "BF16" {
			bf16Pairs(s, prefix, acc, p, xp, cols, lda, lda3)
		}
		colLoop(s, prefix, cols, func(k Op) {
			xv := s.vec()
			load32(Mem{Base: xp}, k, xv)
			for r := range acc {
				v := s.vec()
				f.widen(rowAddr(p, lda, lda3, r, 0), k, v)
				asm.VFMADD231PS(v, xv, acc[r])
			}
		}, func() {
			asm.ADDQ(U32(2*s.lanes), p)
			asm.ADDQ(U32(4*s.lanes), xp)
		})
		return acc
	}
	rowLoops(a, lda, rows, func() {
		acc := dot("g", decodeRows)
		asm.VMOVUPS(s.hsum4(acc[0], acc[1], acc[2], acc[3]), Mem{Base: dst})
		asm.ADDQ(U32(4*decodeRows), dst)
	}, func() {
		acc := dot("s", 1)
		asm.VMOVSS(s.hsum(acc[0]), Mem{Base: dst})
		asm.ADDQ(U32(4), dst)
	})
}

// bf16Pairs emits the bfloat16 dot products of len(acc) rows two vectors of
// columns at a time, while cols ≥ 2·lanes: one load of lanes 32-bit words
// holds 2·lanes values, the even ones widened by a shift left by 16 and the
// odd ones by clearing the low half, each multiplied by the matching
// elements of x, gathered once per step for all rows (AVX-512: VPERMI2PS;
// AVX2: VSHUFPS then VPERMPD). It replaces VPMOVZXWD, a shuffle per vector
// per row, by an AND; the order of the products changes, not their bound.
// Advances p by 4·lanes bytes and xp by 8·lanes per step and consumes cols.
func bf16Pairs(s *isa, prefix string, acc []VecVirtual, p, xp, cols, lda, lda3 GPVirtual) {
	odd := make([]VecVirtual, len(acc))
	for r := range odd {
		odd[r] = s.vec()
		s.zero(odd[r])
	}
	hiMask := bcastBits(s, 0xffff0000)
	var ie, io VecVirtual
	if s.evex {
		ie, io = s.vec(), s.vec()
		asm.VMOVDQU32(evenOdd().Offset(0), ie)
		asm.VMOVDQU32(evenOdd().Offset(64), io)
	}
	asm.Label(prefix + "pairs")
	asm.CMPQ(cols, U32(2*s.lanes))
	asm.JB(LabelRef(prefix + "pairsEnd"))
	xe, xo := evenOddX(s, xp, ie, io)
	for r := range acc {
		e, v := widenBF16Pairs(s, rowAddr(p, lda, lda3, r, 0), hiMask)
		asm.VFMADD231PS(e, xe, acc[r])
		asm.VFMADD231PS(v, xo, odd[r])
	}
	asm.ADDQ(U32(4*s.lanes), p)
	asm.ADDQ(U32(8*s.lanes), xp)
	asm.SUBQ(U32(2*s.lanes), cols)
	asm.JMP(LabelRef(prefix + "pairs"))
	asm.Label(prefix + "pairsEnd")
	for r := range acc {
		asm.VADDPS(odd[r], acc[r], acc[r])
	}
}

// evenOddIdx is the VPERMI2PS index table of bf16Pairs: 0, 2, …, 30 then
// 1, 3, …, 31, emitted once per file.
var evenOddIdx *Mem

func evenOdd() Mem {
	if evenOddIdx == nil {
		m := GLOBL("evenodd", RODATA|NOPTR)
		for i := 0; i < 32; i++ {
			DATA(4*i, U32(2*(i%16)+i/16))
		}
		evenOddIdx = &m
	}
	return *evenOddIdx
}

// genMatTVecHalf emits matTVec<F><ISA>(dst, a, lda, x): dst[c] += Σ_r
// x[r]·A[r,c] for the len(x)×len(dst) matrix of 16-bit values with stride lda
// elements, rows added in order.
func genMatTVecHalf(s *isa, f half) {
	lowText(s, "matTVec"+f.name, "func(dst []float32, a []uint16, lda int, x []float32)",
		"sets dst += Aᵀ·x for the len(x)×len(dst) "+f.name+" matrix A with row stride lda.")
	dst, ncols := load(asm.Param("dst").Base()), load(asm.Param("dst").Len())
	a, lda := load(asm.Param("a").Base()), load(asm.Param("lda"))
	x, rows := load(asm.Param("x").Base()), load(asm.Param("x").Len())
	asm.SHLQ(U8(1), lda)
	lda3 := asm.GP64()
	asm.LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	add := func(prefix string, n int) {
		w := make([]VecVirtual, n)
		for r := range w {
			w[r] = s.vec()
			asm.VBROADCASTSS(Mem{Base: x, Disp: 4 * r}, w[r])
		}
		p, dp, cols := asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(a, p)
		asm.MOVQ(dst, dp)
		asm.MOVQ(ncols, cols)
		colLoop(s, prefix, cols, func(k Op) {
			y := s.vec()
			load32(Mem{Base: dp}, k, y)
			for r := range w {
				v := s.vec()
				f.widen(rowAddr(p, lda, lda3, r, 0), k, v)
				asm.VFMADD231PS(v, w[r], y)
			}
			store32(y, k, Mem{Base: dp})
		}, func() {
			asm.ADDQ(U32(2*s.lanes), p)
			asm.ADDQ(U32(4*s.lanes), dp)
		})
		asm.ADDQ(U32(4*n), x)
	}
	rowLoops(a, lda, rows, func() { add("g", decodeRows) }, func() { add("s", 1) })
}

// q8Bytes is the size of a Q8Block: a float32 scale and 32 int8 values.
const q8Bytes = 36

// q8Widen loads the lanes int8 values at m as float32s into a new vector.
func q8Widen(s *isa, m Mem) VecVirtual {
	v := s.vec()
	asm.VPMOVSXBD(m, v)
	asm.VCVTDQ2PS(v, v)
	return v
}

// bcastOf returns the float32 at m as fmaBcast's b: m itself under EVEX,
// for the FMA's embedded broadcast, else a new vector of s broadcast from
// it. (A 512-bit VBROADCASTSS from memory takes one of Zen 4's FP pipes; the
// embedded broadcast is the load's alone, on Intel as on AMD.)
func bcastOf(s *isa, m Mem) Op {
	if s.evex {
		return m
	}
	b := s.vec()
	asm.VBROADCASTSS(m, b)
	return b
}

// q8Scale is how an EVEX kernel's Q8 context multiplies each row's weight
// by its block's scale (rounded once either way, so both forms give the same
// bits); the CPU class chooses (kernels' route.q8Stack, kernels/DESIGN.md
// "Decode kernels and the fused step"). Without EVEX the product is a
// scalar broadcast to a register.
type q8Scale bool

const (
	// q8ScaleVec: the weight broadcast to a vector once per block of rows,
	// times the scale by VMULPS with the scale's embedded broadcast, one
	// vector per row and block of 32 columns.
	q8ScaleVec q8Scale = false
	// q8ScaleStack: the product by VMULSS, stored to the stack, broadcast
	// from there by each FMA (the kernels named …Stack…): no 512-bit
	// operation for it, where Zen 4 runs each as two halves.
	q8ScaleStack q8Scale = true
)

// suffix is the kernel-name part of form q.
func (q q8Scale) suffix() string {
	if q == q8ScaleStack {
		return "Stack"
	}
	return ""
}

// weightOf loads the float32 weight at m for scaledWeight: broadcast to a
// new vector of s under EVEX in form q8ScaleVec, else into an XMM register.
func weightOf(s *isa, q q8Scale, m Mem) VecVirtual {
	if s.evex && q == q8ScaleVec {
		v := s.vec()
		asm.VBROADCASTSS(m, v)
		return v
	}
	x := asm.XMM()
	asm.VMOVSS(m, x)
	return x
}

// scaledWeight returns, as fmaBcast's b, the weight x (from weightOf) times
// the float32 scale at m, rounded once: under EVEX in form q8ScaleVec a new
// vector of s (VMULPS, the scale broadcast by it), in form q8ScaleStack
// stored to the stack at slot and named by it; without EVEX broadcast to a
// new vector of s.
func scaledWeight(s *isa, q q8Scale, x VecVirtual, m, slot Mem) Op {
	if s.evex && q == q8ScaleVec {
		b := s.vec()
		asm.VMULPS_BCST(m, x, b)
		return b
	}
	t := asm.XMM()
	asm.VMULSS(m, x, t)
	if s.evex {
		asm.VMOVSS(t, slot)
		return slot
	}
	b := s.vec()
	asm.VBROADCASTSS(t, b)
	return b
}

// fmaBcast sets acc += v·b for b a vector register or a float32 in memory
// (EVEX only), broadcast by the FMA.
func fmaBcast(b Op, v, acc VecVirtual) {
	if m, ok := b.(Mem); ok {
		asm.VFMADD231PS_BCST(m, v, acc)
		return
	}
	asm.VFMADD231PS(b, v, acc)
}

// genMatVecQ8 emits matVecQ8<ISA>(dst, a, lda, x): for the len(dst)×len(x)
// matrix of 8-bit blocks (len(x) a multiple of 32, lda in blocks), dst[r] =
// Σ_b Scale·(Σ_i Q[i]·x[32b+i]): each block's product in one vector, then
// one FMA by its scale into the row's accumulator.
func genMatVecQ8(s *isa) {
	lowText(s, "matVecQ8", "func(dst []float32, a []byte, lda int, x []float32)",
		"sets dst = A·x for the len(dst)×len(x) matrix A of 8-bit blocks (len(x) a multiple of 32) with row stride lda blocks.")
	dst, rows := load(asm.Param("dst").Base()), load(asm.Param("dst").Len())
	a, lda := load(asm.Param("a").Base()), load(asm.Param("lda"))
	x, ncols := load(asm.Param("x").Base()), load(asm.Param("x").Len())
	asm.IMUL3Q(U32(q8Bytes), lda, lda)
	lda3 := asm.GP64()
	asm.LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	asm.SHRQ(U8(5), ncols)
	per := 32 / s.lanes // vectors per block
	dot := func(prefix string, n int) []VecVirtual {
		acc := make([]VecVirtual, n)
		for r := range acc {
			acc[r] = s.vec()
			s.zero(acc[r])
		}
		p, xp, blocks := asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(a, p)
		asm.MOVQ(x, xp)
		asm.MOVQ(ncols, blocks)
		asm.Label(prefix + "blocks")
		asm.TESTQ(blocks, blocks)
		asm.JZ(LabelRef(prefix + "end"))
		var xv []Op
		for j := 0; j < per; j++ {
			if s.evex {
				v := s.vec()
				asm.VMOVUPS(Mem{Base: xp, Disp: 4 * s.lanes * j}, v)
				xv = append(xv, v)
			} else {
				xv = append(xv, Mem{Base: xp, Disp: 4 * s.lanes * j})
			}
		}
		for r := range acc {
			var p0 VecVirtual
			for j := 0; j < per; j++ {
				q := q8Widen(s, rowAddr(p, lda, lda3, r, 4+s.lanes*j))
				if j == 0 {
					asm.VMULPS(xv[j], q, q)
					p0 = q
				} else {
					asm.VFMADD231PS(xv[j], q, p0)
				}
			}
			fmaBcast(bcastOf(s, rowAddr(p, lda, lda3, r, 0)), p0, acc[r])
		}
		asm.ADDQ(U32(q8Bytes), p)
		asm.ADDQ(U32(4*32), xp)
		asm.DECQ(blocks)
		asm.JMP(LabelRef(prefix + "blocks"))
		asm.Label(prefix + "end")
		return acc
	}
	rowLoops(a, lda, rows, func() {
		acc := dot("g", decodeRows)
		asm.VMOVUPS(s.hsum4(acc[0], acc[1], acc[2], acc[3]), Mem{Base: dst})
		asm.ADDQ(U32(4*decodeRows), dst)
	}, func() {
		acc := dot("s", 1)
		asm.VMOVSS(s.hsum(acc[0]), Mem{Base: dst})
		asm.ADDQ(U32(4), dst)
	})
}

// genMatTVecQ8 emits matTVecQ8[Stack]<ISA>(dst, a, lda, x): dst[c] += Σ_r
// (x[r]·Scale)·Q[c] for the len(x)×len(dst) matrix of 8-bit blocks (len(dst)
// a multiple of 32, lda in blocks), each row's weight times its block's scale
// rounded once per block, in form q (EVEX only: the same bits either way).
func genMatTVecQ8(s *isa, q q8Scale) {
	lowText(s, "matTVecQ8"+q.suffix(), "func(dst []float32, a []byte, lda int, x []float32)",
		"sets dst += Aᵀ·x for the len(x)×len(dst) matrix A of 8-bit blocks (len(dst) a multiple of 32) with row stride lda blocks.")
	dst, ncols := load(asm.Param("dst").Base()), load(asm.Param("dst").Len())
	a, lda := load(asm.Param("a").Base()), load(asm.Param("lda"))
	x, rows := load(asm.Param("x").Base()), load(asm.Param("x").Len())
	asm.IMUL3Q(U32(q8Bytes), lda, lda)
	lda3 := asm.GP64()
	asm.LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	asm.SHRQ(U8(5), ncols)
	per := 32 / s.lanes
	var wl Mem
	if s.evex && q == q8ScaleStack {
		wl = asm.AllocLocal(4 * decodeRows)
	}
	add := func(prefix string, n int) {
		xr := make([]VecVirtual, n)
		for r := range xr {
			xr[r] = weightOf(s, q, Mem{Base: x, Disp: 4 * r})
		}
		p, dp, blocks := asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(a, p)
		asm.MOVQ(dst, dp)
		asm.MOVQ(ncols, blocks)
		asm.Label(prefix + "blocks")
		asm.TESTQ(blocks, blocks)
		asm.JZ(LabelRef(prefix + "end"))
		w := make([]Op, n)
		for r := range w {
			w[r] = scaledWeight(s, q, xr[r], rowAddr(p, lda, lda3, r, 0), wl.Offset(4*r))
		}
		for j := 0; j < per; j++ {
			y := s.vec()
			asm.VMOVUPS(Mem{Base: dp, Disp: 4 * s.lanes * j}, y)
			for r := range w {
				fmaBcast(w[r], q8Widen(s, rowAddr(p, lda, lda3, r, 4+s.lanes*j)), y)
			}
			asm.VMOVUPS(y, Mem{Base: dp, Disp: 4 * s.lanes * j})
		}
		asm.ADDQ(U32(q8Bytes), p)
		asm.ADDQ(U32(4*32), dp)
		asm.DECQ(blocks)
		asm.JMP(LabelRef(prefix + "blocks"))
		asm.Label(prefix + "end")
		asm.ADDQ(U32(4*n), x)
	}
	rowLoops(a, lda, rows, func() { add("g", decodeRows) }, func() { add("s", 1) })
}

// genExpShift emits expShift<ISA>(dst, src []float32, m float32) float32:
// dst[i] = e^(src[i]−m) for i < len(src), returning Σ dst[i], for src[i] ≤ m,
// none NaN (exp's applyNonPositive: the same bits as Exp of the difference).
// AVX2 takes len(src) a multiple of 8.
func genExpShift(s *isa) {
	lowText(s, "expShift", "func(dst, src []float32, m float32) float32",
		"sets dst[i] = e^(src[i]−m) for i < len(src) and returns their sum; src[i] ≤ m, not NaN.")
	dst, src, n := load(asm.Param("dst").Base()), load(asm.Param("src").Base()), load(asm.Param("src").Len())
	mx := asm.XMM()
	asm.Load(asm.Param("m"), mx)
	mv := s.vec()
	asm.VBROADCASTSS(mx, mv)
	e := newExpGen(s)
	e.keep()
	acc := s.vec()
	s.zero(acc)
	i := asm.GP64()
	asm.XORQ(i, i)
	lim := asm.GP64()
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-s.lanes), lim)
	asm.Label("loop")
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef("tail"))
	v := s.vec()
	asm.VMOVUPS(Mem{Base: src, Index: i, Scale: 4}, v)
	asm.VSUBPS(mv, v, v)
	p := e.applyNonPositive(v)
	asm.VADDPS(p, acc, acc)
	asm.VMOVUPS(p, Mem{Base: dst, Index: i, Scale: 4})
	asm.ADDQ(U32(s.lanes), i)
	asm.JMP(LabelRef("loop"))
	asm.Label("tail")
	if s.evex {
		rem := asm.GP64()
		asm.MOVQ(n, rem)
		asm.SUBQ(i, rem)
		asm.JZ(LabelRef("done"))
		k := s.tailMask(rem).k
		v := s.vec()
		asm.VMOVUPS_Z(Mem{Base: src, Index: i, Scale: 4}, k, v)
		asm.VSUBPS(mv, v, v)
		p := e.applyNonPositive(v)
		asm.VADDPS(p, acc, k, acc)
		asm.VMOVUPS(p, k, Mem{Base: dst, Index: i, Scale: 4})
	}
	asm.Label("done")
	asm.Store(s.hsum(acc), asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
}

// evenOddX loads the 2·lanes values of x at xp and returns them split: xe
// holds the even-indexed ones and xo the odd-indexed ones, each in order. On
// AVX-512 ie and io are the VPERMI2PS indexes (evenOdd); on AVX2 they are
// unused.
func evenOddX(s *isa, xp GPVirtual, ie, io VecVirtual) (xe, xo VecVirtual) {
	xe, xo = s.vec(), s.vec()
	x1 := Mem{Base: xp, Disp: 4 * s.lanes}
	if s.evex {
		x0 := s.vec()
		asm.VMOVUPS(Mem{Base: xp}, x0)
		asm.VMOVDQA32(ie, xe)
		asm.VMOVDQA32(io, xo)
		asm.VPERMI2PS(x1, x0, xe)
		asm.VPERMI2PS(x1, x0, xo)
	} else {
		x0, x1r := s.vec(), s.vec()
		asm.VMOVUPS(Mem{Base: xp}, x0)
		asm.VMOVUPS(x1, x1r)
		asm.VSHUFPS(U8(0x88), x1r, x0, xe) // [x0 x2 x8 x10 | x4 x6 x12 x14]
		asm.VSHUFPS(U8(0xdd), x1r, x0, xo)
		asm.VPERMPD(U8(0xd8), xe, xe) // quadwords 0 2 1 3: [x0 x2 x4 … x14]
		asm.VPERMPD(U8(0xd8), xo, xo)
	}
	return xe, xo
}

// widenBF16Pairs loads one vector of bfloat16 pairs from m and widens them:
// e holds the even elements (each pair's low half shifted up), o the odd
// ones (the high half, the low half cleared by hiMask, 0xffff0000 a lane).
func widenBF16Pairs(s *isa, m Mem, hiMask VecVirtual) (e, o VecVirtual) {
	o, e = s.vec(), s.vec()
	if s.evex {
		asm.VMOVDQU32(m, o)
		asm.VPSLLD(U8(16), o, e)
		asm.VPANDD(hiMask, o, o)
	} else {
		asm.VMOVDQU(m, o)
		asm.VPSLLD(U8(16), o, e)
		asm.VPAND(hiMask, o, o)
	}
	return e, o
}
