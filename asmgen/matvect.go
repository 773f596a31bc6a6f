package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// matTVecRows is the number of rows of A that matTVec adds to each vector of
// dst between its load and its store. Eight saves dst traffic, but with rows a
// multiple of 4 KiB apart eight row streams and dst alias to the same sets of
// the 8-way L1; four keep the 1024×1024 product near 50 µs.
const matTVecRows = 4

// matTVecBlocks returns the row-block heights: matTVecRows, then 4 if
// smaller, then 1.
func matTVecBlocks() []int {
	if matTVecRows > 4 {
		return []int{matTVecRows, 4, 1}
	}
	return []int{matTVecRows, 1}
}

// genMatTVec emits matTVec<ISA>(dst, a []float32, lda int, x []float32):
// dst += Aᵀ·x for the len(x)×len(dst) matrix A with row stride lda. Blocks of
// matTVecRows rows (then one) stream through A in memory order, each
// vector of dst loaded once, given one FMA per row in row order and stored: A is read at the
// bandwidth of sequential access whatever its size, where keeping columns in
// registers and striding down the rows thrashes the cache once the rows are
// long (lda a multiple of 4 KiB maps every row to the same cache sets). The
// AVX2 kernel needs len(dst) ≥ 8: its partial last vector is the last full
// vector of the columns, computed from the original dst before the row
// blocks run and stored last; AVX-512 masks its tail.
func genMatTVec(s *isa) {
	TEXT(s.name("matTVec"), NOSPLIT, "func(dst, a []float32, lda int, x []float32)")
	Doc(s.name("matTVec") + " sets dst += Aᵀ·x for the len(x)×len(dst) matrix A with row stride lda.")
	s = ymmWide(s) // ZMM measured 3% slower at 64×64 on Zen 4
	d := load(Param("dst").Base())
	cols := load(Param("dst").Len())
	a := load(Param("a").Base())
	lda := load(Param("lda"))
	SHLQ(U8(2), lda)
	x := load(Param("x").Base())
	rows := load(Param("x").Len())

	// lastVector returns the sum dst[col:] + Σᵣ x[r]·A[r, col:] for the one
	// vector of columns at byte offset col, two rows per step into two sets
	// of accumulators (one FMA chain would wait on its latency).
	lastVector := func(col GPVirtual) VecVirtual {
		acc, odd := s.vec(), s.vec()
		VMOVUPS(Mem{Base: d, Index: col, Scale: 1}, acc)
		s.zero(odd)
		p, xp, cnt := GP64(), GP64(), GP64()
		LEAQ(Mem{Base: a, Index: col, Scale: 1}, p)
		MOVQ(x, xp)
		MOVQ(rows, cnt)
		SHRQ(U8(1), cnt)
		JZ(LabelRef("lastOdd"))
		Label("lastPair")
		b0, b1 := s.vec(), s.vec()
		VBROADCASTSS(Mem{Base: xp}, b0)
		VBROADCASTSS(Mem{Base: xp, Disp: 4}, b1)
		VFMADD231PS(Mem{Base: p}, b0, acc)
		VFMADD231PS(Mem{Base: p, Index: lda, Scale: 1}, b1, odd)
		LEAQ(Mem{Base: p, Index: lda, Scale: 2}, p)
		ADDQ(U32(8), xp)
		DECQ(cnt)
		JNZ(LabelRef("lastPair"))
		Label("lastOdd")
		TESTQ(U32(1), rows)
		JZ(LabelRef("lastSum"))
		b := s.vec()
		VBROADCASTSS(Mem{Base: xp}, b)
		VFMADD231PS(Mem{Base: p}, b, acc)
		Label("lastSum")
		VADDPS(odd, acc, acc)
		return acc
	}

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
		last = lastVector(lastAt)
		Label("lastDone")
	}

	// Blocks of matTVecRows rows: dst[c] += Σᵢ x[r+i]·A[r+i, c] for every
	// whole vector of columns, A streamed row after row.
	ap, xp, left := GP64(), GP64(), GP64()
	MOVQ(a, ap)
	MOVQ(x, xp)
	MOVQ(rows, left)
	nvec := GP64()
	MOVQ(cols, nvec)
	SHRQ(U8(bits.TrailingZeros(uint(s.lanes))), nvec)
	lda3, lda5, lda7 := GP64(), GP64(), GP64()
	LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	LEAQ(Mem{Base: lda, Index: lda, Scale: 4}, lda5)
	LEAQ(Mem{Base: lda3, Index: lda, Scale: 4}, lda7)
	// rowsAt returns the addresses of the rows of the block at p.
	rowsAt := func(p GPVirtual) []Mem {
		return []Mem{
			{Base: p},
			{Base: p, Index: lda, Scale: 1},
			{Base: p, Index: lda, Scale: 2},
			{Base: p, Index: lda3, Scale: 1},
			{Base: p, Index: lda, Scale: 4},
			{Base: p, Index: lda5, Scale: 1},
			{Base: p, Index: lda3, Scale: 2},
			{Base: p, Index: lda7, Scale: 1},
		}
	}
	for _, nr := range matTVecBlocks() {
		pfx := fmt.Sprintf("rows%d", nr)
		Label(pfx)
		CMPQ(left, U32(nr))
		JB(LabelRef(pfx + "End"))
		b := make([]VecVirtual, nr)
		for i := range b {
			b[i] = s.vec()
			VBROADCASTSS(Mem{Base: xp, Disp: 4 * i}, b[i])
		}
		p, dp, cnt := GP64(), GP64(), GP64()
		MOVQ(ap, p)
		MOVQ(d, dp)
		MOVQ(nvec, cnt)
		TESTQ(cnt, cnt)
		JZ(LabelRef(pfx + "Tail"))
		Label(pfx + "Loop")
		v := s.vec()
		VMOVUPS(Mem{Base: dp}, v)
		for i, m := range rowsAt(p)[:nr] {
			VFMADD231PS(m, b[i], v)
		}
		VMOVUPS(v, Mem{Base: dp})
		ADDQ(U32(s.bytes()), p)
		ADDQ(U32(s.bytes()), dp)
		DECQ(cnt)
		JNZ(LabelRef(pfx + "Loop"))
		Label(pfx + "Tail")
		if s.wide {
			TESTQ(rem, rem)
			JZ(LabelRef(pfx + "Next"))
			v := s.vec()
			VMOVUPS_Z(Mem{Base: dp}, t.k, v)
			for i, m := range rowsAt(p)[:nr] {
				w := s.vec()
				VMOVUPS_Z(m, t.k, w)
				VFMADD231PS(w, b[i], v)
			}
			VMOVUPS(v, t.k, Mem{Base: dp})
		}
		Label(pfx + "Next")
		if nr == 1 {
			ADDQ(lda, ap)
		} else {
			LEAQ(Mem{Base: ap, Index: lda, Scale: uint8(nr)}, ap) // nr ≤ 8
		}
		ADDQ(U32(4*nr), xp)
		SUBQ(U32(nr), left)
		JMP(LabelRef(pfx))
		Label(pfx + "End")
	}

	if !s.wide {
		TESTQ(rem, rem)
		JZ(LabelRef("done"))
		VMOVUPS(last, Mem{Base: d, Index: lastAt, Scale: 1})
	}
	Label("done")
	VZEROUPPER()
	RET()
}
