package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("optim", genOptimFamily) }

// The optimizer steps: element-wise updates of a flat parameter vector, one
// pass over the slices, their arithmetic that of fallback.AdamStep and
// fallback.SGDStep operation for operation (each op of theirs is one IEEE
// instruction here: VMULPS, VFMADD231PS/VFMADD213PS/VFNMADD231PS for fma,
// VSQRTPS, VDIVPS), so every ISA gives fallback's bits.
func genOptimFamily() {
	for _, s := range isas {
		genAdamStep(s)
	}
	for _, s := range isas {
		genSGDStep(s)
	}
}

// The modes of the steps (fallback.AdamPlain…, fallback.SGDDecay…).
const (
	adamPlain, adamL2, adamDecoupled   = 0, 1, 2
	sgdDecay, sgdMomentum, sgdNesterov = 1, 2, 4
)

// optimAccess loads and stores one vector of each slice at the current
// element: a whole vector, the AVX-512 opmask tail, or lane 0 alone.
type optimAccess struct {
	load  func(base GPVirtual) VecVirtual
	store func(v VecVirtual, base GPVirtual)
	// src returns the vector as a source operand: its memory for whole
	// vectors, else a loaded register.
	src func(base GPVirtual) Op
}

// withLoadedSrc returns a with src loading a register.
func (a optimAccess) withLoadedSrc() optimAccess {
	a.src = func(base GPVirtual) Op { return a.load(base) }
	return a
}

// optimLoop emits, under labels prefixed by prefix, the loop of an update
// over the n elements at the pointers ptrs: body(a) once per vector with a
// addressing element i of every pointer, then the tail (AVX-512: one opmask
// vector; AVX2: one element at a time in lane 0, VMOVSS zeroing the other
// lanes), and the return.
func optimLoop(s *isa, prefix string, n GPVirtual, body func(a optimAccess)) {
	i, lim := asm.GP64(), asm.GP64()
	asm.XORQ(i, i)
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-s.lanes), lim)
	at := func(base GPVirtual) Mem { return Mem{Base: base, Index: i, Scale: 4} }
	asm.Label(prefix + "Loop")
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef(prefix + "Tail"))
	body(optimAccess{
		load: func(base GPVirtual) VecVirtual {
			v := s.vec()
			asm.VMOVUPS(at(base), v)
			return v
		},
		store: func(v VecVirtual, base GPVirtual) { asm.VMOVUPS(v, at(base)) },
		src:   func(base GPVirtual) Op { return at(base) },
	})
	asm.ADDQ(U32(s.lanes), i)
	asm.JMP(LabelRef(prefix + "Loop"))
	asm.Label(prefix + "Tail")
	if s.evex {
		rem := asm.GP64()
		asm.MOVQ(n, rem)
		asm.SUBQ(i, rem)
		asm.JZ(LabelRef(prefix + "Done"))
		k := s.tailMask(rem).k
		body(optimAccess{
			load: func(base GPVirtual) VecVirtual {
				v := s.vec()
				asm.VMOVUPS_Z(at(base), k, v)
				return v
			},
			store: func(v VecVirtual, base GPVirtual) { asm.VMOVUPS(v, k, at(base)) },
		}.withLoadedSrc())
	} else {
		asm.CMPQ(i, n)
		asm.JAE(LabelRef(prefix + "Done"))
		asm.Label(prefix + "Scalar")
		body(optimAccess{
			load: func(base GPVirtual) VecVirtual {
				v := s.vec()
				asm.VMOVSS(at(base), v.AsX())
				return v
			},
			store: func(v VecVirtual, base GPVirtual) { asm.VMOVSS(v.AsX(), at(base)) },
		}.withLoadedSrc())
		asm.INCQ(i)
		asm.CMPQ(i, n)
		asm.JB(LabelRef(prefix + "Scalar"))
	}
	asm.Label(prefix + "Done")
	asm.VZEROUPPER()
	asm.RET()
}

// optimModes emits the jumps to each mode's section, then each section:
// emit(mode) under the label prefix+mode (the first mode falls through).
func optimModes(prefix string, modes []int, emit func(mode int, label string)) {
	mode := load(asm.Param("mode"))
	for _, md := range modes[1:] {
		asm.CMPQ(mode, U32(md))
		asm.JE(LabelRef(fmt.Sprintf("%s%d", prefix, md)))
	}
	for _, md := range modes {
		l := fmt.Sprintf("%s%d", prefix, md)
		asm.Label(l)
		emit(md, l)
	}
}

// genAdamStep emits adamStep<ISA>(p, g, m, v []float32, lr, b1, c1, b2, c2,
// rs, eps, wd float32, mode int): fallback.AdamStep over len(p) elements.
func genAdamStep(s *isa) {
	name := s.name("adamStep")
	TEXT(name, NOSPLIT, "func(p, g, m, v []float32, lr, b1, c1, b2, c2, rs, eps, wd float32, mode int)")
	asm.Doc(name + " is fallback.AdamStep: the same operations, the same bits.")
	p, g := load(asm.Param("p").Base()), load(asm.Param("g").Base())
	m, v := load(asm.Param("m").Base()), load(asm.Param("v").Base())
	n := load(asm.Param("p").Len())
	k := map[string]VecVirtual{}
	for _, c := range []string{"lr", "b1", "c1", "b2", "c2", "rs", "eps", "wd"} {
		k[c] = s.broadcast(c)
	}
	optimModes("adam", []int{adamPlain, adamL2, adamDecoupled}, func(mode int, label string) {
		optimLoop(s, label, n, func(a optimAccess) {
			pv, gv := a.load(p), a.load(g)
			switch mode {
			case adamL2:
				asm.VFMADD231PS(pv, k["wd"], gv) // g = fma(wd, p, g)
			case adamDecoupled:
				asm.VMULPS(k["wd"], pv, pv) // p = p·wd
			}
			t := s.vec()
			asm.VMULPS(k["c1"], gv, t)            // c1·g
			asm.VFMADD231PS(a.src(m), k["b1"], t) // m = fma(b1, m, c1·g)
			w := s.vec()
			asm.VMULPS(k["c2"], gv, w)
			asm.VMULPS(gv, w, w)                  // (c2·g)·g
			asm.VFMADD231PS(a.src(v), k["b2"], w) // v = fma(b2, v, (c2·g)·g)
			d := s.vec()
			asm.VSQRTPS(w, d)
			asm.VFMADD213PS(k["eps"], k["rs"], d) // fma(√v, rs, eps)
			asm.VDIVPS(d, t, d)                   // m / …
			asm.VFNMADD231PS(d, k["lr"], pv)      // p = fma(−lr, m/…, p)
			a.store(pv, p)
			a.store(t, m)
			a.store(w, v)
		})
	})
}

// genSGDStep emits sgdStep<ISA>(p, g, b []float32, lr, mu, wd float32, mode
// int): fallback.SGDStep over len(p) elements; b is read only with
// sgdMomentum.
func genSGDStep(s *isa) {
	name := s.name("sgdStep")
	TEXT(name, NOSPLIT, "func(p, g, b []float32, lr, mu, wd float32, mode int)")
	asm.Doc(name + " is fallback.SGDStep: the same operations, the same bits.")
	p, g, b := load(asm.Param("p").Base()), load(asm.Param("g").Base()), load(asm.Param("b").Base())
	n := load(asm.Param("p").Len())
	lr, mu, wd := s.broadcast("lr"), s.broadcast("mu"), s.broadcast("wd")
	modes := []int{0, sgdDecay, sgdMomentum, sgdDecay | sgdMomentum,
		sgdMomentum | sgdNesterov, sgdDecay | sgdMomentum | sgdNesterov}
	optimModes("sgd", modes, func(mode int, label string) {
		optimLoop(s, label, n, func(a optimAccess) {
			pv, gv := a.load(p), a.load(g)
			if mode&sgdDecay != 0 {
				asm.VFMADD231PS(pv, wd, gv) // g = fma(wd, p, g)
			}
			d := gv
			if mode&sgdMomentum != 0 {
				bv := a.load(b)
				asm.VFMADD213PS(gv, mu, bv) // b = fma(mu, b, g)
				a.store(bv, b)
				d = bv
				if mode&sgdNesterov != 0 {
					asm.VFMADD231PS(bv, mu, gv) // fma(mu, b, g)
					d = gv
				}
			}
			asm.VFNMADD231PS(d, lr, pv) // p = fma(−lr, d, p)
			a.store(pv, p)
		})
	})
}
