package main

import (
	. "github.com/heedml/heed/asmgen/arm64"
)

func init() {
	registerNEON("rnntrain", func(f *neonFile) {
		genLSTMCellNEONAs(f, true)
		genGRUCellNEONAs(f, true)
		genLSTMCellBackwardNEON(f)
		genGRUCellBackwardNEON(f)
	})
}

// neonOne is the register of the constant 1 in the backward cells, which
// compute in V0–V17.
const neonOne Reg = 31

// genLSTMCellBackwardNEON emits lstmCellBackwardNEON, the NEON form of
// lstmCellBackward<ISA> (rnntrain.go): the same operations, each one
// instruction rounded once, so the bits are fallback's. Pointers: dGates'
// blocks R0–R3, dcPrev R4, act's blocks R5–R9, cPrev R10, dh R11, dc R12.
func genLSTMCellBackwardNEON(f *neonFile) {
	f.text("lstmCellBackwardNEON", "(dGates []float32, dcPrev []float32, act []float32, cPrev []float32, dh []float32, dc []float32)", "$0-144",
		"sets, for j < H = len(cPrev), from act = [i; f; g; o; tanh(c')] (5H), dh and dc, with dc̃ = dc + (dh·o)·(1 − tc²), "+
			"dGates = [(dc̃·g)·(i(1−i)); (dc̃·cPrev)·(f(1−f)); (dc̃·i)·(1−g²); (dh·tc)·(o(1−o))] and dcPrev = dc̃·f; dcPrev may be dc.")
	f.op("MOVD dGates_base+0(FP), R0")
	f.op("MOVD dcPrev_base+24(FP), R4")
	f.op("MOVD act_base+48(FP), R5")
	f.op("MOVD cPrev_base+72(FP), R10")
	f.op("MOVD cPrev_len+80(FP), R13")
	f.op("MOVD dh_base+96(FP), R11")
	f.op("MOVD dc_base+120(FP), R12")
	f.op("LSL $2, R13, R15")
	neonBlocks(f, "R15", "R0", "R1", "R2", "R3")       // dGates i, f, g, o
	neonBlocks(f, "R15", "R5", "R6", "R7", "R8", "R9") // act i, f, g, o, tanh(c')
	f.dupConst(neonOne, 0x3f800000, "1.0")
	neonCellLoop(f, "lstmb", "R13", "R14", func(io neonCellIO) {
		// dc̃ = dc + (dh·o)·(1 − tc·tc)
		io.ld("R8", 0)  // o
		io.ld("R11", 1) // dh
		f.v(FMUL(2, 1, 0))
		io.ld("R9", 3) // tc
		f.v(FMUL(4, 3, 3))
		f.v(FSUB(4, neonOne, 4))
		f.v(FMUL(2, 2, 4))
		io.ld("R12", 5) // dc
		f.v(FADD(5, 5, 2))
		// o: (dh·tc)·(o·(1 − o))
		f.v(FMUL(6, 1, 3))
		f.v(FSUB(7, neonOne, 0))
		f.v(FMUL(7, 0, 7))
		f.v(FMUL(6, 6, 7))
		io.st(6, "R3")
		// dcPrev = dc̃·f; f: (dc̃·cPrev)·(f·(1 − f))
		io.ld("R6", 8) // f
		f.v(FMUL(9, 5, 8))
		io.st(9, "R4")
		f.v(FSUB(10, neonOne, 8))
		f.v(FMUL(10, 8, 10))
		io.ld("R10", 11) // cPrev
		f.v(FMUL(11, 5, 11))
		f.v(FMUL(11, 11, 10))
		io.st(11, "R1")
		// i: (dc̃·g)·(i·(1 − i)); g: (dc̃·i)·(1 − g·g)
		io.ld("R5", 12) // i
		io.ld("R7", 13) // g
		f.v(FMUL(14, 5, 13))
		f.v(FSUB(15, neonOne, 12))
		f.v(FMUL(15, 12, 15))
		f.v(FMUL(14, 14, 15))
		io.st(14, "R0")
		f.v(FMUL(16, 5, 12))
		f.v(FMUL(17, 13, 13))
		f.v(FSUB(17, neonOne, 17))
		f.v(FMUL(16, 16, 17))
		io.st(16, "R2")
	})
}

// genGRUCellBackwardNEON emits gruCellBackwardNEON, the NEON form of
// gruCellBackward<ISA> (rnntrain.go), bit for bit fallback's. Pointers:
// dGx's blocks R0–R2, dGh's R3–R5, dhPrev R6, act's blocks R7–R10, h R11,
// dh R12.
func genGRUCellBackwardNEON(f *neonFile) {
	f.text("gruCellBackwardNEON", "(dGx []float32, dGh []float32, dhPrev []float32, act []float32, h []float32, dh []float32)", "$0-144",
		"sets, for j < H = len(h), from act = [r; z; n; q] (4H), h and dh, with dan = dh·(1−z)·(1−n²), "+
			"dGx = [dar; daz; dan], dGh = [dar; daz; dan·r] (dar = (dan·q)·(r(1−r)), daz = dh·(h−n)·(z(1−z))) and dhPrev = dh·z; dhPrev may be dh.")
	f.op("MOVD dGx_base+0(FP), R0")
	f.op("MOVD dGh_base+24(FP), R3")
	f.op("MOVD dhPrev_base+48(FP), R6")
	f.op("MOVD act_base+72(FP), R7")
	f.op("MOVD h_base+96(FP), R11")
	f.op("MOVD h_len+104(FP), R13")
	f.op("MOVD dh_base+120(FP), R12")
	f.op("LSL $2, R13, R15")
	neonBlocks(f, "R15", "R0", "R1", "R2")        // dGx r, z, n
	neonBlocks(f, "R15", "R3", "R4", "R5")        // dGh r, z, n
	neonBlocks(f, "R15", "R7", "R8", "R9", "R10") // act r, z, n, q
	f.dupConst(neonOne, 0x3f800000, "1.0")
	neonCellLoop(f, "grub", "R13", "R14", func(io neonCellIO) {
		io.ld("R8", 0) // z
		f.v(FSUB(1, neonOne, 0))
		io.ld("R12", 2)    // dh
		f.v(FMUL(3, 2, 1)) // dn = dh·(1 − z)
		io.ld("R11", 4)    // h
		io.ld("R9", 5)     // n
		f.v(FSUB(4, 4, 5))
		f.v(FMUL(4, 2, 4)) // dz = dh·(h − n)
		f.v(FMUL(2, 2, 0)) // dhPrev = dh·z
		io.st(2, "R6")
		f.v(FMUL(0, 0, 1)) // z·(1 − z)
		f.v(FMUL(4, 4, 0)) // daz
		io.st(4, "R1")
		io.st(4, "R4")
		f.v(FMUL(5, 5, 5))
		f.v(FSUB(5, neonOne, 5))
		f.v(FMUL(3, 3, 5)) // dan
		io.st(3, "R2")
		io.ld("R7", 6)     // r
		f.v(FMUL(7, 3, 6)) // dq = dan·r
		io.st(7, "R5")
		io.ld("R10", 8)    // q
		f.v(FMUL(8, 3, 8)) // dan·q
		f.v(FSUB(9, neonOne, 6))
		f.v(FMUL(9, 6, 9))
		f.v(FMUL(8, 8, 9)) // dar
		io.st(8, "R0")
		io.st(8, "R3")
	})
}
