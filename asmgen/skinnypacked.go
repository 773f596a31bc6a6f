package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
)

func init() { register("skinnypacked", genSkinnyPackedFamily) }

// skinnyPackedSlots is the most lines a step of a skinny packed kernel
// prefetches: a row of the AVX-512 tile's panel (64 columns) is 4 lines.
const skinnyPackedSlots = 4

// genSkinnyPackedFamily emits the micro-kernels of the skinny GEMM routes
// (kernels/skinnypacked.go): gemmSkinny<R>[L2]<ISA> for R = 1 … rows of each
// ISA's GEMM tile and each prefetch level (packed op(B)), and
// gemmSkinnyStrided<R><ISA> for R = 1 … rows−1 (op(B) = B read in place).
func genSkinnyPackedFamily() {
	for _, s := range isas {
		t := gemmTiles[s]
		for _, l := range prefetchLevels {
			for r := 1; r <= t.rows; r++ {
				genSkinnyPacked(s, l, gemmTile{rows: r, vecs: t.vecs})
			}
		}
		// The strided skinny route (B as is, in cache): genGemmMicroRowsStrided
		// for fewer rows than the tile's (its own rows are the GEMM
		// family's gemmMicroRowsStridedB<ISA>).
		for r := 1; r < t.rows; r++ {
			genGemmMicroRowsStrided(s, s.name(fmt.Sprintf("gemmSkinnyStrided%d", r)), gemmTile{rows: r, vecs: t.vecs})
		}
	}
}

// genSkinnyPacked emits gemmSkinny<R>[L2]<ISA>(k, a, lda, b, c, ldc, alpha,
// beta, pf, lps): the micro-kernel of genGemmMicroRows for t.rows rows of A
// in place and a packed k×nr panel b, whose every step (row of the panel)
// first prefetches lps ≤ skinnyPackedSlots consecutive lines from pf into
// level lvl and advances pf past them; lps = 0 prefetches nothing. Prefetches
// never fault, so pf may run past the operand.
func genSkinnyPacked(s *isa, lvl pfLevel, t gemmTile) {
	name := s.name(fmt.Sprintf("gemmSkinny%d%s", t.rows, lvl.suffix()))
	TEXT(name, NOSPLIT, "func(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32, pf *float32, lps int)")
	asm.Doc(fmt.Sprintf("%s sets the %d×%d block of C at c to α·A·B + β·C for the %d×k block a of A (row stride lda) and packed k×%d panel b, prefetching from pf as it goes (lps a step); β = 0 does not read C.",
		name, t.rows, t.vecs*s.lanes, t.rows, t.vecs*s.lanes))
	pp, lps := load(asm.Param("pf")), load(asm.Param("lps"))
	adv := asm.GP64()
	asm.MOVQ(lps, adv)
	asm.SHLQ(U8(6), adv)
	steps := 0
	pfStep := func() {
		done := fmt.Sprintf("%sPF%d", name, steps)
		steps++
		for l := 0; l < skinnyPackedSlots; l++ {
			asm.CMPQ(lps, U32(l))
			asm.JLE(LabelRef(done))
			lvl.prefetch(Mem{Base: pp, Disp: 64 * l})
		}
		asm.Label(done)
		asm.ADDQ(adv, pp)
	}
	aAt, aNext := rowsOfA(t)
	genGemmBody(s, name, t, aAt, aNext, false, pfStep)
}
