package main

import (
	"fmt"

	. "github.com/heedml/heed/asmgen/arm64"
)

func init() {
	registerNEON("rnncell", func(f *neonFile) {
		genLSTMCellNEON(f)
		genGRUCellNEON(f)
	})
}

// The NEON cells keep sigmoid's constants in V18–V25 and tanh's in V26–V31
// (two neonMaths side by side) and compute in V0–V13, one vector of four
// positions per iteration, then one position at a time in lane 0 (FMOVS
// zeroes the other lanes). Every position's stores follow its loads.
const (
	neonCellSigmoid Reg = 18
	neonCellTanh    Reg = 26
)

// neonCellIO loads and stores one position of a cell pass through
// post-incremented pointers: a vector of four, or one element.
type neonCellIO struct {
	f      *neonFile
	scalar bool
}

func (io neonCellIO) ld(p string, v Reg) {
	if io.scalar {
		io.f.op("FMOVS.P 4(%s), F%d", p, v)
	} else {
		io.f.op("VLD1.P 16(%s), [%s]", p, neonVec(v))
	}
}

func (io neonCellIO) st(v Reg, p string) {
	if io.scalar {
		io.f.op("FMOVS.P F%d, 4(%s)", v, p)
	} else {
		io.f.op("VST1.P [%s], 16(%s)", neonVec(v), p)
	}
}

// neonCellLoop runs body over the n positions in register nReg (consumed):
// vectors of four with cnt as the counter, then single elements.
func neonCellLoop(f *neonFile, name, nReg, cnt string, body func(io neonCellIO)) {
	f.countLoop(name+"4", nReg, cnt, 2, func() { body(neonCellIO{f: f}) })
	f.tailLoop(name+"1", nReg, func() { body(neonCellIO{f: f, scalar: true}) })
	f.op("RET")
}

// blocks sets regs[1:] to regs[0] + k·hb for k = 1, 2, …: pointers to the
// gate blocks of a slice.
func neonBlocks(f *neonFile, hb string, regs ...string) {
	for k := 1; k < len(regs); k++ {
		f.op("ADD %s, %s, %s", hb, regs[k-1], regs[k])
	}
}

// genLSTMCellNEON emits lstmCellNEON, the NEON form of lstmCell<ISA>
// (rnncell.go): the same operations, σ and tanh those of sigmoidNEON and
// tanhNEON, every other one a single rounding, so the bits are fallback's.
func genLSTMCellNEON(f *neonFile) { genLSTMCellNEONAs(f, false) }

// genLSTMCellNEONAs emits lstmCellNEON, or with train lstmCellTrainNEON(hOut,
// cOut, act, gates, b, c), which also stores i, f, g, o and tanh(c') into the
// five blocks of act (pointers R14–R17, R19) as each is computed.
func genLSTMCellNEONAs(f *neonFile, train bool) {
	off := 0 // act's bytes among the arguments
	if train {
		off = 24
		f.text("lstmCellTrainNEON", "(hOut []float32, cOut []float32, act []float32, gates []float32, b []float32, c []float32)", "$0-144",
			"is lstmCellNEON that also stores the activated gates i, f, g, o and tanh(c') into the five H-element blocks of act (5H); cOut may be c.")
	} else {
		f.text("lstmCellNEON", "(hOut []float32, cOut []float32, gates []float32, b []float32, c []float32)", "$0-120",
			"sets, for j < H = len(c), from the pre-activations gates = [i; f; g; o] (4H) and the bias b (4H), "+
				"c' = σ(f+b_f)·c + σ(i+b_i)·tanh(g+b_g) into cOut[j] and σ(o+b_o)·tanh(c') into hOut[j]; cOut may be c.")
	}
	f.op("MOVD hOut_base+0(FP), R0")
	f.op("MOVD cOut_base+24(FP), R1")
	if train {
		f.op("MOVD act_base+48(FP), R14")
	}
	f.op("MOVD gates_base+%d(FP), R2", 48+off)
	f.op("MOVD b_base+%d(FP), R6", 72+off)
	f.op("MOVD c_base+%d(FP), R10", 96+off)
	f.op("MOVD c_len+%d(FP), R11", 104+off)
	f.op("LSL $2, R11, R13")
	neonBlocks(f, "R13", "R2", "R3", "R4", "R5") // gates i, f, g, o
	neonBlocks(f, "R13", "R6", "R7", "R8", "R9") // b i, f, g, o
	if train {
		neonBlocks(f, "R13", "R14", "R15", "R16", "R17", "R19") // act i, f, g, o, tanh(c')
	}
	save := func(io neonCellIO, v Reg, p string) {
		if train {
			io.st(v, p)
		}
	}
	sg := newNEONMathAt(f, neonSigmoid, neonCellSigmoid)
	th := newNEONMathAt(f, neonTanh, neonCellTanh)
	seq := func(r, n int) []Reg { return neonSeq(Reg(r), n) }
	neonCellLoop(f, "lstm", "R11", "R12", func(io neonCellIO) {
		// g = tanh(g + b_g)
		io.ld("R4", 0)
		io.ld("R8", 1)
		f.v(FADD(0, 0, 1))
		gg := th.tanh(seq(0, 1), [][]Reg{seq(1, 6)})[0]
		save(io, gg, "R16")
		// i = σ(i + b_i), f = σ(f + b_f)
		io.ld("R2", 7)
		io.ld("R6", 8)
		f.v(FADD(7, 7, 8))
		io.ld("R3", 8)
		io.ld("R7", 9)
		f.v(FADD(8, 8, 9))
		s := sg.sigmoid(seq(7, 2), [][]Reg{seq(9, 4), seq(13, 4)})
		ig, fg := s[0], s[1]
		save(io, ig, "R14")
		save(io, fg, "R15")
		// c' = f·c + i·g
		io.ld("R10", 0)
		f.v(FMUL(0, fg, 0))
		f.v(FMUL(1, ig, gg))
		f.v(FADD(0, 0, 1))
		io.st(0, "R1")
		// h' = σ(o + b_o)·tanh(c')
		tc := th.tanh(seq(0, 1), [][]Reg{seq(1, 6)})[0]
		save(io, tc, "R19")
		io.ld("R5", 7)
		io.ld("R9", 8)
		f.v(FADD(7, 7, 8))
		og := sg.sigmoid(seq(7, 1), [][]Reg{seq(8, 4)})[0]
		save(io, og, "R17")
		if og == tc {
			panic(fmt.Sprintf("lstmCellNEON: σ(o) in tanh(c')'s register V%d", tc))
		}
		f.v(FMUL(7, og, tc))
		io.st(7, "R0")
	})
}

// genGRUCellNEON emits gruCellNEON, the NEON form of gruCell<ISA>
// (rnncell.go), bit for bit fallback's as genLSTMCellNEON's.
func genGRUCellNEON(f *neonFile) { genGRUCellNEONAs(f, false) }

// genGRUCellNEONAs emits gruCellNEON, or with train gruCellTrainNEON(hOut,
// act, gates, nh, bx, bh, h), which also stores r, z, n and q = nh + bh_n
// into the four blocks of act (pointers R15–R17, R19) as each is computed.
func genGRUCellNEONAs(f *neonFile, train bool) {
	off := 0 // act's bytes among the arguments
	if train {
		off = 24
		f.text("gruCellTrainNEON", "(hOut []float32, act []float32, gates []float32, nh []float32, bx []float32, bh []float32, h []float32)", "$0-168",
			"is gruCellNEON that also stores r, z, n and q = nh + bh_n into the four H-element blocks of act (4H); hOut may be h.")
	} else {
		f.text("gruCellNEON", "(hOut []float32, gates []float32, nh []float32, bx []float32, bh []float32, h []float32)", "$0-144",
			"sets, for j < H = len(h), hOut[j] = n + z·(h[j] − n) with r = σ(gates[j]+bx+bh), "+
				"z = σ(gates[H+j]+bx+bh), n = tanh(gates[2H+j]+bx + r·(nh[j]+bh)) (bx, bh at the same offsets); hOut may be h.")
	}
	f.op("MOVD hOut_base+0(FP), R0")
	if train {
		f.op("MOVD act_base+24(FP), R15")
	}
	f.op("MOVD gates_base+%d(FP), R1", 24+off)
	f.op("MOVD nh_base+%d(FP), R4", 48+off)
	f.op("MOVD bx_base+%d(FP), R5", 72+off)
	f.op("MOVD bh_base+%d(FP), R8", 96+off)
	f.op("MOVD h_base+%d(FP), R12", 120+off)
	f.op("MOVD h_len+%d(FP), R11", 128+off)
	f.op("LSL $2, R11, R14")
	neonBlocks(f, "R14", "R1", "R2", "R3")  // gates r, z, n
	neonBlocks(f, "R14", "R5", "R6", "R7")  // bx r, z, n
	neonBlocks(f, "R14", "R8", "R9", "R10") // bh r, z, n
	if train {
		neonBlocks(f, "R14", "R15", "R16", "R17", "R19") // act r, z, n, q
	}
	save := func(io neonCellIO, v Reg, p string) {
		if train {
			io.st(v, p)
		}
	}
	sg := newNEONMathAt(f, neonSigmoid, neonCellSigmoid)
	th := newNEONMathAt(f, neonTanh, neonCellTanh)
	seq := func(r, n int) []Reg { return neonSeq(Reg(r), n) }
	neonCellLoop(f, "gru", "R11", "R13", func(io neonCellIO) {
		// (r + bx_r) + bh_r, (z + bx_z) + bh_z
		io.ld("R1", 0)
		io.ld("R5", 1)
		f.v(FADD(0, 0, 1))
		io.ld("R8", 1)
		f.v(FADD(0, 0, 1))
		io.ld("R2", 2)
		io.ld("R6", 3)
		f.v(FADD(2, 2, 3))
		io.ld("R9", 3)
		f.v(FADD(2, 2, 3))
		s := sg.sigmoid([]Reg{0, 2}, [][]Reg{seq(3, 4), seq(7, 4)})
		r, z := s[0], s[1]
		save(io, r, "R15")
		save(io, z, "R16")
		// n = tanh((n + bx_n) + r·(nh + bh_n))
		io.ld("R3", 11)
		io.ld("R7", 12)
		f.v(FADD(11, 11, 12))
		io.ld("R4", 12)
		io.ld("R10", 13)
		f.v(FADD(12, 12, 13))
		save(io, 12, "R19")
		f.v(FMUL(12, r, 12))
		f.v(FADD(11, 11, 12))
		n := th.tanh(seq(11, 1), [][]Reg{seq(0, 6)})[0]
		save(io, n, "R17")
		if z < 7 {
			panic(fmt.Sprintf("gruCellNEON: z in tanh's temporaries (V%d)", z))
		}
		// h' = n + z·(h − n)
		io.ld("R12", 12)
		f.v(FSUB(12, 12, n))
		f.v(FMUL(12, z, 12))
		f.v(FADD(12, n, 12))
		io.st(12, "R0")
	})
}
