package main

import (
	"fmt"

	. "github.com/heedml/heed/asmgen/arm64"
)

// The reduced-precision family on NEON (kernels/DESIGN.md): conversions of
// bfloat16 and binary16 from and to float32, and the decode products
// MatVec/MatTVec over bfloat16, binary16 and 8-bit blocks, all by widening to
// float32 and FMA. The kernels take whole vectors of 8 columns (whole blocks
// of 32 for Q8); the dispatch finishes the rest in Go.

func init() {
	registerNEON("lowprec", func(f *neonFile) {
		genFromHalfNEON(f, "fromBF16NEON", "bfloat16", neonWidenBF16)
		genFromHalfNEON(f, "fromF16NEON", "binary16", neonWidenF16)
		genToBF16NEON(f)
		genToF16NEON(f)
		for _, h := range []struct {
			name  string
			widen neonWiden
		}{{"BF16", neonWidenBF16}, {"F16", neonWidenF16}} {
			genMatVecHalfNEON(f, h.name, h.widen)
			genMatTVecHalfNEON(f, h.name, h.widen)
		}
		genFromQ8NEON(f)
		genMatVecQ8NEON(f)
		genMatTVecQ8NEON(f)
	})
}

// neonWiden widens the eight 16-bit lanes of src into lo (the first four) and
// hi (the last four), as float32.
type neonWiden func(f *neonFile, lo, hi, src Reg)

// neonWidenBF16 is h << 16 (SHLL, SHLL2): exact, NaNs keep their bits.
func neonWidenBF16(f *neonFile, lo, hi, src Reg) {
	f.v(SHLL(lo, src))
	f.v(SHLL2(hi, src))
}

// neonWidenF16 is FCVTL, FCVTL2: exact, NaNs quieted (as fallback's
// Float32FromF16).
func neonWidenF16(f *neonFile, lo, hi, src Reg) {
	f.v(FCVTL(lo, src))
	f.v(FCVTL2(hi, src))
}

// genFromHalfNEON emits name(dst []float32, src []uint16): dst[i] = the value
// of src[i] for i < len(src), a multiple of 8.
func genFromHalfNEON(f *neonFile, name, what string, widen neonWiden) {
	f.text(name, "(dst []float32, src []uint16)", "$0-48",
		fmt.Sprintf("sets dst[i] to the value of the %s src[i] for i < len(src) (a multiple of 8; len(dst) ≥ len(src)).", what))
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD src_base+24(FP), R1")
	f.op("MOVD src_len+32(FP), R2")
	in, out := vIn, vIn+4
	f.countLoop("from16", "R2", "R11", 4, func() {
		f.op("VLD1.P 32(R1), %s", neonList(in, 2))
		widen(f, out, out+1, in)
		widen(f, out+2, out+3, in+1)
		f.op("VST1.P %s, 64(R0)", neonList(out, 4))
	})
	f.op("TBZ $3, R2, done")
	f.op("VLD1.P 16(R1), %s", neonList(in, 1))
	widen(f, out, out+1, in)
	f.op("VST1.P %s, 32(R0)", neonList(out, 2))
	f.label("done")
	f.op("RET")
}

// genToBF16NEON emits toBF16NEON: fallback's integer rounding,
// (b + 0x7FFF + bit16(b)) >> 16, and NaN → b>>16 | 0x0040, eight values per
// step; UZP2 takes the upper halves.
func genToBF16NEON(f *neonFile) {
	f.text("toBF16NEON", "(dst []uint16, src []float32)", "$0-48",
		"sets dst[i] to src[i] rounded to bfloat16 (nearest even, NaN quiet) for i < len(src) (a multiple of 8; len(dst) ≥ len(src)).")
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD src_base+24(FP), R1")
	f.op("MOVD src_len+32(FP), R2")
	one, bias, quiet := vConst, vConst+1, vConst+2
	f.dupConst(one, 1, "1")
	f.dupConst(bias, 0x7fff, "rounding bias")
	f.dupConst(quiet, 0x00400000, "bfloat16 quiet bit, in the upper half")
	in := vIn                // two vectors of src
	odd, ord := vIn+2, vIn+4 // per vector: bit 16, then the ordered mask
	nan := vIn + 6
	round := func(v Reg) {
		f.v(USHR(odd, v, 16))
		f.v(AND(odd, odd, one))
		f.v(FCMEQ(ord, v, v))
		f.v(ORR(nan, v, quiet))
		f.v(ADD(v, v, bias))
		f.v(ADD(v, v, odd))
		f.v(BIF(v, nan, ord))
	}
	f.op("LSR $3, R2, R2")
	f.op("CBZ R2, done")
	f.label("to8")
	f.op("VLD1.P 32(R1), %s", neonList(in, 2))
	round(in)
	round(in + 1)
	f.v(UZP2H(in, in, in+1))
	f.op("VST1.P %s, 16(R0)", neonList(in, 1))
	f.op("SUBS $1, R2, R2")
	f.op("BNE to8")
	f.label("done")
	f.op("RET")
}

// genToF16NEON emits toF16NEON: FCVTN/FCVTN2, which round to nearest even
// (Go leaves FPCR's rounding mode at its default), give ±Inf from 65520 up,
// keep subnormals (FPCR.FZ is clear) and turn a NaN into a quiet NaN with the
// top nine payload bits, as fallback.F16FromFloat32.
func genToF16NEON(f *neonFile) {
	f.text("toF16NEON", "(dst []uint16, src []float32)", "$0-48",
		"sets dst[i] to src[i] rounded to binary16 (nearest even) for i < len(src) (a multiple of 8; len(dst) ≥ len(src)).")
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD src_base+24(FP), R1")
	f.op("MOVD src_len+32(FP), R2")
	in, out := vIn, vIn+4
	f.countLoop("to16", "R2", "R11", 4, func() {
		f.op("VLD1.P 64(R1), %s", neonList(in, 4))
		f.v(FCVTN(out, in))
		f.v(FCVTN2(out, in+1))
		f.v(FCVTN(out+1, in+2))
		f.v(FCVTN2(out+1, in+3))
		f.op("VST1.P %s, 32(R0)", neonList(out, 2))
	})
	f.op("TBZ $3, R2, done")
	f.op("VLD1.P 32(R1), %s", neonList(in, 2))
	f.v(FCVTN(out, in))
	f.v(FCVTN2(out, in+1))
	f.op("VST1.P %s, 16(R0)", neonList(out, 1))
	f.label("done")
	f.op("RET")
}

// genMatVecHalfNEON emits matVec<fmt>NEON(dst, a, lda, x): dst = A·x over
// len(x) columns, a multiple of 8, four rows at a time sharing each load of x
// (eight columns a step, two accumulators a row), then one row at a time.
func genMatVecHalfNEON(f *neonFile, format string, widen neonWiden) {
	name := "matVec" + format + "NEON"
	f.text(name, "(dst []float32, a []uint16, lda int, x []float32)", "$0-80",
		fmt.Sprintf("sets dst = A·x for the len(dst)×len(x) %s matrix A with row stride lda (len(x) a multiple of 8).", format))
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD dst_len+8(FP), R5")
	f.op("MOVD a_base+24(FP), R1")
	f.op("MOVD lda+48(FP), R2")
	f.op("MOVD x_base+56(FP), R3")
	f.op("MOVD x_len+64(FP), R4")
	f.op("LSL $1, R2, R2")
	xv := vIn                                       // two vectors of x
	raw := func(r Reg) Reg { return vIn + 2 + r }   // eight 16-bit values of row r
	row := func(r Reg) Reg { return vIn + 6 + 2*r } // them widened, two vectors
	acc := func(r, h Reg) Reg { return vAcc + 2*r + h }
	body := func(p string, rows Reg) {
		f.op("MOVD R3, R10")
		f.op("LSR $3, R4, R12")
		f.zero(neonSeq(vAcc, 2*int(rows))...)
		f.label(p + "cols8")
		f.op("VLD1.P 32(R10), %s", neonList(xv, 2))
		for r := Reg(0); r < rows; r++ {
			f.op("VLD1.P 16(R%d), %s", 6+r, neonList(raw(r), 1))
		}
		for r := Reg(0); r < rows; r++ {
			widen(f, row(r), row(r)+1, raw(r))
			f.v(FMLA(acc(r, 0), row(r), xv))
			f.v(FMLA(acc(r, 1), row(r)+1, xv+1))
		}
		f.op("SUBS $1, R12, R12")
		f.op("BNE %scols8", p)
		for r := Reg(0); r < rows; r++ {
			f.v(FADD(acc(r, 0), acc(r, 0), acc(r, 1)))
		}
	}
	f.op("CBZ R4, zero")
	f.op("LSR $2, R5, R13")
	f.op("CBZ R13, rows1")
	f.label("rows4")
	f.op("MOVD R1, R6")
	f.op("ADD R2, R6, R7")
	f.op("ADD R2, R7, R8")
	f.op("ADD R2, R8, R9")
	body("r4", 4)
	f.comment("V16 = the four row sums")
	f.v(FADDP(acc(0, 0), acc(0, 0), acc(1, 0)))
	f.v(FADDP(acc(2, 0), acc(2, 0), acc(3, 0)))
	f.v(FADDP(acc(0, 0), acc(0, 0), acc(2, 0)))
	f.op("VST1.P %s, 16(R0)", neonList(acc(0, 0), 1))
	f.op("ADD R2<<2, R1, R1")
	f.op("SUBS $1, R13, R13")
	f.op("BNE rows4")
	f.label("rows1")
	f.op("AND $3, R5, R5")
	f.tailLoop("row", "R5", func() {
		f.op("MOVD R1, R6")
		body("r1", 1)
		f.hsum(acc(0, 0))
		f.op("FMOVS.P F%d, 4(R0)", acc(0, 0))
		f.op("ADD R2, R1, R1")
	})
	f.op("RET")
	f.comment("no columns: dst = 0")
	f.label("zero")
	f.tailLoop("zrow", "R5", func() { f.op("MOVW.P ZR, 4(R0)") })
	f.op("RET")
}

// genMatTVecHalfNEON emits matTVec<fmt>NEON(dst, a, lda, x): dst += Aᵀ·x over
// len(dst) columns, a multiple of 8; four rows at a time, each column taking
// its rows in order (as fallback: the same FMAs in the same order).
func genMatTVecHalfNEON(f *neonFile, format string, widen neonWiden) {
	name := "matTVec" + format + "NEON"
	f.text(name, "(dst []float32, a []uint16, lda int, x []float32)", "$0-80",
		fmt.Sprintf("sets dst += Aᵀ·x for the len(x)×len(dst) %s matrix A with row stride lda (len(dst) a multiple of 8).", format))
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD dst_len+8(FP), R4")
	f.op("MOVD a_base+24(FP), R1")
	f.op("MOVD lda+48(FP), R2")
	f.op("MOVD x_base+56(FP), R3")
	f.op("MOVD x_len+64(FP), R5")
	f.op("LSL $1, R2, R2")
	f.op("CBZ R4, done")
	d := vIn                                        // two vectors of dst
	raw := func(r Reg) Reg { return vIn + 2 + r }   // eight 16-bit values of row r
	row := func(r Reg) Reg { return vIn + 6 + 2*r } // them widened
	x := func(r Reg) Reg { return vBcast + r }
	cols := func(p string, rows Reg) {
		f.op("MOVD R0, R10")
		f.op("LSR $3, R4, R12")
		f.label(p + "cols8")
		f.op("VLD1 (R10), %s", neonList(d, 2))
		for r := Reg(0); r < rows; r++ {
			f.op("VLD1.P 16(R%d), %s", 6+r, neonList(raw(r), 1))
		}
		for r := Reg(0); r < rows; r++ {
			widen(f, row(r), row(r)+1, raw(r))
		}
		for r := Reg(0); r < rows; r++ {
			f.v(FMLA(d, row(r), x(r)))
			f.v(FMLA(d+1, row(r)+1, x(r)))
		}
		f.op("VST1.P %s, 32(R10)", neonList(d, 2))
		f.op("SUBS $1, R12, R12")
		f.op("BNE %scols8", p)
	}
	f.op("LSR $2, R5, R13")
	f.op("CBZ R13, rows1")
	f.label("rows4")
	xs := vBcast + 4
	f.op("VLD1.P 16(R3), %s", neonList(xs, 1))
	for r := Reg(0); r < 4; r++ {
		f.v(DUPE(x(r), xs, uint(r)))
	}
	f.op("MOVD R1, R6")
	f.op("ADD R2, R6, R7")
	f.op("ADD R2, R7, R8")
	f.op("ADD R2, R8, R9")
	cols("r4", 4)
	f.op("ADD R2<<2, R1, R1")
	f.op("SUBS $1, R13, R13")
	f.op("BNE rows4")
	f.label("rows1")
	f.op("AND $3, R5, R5")
	f.tailLoop("row", "R5", func() {
		f.op("VLD1R.P 4(R3), %s", neonList(x(0), 1))
		f.op("MOVD R1, R6")
		cols("r1", 1)
		f.op("ADD R2, R1, R1")
	})
	f.label("done")
	f.op("RET")
}

// q8BlockBytes is the size of a kernels.Q8Block: a float32 scale, then 32 int8.
const q8BlockBytes = 36

// neonQ8Widened lists the registers that neonWidenQ8 leaves the 32 values of
// a block in, in column order (four values each): V8–V15, consecutive, so
// that they can be stored by two VST1 of four.
var neonQ8Widened = [8]Reg{vIn + 8, vIn + 9, vIn + 10, vIn + 11, vIn + 12, vIn + 13, vIn + 14, vIn + 15}

// neonWidenQ8 loads the 32 int8 of the block at ptr (past its scale;
// advanced) and converts them to float32 in neonQ8Widened (exact: SXTL twice,
// SCVTF). It uses V8–V15 only: the 8H halves go to V10, V11, V14, V15, and
// each is widened into registers already consumed.
func neonWidenQ8(f *neonFile, ptr string) {
	f.op("VLD1.P 32(%s), [V8.B16, V9.B16]", ptr)
	h := [4]Reg{vIn + 10, vIn + 11, vIn + 14, vIn + 15}
	f.v(SXTLB(h[0], vIn+8))
	f.v(SXTL2B(h[1], vIn+8))
	f.v(SXTLB(h[2], vIn+9))
	f.v(SXTL2B(h[3], vIn+9))
	w := neonQ8Widened
	for i, hr := range h {
		f.v(SXTLH(w[2*i], hr))
		f.v(SXTL2H(w[2*i+1], hr))
	}
	for _, r := range w {
		f.v(SCVTF(r, r))
	}
}

// genFromQ8NEON emits fromQ8NEON(dst []float32, src []byte): dst[i] =
// Scale·Q[i] of block i/32, one rounding (FMUL by the broadcast scale, as
// fallback.DequantizeQ8), for len(dst) a multiple of 32.
func genFromQ8NEON(f *neonFile) {
	f.text("fromQ8NEON", "(dst []float32, src []byte)", "$0-48",
		"sets dst[i] = Scale·Q[i mod 32] of block i/32 of src for i < len(dst) (a multiple of 32).")
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD dst_len+8(FP), R2")
	f.op("MOVD src_base+24(FP), R1")
	f.op("LSR $5, R2, R2")
	f.op("CBZ R2, done")
	sc := vBcast
	f.label("block")
	f.op("VLD1R.P 4(R1), %s", neonList(sc, 1))
	neonWidenQ8(f, "R1")
	for _, r := range neonQ8Widened {
		f.v(FMUL(r, r, sc))
	}
	f.op("VST1.P %s, 64(R0)", neonList(neonQ8Widened[0], 4))
	f.op("VST1.P %s, 64(R0)", neonList(neonQ8Widened[4], 4))
	f.op("SUBS $1, R2, R2")
	f.op("BNE block")
	f.label("done")
	f.op("RET")
}

// genMatVecQ8NEON emits matVecQ8NEON(dst, a, lda, x): dst = A·x over len(x)
// columns, a multiple of 32; for each row and block, p = Σ Q[i]·x[i] in two
// vectors (four FMAs a lane each, then added), then the row's vector sum +=
// Scale·p; four rows share each block of x.
func genMatVecQ8NEON(f *neonFile) {
	f.text("matVecQ8NEON", "(dst []float32, a []byte, lda int, x []float32)", "$0-80",
		"sets dst = A·x for the len(dst)×len(x) matrix A of 8-bit blocks (len(x) a multiple of 32) with row stride lda blocks.")
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD dst_len+8(FP), R5")
	f.op("MOVD a_base+24(FP), R1")
	f.op("MOVD lda+48(FP), R2")
	f.op("MOVD x_base+56(FP), R3")
	f.op("MOVD x_len+64(FP), R4")
	f.op("MOVD $%d, R11", q8BlockBytes)
	f.op("MUL R11, R2, R2")
	xv := vIn                                       // eight vectors of x
	p := func(r Reg) Reg { return vAcc + r }        // the block's products, even vectors
	p2 := func(r Reg) Reg { return vBcast + 4 + r } // and odd ones
	s := func(r Reg) Reg { return vAcc + 4 + r }
	sc := func(r Reg) Reg { return vBcast + r }
	body := func(pre string, rows Reg) {
		f.op("MOVD R3, R10")
		f.op("LSR $5, R4, R12")
		f.zero(neonSeq(s(0), int(rows))...)
		f.label(pre + "blocks")
		f.op("VLD1.P 64(R10), %s", neonList(xv, 4))
		f.op("VLD1.P 64(R10), %s", neonList(xv+4, 4))
		for r := Reg(0); r < rows; r++ {
			f.op("VLD1R.P 4(R%d), %s", 6+r, neonList(sc(r), 1))
			neonWidenQ8(f, fmt.Sprintf("R%d", 6+r))
			f.v(FMUL(p(r), neonQ8Widened[0], xv))
			f.v(FMUL(p2(r), neonQ8Widened[1], xv+1))
			for j := 2; j < 8; j += 2 {
				f.v(FMLA(p(r), neonQ8Widened[j], xv+Reg(j)))
				f.v(FMLA(p2(r), neonQ8Widened[j+1], xv+Reg(j+1)))
			}
			f.v(FADD(p(r), p(r), p2(r)))
			f.v(FMLA(s(r), p(r), sc(r)))
		}
		f.op("SUBS $1, R12, R12")
		f.op("BNE %sblocks", pre)
	}
	f.op("CBZ R4, zero")
	f.op("LSR $2, R5, R13")
	f.op("CBZ R13, rows1")
	f.label("rows4")
	f.op("MOVD R1, R6")
	f.op("ADD R2, R6, R7")
	f.op("ADD R2, R7, R8")
	f.op("ADD R2, R8, R9")
	body("r4", 4)
	f.comment("V20 = the four row sums")
	f.v(FADDP(s(0), s(0), s(1)))
	f.v(FADDP(s(2), s(2), s(3)))
	f.v(FADDP(s(0), s(0), s(2)))
	f.op("VST1.P %s, 16(R0)", neonList(s(0), 1))
	f.op("ADD R2<<2, R1, R1")
	f.op("SUBS $1, R13, R13")
	f.op("BNE rows4")
	f.label("rows1")
	f.op("AND $3, R5, R5")
	f.tailLoop("row", "R5", func() {
		f.op("MOVD R1, R6")
		body("r1", 1)
		f.hsum(s(0))
		f.op("FMOVS.P F%d, 4(R0)", s(0))
		f.op("ADD R2, R1, R1")
	})
	f.op("RET")
	f.comment("no columns: dst = 0")
	f.label("zero")
	f.tailLoop("zrow", "R5", func() { f.op("MOVW.P ZR, 4(R0)") })
	f.op("RET")
}

// genMatTVecQ8NEON emits matTVecQ8NEON(dst, a, lda, x): dst += Aᵀ·x over
// len(dst) columns, a multiple of 32. As fallback: each row's weight x[r]·Scale
// is rounded once per block, then dst[i] += w·Q[i] (FMA), the rows of a column
// in order; four rows per pass over dst.
func genMatTVecQ8NEON(f *neonFile) {
	f.text("matTVecQ8NEON", "(dst []float32, a []byte, lda int, x []float32)", "$0-80",
		"sets dst += Aᵀ·x for the len(x)×len(dst) matrix A of 8-bit blocks (len(dst) a multiple of 32) with row stride lda blocks.")
	f.op("MOVD dst_base+0(FP), R0")
	f.op("MOVD dst_len+8(FP), R4")
	f.op("MOVD a_base+24(FP), R1")
	f.op("MOVD lda+48(FP), R2")
	f.op("MOVD x_base+56(FP), R3")
	f.op("MOVD x_len+64(FP), R5")
	f.op("MOVD $%d, R11", q8BlockBytes)
	f.op("MUL R11, R2, R2")
	f.op("CBZ R4, done")
	d := vIn // eight vectors of dst
	xs := vBcast + 4
	sc, w := vBcast, vAcc // the block's scale, broadcast; the row's weight
	cols := func(pre string, rows Reg, lane func(r Reg) (Reg, uint)) {
		f.op("MOVD R0, R10")
		f.op("LSR $5, R4, R12")
		f.label(pre + "blocks")
		f.op("VLD1 (R10), %s", neonList(d, 4))
		f.op("ADD $64, R10, R14")
		f.op("VLD1 (R14), %s", neonList(d+4, 4))
		for r := Reg(0); r < rows; r++ {
			f.op("VLD1R.P 4(R%d), %s", 6+r, neonList(sc, 1))
			xr, i := lane(r)
			f.v(FMULE(w, sc, xr, i))
			neonWidenQ8(f, fmt.Sprintf("R%d", 6+r))
			for j := Reg(0); j < 8; j++ {
				f.v(FMLA(d+j, neonQ8Widened[j], w))
			}
		}
		f.op("VST1.P %s, 64(R10)", neonList(d, 4))
		f.op("VST1.P %s, 64(R10)", neonList(d+4, 4))
		f.op("SUBS $1, R12, R12")
		f.op("BNE %sblocks", pre)
	}
	f.op("LSR $2, R5, R13")
	f.op("CBZ R13, rows1")
	f.label("rows4")
	f.op("VLD1.P 16(R3), %s", neonList(xs, 1))
	f.op("MOVD R1, R6")
	f.op("ADD R2, R6, R7")
	f.op("ADD R2, R7, R8")
	f.op("ADD R2, R8, R9")
	cols("r4", 4, func(r Reg) (Reg, uint) { return xs, uint(r) })
	f.op("ADD R2<<2, R1, R1")
	f.op("SUBS $1, R13, R13")
	f.op("BNE rows4")
	f.label("rows1")
	f.op("AND $3, R5, R5")
	f.tailLoop("row", "R5", func() {
		f.op("VLD1R.P 4(R3), %s", neonList(xs, 1))
		f.op("MOVD R1, R6")
		cols("r1", 1, func(Reg) (Reg, uint) { return xs, 0 })
		f.op("ADD R2, R1, R1")
	})
	f.label("done")
	f.op("RET")
}
