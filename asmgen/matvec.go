package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("matvec", genMatVecFamily) }

func genMatVecFamily() {
	for _, s := range isas {
		genMatVec(s)
	}
	for _, s := range isas {
		genMatTVec(s)
	}
	for _, s := range isas {
		genMatVecBatch(s)
	}
}

// matVecRows is the number of rows of A that share each load of x.
const matVecRows = 4

// matVecPrefetch makes matVec prefetch (PREFETCHT1, into L2) the rows
// matVecPrefetchBlocks blocks ahead of the block it reads, at the column it
// reads, when A spans at least matVecPrefetchShortBytes (it is not in L2) and
// its rows are shorter than matVecPrefetchCols, or A spans at least
// matVecPrefetchBytes (it streams from memory). Measured on Zen 4: four short
// rows read side by side end before the hardware prefetcher ramps up (8192×512
// in L3: ~345 → ~260 µs), and from memory the prefetches keep more lines in
// flight (4096×4096: ~2.65 → ~2.25 ms); long rows in L3 (1024×1024, 512×8192)
// run slower with them.
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
	Doc(s.name("matVec") + " sets dst = A·x for the len(dst)×len(x) matrix A with row stride lda.")
	dst := load(Param("dst").Base())
	rows := load(Param("dst").Len())
	a := load(Param("a").Base())
	lda := load(Param("lda"))
	SHLQ(U8(2), lda) // row stride in bytes
	x0 := load(Param("x").Base())
	cols := load(Param("x").Len())

	if !s.wide {
		CMPQ(cols, U32(s.lanes))
		JB(LabelRef("scalarRows"))
	}

	// Tail mask for the last cols%lanes columns, built once.
	rem := GP64()
	MOVQ(cols, rem)
	ANDQ(U32(s.lanes-1), rem)
	var t tail
	JZ(LabelRef("maskDone"))
	t = s.tailMask(rem)
	Label("maskDone")

	// Prefetch when the rows are shorter than lim columns: none while A fits
	// in L2, matVecPrefetchCols up to the L3 size, any length beyond.
	lim, big, huge := GP64(), GP64(), GP64()
	if matVecPrefetch {
		MOVQ(rows, big)
		IMULQ(lda, big)
		XORQ(lim, lim)
		MOVQ(U32(matVecPrefetchCols), huge)
		CMPQ(big, U32(matVecPrefetchShortBytes))
		CMOVQCC(huge, lim)
		MOVQ(U64(1<<62), huge)
		CMPQ(big, U32(matVecPrefetchBytes))
		CMOVQCC(huge, lim)
	}

	if s.wide {
		matVecNarrow(ymmWide(s), dst, rows, a, lda, x0, cols)
	}

	// Blocks of four rows.
	Label("rowBlock")
	CMPQ(rows, U32(matVecRows))
	JB(LabelRef("rowSingle"))
	{
		r := [matVecRows]GPVirtual{a, GP64(), GP64(), GP64()}
		for i := 1; i < matVecRows; i++ {
			LEAQ(Mem{Base: r[i-1], Index: lda, Scale: 1}, r[i])
		}
		acc := [matVecRows][2]VecVirtual{}
		for i := range acc {
			for j := range acc[i] {
				acc[i][j] = s.vec()
				s.zero(acc[i][j])
			}
		}
		x, n, off, cnt := x0, GP64(), GP64(), GP64()
		XORQ(off, off) // byte offset into the rows and x
		// pf walks the first row of the next block at the column being read;
		// the next block's rows are pf, pf+lda, pf+2·lda, pf+3·lda.
		pf, lda3 := GP64(), GP64()
		if matVecPrefetch {
			LEAQ(Mem{Base: r[matVecRows-1], Index: lda, Scale: 1}, pf)
			for k := 1; k < matVecPrefetchBlocks; k++ {
				LEAQ(Mem{Base: pf, Index: lda, Scale: 4}, pf)
			}
			LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
		}

		// Count-down loop over pairs of vectors, then at most one vector.
		MOVQ(cols, cnt)
		SHRQ(U8(bits.TrailingZeros(uint(2*s.lanes))), cnt)
		JZ(LabelRef("blockOne"))
		pair := func() {
			for j := 0; j < 2; j++ {
				xv := s.vec()
				VMOVUPS(Mem{Base: x, Index: off, Scale: 1, Disp: j * s.bytes()}, xv)
				for i := range r {
					VFMADD231PS(Mem{Base: r[i], Index: off, Scale: 1, Disp: j * s.bytes()}, xv, acc[i][j])
				}
			}
			ADDQ(U32(2*s.bytes()), off)
			DECQ(cnt)
		}
		if matVecPrefetch {
			CMPQ(cols, lim)
			JAE(LabelRef("blockPair"))
			Label("blockPairPrefetch")
			for d := 0; d < 2*s.bytes(); d += 64 {
				matVecPF(Mem{Base: pf, Disp: d})
				matVecPF(Mem{Base: pf, Index: lda, Scale: 1, Disp: d})
				matVecPF(Mem{Base: pf, Index: lda, Scale: 2, Disp: d})
				matVecPF(Mem{Base: pf, Index: lda3, Scale: 1, Disp: d})
			}
			ADDQ(U32(2*s.bytes()), pf)
			pair()
			JNZ(LabelRef("blockPairPrefetch"))
			JMP(LabelRef("blockOne"))
		}
		Label("blockPair")
		pair()
		JNZ(LabelRef("blockPair"))

		Label("blockOne")
		MOVQ(cols, n)
		ANDQ(U32(2*s.lanes-1), n)
		TESTQ(U32(s.lanes), n)
		JZ(LabelRef("blockTail"))
		xv := s.vec()
		VMOVUPS(Mem{Base: x, Index: off, Scale: 1}, xv)
		for i := range r {
			VFMADD231PS(Mem{Base: r[i], Index: off, Scale: 1}, xv, acc[i][0])
		}
		ADDQ(U32(s.bytes()), off)
		SUBQ(U32(s.lanes), n)

		Label("blockTail")
		TESTQ(n, n)
		JZ(LabelRef("blockReduce"))
		toff := s.tailOffset(off, n)
		xt := s.vec()
		s.loadTailAt(Mem{Base: x, Index: toff, Scale: 1}, t, xt)
		for i := range r {
			v := s.vec()
			s.loadTailAt(Mem{Base: r[i], Index: toff, Scale: 1}, t, v)
			VFMADD231PS(v, xt, acc[i][1])
		}

		Label("blockReduce")
		for i := range acc {
			VADDPS(acc[i][1], acc[i][0], acc[i][0])
		}
		sums := s.hsum4(acc[0][0], acc[1][0], acc[2][0], acc[3][0])
		VMOVUPS(sums, Mem{Base: dst})
		ADDQ(U32(4*matVecRows), dst)
		LEAQ(Mem{Base: r[matVecRows-1], Index: lda, Scale: 1}, a)
		SUBQ(U32(matVecRows), rows)
		JMP(LabelRef("rowBlock"))
	}

	// Remaining rows, one at a time.
	Label("rowSingle")
	TESTQ(rows, rows)
	JZ(LabelRef("done"))
	{
		acc := [2]VecVirtual{s.vec(), s.vec()}
		s.zero(acc[0])
		s.zero(acc[1])
		n, off := GP64(), GP64()
		MOVQ(cols, n)
		XORQ(off, off)

		Label("singleVector")
		CMPQ(n, U32(s.lanes))
		JB(LabelRef("singleTail"))
		xv := s.vec()
		VMOVUPS(Mem{Base: x0, Index: off, Scale: 1}, xv)
		VFMADD231PS(Mem{Base: a, Index: off, Scale: 1}, xv, acc[0])
		ADDQ(U32(s.bytes()), off)
		SUBQ(U32(s.lanes), n)
		JMP(LabelRef("singleVector"))

		Label("singleTail")
		TESTQ(n, n)
		JZ(LabelRef("singleReduce"))
		toff := s.tailOffset(off, n)
		xt, v := s.vec(), s.vec()
		s.loadTailAt(Mem{Base: x0, Index: toff, Scale: 1}, t, xt)
		s.loadTailAt(Mem{Base: a, Index: toff, Scale: 1}, t, v)
		VFMADD231PS(v, xt, acc[1])

		Label("singleReduce")
		VADDPS(acc[1], acc[0], acc[0])
		VMOVSS(s.hsum(acc[0]), Mem{Base: dst})
		ADDQ(U32(4), dst)
		ADDQ(lda, a)
		DECQ(rows)
		JMP(LabelRef("rowSingle"))
	}

	Label("done")
	VZEROUPPER()
	RET()

	if !s.wide {
		// Fewer columns than a vector: one scalar dot product per row.
		Label("scalarRows")
		TESTQ(rows, rows)
		JZ(LabelRef("scalarEnd"))
		p, q, k := GP64(), GP64(), GP64()
		MOVQ(a, p)
		MOVQ(x0, q)
		MOVQ(cols, k)
		VMOVSS(scalarDot(p, q, k), Mem{Base: dst})
		ADDQ(U32(4), dst)
		ADDQ(lda, a)
		DECQ(rows)
		JMP(LabelRef("scalarRows"))
		Label("scalarEnd")
		VZEROUPPER()
		RET()
	}
}

func matVecPF(m Mem) { PREFETCHT1(m) }

// matVecNarrowRows is the number of rows matVecNarrow scores per block.
const matVecNarrowRows = 8

// matVecNarrow emits, for AVX-512 (s in YMM vectors) and rows of at most
// narrowVectors(avx2)·8 = 64 columns, matVec's rows in blocks of eight with x
// held in registers: each row is its V loads of A, FMAs into two
// accumulators, and no reload of x, where the four-row blocks load x once per
// four rows and reduce four rows at a time. It advances dst, a and rows past
// the blocks and falls through to the four-row code for the rest (and for
// wider rows at once).
func matVecNarrow(s *isa, dst, rows, a, lda, x, cols GPVirtual) {
	const maxV = 8
	CMPQ(cols, U32(maxV*s.lanes))
	JA(LabelRef("rowBlock"))
	nv := GP64()
	LEAQ(Mem{Base: cols, Disp: s.lanes - 1}, nv)
	SHRQ(U8(3), nv)
	for v := 1; v < maxV; v++ {
		CMPQ(nv, U32(v))
		JE(LabelRef(fmt.Sprintf("mvNarrow%d", v)))
	}
	for v := maxV; v >= 1; v-- {
		lbl := func(what string) string { return fmt.Sprintf("mvNarrow%d%s", v, what) }
		Label(lbl(""))
		// x in registers, its last vector masked.
		k := s.lastMask(cols)
		xv := make([]VecVirtual, v)
		for j := range xv {
			xv[j] = s.vec()
			if j == v-1 {
				VMOVUPS_Z(Mem{Base: x, Disp: 32 * j}, k, xv[j])
			} else {
				VMOVUPS(Mem{Base: x, Disp: 32 * j}, xv[j])
			}
		}
		sets := 1
		if v > 1 {
			sets = 2
		}
		Label(lbl("Block"))
		CMPQ(rows, U32(matVecNarrowRows))
		JB(LabelRef("rowBlock"))
		acc := make([][]VecVirtual, matVecNarrowRows)
		p := GP64()
		MOVQ(a, p)
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
						VMULPS_Z(m, xv[j], k, acc[i][j]) // zero-masked: the other lanes 0, their loads suppressed
					} else {
						VMULPS(m, xv[j], acc[i][j])
					}
				case j == v-1:
					VFMADD231PS(m, xv[j], k, acc[i][j%sets])
				default:
					VFMADD231PS(m, xv[j], acc[i][j%sets])
				}
			}
			if i < matVecNarrowRows-1 {
				ADDQ(lda, p)
			}
		}
		for i := range acc {
			if sets == 2 {
				VADDPS(acc[i][1], acc[i][0], acc[i][0])
			}
		}
		for h := 0; h < matVecNarrowRows; h += 4 {
			VMOVUPS(s.hsum4(acc[h][0], acc[h+1][0], acc[h+2][0], acc[h+3][0]), Mem{Base: dst, Disp: 4 * h})
		}
		ADDQ(U32(4*matVecNarrowRows), dst)
		LEAQ(Mem{Base: p, Index: lda, Scale: 1}, a)
		SUBQ(U32(matVecNarrowRows), rows)
		JMP(LabelRef(lbl("Block")))
	}
}
