package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// matTVecBlocks are the column-block widths, in vectors, of matTVec: blocks of
// the first width while they fit, then at most one of each narrower width.
var matTVecBlocks = []int{8, 4, 2, 1}

// genMatTVec emits matTVec<ISA>(dst, a []float32, lda int, x []float32):
// dst += Aᵀ·x for the len(x)×len(dst) matrix A with row stride lda. A block of
// columns stays in registers while every row of A adds x[r]·A[r, block] to
// it (one load of A per FMA: the loop runs at the L1 load bandwidth). The AVX2
// kernel needs len(dst) ≥ 8: its partial last vector is the last full vector
// of the columns, computed (from the original dst) before any block stores
// over the overlap and stored last.
func genMatTVec(s *isa) {
	TEXT(s.name("matTVec"), NOSPLIT, "func(dst, a []float32, lda int, x []float32)")
	Doc(s.name("matTVec") + " sets dst += Aᵀ·x for the len(x)×len(dst) matrix A with row stride lda.")
	d := load(Param("dst").Base())
	cols := load(Param("dst").Len())
	a := load(Param("a").Base())
	lda := load(Param("lda"))
	SHLQ(U8(2), lda)
	x := load(Param("x").Base())
	rows := load(Param("x").Len())

	// block emits the column block of k vectors (or the tail, for tail) at
	// byte offset col: dst[col:] += Σᵣ x[r]·A[r, col:], two rows per step.
	// Narrow blocks keep a second set of accumulators for the odd rows, so
	// that at least 8 FMA chains (AVX2) or 4 (AVX-512, 2 cycles per FMA)
	// cover the FMA latency; it is added in at the end. It returns the sums;
	// the caller stores them.
	block := func(name string, k int, col GPVirtual, load func(m Mem, v VecVirtual), fma func(m Mem, b, acc VecVirtual)) []VecVirtual {
		acc := make([]VecVirtual, k)
		for i := range acc {
			acc[i] = s.vec()
			load(Mem{Base: d, Index: col, Scale: 1, Disp: i * s.bytes()}, acc[i])
		}
		odd := acc
		if k < 8 && (k < 4 || !s.wide) {
			odd = make([]VecVirtual, k)
			for i := range odd {
				odd[i] = s.vec()
				s.zero(odd[i])
			}
		}
		p, xp, cnt := GP64(), GP64(), GP64()
		LEAQ(Mem{Base: a, Index: col, Scale: 1}, p)
		MOVQ(x, xp)
		MOVQ(rows, cnt)
		SHRQ(U8(1), cnt)
		JZ(LabelRef(name + "Odd"))
		Label(name)
		b0, b1 := s.vec(), s.vec()
		VBROADCASTSS(Mem{Base: xp}, b0)
		VBROADCASTSS(Mem{Base: xp, Disp: 4}, b1)
		for i := range acc {
			fma(Mem{Base: p, Disp: i * s.bytes()}, b0, acc[i])
		}
		for i := range acc {
			fma(Mem{Base: p, Index: lda, Scale: 1, Disp: i * s.bytes()}, b1, odd[i])
		}
		LEAQ(Mem{Base: p, Index: lda, Scale: 2}, p)
		ADDQ(U32(8), xp)
		DECQ(cnt)
		JNZ(LabelRef(name))
		Label(name + "Odd")
		TESTQ(U32(1), rows)
		JZ(LabelRef(name + "Sum"))
		b := s.vec()
		VBROADCASTSS(Mem{Base: xp}, b)
		for i := range acc {
			fma(Mem{Base: p, Disp: i * s.bytes()}, b, acc[i])
		}
		Label(name + "Sum")
		if odd[0] != acc[0] {
			for i := range acc {
				VADDPS(odd[i], acc[i], acc[i])
			}
		}
		return acc
	}
	full := func(m Mem, v VecVirtual) { VMOVUPS(m, v) }
	fullFMA := func(m Mem, b, acc VecVirtual) { VFMADD231PS(m, b, acc) }

	rem := GP64()
	MOVQ(cols, rem)
	ANDQ(U32(s.lanes-1), rem)
	var last VecVirtual
	var lastAt GPVirtual
	var t tail
	if s.wide {
		JZ(LabelRef("maskDone"))
		t = s.tailMask(rem)
		Label("maskDone")
	} else {
		// The last full vector of columns, from the original dst.
		JZ(LabelRef("lastDone"))
		lastAt = GP64()
		MOVQ(cols, lastAt)
		SUBQ(U32(s.lanes), lastAt)
		SHLQ(U8(2), lastAt)
		last = block("lastRows", 1, lastAt, full, fullFMA)[0]
		Label("lastDone")
	}

	col, left := GP64(), GP64()
	XORQ(col, col)
	MOVQ(cols, left)
	SHRQ(U8(bits.TrailingZeros(uint(s.lanes))), left)
	for bi, k := range matTVecBlocks {
		name := fmt.Sprintf("block%d", k)
		Label(name)
		CMPQ(left, U32(k))
		next := "tail"
		if bi+1 < len(matTVecBlocks) {
			next = fmt.Sprintf("block%d", matTVecBlocks[bi+1])
		}
		JB(LabelRef(next))
		acc := block(name+"Rows", k, col, full, fullFMA)
		for i := range acc {
			VMOVUPS(acc[i], Mem{Base: d, Index: col, Scale: 1, Disp: i * s.bytes()})
		}
		ADDQ(U32(k*s.bytes()), col)
		SUBQ(U32(k), left)
		if bi == 0 {
			JMP(LabelRef(name))
		}
	}

	Label("tail")
	TESTQ(rem, rem)
	JZ(LabelRef("done"))
	if s.wide {
		acc := block("tailRows", 1, col,
			func(m Mem, v VecVirtual) { VMOVUPS_Z(m, t.k, v) },
			func(m Mem, b, acc VecVirtual) {
				v := s.vec()
				VMOVUPS_Z(m, t.k, v)
				VFMADD231PS(v, b, acc)
			})
		VMOVUPS(acc[0], t.k, Mem{Base: d, Index: col, Scale: 1})
	} else {
		VMOVUPS(last, Mem{Base: d, Index: lastAt, Scale: 1})
	}
	Label("done")
	VZEROUPPER()
	RET()
}
