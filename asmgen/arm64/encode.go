// Package arm64 encodes the A64 Advanced SIMD and floating-point instructions
// of heed's NEON kernels. Each function returns the instruction word together
// with its GNU mnemonic, so a generator can write `WORD $0x…  // mnemonic` and
// a test can check the pair against a disassembler. The few instructions the
// kernels write in Go assembler syntax (FMLA, EOR, DUP, MOV, INS) also carry
// that spelling; a test assembles it with Go's assembler and compares the
// words.
//
// Vector forms use the 4S arrangement (four float32 or int32 lanes) unless the
// function name says otherwise; bitwise forms use 16B, which is the same
// operation on 128 bits.
package arm64

import "fmt"

// Reg is a SIMD&FP register number, 0–31 (V0–V31, also S0–S31).
type Reg uint8

// GP is a general-purpose register number, 0–30 (R0–R30, W0–W30).
type GP uint8

// Inst is one encoded instruction.
type Inst struct {
	Word uint32 // the instruction word
	Asm  string // its GNU assembler spelling, lower case
	Go   string // its Go assembler spelling, if the kernels write it that way
}

// String returns the Go assembler line for i: its Go spelling if it has one,
// else WORD with the mnemonic as a comment.
func (i Inst) String() string {
	if i.Go != "" {
		return i.Go
	}
	return fmt.Sprintf("WORD $0x%08x // %s", i.Word, i.Asm)
}

func (r GP) check() uint32 {
	if r > 30 {
		panic(fmt.Sprintf("arm64: register R%d out of range", r))
	}
	return uint32(r)
}

// goThree is the Go spelling of a three-register vector instruction: Go
// writes the operands in reverse order.
func goThree(in Inst, op, arr string, d, n, m Reg) Inst {
	in.Go = fmt.Sprintf("%s V%d.%s, V%d.%s, V%d.%s", op, m, arr, n, arr, d, arr)
	return in
}

func (r Reg) check() uint32 {
	if r > 31 {
		panic(fmt.Sprintf("arm64: register V%d out of range", r))
	}
	return uint32(r)
}

// threeSame encodes the "three registers of the same type" class:
// base | Rm<<16 | Rn<<5 | Rd.
func threeSame(name, arr string, base uint32, d, n, m Reg) Inst {
	return Inst{
		Word: base | m.check()<<16 | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("%s v%d.%s, v%d.%s, v%d.%s", name, d, arr, n, arr, m, arr),
	}
}

// twoMisc encodes the "two-register miscellaneous" class: base | Rn<<5 | Rd.
func twoMisc(name, arr string, base uint32, d, n Reg) Inst {
	return Inst{
		Word: base | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("%s v%d.%s, v%d.%s", name, d, arr, n, arr),
	}
}

// Floating-point arithmetic, 4S.

func FADD(d, n, m Reg) Inst { return threeSame("fadd", "4s", 0x4e20d400, d, n, m) }
func FSUB(d, n, m Reg) Inst { return threeSame("fsub", "4s", 0x4ea0d400, d, n, m) }
func FMUL(d, n, m Reg) Inst { return threeSame("fmul", "4s", 0x6e20dc00, d, n, m) }
func FDIV(d, n, m Reg) Inst { return threeSame("fdiv", "4s", 0x6e20fc00, d, n, m) }
func FMAX(d, n, m Reg) Inst { return threeSame("fmax", "4s", 0x4e20f400, d, n, m) }
func FMIN(d, n, m Reg) Inst { return threeSame("fmin", "4s", 0x4ea0f400, d, n, m) }
func FMLA(d, n, m Reg) Inst {
	return goThree(threeSame("fmla", "4s", 0x4e20cc00, d, n, m), "VFMLA", "S4", d, n, m)
}
func FMLS(d, n, m Reg) Inst   { return threeSame("fmls", "4s", 0x4ea0cc00, d, n, m) }
func FADDP(d, n, m Reg) Inst  { return threeSame("faddp", "4s", 0x6e20d400, d, n, m) }
func FMAXP(d, n, m Reg) Inst  { return threeSame("fmaxp", "4s", 0x6e20f400, d, n, m) }
func FRECPS(d, n, m Reg) Inst { return threeSame("frecps", "4s", 0x4e20fc00, d, n, m) }

// Floating-point compares, 4S: all-ones lanes where the relation holds.

func FCMEQ(d, n, m Reg) Inst { return threeSame("fcmeq", "4s", 0x4e20e400, d, n, m) }
func FCMGE(d, n, m Reg) Inst { return threeSame("fcmge", "4s", 0x6e20e400, d, n, m) }
func FCMGT(d, n, m Reg) Inst { return threeSame("fcmgt", "4s", 0x6ea0e400, d, n, m) }
func FACGT(d, n, m Reg) Inst { return threeSame("facgt", "4s", 0x6ea0ec00, d, n, m) }
func FACGE(d, n, m Reg) Inst { return threeSame("facge", "4s", 0x6e20ec00, d, n, m) }

// Integer arithmetic and compares, 4S.

func ADD(d, n, m Reg) Inst  { return threeSame("add", "4s", 0x4ea08400, d, n, m) }
func SUB(d, n, m Reg) Inst  { return threeSame("sub", "4s", 0x6ea08400, d, n, m) }
func CMGT(d, n, m Reg) Inst { return threeSame("cmgt", "4s", 0x4ea03400, d, n, m) }
func CMEQ(d, n, m Reg) Inst { return threeSame("cmeq", "4s", 0x6ea08c00, d, n, m) }

// Bitwise, 16B.

func AND(d, n, m Reg) Inst { return threeSame("and", "16b", 0x4e201c00, d, n, m) }
func BIC(d, n, m Reg) Inst { return threeSame("bic", "16b", 0x4e601c00, d, n, m) }
func ORR(d, n, m Reg) Inst { return threeSame("orr", "16b", 0x4ea01c00, d, n, m) }
func EOR(d, n, m Reg) Inst {
	return goThree(threeSame("eor", "16b", 0x6e201c00, d, n, m), "VEOR", "B16", d, n, m)
}

// BSL sets d = (d & n) | (^d & m): d is the selector.
func BSL(d, n, m Reg) Inst { return threeSame("bsl", "16b", 0x6e601c00, d, n, m) }

// BIT sets d = (n & m) | (d & ^m): insert n where m is set.
func BIT(d, n, m Reg) Inst { return threeSame("bit", "16b", 0x6ea01c00, d, n, m) }

// BIF sets d = (d & m) | (n & ^m): insert n where m is clear.
func BIF(d, n, m Reg) Inst { return threeSame("bif", "16b", 0x6ee01c00, d, n, m) }

// Two-register forms, 4S.

func FRINTN(d, n Reg) Inst { return twoMisc("frintn", "4s", 0x4e218800, d, n) }
func FRINTM(d, n Reg) Inst { return twoMisc("frintm", "4s", 0x4e219800, d, n) }
func FCVTZS(d, n Reg) Inst { return twoMisc("fcvtzs", "4s", 0x4ea1b800, d, n) }
func FCVTNS(d, n Reg) Inst { return twoMisc("fcvtns", "4s", 0x4e21a800, d, n) }
func SCVTF(d, n Reg) Inst  { return twoMisc("scvtf", "4s", 0x4e21d800, d, n) }
func FABS(d, n Reg) Inst   { return twoMisc("fabs", "4s", 0x4ea0f800, d, n) }
func FNEG(d, n Reg) Inst   { return twoMisc("fneg", "4s", 0x6ea0f800, d, n) }
func FRECPE(d, n Reg) Inst { return twoMisc("frecpe", "4s", 0x4ea1d800, d, n) }
func FSQRT(d, n Reg) Inst  { return twoMisc("fsqrt", "4s", 0x6ea1f800, d, n) }

// Shifts by an immediate, 4S.

// SHL shifts each lane left by sh, 0 ≤ sh < 32.
func SHL(d, n Reg, sh uint) Inst {
	if sh > 31 {
		panic("arm64: SHL shift out of range")
	}
	return Inst{
		Word: 0x4f205400 | uint32(sh)<<16 | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("shl v%d.4s, v%d.4s, #%d", d, n, sh),
	}
}

func shiftRight(name string, base uint32, d, n Reg, sh uint) Inst {
	if sh < 1 || sh > 32 {
		panic("arm64: " + name + " shift out of range")
	}
	return Inst{
		Word: base | uint32(64-sh)<<16 | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("%s v%d.4s, v%d.4s, #%d", name, d, n, sh),
	}
}

// USHR shifts each lane right logically by sh, 1 ≤ sh ≤ 32.
func USHR(d, n Reg, sh uint) Inst { return shiftRight("ushr", 0x6f000400, d, n, sh) }

// SSHR shifts each lane right arithmetically by sh, 1 ≤ sh ≤ 32.
func SSHR(d, n Reg, sh uint) Inst { return shiftRight("sshr", 0x4f000400, d, n, sh) }

// Reductions to a scalar S register.

// FMAXV sets Sd to the largest of the four lanes of Vn (NaN if any is NaN).
func FMAXV(d, n Reg) Inst {
	return Inst{Word: 0x6e30f800 | n.check()<<5 | d.check(), Asm: fmt.Sprintf("fmaxv s%d, v%d.4s", d, n)}
}

// FADDPS sets Sd to the sum of the two low lanes of Vn (scalar FADDP).
func FADDPS(d, n Reg) Inst {
	return Inst{Word: 0x7e30d800 | n.check()<<5 | d.check(), Asm: fmt.Sprintf("faddp s%d, v%d.2s", d, n)}
}

// FMAXPS sets Sd to the larger of the two low lanes of Vn (scalar FMAXP).
func FMAXPS(d, n Reg) Inst {
	return Inst{Word: 0x7e30f800 | n.check()<<5 | d.check(), Asm: fmt.Sprintf("fmaxp s%d, v%d.2s", d, n)}
}

// byElement encodes the "vector × element" class, 4S: the multiplier is lane
// i (0–3) of Vm.
func byElement(name string, base uint32, d, n, m Reg, i uint) Inst {
	if i > 3 {
		panic("arm64: " + name + " lane out of range")
	}
	return Inst{
		Word: base | uint32(i&1)<<21 | m.check()<<16 | uint32(i>>1)<<11 | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("%s v%d.4s, v%d.4s, v%d.s[%d]", name, d, n, m, i),
	}
}

// FMLAE sets d += n · Vm.S[i] (FMLA by element).
func FMLAE(d, n, m Reg, i uint) Inst { return byElement("fmla", 0x4f801000, d, n, m, i) }

// FMLSE sets d −= n · Vm.S[i] (FMLS by element).
func FMLSE(d, n, m Reg, i uint) Inst { return byElement("fmls", 0x4f805000, d, n, m, i) }

// FMULE sets d = n · Vm.S[i] (FMUL by element).
func FMULE(d, n, m Reg, i uint) Inst { return byElement("fmul", 0x4f809000, d, n, m, i) }

// Moves and broadcasts.

// MOV sets d = n (the ORR alias with both sources n).
func MOV(d, n Reg) Inst {
	return Inst{
		Word: 0x4ea01c00 | n.check()<<16 | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("mov v%d.16b, v%d.16b", d, n),
		Go:   fmt.Sprintf("VMOV V%d.B16, V%d.B16", n, d),
	}
}

// lane4 is the imm5 field that selects 32-bit lane i (0–3).
func lane4(name string, i uint) uint32 {
	if i > 3 {
		panic("arm64: " + name + " lane out of range")
	}
	return uint32(i)<<3 | 4
}

// DUPE sets every lane of d to lane i of n (DUP by element).
func DUPE(d, n Reg, i uint) Inst {
	return Inst{
		Word: 0x4e000400 | lane4("DUP", i)<<16 | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("dup v%d.4s, v%d.s[%d]", d, n, i),
		Go:   fmt.Sprintf("VDUP V%d.S[%d], V%d.S4", n, i, d),
	}
}

// DUPW sets every lane of d to Wn (DUP from a general register).
func DUPW(d Reg, n GP) Inst {
	return Inst{
		Word: 0x4e000c00 | 4<<16 | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("dup v%d.4s, w%d", d, n),
		Go:   fmt.Sprintf("VDUP R%d, V%d.S4", n, d),
	}
}

// INSW sets lane i of d to Wn, leaving the other lanes (INS from a general
// register, alias MOV).
func INSW(d Reg, i uint, n GP) Inst {
	return Inst{
		Word: 0x4e001c00 | lane4("INS", i)<<16 | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("mov v%d.s[%d], w%d", d, i, n),
		Go:   fmt.Sprintf("VMOV R%d, V%d.S[%d]", n, d, i),
	}
}

// Widening, narrowing and integer forms of the reduced-precision kernels.
// The arrangement is in the name or the doc: the low half of a register is
// 4H (four 16-bit lanes) or 8B, the high half the "2" form.

// FCVTL sets d (4S) to the four binary16 lanes of the low half of n (4H),
// exactly; NaNs are quieted.
func FCVTL(d, n Reg) Inst { return twoMiscArr("fcvtl", "4s", "4h", 0x0e217800, d, n) }

// FCVTL2 sets d (4S) to the four binary16 lanes of the high half of n (8H).
func FCVTL2(d, n Reg) Inst { return twoMiscArr("fcvtl2", "4s", "8h", 0x4e217800, d, n) }

// FCVTN sets the low half of d (4H) to the four float32 lanes of n rounded
// to binary16 (FPCR's mode, to nearest even in Go), clearing the high half.
func FCVTN(d, n Reg) Inst { return twoMiscArr("fcvtn", "4h", "4s", 0x0e216800, d, n) }

// FCVTN2 sets the high half of d (8H) to the four float32 lanes of n rounded
// to binary16, keeping the low half.
func FCVTN2(d, n Reg) Inst { return twoMiscArr("fcvtn2", "8h", "4s", 0x4e216800, d, n) }

// SHLL sets d (4S) to the four 16-bit lanes of the low half of n shifted left
// by 16: bfloat16 to float32.
func SHLL(d, n Reg) Inst { return twoMiscShift("shll", "4s", "4h", 0x2e613800, d, n, 16) }

// SHLL2 is SHLL on the high half of n (8H).
func SHLL2(d, n Reg) Inst { return twoMiscShift("shll2", "4s", "8h", 0x6e613800, d, n, 16) }

// XTN sets the low half of d (4H) to the low 16 bits of each lane of n (4S),
// clearing the high half.
func XTN(d, n Reg) Inst { return twoMiscArr("xtn", "4h", "4s", 0x0e612800, d, n) }

// UZP2H sets d (8H) to the odd 16-bit lanes of n then of m (8H each): the
// upper halves of the eight 32-bit lanes of n and m.
func UZP2H(d, n, m Reg) Inst { return threeSame("uzp2", "8h", 0x4e405800, d, n, m) }

// SXTLB sets d (8H) to the eight int8 lanes of the low half of n (8B),
// sign-extended.
func SXTLB(d, n Reg) Inst { return twoMiscArr("sxtl", "8h", "8b", 0x0f08a400, d, n) }

// SXTL2B sets d (8H) to the eight int8 lanes of the high half of n (16B),
// sign-extended.
func SXTL2B(d, n Reg) Inst { return twoMiscArr("sxtl2", "8h", "16b", 0x4f08a400, d, n) }

// SXTLH sets d (4S) to the four int16 lanes of the low half of n (4H),
// sign-extended.
func SXTLH(d, n Reg) Inst { return twoMiscArr("sxtl", "4s", "4h", 0x0f10a400, d, n) }

// SXTL2H sets d (4S) to the four int16 lanes of the high half of n (8H),
// sign-extended.
func SXTL2H(d, n Reg) Inst { return twoMiscArr("sxtl2", "4s", "8h", 0x4f10a400, d, n) }

// UMAXV sets Sd to the largest of the four unsigned 32-bit lanes of n.
func UMAXV(d, n Reg) Inst {
	return Inst{Word: 0x6eb0a800 | n.check()<<5 | d.check(), Asm: fmt.Sprintf("umaxv s%d, v%d.4s", d, n)}
}

// UMINV sets Sd to the smallest of the four unsigned 32-bit lanes of n.
func UMINV(d, n Reg) Inst {
	return Inst{Word: 0x6eb1a800 | n.check()<<5 | d.check(), Asm: fmt.Sprintf("uminv s%d, v%d.4s", d, n)}
}

// UMOVS sets Wd to lane i of n (4S) (UMOV, alias MOV Wd, Vn.S[i]).
func UMOVS(d GP, n Reg, i uint) Inst {
	return Inst{
		Word: 0x0e003c00 | lane4("UMOV", i)<<16 | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("mov w%d, v%d.s[%d]", d, n, i),
	}
}

// twoMiscArr is twoMisc with different arrangements for d and n.
func twoMiscArr(name, ad, an string, base uint32, d, n Reg) Inst {
	return Inst{
		Word: base | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("%s v%d.%s, v%d.%s", name, d, ad, n, an),
	}
}

// twoMiscShift is twoMiscArr with an immediate shift operand.
func twoMiscShift(name, ad, an string, base uint32, d, n Reg, sh uint) Inst {
	in := twoMiscArr(name, ad, an, base, d, n)
	in.Asm += fmt.Sprintf(", #%d", sh)
	return in
}

// Integer dot products (FEAT_DotProd: optional from Armv8.2-A, mandatory
// from Armv8.4-A; Linux reports it as the asimddp hwcap). A CPU without the
// extension raises SIGILL on them: kernels that use them run only where
// the dispatch has checked the feature.

// SDOT sets each lane i of d (4S) to d[i] + Σ_{j<4} n.B[4i+j]·m.B[4i+j]: the
// signed bytes of n and m (16B) multiplied and summed exactly, modulo 2³².
func SDOT(d, n, m Reg) Inst {
	return Inst{
		Word: 0x4e809400 | m.check()<<16 | n.check()<<5 | d.check(),
		Asm:  fmt.Sprintf("sdot v%d.4s, v%d.16b, v%d.16b", d, n, m),
	}
}

// ADDP sets d (4S) to the sums of adjacent int32 lanes of n, then of m:
// {n0+n1, n2+n3, m0+m1, m2+m3}, modulo 2³².
func ADDP(d, n, m Reg) Inst { return threeSame("addp", "4s", 0x4ea0bc00, d, n, m) }

// DecodeExtra returns the GNU spelling of word if it is one of this
// package's instructions that golang.org/x/arch's decoder does not know
// (SDOT, vector form), as Inst.Asm spells it; ok is false for any other word.
func DecodeExtra(word uint32) (asm string, ok bool) {
	if word&0xffe0fc00 == 0x4e809400 {
		d, n, m := word&31, word>>5&31, word>>16&31
		return fmt.Sprintf("sdot v%d.4s, v%d.16b, v%d.16b", d, n, m), true
	}
	return "", false
}
