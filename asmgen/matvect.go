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
	matTVecBody(s, "done")
	Label("done")
	VZEROUPPER()
	RET()
}

// matTVecBody emits the body of matTVec for a function whose parameters
// include dst, a, lda and x as matTVec's, then jumps (or falls through) to
// done; x's elements are read after every store the function made before.
func matTVecBody(s *isa, done string) {
	s = ymmWide(s) // ZMM measured 3% slower at 64×64 on Zen 4
	d := load(Param("dst").Base())
	cols := load(Param("dst").Len())
	a := load(Param("a").Base())
	lda := load(Param("lda"))
	SHLQ(U8(2), lda)
	x := load(Param("x").Base())
	rows := load(Param("x").Len())
	CMPQ(cols, U32(narrowVectors(s)*s.lanes))
	JBE(LabelRef("narrow"))

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
		JZ(LabelRef(done))
		VMOVUPS(last, Mem{Base: d, Index: lastAt, Scale: 1})
	}
	JMP(LabelRef(done))

	Label("narrow")
	forEachPanel(s, "narrow", cols, 2, func(p *panel) {
		p.load(d)
		ap, xp := GP64(), GP64()
		MOVQ(a, ap)
		MOVQ(x, xp)
		p.addRows(ap, lda, xp, rows)
		p.store(d)
		JMP(LabelRef(done))
	})
}

// narrowVectors is the most vectors of columns a panel keeps in registers
// (s as given to matTVecBody, YMM lanes): 8 of AVX2's 16 registers, 16 of
// AVX-512's 32.
func narrowVectors(s *isa) int {
	if s.wide {
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
	nv := GP64()
	LEAQ(Mem{Base: cols, Disp: s.lanes - 1}, nv)
	SHRQ(U8(bits.TrailingZeros(uint(s.lanes))), nv)
	for v := 1; v < maxV; v++ {
		CMPQ(nv, U32(v))
		JE(LabelRef(fmt.Sprintf("%s%d", prefix, v)))
	}
	for v := maxV; v >= 1; v-- {
		Label(fmt.Sprintf("%s%d", prefix, v))
		p := &panel{s: s, prefix: prefix}
		if s.wide {
			p.k = s.lastMask(cols)
		} else {
			off := GP64()
			MOVQ(cols, off)
			SHLQ(U8(2), off)
			SUBQ(U32(s.bytes()), off)
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
	if j == len(p.acc[0])-1 && !p.s.wide {
		return Mem{Base: base, Index: p.last, Scale: 1}
	}
	return Mem{Base: base, Disp: j * p.s.bytes()}
}

// fma emits acc[set] += b·(the panel of the row at base).
func (p *panel) fma(base GPVirtual, b VecVirtual, set int) {
	for j, acc := range p.acc[set] {
		if j == len(p.acc[set])-1 && p.s.wide {
			VFMADD231PS(p.at(base, j), b, p.k, acc) // merge-masked: the other lanes stay 0
			continue
		}
		VFMADD231PS(p.at(base, j), b, acc)
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
		if j == len(p.acc[0])-1 && p.s.wide {
			VMOVUPS_Z(p.at(dst, j), p.k, acc)
			continue
		}
		VMOVUPS(p.at(dst, j), acc)
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
			VADDPS(acc, p.acc[0][j], p.acc[0][j])
		}
	}
}

// store merges the sets and stores the first to the panel of dst. The AVX2
// last vector overlaps the one before it, with the same sums in the shared
// lanes, so the order of the stores does not matter.
func (p *panel) store(dst GPVirtual) {
	p.merge()
	for j, acc := range p.acc[0] {
		if j == len(p.acc[0])-1 && p.s.wide {
			VMOVUPS(acc, p.k, p.at(dst, j))
			continue
		}
		VMOVUPS(acc, p.at(dst, j))
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
	cnt := GP64()
	MOVQ(rows, cnt)
	SHRQ(U8(1), cnt)
	JZ(LabelRef(p.label("Odd")))
	Label(p.label("Pair"))
	b0, b1 := s.vec(), s.vec()
	VBROADCASTSS(Mem{Base: xp}, b0)
	VBROADCASTSS(Mem{Base: xp, Disp: 4}, b1)
	p.fma(ap, b0, 0)
	ADDQ(lda, ap)
	p.fma(ap, b1, 1)
	ADDQ(lda, ap)
	ADDQ(U32(8), xp)
	DECQ(cnt)
	JNZ(LabelRef(p.label("Pair")))
	Label(p.label("Odd"))
	TESTQ(U32(1), rows)
	JZ(LabelRef(p.label("End")))
	b := s.vec()
	VBROADCASTSS(Mem{Base: xp}, b)
	p.fma(ap, b, 0)
	Label(p.label("End"))
}

// rowLoop emits a loop, labelled label, adding the cnt ≥ 1 rows at ap
// (stride lda bytes) with the weights at xp to the first set of
// accumulators; ap, xp and cnt are consumed.
func (p *panel) rowLoop(label string, ap, lda, xp, cnt GPVirtual) {
	Label(p.label(label))
	b := p.s.vec()
	VBROADCASTSS(Mem{Base: xp}, b)
	p.fma(ap, b, 0)
	ADDQ(lda, ap)
	ADDQ(U32(4), xp)
	DECQ(cnt)
	JNZ(LabelRef(p.label(label)))
}

// label returns a label unique to the panel's vector count.
func (p *panel) label(what string) string {
	return fmt.Sprintf("%s%d%s", p.prefix, len(p.acc[0]), what)
}
