package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() {
	register("gemm", genGemmFamily)
	registerTrial("gemm", genGemmTrials)
}

// gemmTile is the register tile of a GEMM micro-kernel: rows of packed A
// (each broadcast from memory) × vecs vectors of packed B, one accumulator
// per row and vector. kernels/DESIGN.md ("GEMM") gives the reasons for the
// shapes.
type gemmTile struct {
	rows, vecs int
}

// gemmTiles maps each ISA to its micro-kernel tile. AVX2: 6×2 YMM, 12
// accumulators + 2 vectors of B + 2 broadcasts fill the 16 registers.
// AVX-512: 6×4 ZMM, 24 accumulators + 4 + 2 of 32. kernels/DESIGN.md ("GEMM")
// gives the candidate tiles and how the choice was made.
var gemmTiles = map[*isa]gemmTile{
	avx2:   {rows: 6, vecs: 2},
	avx512: {rows: 6, vecs: 4},
}

func genGemmFamily() {
	for _, s := range isas {
		t := gemmTiles[s]
		genGemmMicro(s, s.name("gemmMicro"), t)
		genGemmMicroRows(s, s.name("gemmMicroRows"), t)
		genGemmMicroStrided(s, s.name("gemmMicroStridedB"), t)
		genGemmMicroRowsStrided(s, s.name("gemmMicroRowsStridedB"), t)
	}
	genGemmTranspose8()
	genGemmPackAT6()
}

// genGemmTrials emits the candidate tiles that TestGemmTrial compares with
// the default ones (go test -tags heedtrial -run TestGemmTrial ./kernels).
func genGemmTrials() {
	for _, t := range []gemmTile{{14, 2}, {12, 2}, {8, 3}} {
		genGemmMicro(avx512, fmt.Sprintf("gemm%dx%dAVX512", t.rows, t.vecs*16), t)
	}
	for _, t := range []gemmTile{{12, 2}, {8, 3}, {14, 2}} {
		genGemmMicro(evexYMM(avx512), fmt.Sprintf("gemm%dx%dYMM", t.rows, t.vecs*8), t)
	}
}

// gemmUnroll is the number of steps of the inner dimension per loop iteration.
const gemmUnroll = 4

// genGemmMicro emits name(k, a, b, c, ldc, alpha, beta): the rows×(vecs·lanes)
// block of C at c (row stride ldc elements) is set to α·Σₚ a[p]⊗b[p] + β·C,
// for the packed panels a (k×rows) and b (k×vecs·lanes); β = 0 (either sign)
// does not read C. k ≥ 1.
func genGemmMicro(s *isa, name string, t gemmTile) {
	TEXT(name, NOSPLIT, "func(k int, a, b, c *float32, ldc int, alpha, beta float32)")
	asm.Doc(fmt.Sprintf("%s sets the %d×%d block of C at c to α·A·B + β·C for the packed k×%d panel a and k×%d panel b; β = 0 does not read C.",
		name, t.rows, t.vecs*s.lanes, t.rows, t.vecs*s.lanes))
	ap := load(asm.Param("a"))
	genGemmBody(s, name, t, func(i, u int) Mem { return Mem{Base: ap, Disp: 4 * (u*t.rows + i)} },
		func(steps int) { asm.ADDQ(U32(4*t.rows*steps), ap) }, false, nil)
}

// genGemmMicroStrided emits name(k, a, b, ldb, c, ldc, alpha, beta), the
// micro-kernel of genGemmMicro reading B unpacked: row p of the k×(vecs·lanes)
// block of B is b[p·ldb : p·ldb+vecs·lanes], so whole column panels of a
// row-major op(B) need no packing. Rows are addressed from one base with ldb
// as the index (scales 1, 2 and 3·ldb).
func genGemmMicroStrided(s *isa, name string, t gemmTile) {
	TEXT(name, NOSPLIT, "func(k int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)")
	asm.Doc(fmt.Sprintf("%s sets the %d×%d block of C at c to α·A·B + β·C for the packed k×%d panel a and the k×%d block b of B (row stride ldb); β = 0 does not read C.",
		name, t.rows, t.vecs*s.lanes, t.rows, t.vecs*s.lanes))
	ap := load(asm.Param("a"))
	genGemmBody(s, name, t, func(i, u int) Mem { return Mem{Base: ap, Disp: 4 * (u*t.rows + i)} },
		func(steps int) { asm.ADDQ(U32(4*t.rows*steps), ap) }, true, nil)
}

// genGemmMicroRowsStrided emits name(k, a, lda, b, ldb, c, ldc, alpha, beta):
// the micro-kernel reading both A (as genGemmMicroRows) and B (as
// genGemmMicroStrided) unpacked.
func genGemmMicroRowsStrided(s *isa, name string, t gemmTile) {
	TEXT(name, NOSPLIT, "func(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)")
	asm.Doc(fmt.Sprintf("%s sets the %d×%d block of C at c to α·A·B + β·C for the %d×k block a of A (row stride lda) and the k×%d block b of B (row stride ldb); β = 0 does not read C.",
		name, t.rows, t.vecs*s.lanes, t.rows, t.vecs*s.lanes))
	aAt, aNext := rowsOfA(t)
	genGemmBody(s, name, t, aAt, aNext, true, nil)
}

// genGemmMicroRows emits name(k, a, lda, b, c, ldc, alpha, beta), the
// micro-kernel of genGemmMicro reading A unpacked: row i of the rows×k block
// of A is a[i·lda : i·lda+k], so a row-major op(A) needs no packing. Rows are
// addressed from one base per three rows with lda as the index (scale 1, 2).
func genGemmMicroRows(s *isa, name string, t gemmTile) {
	TEXT(name, NOSPLIT, "func(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32)")
	asm.Doc(fmt.Sprintf("%s sets the %d×%d block of C at c to α·A·B + β·C for the %d×k block a of A (row stride lda) and packed k×%d panel b; β = 0 does not read C.",
		name, t.rows, t.vecs*s.lanes, t.rows, t.vecs*s.lanes))
	aAt, aNext := rowsOfA(t)
	genGemmBody(s, name, t, aAt, aNext, false, nil)
}

// rowsOfA loads the parameters a and lda of a micro-kernel reading A in place
// and returns the address of element i of A at step u of an iteration and
// the advance of the A pointers by steps steps: one base per three rows, lda
// as the index (scales 1 and 2).
func rowsOfA(t gemmTile) (aAt func(i, u int) Mem, aNext func(steps int)) {
	lda := load(asm.Param("lda"))
	asm.SHLQ(U8(2), lda)
	bases := []GPVirtual{load(asm.Param("a"))}
	for len(bases)*3 < t.rows {
		b := asm.GP64()
		asm.LEAQ(Mem{Base: bases[len(bases)-1], Index: lda, Scale: 2}, b)
		asm.ADDQ(lda, b)
		bases = append(bases, b)
	}
	return func(i, u int) Mem {
			m := Mem{Base: bases[i/3], Disp: 4 * u}
			if i%3 > 0 {
				m.Index, m.Scale = lda, uint8(i%3)
			}
			return m
		}, func(steps int) {
			for _, b := range bases {
				asm.ADDQ(U32(4*steps), b)
			}
		}
}

// genGemmBody emits the loop and the store of a micro-kernel whose element i
// of A at step u of an iteration is aAt(i, u), and advances the A pointers
// by steps steps with aNext. B is a packed panel (row p at b + p·nr), or,
// when strided, rows of B at the stride of the parameter ldb. pfStep, when
// not nil, emits what each step adds before its loads (a prefetch).
func genGemmBody(s *isa, name string, t gemmTile, aAt func(i, u int) Mem, aNext func(steps int), strided bool, pfStep func()) {
	R, V := t.rows, t.vecs
	nr := V * s.lanes
	bp := load(asm.Param("b"))
	// bAt is element j·lanes of row u of B; bNext advances bp by steps rows.
	bAt := func(u, j int) Mem { return Mem{Base: bp, Disp: 4 * (u*nr + j*s.lanes)} }
	bNext := func(steps int) { asm.ADDQ(U32(4*nr*steps), bp) }
	if strided {
		ldb, ldb3 := load(asm.Param("ldb")), asm.GP64()
		asm.SHLQ(U8(2), ldb)
		asm.LEAQ(Mem{Base: ldb, Index: ldb, Scale: 2}, ldb3)
		bAt = func(u, j int) Mem {
			m := Mem{Base: bp, Disp: 4 * j * s.lanes}
			switch u {
			case 0:
			case 3:
				m.Index, m.Scale = ldb3, 1
			default:
				m.Index, m.Scale = ldb, uint8(u)
			}
			return m
		}
		bNext = func(steps int) {
			if steps == 1 {
				asm.ADDQ(ldb, bp)
				return
			}
			asm.LEAQ(Mem{Base: bp, Index: ldb, Scale: uint8(steps)}, bp)
		}
	}
	cnt := load(asm.Param("k"))
	cp, ldc := load(asm.Param("c")), load(asm.Param("ldc"))
	asm.SHLQ(U8(2), ldc)

	// Prefetch the C tile: its rows are read (β ≠ 0) or written at the end.
	{
		q := asm.GP64()
		asm.MOVQ(cp, q)
		for i := 0; i < R; i++ {
			asm.PREFETCHT0(Mem{Base: q})
			if nr*4 > 64 {
				asm.PREFETCHT0(Mem{Base: q, Disp: nr*4 - 4})
			}
			if i+1 < R {
				asm.ADDQ(ldc, q)
			}
		}
	}

	acc := make([][]VecVirtual, R)
	for i := range acc {
		acc[i] = make([]VecVirtual, V)
		for j := range acc[i] {
			acc[i][j] = s.vec()
			s.zero(acc[i][j])
		}
	}
	bv := make([]VecVirtual, V)
	for j := range bv {
		bv[j] = s.vec()
	}
	bc := []VecVirtual{s.vec(), s.vec()}

	// step emits step u of the inner dimension from ap and bp.
	step := func(u int) {
		if pfStep != nil {
			pfStep()
		}
		for j := range bv {
			asm.VMOVUPS(bAt(u, j), bv[j])
		}
		for i := 0; i < R; i++ {
			x := bc[i%2]
			asm.VBROADCASTSS(aAt(i, u), x)
			for j := range bv {
				asm.VFMADD231PS(x, bv[j], acc[i][j])
			}
		}
	}

	n := asm.GP64()
	asm.MOVQ(cnt, n)
	asm.SHRQ(U8(2), n) // gemmUnroll = 4
	asm.JZ(LabelRef(name + "Rest"))
	asm.Label(name + "Loop")
	for u := 0; u < gemmUnroll; u++ {
		step(u)
	}
	aNext(gemmUnroll)
	bNext(gemmUnroll)
	asm.DECQ(n)
	asm.JNZ(LabelRef(name + "Loop"))

	asm.Label(name + "Rest")
	asm.ANDQ(U32(gemmUnroll-1), cnt)
	asm.JZ(LabelRef(name + "Store"))
	asm.Label(name + "RestLoop")
	step(0)
	aNext(1)
	bNext(1)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(name + "RestLoop"))

	asm.Label(name + "Store")
	va := s.vec()
	asm.VBROADCASTSS(paramAddr("alpha"), va)
	bbits := asm.GP32()
	asm.MOVL(paramAddr("beta"), bbits)
	asm.ANDL(U32(0x7fffffff), bbits)
	asm.JZ(LabelRef(name + "NoBeta"))

	vb := s.vec()
	asm.VBROADCASTSS(paramAddr("beta"), vb)
	{
		q := asm.GP64()
		asm.MOVQ(cp, q)
		for i := 0; i < R; i++ {
			for j := 0; j < V; j++ {
				m := Mem{Base: q, Disp: 4 * j * s.lanes}
				tv := bc[(i*V+j)%2]
				asm.VMULPS(m, vb, tv)
				asm.VFMADD231PS(va, acc[i][j], tv)
				asm.VMOVUPS(tv, m)
			}
			if i+1 < R {
				asm.ADDQ(ldc, q)
			}
		}
	}
	asm.VZEROUPPER()
	asm.RET()

	asm.Label(name + "NoBeta")
	{
		q := asm.GP64()
		asm.MOVQ(cp, q)
		for i := 0; i < R; i++ {
			for j := 0; j < V; j++ {
				asm.VMULPS(va, acc[i][j], acc[i][j])
				asm.VMOVUPS(acc[i][j], Mem{Base: q, Disp: 4 * j * s.lanes})
			}
			if i+1 < R {
				asm.ADDQ(ldc, q)
			}
		}
	}
	asm.VZEROUPPER()
	asm.RET()
}

// paramAddr returns the stack address of the scalar argument name.
func paramAddr(name string) Mem {
	b, err := asm.Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// genGemmTranspose8 emits gemmTranspose8AVX2(dst, ldd, src, lds, blocks), the
// transposing pack of a GEMM operand: for q < blocks it sets
// dst[(8q+p)·ldd + j] = src[j·lds + 8q+p] for p, j < 8, reading the 8×8 block
// at column 8q of eight rows of src and writing it transposed to eight rows
// of dst. Each input register holds four elements of row j in its low lane
// and four of row j+4 in its high lane (VINSERTF128), so an in-lane 4×4
// transpose of four registers yields whole rows of dst: 16 shuffles and 8
// inserts per block, no lane-crossing permute. VEX encoding only, so the
// AVX2 and the AVX-512 paths share it. blocks ≥ 1.
func genGemmTranspose8() {
	TEXT("gemmTranspose8AVX2", NOSPLIT, "func(dst *float32, ldd int, src *float32, lds int, blocks int)")
	asm.Doc("gemmTranspose8AVX2 sets dst[(8q+p)·ldd + j] = src[j·lds + 8q+p] for q < blocks and p, j < 8; blocks ≥ 1.")
	dst, ldd := load(asm.Param("dst")), load(asm.Param("ldd"))
	src, lds := load(asm.Param("src")), load(asm.Param("lds"))
	n := load(asm.Param("blocks"))
	asm.SHLQ(U8(2), ldd)
	asm.SHLQ(U8(2), lds)
	lds3, ldd3 := asm.GP64(), asm.GP64()
	asm.LEAQ(Mem{Base: lds, Index: lds, Scale: 2}, lds3)
	asm.LEAQ(Mem{Base: ldd, Index: ldd, Scale: 2}, ldd3)
	src4, dst4 := asm.GP64(), asm.GP64()
	asm.LEAQ(Mem{Base: src, Index: lds, Scale: 4}, src4)
	asm.LEAQ(Mem{Base: dst, Index: ldd, Scale: 4}, dst4)
	// row returns element disp of row i (0…7) of a block addressed from
	// base (rows 0…3) and base4 (rows 4…7) with stride st (st3 = 3·st).
	row := func(base, base4, st, st3 GPVirtual, i, disp int) Mem {
		b := base
		if i >= 4 {
			b, i = base4, i-4
		}
		switch i {
		case 0:
			return Mem{Base: b, Disp: disp}
		case 3:
			return Mem{Base: b, Index: st3, Scale: 1, Disp: disp}
		}
		return Mem{Base: b, Index: st, Scale: uint8(i), Disp: disp}
	}
	asm.Label("gemmTranspose8AVX2Loop")
	for half := 0; half < 2; half++ {
		// Columns 4·half…4·half+3 of the block: rows p = 4·half+i of dst.
		in := make([]VecVirtual, 4)
		for j := range in {
			in[j] = asm.YMM()
			asm.VMOVUPS(row(src, src4, lds, lds3, j, 16*half), in[j].AsX())
			asm.VINSERTF128(U8(1), row(src, src4, lds, lds3, j+4, 16*half), in[j], in[j])
		}
		out := transpose4([4]VecVirtual(in), func() VecVirtual { return asm.YMM() })
		for i := range out {
			asm.VMOVUPS(out[i], row(dst, dst4, ldd, ldd3, 4*half+i, 0))
		}
	}
	asm.ADDQ(U8(32), src)
	asm.ADDQ(U8(32), src4)
	for _, d := range []GPVirtual{dst, dst4} {
		asm.LEAQ(Mem{Base: d, Index: ldd, Scale: 8}, d)
	}
	asm.DECQ(n)
	asm.JNZ(LabelRef("gemmTranspose8AVX2Loop"))
	asm.VZEROUPPER()
	asm.RET()
}

// genGemmPackAT6 emits gemmPackAT6AVX2(dst, src, lds, kb, panels), the pack of
// the full six-row panels of a transposed op(A) for the x86 tiles (mr = 6):
// for p < kb and q < panels it sets dst[q·6·kb + 6p + i] = src[p·lds + 6q + i],
// i < 6. Source row by source row (each line read once), each six-float piece
// one 16-byte and one 8-byte move in and out: no mask, nothing read or
// written past the pieces. VEX encoding only, so the AVX2 and the AVX-512
// paths share it. kb, panels ≥ 1.
func genGemmPackAT6() {
	TEXT("gemmPackAT6AVX2", NOSPLIT, "func(dst *float32, src *float32, lds int, kb int, panels int)")
	asm.Doc("gemmPackAT6AVX2 sets dst[q·6·kb + 6p + i] = src[p·lds + 6q + i] for p < kb, q < panels, i < 6; kb, panels ≥ 1.")
	dst, src := load(asm.Param("dst")), load(asm.Param("src"))
	lds, kb := load(asm.Param("lds")), load(asm.Param("kb"))
	asm.SHLQ(U8(2), lds)
	pstride := asm.GP64() // bytes between panels: 24·kb
	asm.LEAQ(Mem{Base: kb, Index: kb, Scale: 2}, pstride)
	asm.SHLQ(U8(3), pstride)
	asm.Label("gemmPackAT6AVX2Row")
	s, d, n := asm.GP64(), asm.GP64(), asm.GP64()
	asm.MOVQ(src, s)
	asm.MOVQ(dst, d)
	asm.Load(asm.Param("panels"), n)
	asm.Label("gemmPackAT6AVX2Piece")
	lo, hi := asm.XMM(), asm.XMM()
	asm.VMOVUPS(Mem{Base: s}, lo)
	asm.VMOVSD(Mem{Base: s, Disp: 16}, hi)
	asm.VMOVUPS(lo, Mem{Base: d})
	asm.VMOVSD(hi, Mem{Base: d, Disp: 16})
	asm.ADDQ(U8(24), s)
	asm.ADDQ(pstride, d)
	asm.DECQ(n)
	asm.JNZ(LabelRef("gemmPackAT6AVX2Piece"))
	asm.ADDQ(lds, src)
	asm.ADDQ(U8(24), dst)
	asm.DECQ(kb)
	asm.JNZ(LabelRef("gemmPackAT6AVX2Row"))
	asm.VZEROUPPER()
	asm.RET()
}
