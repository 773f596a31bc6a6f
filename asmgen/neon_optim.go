package main

import (
	"fmt"

	. "github.com/heedml/heed/asmgen/arm64"
)

func init() {
	registerNEON("optim", func(f *neonFile) {
		genAdamStepNEON(f)
		genSGDStepNEON(f)
	})
}

// neonOptimLoop emits, under labels prefixed by prefix, an update over the
// elements counted by register n: body(k, load, store) on k = 2 vectors an
// iteration, then k = 1, then one element at a time in lane 0 (FMOVS zeroes
// the other lanes; the same vector instructions); load(r, ptr, reads) fills
// the k registers from r up from pointer register ptr (post-incremented when
// the slice is only read), store(r, ptr) writes and post-increments. Then RET.
func neonOptimLoop(f *neonFile, prefix, n string, body func(k int, load func(r Reg, ptr string, readOnly bool), store func(r Reg, ptr string))) {
	vec := func(k int) {
		body(k, func(r Reg, ptr string, readOnly bool) {
			if readOnly {
				f.op("VLD1.P %d(%s), %s", 16*k, ptr, neonList(r, k))
			} else {
				f.op("VLD1 (%s), %s", ptr, neonList(r, k))
			}
		}, func(r Reg, ptr string) {
			f.op("VST1.P %s, %d(%s)", neonList(r, k), 16*k, ptr)
		})
	}
	f.countLoop(prefix+"8", n, "R11", 3, func() { vec(2) })
	f.op("TBZ $2, %s, %s4Done", n, prefix)
	vec(1)
	f.label(prefix + "4Done")
	f.op("AND $3, %s, %s", n, n)
	f.tailLoop(prefix+"1", n, func() {
		body(1, func(r Reg, ptr string, readOnly bool) {
			if readOnly {
				f.op("FMOVS.P 4(%s), F%d", ptr, r)
			} else {
				f.op("FMOVS (%s), F%d", ptr, r)
			}
		}, func(r Reg, ptr string) {
			f.op("FMOVS.P F%d, 4(%s)", r, ptr)
		})
	})
	f.op("RET")
}

// neonModes emits the branches on the mode register to each mode's section,
// then the sections (the first mode falls through).
func neonModes(f *neonFile, prefix, mode string, modes []int, emit func(mode int, label string)) {
	for _, md := range modes[1:] {
		f.op("CMP $%d, %s", md, mode)
		f.op("BEQ %s%d", prefix, md)
	}
	for _, md := range modes {
		l := fmt.Sprintf("%s%d", prefix, md)
		f.label(l)
		emit(md, l)
	}
}

// genAdamStepNEON emits adamStepNEON, fallback.AdamStep with one NEON
// instruction per operation (FMUL, FMLA/FMLS for the fused ones, FSQRT,
// FDIV): the same bits.
func genAdamStepNEON(f *neonFile) {
	f.text("adamStepNEON", "(p []float32, g []float32, m []float32, v []float32, lr float32, b1 float32, c1 float32, b2 float32, c2 float32, rs float32, eps float32, wd float32, mode int)", "$0-136",
		"is fallback.AdamStep: the same operations, the same bits.")
	f.op("MOVD p_base+0(FP), R0")
	f.op("MOVD p_len+8(FP), R4")
	f.op("MOVD g_base+24(FP), R1")
	f.op("MOVD m_base+48(FP), R2")
	f.op("MOVD v_base+72(FP), R3")
	f.op("MOVD mode+128(FP), R5")
	names := []string{"lr", "b1", "c1", "b2", "c2", "rs", "eps", "wd"}
	k := map[string]Reg{}
	for i, c := range names {
		r := vBcast + Reg(i) // V24–V31
		k[c] = r
		f.op("FMOVS %s+%d(FP), F%d", c, 96+4*i, r)
		f.v(DUPE(r, r, 0))
	}
	// Per vector j of an iteration: p, g, m, v, then t = new m, w = new v, d.
	P, G, M, V, T, W, D := vIn, vIn+2, vIn+4, vIn+6, vIn+8, vIn+10, vIn+12
	neonModes(f, "adam", "R5", []int{adamPlain, adamL2, adamDecoupled}, func(mode int, label string) {
		neonOptimLoop(f, label, "R4", func(n int, load func(Reg, string, bool), store func(Reg, string)) {
			each := func(op func(j Reg)) {
				for j := Reg(0); j < Reg(n); j++ {
					op(j)
				}
			}
			load(P, "R0", false)
			load(G, "R1", true)
			load(M, "R2", false)
			load(V, "R3", false)
			switch mode {
			case adamL2:
				each(func(j Reg) { f.v(FMLA(G+j, P+j, k["wd"])) }) // g = fma(wd, p, g)
			case adamDecoupled:
				each(func(j Reg) { f.v(FMUL(P+j, P+j, k["wd"])) }) // p = p·wd
			}
			each(func(j Reg) { f.v(FMUL(T+j, G+j, k["c1"])) })
			each(func(j Reg) { f.v(FMLA(T+j, M+j, k["b1"])) }) // m = fma(b1, m, c1·g)
			each(func(j Reg) { f.v(FMUL(W+j, G+j, k["c2"])) })
			each(func(j Reg) { f.v(FMUL(W+j, W+j, G+j)) })     // (c2·g)·g
			each(func(j Reg) { f.v(FMLA(W+j, V+j, k["b2"])) }) // v = fma(b2, v, (c2·g)·g)
			each(func(j Reg) { f.v(FSQRT(D+j, W+j)) })
			each(func(j Reg) { f.v(MOV(M+j, k["eps"])) })
			each(func(j Reg) { f.v(FMLA(M+j, D+j, k["rs"])) }) // fma(√v, rs, eps)
			each(func(j Reg) { f.v(FDIV(D+j, T+j, M+j)) })
			each(func(j Reg) { f.v(FMLS(P+j, D+j, k["lr"])) }) // p = fma(−lr, m/…, p)
			store(P, "R0")
			store(T, "R2")
			store(W, "R3")
		})
	})
}

// genSGDStepNEON emits sgdStepNEON, fallback.SGDStep with one NEON
// instruction per operation: the same bits.
func genSGDStepNEON(f *neonFile) {
	f.text("sgdStepNEON", "(p []float32, g []float32, b []float32, lr float32, mu float32, wd float32, mode int)", "$0-96",
		"is fallback.SGDStep: the same operations, the same bits.")
	f.op("MOVD p_base+0(FP), R0")
	f.op("MOVD p_len+8(FP), R4")
	f.op("MOVD g_base+24(FP), R1")
	f.op("MOVD b_base+48(FP), R2")
	f.op("MOVD mode+88(FP), R5")
	lr, mu, wd := vBcast, vBcast+1, vBcast+2
	for i, r := range []Reg{lr, mu, wd} {
		f.op("FMOVS %s+%d(FP), F%d", []string{"lr", "mu", "wd"}[i], 72+4*i, r)
		f.v(DUPE(r, r, 0))
	}
	P, G, B, X, Y := vIn, vIn+2, vIn+4, vIn+6, vIn+8
	modes := []int{0, sgdDecay, sgdMomentum, sgdDecay | sgdMomentum,
		sgdMomentum | sgdNesterov, sgdDecay | sgdMomentum | sgdNesterov}
	neonModes(f, "sgd", "R5", modes, func(mode int, label string) {
		neonOptimLoop(f, label, "R4", func(n int, load func(Reg, string, bool), store func(Reg, string)) {
			each := func(op func(j Reg)) {
				for j := Reg(0); j < Reg(n); j++ {
					op(j)
				}
			}
			load(P, "R0", false)
			load(G, "R1", true)
			if mode&sgdDecay != 0 {
				each(func(j Reg) { f.v(FMLA(G+j, P+j, wd)) }) // g = fma(wd, p, g)
			}
			d := G
			if mode&sgdMomentum != 0 {
				load(B, "R2", false)
				each(func(j Reg) { f.v(MOV(X+j, G+j)) })
				each(func(j Reg) { f.v(FMLA(X+j, B+j, mu)) }) // b = fma(mu, b, g)
				store(X, "R2")
				d = X
				if mode&sgdNesterov != 0 {
					each(func(j Reg) { f.v(MOV(Y+j, G+j)) })
					each(func(j Reg) { f.v(FMLA(Y+j, X+j, mu)) }) // fma(mu, b, g)
					d = Y
				}
			}
			each(func(j Reg) { f.v(FMLS(P+j, d+j, lr)) }) // p = fma(−lr, d, p)
			store(P, "R0")
		})
	})
}
