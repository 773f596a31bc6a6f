package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// matTVecRows is the number of rows of A that matTVec adds to each vector of
// dst between its load and its store. Eight saves dst traffic, but with rows a
// multiple of 4 KiB apart eight row streams and dst alias to the same sets of
// the 8-way L1, so four (DESIGN.md).
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
	asm.Doc(s.name("matTVec") + " sets dst += Aᵀ·x for the len(x)×len(dst) matrix A with row stride lda.")
	matTVecBody(s, "done")
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()
}

// matTVecBody emits the body of matTVec for a function whose parameters
// include dst, a, lda and x as matTVec's, then jumps (or falls through) to
// done; x's elements are read after every store the function made before.
func matTVecBody(s *isa, done string) {
	s = evexYMM(s)
	d := load(asm.Param("dst").Base())
	cols := load(asm.Param("dst").Len())
	a := load(asm.Param("a").Base())
	lda := load(asm.Param("lda"))
	asm.SHLQ(U8(2), lda)
	x := load(asm.Param("x").Base())
	rows := load(asm.Param("x").Len())
	asm.CMPQ(cols, U32(narrowVectors(s)*s.lanes))
	asm.JBE(LabelRef("narrow"))

	// lastVector returns the sum dst[col:] + Σᵣ x[r]·A[r, col:] for the one
	// vector of columns at byte offset col, two rows per step into two sets
	// of accumulators (one FMA chain would wait on its latency).
	lastVector := func(col GPVirtual) VecVirtual {
		acc, odd := s.vec(), s.vec()
		asm.VMOVUPS(Mem{Base: d, Index: col, Scale: 1}, acc)
		s.zero(odd)
		p, xp, cnt := asm.GP64(), asm.GP64(), asm.GP64()
		asm.LEAQ(Mem{Base: a, Index: col, Scale: 1}, p)
		asm.MOVQ(x, xp)
		asm.MOVQ(rows, cnt)
		asm.SHRQ(U8(1), cnt)
		asm.JZ(LabelRef("lastOdd"))
		asm.Label("lastPair")
		b0, b1 := s.vec(), s.vec()
		asm.VBROADCASTSS(Mem{Base: xp}, b0)
		asm.VBROADCASTSS(Mem{Base: xp, Disp: 4}, b1)
		asm.VFMADD231PS(Mem{Base: p}, b0, acc)
		asm.VFMADD231PS(Mem{Base: p, Index: lda, Scale: 1}, b1, odd)
		asm.LEAQ(Mem{Base: p, Index: lda, Scale: 2}, p)
		asm.ADDQ(U32(8), xp)
		asm.DECQ(cnt)
		asm.JNZ(LabelRef("lastPair"))
		asm.Label("lastOdd")
		asm.TESTQ(U32(1), rows)
		asm.JZ(LabelRef("lastSum"))
		b := s.vec()
		asm.VBROADCASTSS(Mem{Base: xp}, b)
		asm.VFMADD231PS(Mem{Base: p}, b, acc)
		asm.Label("lastSum")
		asm.VADDPS(odd, acc, acc)
		return acc
	}

	rem := asm.GP64()
	asm.MOVQ(cols, rem)
	asm.ANDQ(U32(s.lanes-1), rem)
	var last VecVirtual
	var lastAt GPVirtual
	var t tail
	if s.evex {
		asm.JZ(LabelRef("maskDone"))
		t = s.tailMask(rem)
		asm.Label("maskDone")
	} else {
		// The last full vector of columns, from the original dst.
		asm.JZ(LabelRef("lastDone"))
		lastAt = asm.GP64()
		asm.MOVQ(cols, lastAt)
		asm.SUBQ(U32(s.lanes), lastAt)
		asm.SHLQ(U8(2), lastAt)
		last = lastVector(lastAt)
		asm.Label("lastDone")
	}

	// Blocks of matTVecRows rows: dst[c] += Σᵢ x[r+i]·A[r+i, c] for every
	// whole vector of columns, A streamed row after row.
	ap, xp, left := asm.GP64(), asm.GP64(), asm.GP64()
	asm.MOVQ(a, ap)
	asm.MOVQ(x, xp)
	asm.MOVQ(rows, left)
	nvec := asm.GP64()
	asm.MOVQ(cols, nvec)
	asm.SHRQ(U8(bits.TrailingZeros(uint(s.lanes))), nvec)
	lda3, lda5, lda7 := asm.GP64(), asm.GP64(), asm.GP64()
	asm.LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	asm.LEAQ(Mem{Base: lda, Index: lda, Scale: 4}, lda5)
	asm.LEAQ(Mem{Base: lda3, Index: lda, Scale: 4}, lda7)
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
		asm.Label(pfx)
		asm.CMPQ(left, U32(nr))
		asm.JB(LabelRef(pfx + "End"))
		b := make([]VecVirtual, nr)
		for i := range b {
			b[i] = s.vec()
			asm.VBROADCASTSS(Mem{Base: xp, Disp: 4 * i}, b[i])
		}
		p, dp, cnt := asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(ap, p)
		asm.MOVQ(d, dp)
		asm.MOVQ(nvec, cnt)
		asm.TESTQ(cnt, cnt)
		asm.JZ(LabelRef(pfx + "Tail"))
		asm.Label(pfx + "Loop")
		v := s.vec()
		asm.VMOVUPS(Mem{Base: dp}, v)
		for i, m := range rowsAt(p)[:nr] {
			asm.VFMADD231PS(m, b[i], v)
		}
		asm.VMOVUPS(v, Mem{Base: dp})
		asm.ADDQ(U32(s.bytes()), p)
		asm.ADDQ(U32(s.bytes()), dp)
		asm.DECQ(cnt)
		asm.JNZ(LabelRef(pfx + "Loop"))
		asm.Label(pfx + "Tail")
		if s.evex {
			asm.TESTQ(rem, rem)
			asm.JZ(LabelRef(pfx + "Next"))
			v := s.vec()
			asm.VMOVUPS_Z(Mem{Base: dp}, t.k, v)
			for i, m := range rowsAt(p)[:nr] {
				w := s.vec()
				asm.VMOVUPS_Z(m, t.k, w)
				asm.VFMADD231PS(w, b[i], v)
			}
			asm.VMOVUPS(v, t.k, Mem{Base: dp})
		}
		asm.Label(pfx + "Next")
		if nr == 1 {
			asm.ADDQ(lda, ap)
		} else {
			asm.LEAQ(Mem{Base: ap, Index: lda, Scale: uint8(nr)}, ap) // nr ≤ 8
		}
		asm.ADDQ(U32(4*nr), xp)
		asm.SUBQ(U32(nr), left)
		asm.JMP(LabelRef(pfx))
		asm.Label(pfx + "End")
	}

	if !s.evex {
		asm.TESTQ(rem, rem)
		asm.JZ(LabelRef(done))
		asm.VMOVUPS(last, Mem{Base: d, Index: lastAt, Scale: 1})
	}
	asm.JMP(LabelRef(done))

	asm.Label("narrow")
	forEachPanel(s, "narrow", cols, 2, func(p *panel) {
		p.load(d)
		ap, xp := asm.GP64(), asm.GP64()
		asm.MOVQ(a, ap)
		asm.MOVQ(x, xp)
		p.addRows(ap, lda, xp, rows)
		p.store(d)
		asm.JMP(LabelRef(done))
	})
}

// narrowVectors is the most vectors of columns a panel keeps in registers
// (s as given to matTVecBody, YMM lanes): 8 of AVX2's 16 registers, 16 of
// AVX-512's 32.
func narrowVectors(s *isa) int {
	if s.evex {
		return 16
	}
	return 8
}

// panel is the columns of a matrix with at most narrowVectors(s) vectors of
// them, held in accumulators while the rows stream past: each row is one
// broadcast weight and one FMA per vector, and dst is loaded and stored once,
// where matTVec's row blocks load and store it once per block and wait on the
// FMA latency in between. With few vectors, two sets of accumulators take
// the even and the odd rows, so that the FMA chains overlap.
type panel struct {
	s      *isa
	prefix string         // of its labels
	acc    [][]VecVirtual // acc[set][vector]
	last   GPVirtual      // AVX2: the last vector's byte offset, 4·cols − 32, overlapping the one before
	k      OpmaskVirtual  // AVX-512: the lanes of the last vector
}

// forEachPanel emits, for every vector count v of 1..narrowVectors(s), code
// labelled prefix<v> that body fills for a panel of v vectors, after a jump
// to the one for ⌈cols/lanes⌉ vectors (1 ≤ cols ≤ narrowVectors·lanes; AVX2
// needs cols ≥ lanes). Each body must end with a jump. The panel has two
// sets of accumulators where they and the reserve vector registers the body
// needs besides fit in the register file.
func forEachPanel(s *isa, prefix string, cols GPVirtual, reserve int, body func(p *panel)) {
	maxV := narrowVectors(s)
	nv := asm.GP64()
	asm.LEAQ(Mem{Base: cols, Disp: s.lanes - 1}, nv)
	asm.SHRQ(U8(bits.TrailingZeros(uint(s.lanes))), nv)
	for v := 1; v < maxV; v++ {
		asm.CMPQ(nv, U32(v))
		asm.JE(LabelRef(fmt.Sprintf("%s%d", prefix, v)))
	}
	for v := maxV; v >= 1; v-- {
		asm.Label(fmt.Sprintf("%s%d", prefix, v))
		p := &panel{s: s, prefix: prefix}
		if s.evex {
			p.k = s.lastMask(cols)
		} else {
			off := asm.GP64()
			asm.MOVQ(cols, off)
			asm.SHLQ(U8(2), off)
			asm.SUBQ(U32(s.bytes()), off)
			p.last = off
		}
		sets := 1
		if 2*v+reserve <= 2*maxV {
			sets = 2
		}
		p.acc = make([][]VecVirtual, sets)
		for i := range p.acc {
			p.acc[i] = make([]VecVirtual, v)
			for j := range p.acc[i] {
				p.acc[i][j] = s.vec()
			}
		}
		body(p)
	}
}

// at returns the address of vector j of the panel in the row at base.
func (p *panel) at(base GPVirtual, j int) Mem {
	if j == len(p.acc[0])-1 && !p.s.evex {
		return Mem{Base: base, Index: p.last, Scale: 1}
	}
	return Mem{Base: base, Disp: j * p.s.bytes()}
}

// fma emits acc[set] += b·(the panel of the row at base).
func (p *panel) fma(base GPVirtual, b VecVirtual, set int) {
	for j, acc := range p.acc[set] {
		if j == len(p.acc[set])-1 && p.s.evex {
			asm.VFMADD231PS(p.at(base, j), b, p.k, acc) // merge-masked: the other lanes stay 0
			continue
		}
		asm.VFMADD231PS(p.at(base, j), b, acc)
	}
}

// zero clears the accumulators.
func (p *panel) zero() {
	for _, set := range p.acc {
		for _, acc := range set {
			p.s.zero(acc)
		}
	}
}

// load sets the first set of accumulators to the panel of dst and clears the
// others.
func (p *panel) load(dst GPVirtual) {
	for j, acc := range p.acc[0] {
		if j == len(p.acc[0])-1 && p.s.evex {
			asm.VMOVUPS_Z(p.at(dst, j), p.k, acc)
			continue
		}
		asm.VMOVUPS(p.at(dst, j), acc)
	}
	for _, set := range p.acc[1:] {
		for _, acc := range set {
			p.s.zero(acc)
		}
	}
}

// merge adds the other sets into the first.
func (p *panel) merge() {
	for _, set := range p.acc[1:] {
		for j, acc := range set {
			asm.VADDPS(acc, p.acc[0][j], p.acc[0][j])
		}
	}
}

// store merges the sets and stores the first to the panel of dst. The AVX2
// last vector overlaps the one before it, with the same sums in the shared
// lanes, so the order of the stores does not matter.
func (p *panel) store(dst GPVirtual) {
	p.merge()
	for j, acc := range p.acc[0] {
		if j == len(p.acc[0])-1 && p.s.evex {
			asm.VMOVUPS(acc, p.k, p.at(dst, j))
			continue
		}
		asm.VMOVUPS(acc, p.at(dst, j))
	}
}

// addRows emits acc += Σᵣ x[r]·(the panel of row r) for the rows rows of A
// from ap (row stride lda bytes) with their weights from xp; ap, xp and rows
// are consumed. With two sets, the even rows go to the first and the odd rows
// to the second.
func (p *panel) addRows(ap, lda, xp, rows GPVirtual) {
	s := p.s
	if len(p.acc) == 1 {
		p.rowLoop("Row", ap, lda, xp, rows)
		return
	}
	cnt := asm.GP64()
	asm.MOVQ(rows, cnt)
	asm.SHRQ(U8(1), cnt)
	asm.JZ(LabelRef(p.label("Odd")))
	asm.Label(p.label("Pair"))
	b0, b1 := s.vec(), s.vec()
	asm.VBROADCASTSS(Mem{Base: xp}, b0)
	asm.VBROADCASTSS(Mem{Base: xp, Disp: 4}, b1)
	p.fma(ap, b0, 0)
	asm.ADDQ(lda, ap)
	p.fma(ap, b1, 1)
	asm.ADDQ(lda, ap)
	asm.ADDQ(U32(8), xp)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(p.label("Pair")))
	asm.Label(p.label("Odd"))
	asm.TESTQ(U32(1), rows)
	asm.JZ(LabelRef(p.label("End")))
	b := s.vec()
	asm.VBROADCASTSS(Mem{Base: xp}, b)
	p.fma(ap, b, 0)
	asm.Label(p.label("End"))
}

// rowLoop emits a loop, labelled label, adding the cnt ≥ 1 rows at ap
// (stride lda bytes) with the weights at xp to the first set of
// accumulators; ap, xp and cnt are consumed.
func (p *panel) rowLoop(label string, ap, lda, xp, cnt GPVirtual) {
	asm.Label(p.label(label))
	b := p.s.vec()
	asm.VBROADCASTSS(Mem{Base: xp}, b)
	p.fma(ap, b, 0)
	asm.ADDQ(lda, ap)
	asm.ADDQ(U32(4), xp)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(p.label(label)))
}

// label returns a label unique to the panel's vector count.
func (p *panel) label(what string) string {
	return fmt.Sprintf("%s%d%s", p.prefix, len(p.acc[0]), what)
}
