package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() {
	register("matvec", genMatVecFamily)
	registerTrial("matvec", genMatVecTrials)
}

// genMatVecFamily emits the kernels the route table can choose
// (kernels/dispatch_amd64.go): matVec, the far matVec that reads four chunks
// of rows as streams with a prefetch 1 KiB ahead (matVecSplit4PF1K<ISA>),
// matTVec and matVecBatch.
func genMatVecFamily() {
	for _, s := range isas {
		genMatVec(s)
	}
	for _, s := range isas {
		for _, l := range prefetchLevels {
			genMatVecSplit(s, 1<<10, l)
		}
	}
	for _, s := range dualISAs {
		genMatTVec(s)
	}
	for _, s := range dualISAs {
		genMatVecBatch(s)
	}
}

// genMatVecTrials emits the far matVec variants no CPU class takes: the rows
// in address order (one stream) without and with a prefetch 4 KiB ahead, and
// the four-stream kernel without prefetch and with it 4 KiB ahead.
func genMatVecTrials() {
	for _, s := range isas {
		genMatVecSeq(s, 0)
		genMatVecSeq(s, 4<<10)
		genMatVecSplit(s, 0, pfL1)
		genMatVecSplit(s, 4<<10, pfL1)
	}
}

// matVecRows is the number of rows of A that share each load of x.
const matVecRows = 4

// matVecPrefetch makes matVec prefetch (PREFETCHT1, into L2) the rows
// matVecPrefetchBlocks blocks ahead of the block it reads, at the column it
// reads, when A spans at least matVecPrefetchShortBytes (it is not in L2) and
// its rows are shorter than matVecPrefetchCols, or A spans at least
// matVecPrefetchBytes (it streams from memory): four short rows read side by
// side end before the hardware prefetcher ramps up, and from memory the
// prefetches keep more lines in flight; long rows in L3 run slower with them
// (DESIGN.md).
const (
	matVecPrefetch           = true
	matVecPrefetchCols       = 1024
	matVecPrefetchBytes      = 32 << 20
	matVecPrefetchShortBytes = 1 << 20
	matVecPrefetchBlocks     = 4
)

// genMatVec emits matVec<ISA>(dst, a []float32, lda int, x []float32): dst = A·x
// for the len(dst)×len(x) matrix A with row stride lda. Rows go four at a time,
// each with two accumulators, so one load of x feeds four FMA chains; the
// remaining rows go one at a time.
func genMatVec(s *isa) {
	TEXT(s.name("matVec"), NOSPLIT, "func(dst, a []float32, lda int, x []float32)")
	asm.Doc(s.name("matVec") + " sets dst = A·x for the len(dst)×len(x) matrix A with row stride lda.")
	dst := load(asm.Param("dst").Base())
	rows := load(asm.Param("dst").Len())
	a := load(asm.Param("a").Base())
	lda := load(asm.Param("lda"))
	asm.SHLQ(U8(2), lda) // row stride in bytes
	x0 := load(asm.Param("x").Base())
	cols := load(asm.Param("x").Len())

	if !s.evex {
		asm.CMPQ(cols, U32(s.lanes))
		asm.JB(LabelRef("scalarRows"))
	}

	// Tail mask for the last cols%lanes columns, built once.
	rem := asm.GP64()
	asm.MOVQ(cols, rem)
	asm.ANDQ(U32(s.lanes-1), rem)
	var t tail
	asm.JZ(LabelRef("maskDone"))
	t = s.tailMask(rem)
	asm.Label("maskDone")

	// Prefetch when the rows are shorter than lim columns: none while A fits
	// in L2, matVecPrefetchCols up to the L3 size, any length beyond.
	lim, big, huge := asm.GP64(), asm.GP64(), asm.GP64()
	if matVecPrefetch {
		asm.MOVQ(rows, big)
		asm.IMULQ(lda, big)
		asm.XORQ(lim, lim)
		asm.MOVQ(U32(matVecPrefetchCols), huge)
		asm.CMPQ(big, U32(matVecPrefetchShortBytes))
		asm.CMOVQCC(huge, lim)
		asm.MOVQ(U64(1<<62), huge)
		asm.CMPQ(big, U32(matVecPrefetchBytes))
		asm.CMOVQCC(huge, lim)
	}

	if s.evex {
		matVecNarrow(evexYMM(s), dst, rows, a, lda, x0, cols, "rowBlock")
	}

	// Blocks of four rows.
	asm.Label("rowBlock")
	asm.CMPQ(rows, U32(matVecRows))
	asm.JB(LabelRef("rowSingle"))
	{
		r := [matVecRows]GPVirtual{a, asm.GP64(), asm.GP64(), asm.GP64()}
		for i := 1; i < matVecRows; i++ {
			asm.LEAQ(Mem{Base: r[i-1], Index: lda, Scale: 1}, r[i])
		}
		acc := [matVecRows][2]VecVirtual{}
		for i := range acc {
			for j := range acc[i] {
				acc[i][j] = s.vec()
				s.zero(acc[i][j])
			}
		}
		x, n, off, cnt := x0, asm.GP64(), asm.GP64(), asm.GP64()
		asm.XORQ(off, off) // byte offset into the rows and x
		// pf walks the first row of the next block at the column being read;
		// the next block's rows are pf, pf+lda, pf+2·lda, pf+3·lda.
		pf, lda3 := asm.GP64(), asm.GP64()
		if matVecPrefetch {
			asm.LEAQ(Mem{Base: r[matVecRows-1], Index: lda, Scale: 1}, pf)
			for k := 1; k < matVecPrefetchBlocks; k++ {
				asm.LEAQ(Mem{Base: pf, Index: lda, Scale: 4}, pf)
			}
			asm.LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
		}

		// Count-down loop over pairs of vectors, then at most one vector.
		asm.MOVQ(cols, cnt)
		asm.SHRQ(U8(bits.TrailingZeros(uint(2*s.lanes))), cnt)
		asm.JZ(LabelRef("blockOne"))
		pair := func() {
			for j := 0; j < 2; j++ {
				xv := s.vec()
				asm.VMOVUPS(Mem{Base: x, Index: off, Scale: 1, Disp: j * s.bytes()}, xv)
				for i := range r {
					asm.VFMADD231PS(Mem{Base: r[i], Index: off, Scale: 1, Disp: j * s.bytes()}, xv, acc[i][j])
				}
			}
			asm.ADDQ(U32(2*s.bytes()), off)
			asm.DECQ(cnt)
		}
		if matVecPrefetch {
			asm.CMPQ(cols, lim)
			asm.JAE(LabelRef("blockPair"))
			asm.Label("blockPairPrefetch")
			for d := 0; d < 2*s.bytes(); d += 64 {
				matVecPF(Mem{Base: pf, Disp: d})
				matVecPF(Mem{Base: pf, Index: lda, Scale: 1, Disp: d})
				matVecPF(Mem{Base: pf, Index: lda, Scale: 2, Disp: d})
				matVecPF(Mem{Base: pf, Index: lda3, Scale: 1, Disp: d})
			}
			asm.ADDQ(U32(2*s.bytes()), pf)
			pair()
			asm.JNZ(LabelRef("blockPairPrefetch"))
			asm.JMP(LabelRef("blockOne"))
		}
		asm.Label("blockPair")
		pair()
		asm.JNZ(LabelRef("blockPair"))

		asm.Label("blockOne")
		asm.MOVQ(cols, n)
		asm.ANDQ(U32(2*s.lanes-1), n)
		asm.TESTQ(U32(s.lanes), n)
		asm.JZ(LabelRef("blockTail"))
		xv := s.vec()
		asm.VMOVUPS(Mem{Base: x, Index: off, Scale: 1}, xv)
		for i := range r {
			asm.VFMADD231PS(Mem{Base: r[i], Index: off, Scale: 1}, xv, acc[i][0])
		}
		asm.ADDQ(U32(s.bytes()), off)
		asm.SUBQ(U32(s.lanes), n)

		asm.Label("blockTail")
		asm.TESTQ(n, n)
		asm.JZ(LabelRef("blockReduce"))
		toff := s.tailOffset(off, n)
		xt := s.vec()
		s.loadTailAt(Mem{Base: x, Index: toff, Scale: 1}, t, xt)
		for i := range r {
			v := s.vec()
			s.loadTailAt(Mem{Base: r[i], Index: toff, Scale: 1}, t, v)
			asm.VFMADD231PS(v, xt, acc[i][1])
		}

		asm.Label("blockReduce")
		for i := range acc {
			asm.VADDPS(acc[i][1], acc[i][0], acc[i][0])
		}
		sums := s.hsum4(acc[0][0], acc[1][0], acc[2][0], acc[3][0])
		asm.VMOVUPS(sums, Mem{Base: dst})
		asm.ADDQ(U32(4*matVecRows), dst)
		asm.LEAQ(Mem{Base: r[matVecRows-1], Index: lda, Scale: 1}, a)
		asm.SUBQ(U32(matVecRows), rows)
		asm.JMP(LabelRef("rowBlock"))
	}

	// Remaining rows, one at a time.
	asm.Label("rowSingle")
	asm.TESTQ(rows, rows)
	asm.JZ(LabelRef("done"))
	{
		acc := [2]VecVirtual{s.vec(), s.vec()}
		s.zero(acc[0])
		s.zero(acc[1])
		n, off := asm.GP64(), asm.GP64()
		asm.MOVQ(cols, n)
		asm.XORQ(off, off)

		asm.Label("singleVector")
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef("singleTail"))
		xv := s.vec()
		asm.VMOVUPS(Mem{Base: x0, Index: off, Scale: 1}, xv)
		asm.VFMADD231PS(Mem{Base: a, Index: off, Scale: 1}, xv, acc[0])
		asm.ADDQ(U32(s.bytes()), off)
		asm.SUBQ(U32(s.lanes), n)
		asm.JMP(LabelRef("singleVector"))

		asm.Label("singleTail")
		asm.TESTQ(n, n)
		asm.JZ(LabelRef("singleReduce"))
		toff := s.tailOffset(off, n)
		xt, v := s.vec(), s.vec()
		s.loadTailAt(Mem{Base: x0, Index: toff, Scale: 1}, t, xt)
		s.loadTailAt(Mem{Base: a, Index: toff, Scale: 1}, t, v)
		asm.VFMADD231PS(v, xt, acc[1])

		asm.Label("singleReduce")
		asm.VADDPS(acc[1], acc[0], acc[0])
		asm.VMOVSS(s.hsum(acc[0]), Mem{Base: dst})
		asm.ADDQ(U32(4), dst)
		asm.ADDQ(lda, a)
		asm.DECQ(rows)
		asm.JMP(LabelRef("rowSingle"))
	}

	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()

	if !s.evex {
		// Fewer columns than a vector: one scalar dot product per row.
		asm.Label("scalarRows")
		asm.TESTQ(rows, rows)
		asm.JZ(LabelRef("scalarEnd"))
		p, q, k := asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(a, p)
		asm.MOVQ(x0, q)
		asm.MOVQ(cols, k)
		asm.VMOVSS(scalarDot(p, q, k), Mem{Base: dst})
		asm.ADDQ(U32(4), dst)
		asm.ADDQ(lda, a)
		asm.DECQ(rows)
		asm.JMP(LabelRef("scalarRows"))
		asm.Label("scalarEnd")
		asm.VZEROUPPER()
		asm.RET()
	}
}

func matVecPF(m Mem) { asm.PREFETCHT1(m) }

// matVecNarrowRows is the number of rows matVecNarrow scores per block.
const matVecNarrowRows = 8

// matVecNarrow emits, for AVX-512 (s in YMM vectors) and rows of at most
// narrowVectors(avx2)·8 = 64 columns, matVec's rows in blocks of eight with x
// held in registers: each row is its V loads of A, FMAs into two
// accumulators, and no reload of x, where the four-row blocks load x once per
// four rows and reduce four rows at a time. It advances dst, a and rows past
// the blocks and jumps to next, the four-row code, for the rest (and for
// wider rows at once).
func matVecNarrow(s *isa, dst, rows, a, lda, x, cols GPVirtual, next string) {
	const maxV = 8
	asm.CMPQ(cols, U32(maxV*s.lanes))
	asm.JA(LabelRef(next))
	nv := asm.GP64()
	asm.LEAQ(Mem{Base: cols, Disp: s.lanes - 1}, nv)
	asm.SHRQ(U8(3), nv)
	for v := 1; v < maxV; v++ {
		asm.CMPQ(nv, U32(v))
		asm.JE(LabelRef(fmt.Sprintf("mvNarrow%d", v)))
	}
	for v := maxV; v >= 1; v-- {
		lbl := func(what string) string { return fmt.Sprintf("mvNarrow%d%s", v, what) }
		asm.Label(lbl(""))
		// x in registers, its last vector masked.
		k := s.lastMask(cols)
		xv := make([]VecVirtual, v)
		for j := range xv {
			xv[j] = s.vec()
			if j == v-1 {
				asm.VMOVUPS_Z(Mem{Base: x, Disp: 32 * j}, k, xv[j])
			} else {
				asm.VMOVUPS(Mem{Base: x, Disp: 32 * j}, xv[j])
			}
		}
		sets := 1
		if v > 1 {
			sets = 2
		}
		asm.Label(lbl("Block"))
		asm.CMPQ(rows, U32(matVecNarrowRows))
		asm.JB(LabelRef(next))
		acc := make([][]VecVirtual, matVecNarrowRows)
		p := asm.GP64()
		asm.MOVQ(a, p)
		for i := range acc {
			acc[i] = make([]VecVirtual, sets)
			for j := range acc[i] {
				acc[i][j] = s.vec()
			}
			for j := 0; j < v; j++ {
				m := Mem{Base: p, Disp: 32 * j}
				switch {
				case j < sets:
					if j == v-1 {
						asm.VMULPS_Z(m, xv[j], k, acc[i][j]) // zero-masked: the other lanes 0, their loads suppressed
					} else {
						asm.VMULPS(m, xv[j], acc[i][j])
					}
				case j == v-1:
					asm.VFMADD231PS(m, xv[j], k, acc[i][j%sets])
				default:
					asm.VFMADD231PS(m, xv[j], acc[i][j%sets])
				}
			}
			if i < matVecNarrowRows-1 {
				asm.ADDQ(lda, p)
			}
		}
		for i := range acc {
			if sets == 2 {
				asm.VADDPS(acc[i][1], acc[i][0], acc[i][0])
			}
		}
		for h := 0; h < matVecNarrowRows; h += 4 {
			asm.VMOVUPS(s.hsum4(acc[h][0], acc[h+1][0], acc[h+2][0], acc[h+3][0]), Mem{Base: dst, Disp: 4 * h})
		}
		asm.ADDQ(U32(4*matVecNarrowRows), dst)
		asm.LEAQ(Mem{Base: p, Index: lda, Scale: 1}, a)
		asm.SUBQ(U32(matVecNarrowRows), rows)
		asm.JMP(LabelRef(lbl("Block")))
	}
}

// matVecSeqName returns the name of the sequential matVec variant with
// prefetch distance pf bytes on s.
func matVecSeqName(s *isa, pf int) string { return matVecPFName(s, "matVecSeq", pf, pfL1) }

// matVecPFName names the variant of kernel base with prefetch distance pf
// bytes on s: base<ISA> without prefetch, basePF<d>K<ISA> with d KiB.
func matVecPFName(s *isa, base string, pf int, lvl pfLevel) string {
	if pf == 0 {
		return s.name(base)
	}
	return s.name(fmt.Sprintf("%sPF%dK%s", base, pf>>10, lvl.suffix()))
}

// genMatVecSeq emits matVecSeq<ISA>(dst, a []float32, lda int, x []float32),
// dst = A·x like matVec, for an A that streams from memory: the rows are read
// one after another, in address order, so that the hardware prefetcher sees
// one stream, rather than four rows side by side (four streams, each a
// quarter of the rate). Each row is a dot product with x (in L1) in four
// accumulators; four rows' sums are reduced together. With pf > 0 every line
// read in a block of four rows is also prefetched (PREFETCHT0) pf bytes
// further on, while the rows after the block span at least pf bytes (no
// prefetch beyond A). AVX2 needs len(x) ≥ 8 (the tail reloads the last
// full vector).
func genMatVecSeq(s *isa, pf int) {
	name := matVecSeqName(s, pf)
	TEXT(name, NOSPLIT, "func(dst, a []float32, lda int, x []float32)")
	asm.Doc(name + " sets dst = A·x for the len(dst)×len(x) matrix A with row stride lda, reading A in address order.")
	dst := load(asm.Param("dst").Base())
	rows := load(asm.Param("dst").Len())
	a := load(asm.Param("a").Base())
	lda := load(asm.Param("lda"))
	asm.SHLQ(U8(2), lda) // row stride in bytes
	x0 := load(asm.Param("x").Base())
	cols := load(asm.Param("x").Len())

	rem := asm.GP64()
	asm.MOVQ(cols, rem)
	asm.ANDQ(U32(s.lanes-1), rem)
	var t tail
	asm.JZ(LabelRef("maskDone"))
	t = s.tailMask(rem)
	asm.Label("maskDone")

	var pfOff GPVirtual
	if pf > 0 {
		pfOff = asm.GP64()
	}
	asm.Label("rowBlock")
	asm.CMPQ(rows, U32(4))
	asm.JB(LabelRef("rowSingle"))
	{
		if pf > 0 {
			// pfOff = pf while the rows after this block span at least pf
			// bytes, else 0: nothing is prefetched past A's last row.
			ahead, d := asm.GP64(), asm.GP64()
			asm.LEAQ(Mem{Base: rows, Disp: -4}, ahead)
			asm.IMULQ(lda, ahead)
			asm.XORQ(pfOff, pfOff)
			asm.MOVQ(U32(pf), d)
			asm.CMPQ(ahead, d)
			asm.CMOVQCC(d, pfOff)
		}
		acc := make([]VecVirtual, 4)
		p := asm.GP64()
		asm.MOVQ(a, p)
		for i := range acc {
			acc[i] = s.vec()
			seqRowDot(s, acc[i], p, x0, cols, rem, t, pfOff, fmt.Sprintf("r%d", i))
			asm.ADDQ(lda, p)
		}
		asm.VMOVUPS(s.hsum4(acc[0], acc[1], acc[2], acc[3]), Mem{Base: dst})
		asm.ADDQ(U32(16), dst)
		asm.MOVQ(p, a)
		asm.SUBQ(U32(4), rows)
		asm.JMP(LabelRef("rowBlock"))
	}

	asm.Label("rowSingle")
	asm.TESTQ(rows, rows)
	asm.JZ(LabelRef("done"))
	{
		acc := s.vec()
		seqRowDot(s, acc, a, x0, cols, rem, t, nil, "s")
		asm.VMOVSS(s.hsum(acc), Mem{Base: dst})
		asm.ADDQ(U32(4), dst)
		asm.ADDQ(lda, a)
		asm.DECQ(rows)
		asm.JMP(LabelRef("rowSingle"))
	}

	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()
}

// seqRowDot sets acc to the lane-wise partial sums of the dot product of the
// row at p with x (cols elements, rem = cols mod lanes, t its tail mask): four
// accumulators while four vectors remain, then one vector at a time, then the
// tail. If pfOff is not nil, every line read in the four-vector loop is also
// prefetched pfOff bytes further on. id tells the labels apart.
func seqRowDot(s *isa, acc VecVirtual, p, x, cols, rem GPVirtual, t tail, pfOff GPVirtual, id string) {
	rp, hp, cnt := asm.GP64(), asm.GP64(), asm.GP64()
	asm.MOVQ(p, rp)
	asm.MOVQ(x, hp)
	acs := []VecVirtual{acc, s.vec(), s.vec(), s.vec()}
	for _, v := range acs {
		s.zero(v)
	}
	four, ones, one, tl, done := "seq"+id+"Four", "seq"+id+"Ones", "seq"+id+"One", "seq"+id+"Tail", "seq"+id+"Done"
	shift := uint8(bits.TrailingZeros(uint(s.lanes)))
	asm.MOVQ(cols, cnt)
	asm.SHRQ(U8(shift+2), cnt)
	asm.JZ(LabelRef(ones))
	asm.Label(four)
	for j, v := range acs {
		xv := s.vec()
		asm.VMOVUPS(Mem{Base: hp, Disp: s.bytes() * j}, xv)
		asm.VFMADD231PS(Mem{Base: rp, Disp: s.bytes() * j}, xv, v)
	}
	if pfOff != nil {
		for d := 0; d < 4*s.bytes(); d += 64 {
			asm.PREFETCHT0(Mem{Base: rp, Index: pfOff, Scale: 1, Disp: d})
		}
	}
	asm.ADDQ(U32(4*s.bytes()), rp)
	asm.ADDQ(U32(4*s.bytes()), hp)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(four))
	asm.Label(ones)
	asm.MOVQ(cols, cnt)
	asm.SHRQ(U8(shift), cnt)
	asm.ANDQ(U32(3), cnt)
	asm.JZ(LabelRef(tl))
	asm.Label(one)
	xv := s.vec()
	asm.VMOVUPS(Mem{Base: hp}, xv)
	asm.VFMADD231PS(Mem{Base: rp}, xv, acs[1])
	asm.ADDQ(U32(s.bytes()), rp)
	asm.ADDQ(U32(s.bytes()), hp)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(one))
	asm.Label(tl)
	asm.TESTQ(rem, rem)
	asm.JZ(LabelRef(done))
	{
		xt, v := s.vec(), s.vec()
		s.loadTail(hp, rem, t, xt)
		s.loadTail(rp, rem, t, v)
		asm.VFMADD231PS(v, xt, acs[2])
	}
	asm.Label(done)
	asm.VADDPS(acs[1], acs[0], acs[0])
	asm.VADDPS(acs[3], acs[2], acs[2])
	asm.VADDPS(acs[2], acs[0], acs[0])
}

// matVecSplitName returns the name of the split matVec variant with prefetch
// distance pf bytes into level lvl on s.
func matVecSplitName(s *isa, pf int, lvl pfLevel) string {
	return matVecPFName(s, "matVecSplit4", pf, lvl)
}

// genMatVecSplit emits matVecSplit4<ISA>(dst, a []float32, lda int, x
// []float32), dst = A·x like matVec, for an A that streams from memory: the
// rows are split into four chunks of q = len(dst)/4 consecutive rows, and the
// chunks are read side by side, row i of each at a time (one load of x for
// four FMAs), so that A is read as four streams, each in address order, in
// four distant places: each keeps a hardware prefetcher stream of its own,
// where matVec's four adjacent rows share their pages. The last len(dst) mod
// 4 rows go one at a time. With pf > 0 every line read is also prefetched
// (PREFETCHT0; PREFETCHT1 for lvl pfL2, matVecSplit4PF<pf>KL2<ISA>) pf bytes
// further on in its chunk, while at least pf bytes of
// rows follow in the chunk (no prefetch beyond A). AVX2 needs len(x) ≥ 8
// (the tail reloads the last full vector).
func genMatVecSplit(s *isa, pf int, lvl pfLevel) {
	name := matVecSplitName(s, pf, lvl)
	TEXT(name, NOSPLIT, "func(dst, a []float32, lda int, x []float32)")
	asm.Doc(name + " sets dst = A·x for the len(dst)×len(x) matrix A with row stride lda, reading A as four streams.")
	ldaMem, qbMem := asm.AllocLocal(8), asm.AllocLocal(8)
	dst := load(asm.Param("dst").Base())
	rows := load(asm.Param("dst").Len())
	a := load(asm.Param("a").Base())
	{
		t := load(asm.Param("lda"))
		asm.SHLQ(U8(2), t)
		asm.MOVQ(t, ldaMem)
	}
	x0 := load(asm.Param("x").Base())
	cols := load(asm.Param("x").Len())

	var t tail
	{
		rem := asm.GP64()
		asm.MOVQ(cols, rem)
		asm.ANDQ(U32(s.lanes-1), rem)
		asm.JZ(LabelRef("maskDone"))
		t = s.tailMask(rem)
		asm.Label("maskDone")
	}

	// q = rows/4 in rows (the block count), cs = q·lda bytes between chunks,
	// q·4 bytes between their dst entries (qbMem).
	q, cs, cs3 := asm.GP64(), asm.GP64(), asm.GP64()
	asm.MOVQ(rows, q)
	asm.SHRQ(U8(2), q)
	{
		qb := asm.GP64()
		asm.MOVQ(q, qb)
		asm.SHLQ(U8(2), qb)
		asm.MOVQ(qb, qbMem)
	}
	asm.MOVQ(q, cs)
	asm.IMULQ(ldaMem, cs)
	asm.LEAQ(Mem{Base: cs, Index: cs, Scale: 2}, cs3)
	asm.ANDQ(U32(3), rows) // the rows left after the chunks

	var pfOff GPVirtual
	if pf > 0 {
		pfOff = asm.GP64()
	}
	asm.TESTQ(q, q)
	asm.JZ(LabelRef("blocksDone"))
	asm.Label("block")
	{
		if pf > 0 {
			ahead, d := asm.GP64(), asm.GP64()
			asm.LEAQ(Mem{Base: q, Disp: -1}, ahead)
			asm.IMULQ(ldaMem, ahead)
			asm.XORQ(pfOff, pfOff)
			asm.MOVQ(U32(pf), d)
			asm.CMPQ(ahead, d)
			asm.CMOVQCC(d, pfOff)
		}
		p, hp, cnt := asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(a, p)
		asm.MOVQ(x0, hp)
		rowsAt := func(base GPVirtual, disp int) []Mem {
			return []Mem{{Base: base, Disp: disp}, {Base: base, Index: cs, Scale: 1, Disp: disp},
				{Base: base, Index: cs, Scale: 2, Disp: disp}, {Base: base, Index: cs3, Scale: 1, Disp: disp}}
		}
		acc := make([]VecVirtual, 4)
		for i := range acc {
			acc[i] = s.vec()
			s.zero(acc[i])
		}
		var pp GPVirtual
		if pf > 0 {
			pp = asm.GP64()
			asm.LEAQ(Mem{Base: p, Index: pfOff, Scale: 1}, pp)
		}
		asm.MOVQ(cols, cnt)
		asm.SHRQ(U8(bits.TrailingZeros(uint(s.lanes))), cnt)
		asm.JZ(LabelRef("blockTail"))
		asm.Label("blockVector")
		xv := s.vec()
		asm.VMOVUPS(Mem{Base: hp}, xv)
		for i, m := range rowsAt(p, 0) {
			asm.VFMADD231PS(m, xv, acc[i])
		}
		ptrs := []GPVirtual{p, hp}
		if pf > 0 {
			for d := 0; d < s.bytes(); d += 64 {
				for _, m := range rowsAt(pp, d) {
					lvl.prefetch(m)
				}
			}
			ptrs = append(ptrs, pp)
		}
		for _, r := range ptrs {
			asm.ADDQ(U32(s.bytes()), r)
		}
		asm.DECQ(cnt)
		asm.JNZ(LabelRef("blockVector"))

		asm.Label("blockTail")
		rem := asm.GP64()
		asm.MOVQ(cols, rem)
		asm.ANDQ(U32(s.lanes-1), rem)
		asm.JZ(LabelRef("blockReduce"))
		xt := s.vec()
		s.loadTail(hp, rem, t, xt)
		for i, m := range rowsAt(p, 0) {
			rp, v := asm.GP64(), s.vec()
			asm.LEAQ(m, rp)
			s.loadTail(rp, rem, t, v)
			asm.VFMADD231PS(v, xt, acc[i])
		}

		asm.Label("blockReduce")
		sums := s.hsum4(acc[0], acc[1], acc[2], acc[3])
		qb, d2 := asm.GP64(), asm.GP64()
		asm.MOVQ(qbMem, qb)
		asm.VMOVSS(sums, Mem{Base: dst})
		asm.VEXTRACTPS(U8(1), sums, Mem{Base: dst, Index: qb, Scale: 1})
		asm.VEXTRACTPS(U8(2), sums, Mem{Base: dst, Index: qb, Scale: 2})
		asm.LEAQ(Mem{Base: dst, Index: qb, Scale: 2}, d2)
		asm.VEXTRACTPS(U8(3), sums, Mem{Base: d2, Index: qb, Scale: 1})
		asm.ADDQ(U32(4), dst)
		asm.ADDQ(ldaMem, a)
		asm.DECQ(q)
		asm.JNZ(LabelRef("block"))
	}
	asm.Label("blocksDone")
	// a and dst are at the start of chunk 1; the rows left start after chunk 3.
	asm.ADDQ(cs3, a)
	{
		qb := asm.GP64()
		asm.MOVQ(qbMem, qb)
		asm.LEAQ(Mem{Base: dst, Index: qb, Scale: 2}, dst)
		asm.ADDQ(qb, dst)
	}
	asm.Label("rowSingle")
	asm.TESTQ(rows, rows)
	asm.JZ(LabelRef("done"))
	{
		rem := asm.GP64()
		asm.MOVQ(cols, rem)
		asm.ANDQ(U32(s.lanes-1), rem)
		acc := s.vec()
		seqRowDot(s, acc, a, x0, cols, rem, t, nil, "s")
		asm.VMOVSS(s.hsum(acc), Mem{Base: dst})
		asm.ADDQ(U32(4), dst)
		asm.ADDQ(ldaMem, a)
		asm.DECQ(rows)
		asm.JMP(LabelRef("rowSingle"))
	}
	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()
}
