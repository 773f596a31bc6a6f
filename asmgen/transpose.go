package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// transpose4 transposes the four rows in within each 128-bit block of
// their vectors (UNPCKLPS/UNPCKHPS, then UNPCKLPD/UNPCKHPD), each result
// in a new vector from vec: block L of result c holds column c of block L
// of each row, rows in order.
func transpose4(in [4]VecVirtual, vec func() VecVirtual) [4]VecVirtual {
	a, b, c, d := in[0], in[1], in[2], in[3]
	t0, t1, t2, t3 := vec(), vec(), vec(), vec()
	asm.VUNPCKLPS(b, a, t0) // a0 b0 a1 b1 in each 128-bit block
	asm.VUNPCKHPS(b, a, t1) // a2 b2 a3 b3
	asm.VUNPCKLPS(d, c, t2)
	asm.VUNPCKHPS(d, c, t3)
	var out [4]VecVirtual
	for k, p := range [][2]VecVirtual{{t0, t2}, {t0, t2}, {t1, t3}, {t1, t3}} {
		out[k] = vec()
		if k%2 == 0 {
			asm.VUNPCKLPD(p[1], p[0], out[k]) // a0 b0 c0 d0
		} else {
			asm.VUNPCKHPD(p[1], p[0], out[k]) // a1 b1 c1 d1
		}
	}
	return out
}

// transpose16 returns the rows of the transpose of the square ZMM block of
// floats whose first R rows are col, one row a vector (the rows past R
// zero): transpose4 leaves, in 128-bit block L of vector c of each group
// of four rows, the group's column 4L+c; two rounds of VSHUFF32X4 then take
// block L of vector c from each group into row 4L+c.
func transpose16(s *isa, col []VecVirtual) []VecVirtual {
	var zero VecVirtual
	u := make([][4]VecVirtual, 4)
	for g := range u {
		if 4*g >= len(col) {
			if zero == nil {
				zero = s.vec()
				s.zero(zero)
			}
			u[g] = [4]VecVirtual{zero, zero, zero, zero}
			continue
		}
		u[g] = transpose4([4]VecVirtual(col[4*g:4*g+4]), s.vec)
	}
	rows := make([]VecVirtual, 16)
	for c := 0; c < 4; c++ {
		lo01, hi01, lo23, hi23 := s.vec(), s.vec(), s.vec(), s.vec()
		asm.VSHUFF32X4(U8(0x44), u[1][c], u[0][c], lo01) // blocks 0, 1 of u0, u1
		asm.VSHUFF32X4(U8(0xee), u[1][c], u[0][c], hi01) // blocks 2, 3
		asm.VSHUFF32X4(U8(0x44), u[3][c], u[2][c], lo23)
		asm.VSHUFF32X4(U8(0xee), u[3][c], u[2][c], hi23)
		for L, p := range [][2]VecVirtual{{lo01, lo23}, {lo01, lo23}, {hi01, hi23}, {hi01, hi23}} {
			imm := U8(0x88) // blocks 0, 2 of each
			if L%2 == 1 {
				imm = U8(0xdd) // blocks 1, 3
			}
			rows[4*L+c] = s.vec()
			asm.VSHUFF32X4(imm, p[1], p[0], rows[4*L+c])
		}
	}
	return rows
}
