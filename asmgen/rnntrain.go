package main

import (
	"math/bits"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("rnntrain", genRNNTrainFamily) }

// genRNNTrainFamily emits the passes of LSTM and GRU training (kernels
// LSTMCellTrain, GRUCellTrain, LSTMCellBackward and GRUCellBackward) for
// AVX2 and AVX-512 (ZMM, as the forward cells). The forwards are the cells
// of rnncell.go with stores of what the backward reads; the backwards are
// products and differences only, each one instruction rounded once.
func genRNNTrainFamily() {
	for _, s := range isas {
		genLSTMCellAs(s, true)
	}
	for _, s := range isas {
		genGRUCellAs(s, true)
	}
	for _, s := range isas {
		genLSTMCellBackward(s)
	}
	for _, s := range isas {
		genGRUCellBackward(s)
	}
}

// cellLoop emits the loop of a one-part cell pass over n positions: groups
// of per whole vectors, then (per = 2) a single whole vector, then the tail
// of cellTail, body getting one cellIO per vector; ptrs advance by the
// bytes the positions take. Each position's stores follow its loads in
// body, so an output may be an input of the same positions.
func cellLoop(s *isa, kernel string, n GPVirtual, ptrs []GPVirtual, per int, body func(ios []cellIO)) {
	lbl := func(l string) string { return kernel + l }
	advance := func(bytes int) {
		for _, p := range ptrs {
			asm.ADDQ(U32(bytes), p)
		}
	}
	ios := make([]cellIO, per)
	for i := range ios {
		ios[i] = cellIO{s: s, disp: i * s.bytes()}
	}
	cnt := asm.GP64()
	asm.MOVQ(n, cnt)
	asm.SHRQ(U8(bits.TrailingZeros(uint(per*s.lanes))), cnt)
	asm.JZ(LabelRef(lbl("Single")))
	asm.Label(lbl("Loop"))
	body(ios)
	advance(per * s.bytes())
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(lbl("Loop")))
	asm.Label(lbl("Single"))
	if per > 1 {
		asm.TESTQ(U32(s.lanes), n)
		asm.JZ(LabelRef(lbl("Tail")))
		body(ios[:1])
		advance(s.bytes())
	}
	cellTail(s, kernel, n, ptrs, body)
}

// oneMinus returns a new register holding 1 − x (one resident).
func oneMinus(s *isa, one vconst, x VecVirtual) VecVirtual {
	d := s.vec()
	asm.VSUBPS(x, one.r, d)
	return d
}

// mul returns a new register holding a·b.
func mul(s *isa, a, b VecVirtual) VecVirtual {
	d := s.vec()
	asm.VMULPS(b, a, d)
	return d
}

// genLSTMCellBackward emits lstmCellBackward<ISA>(dGates, dcPrev, act,
// cPrev, dh, dc []float32), the pass of kernels.LSTMCellBackward over
// H = len(cPrev): with act = [i; f; g; o; tc] (5H),
//
//	e = (dh·o)·(1 − tc·tc), dc̃ = dc + e, dcPrev = dc̃·f
//	dGates = [(dc̃·g)·(i·(1−i)); (dc̃·cPrev)·(f·(1−f)); (dc̃·i)·(1 − g·g); (dh·tc)·(o·(1−o))]
//
// each operation one VMULPS, VSUBPS or VADDPS, the operations of
// fallback.LSTMCellBackward, so the bits are fallback's.
func genLSTMCellBackward(s *isa) {
	name := s.name("lstmCellBackward")
	TEXT(name, NOSPLIT, "func(dGates, dcPrev, act, cPrev, dh, dc []float32)")
	asm.Doc(name+" sets, for j < H = len(cPrev), from act = [i; f; g; o; tanh(c')] (5H), dh and dc, with dc̃ = dc + (dh·o)·(1 − tc²),",
		"dGates = [(dc̃·g)·(i(1−i)); (dc̃·cPrev)·(f(1−f)); (dc̃·i)·(1−g²); (dh·tc)·(o(1−o))] and dcPrev = dc̃·f; dcPrev may be dc.")
	dG := load(asm.Param("dGates").Base())
	dcPrev := load(asm.Param("dcPrev").Base())
	act := load(asm.Param("act").Base())
	cPrev := load(asm.Param("cPrev").Base())
	dh := load(asm.Param("dh").Base())
	dc := load(asm.Param("dc").Base())
	n := load(asm.Param("cPrev").Len())
	hb, hb3 := asm.GP64(), asm.GP64()
	asm.MOVQ(n, hb)
	asm.SHLQ(U8(2), hb) // H elements in bytes
	asm.LEAQ(Mem{Base: hb, Index: hb, Scale: 2}, hb3)
	one := newConst(s, 1)
	keep(&one)
	dgm, am := gateAt(dG, hb, hb3), gateAt(act, hb, hb3)
	tcm := Mem{Base: act, Index: hb, Scale: 4}
	body := func(ios []cellIO) {
		for _, io := range ios {
			o, d := io.load(am[3]), io.load(Mem{Base: dh})
			e := mul(s, d, o) // dh·o
			tc := io.load(tcm)
			t := mul(s, tc, tc)
			asm.VSUBPS(t, one.r, t) // 1 − tc²
			asm.VMULPS(t, e, e)
			dct := io.load(Mem{Base: dc})
			asm.VADDPS(e, dct, dct) // dc̃ = dc + e
			// o: (dh·tc)·(o·(1 − o))
			do := mul(s, d, tc)
			w := oneMinus(s, one, o)
			asm.VMULPS(w, o, w)
			asm.VMULPS(w, do, do)
			io.store(do, dgm[3])
			// dcPrev = dc̃·f; f: (dc̃·cPrev)·(f·(1 − f))
			f := io.load(am[1])
			dp := mul(s, dct, f)
			io.store(dp, Mem{Base: dcPrev})
			w = oneMinus(s, one, f)
			asm.VMULPS(w, f, w)
			cp := io.load(Mem{Base: cPrev})
			asm.VMULPS(cp, dct, cp)
			asm.VMULPS(w, cp, cp)
			io.store(cp, dgm[1])
			// i: (dc̃·g)·(i·(1 − i)); g: (dc̃·i)·(1 − g·g)
			i, g := io.load(am[0]), io.load(am[2])
			di := mul(s, dct, g)
			w = oneMinus(s, one, i)
			asm.VMULPS(w, i, w)
			asm.VMULPS(w, di, di)
			io.store(di, dgm[0])
			dg := mul(s, dct, i)
			t = mul(s, g, g)
			asm.VSUBPS(t, one.r, t)
			asm.VMULPS(t, dg, dg)
			io.store(dg, dgm[2])
		}
	}
	per := 1
	if s.evex {
		per = cellPairs
	}
	cellLoop(s, "lstmb", n, []GPVirtual{dG, dcPrev, act, cPrev, dh, dc}, per, body)
}

// genGRUCellBackward emits gruCellBackward<ISA>(dGx, dGh, dhPrev, act, h,
// dh []float32), the pass of kernels.GRUCellBackward over H = len(h): with
// act = [r; z; n; q] (4H),
//
//	dn = dh·(1 − z), dz = dh·(h − n), dhPrev = dh·z
//	dan = dn·(1 − n·n), dq = dan·r, dar = (dan·q)·(r·(1 − r)), daz = dz·(z·(1 − z))
//	dGx = [dar; daz; dan], dGh = [dar; daz; dq]
//
// the operations of fallback.GRUCellBackward, so the bits are fallback's.
func genGRUCellBackward(s *isa) {
	name := s.name("gruCellBackward")
	TEXT(name, NOSPLIT, "func(dGx, dGh, dhPrev, act, h, dh []float32)")
	asm.Doc(name+" sets, for j < H = len(h), from act = [r; z; n; q] (4H), h and dh, with dan = dh·(1−z)·(1−n²),",
		"dGx = [dar; daz; dan], dGh = [dar; daz; dan·r] (dar = (dan·q)·(r(1−r)), daz = dh·(h−n)·(z(1−z))) and dhPrev = dh·z; dhPrev may be dh.")
	dGx := load(asm.Param("dGx").Base())
	dGh := load(asm.Param("dGh").Base())
	dhPrev := load(asm.Param("dhPrev").Base())
	act := load(asm.Param("act").Base())
	h := load(asm.Param("h").Base())
	dh := load(asm.Param("dh").Base())
	n := load(asm.Param("h").Len())
	hb, hb3 := asm.GP64(), asm.GP64()
	asm.MOVQ(n, hb)
	asm.SHLQ(U8(2), hb) // H elements in bytes
	asm.LEAQ(Mem{Base: hb, Index: hb, Scale: 2}, hb3)
	one := newConst(s, 1)
	keep(&one)
	xm, hm, am := gateAt(dGx, hb, hb3), gateAt(dGh, hb, hb3), gateAt(act, hb, hb3)
	body := func(ios []cellIO) {
		for _, io := range ios {
			z := io.load(am[1])
			omz := oneMinus(s, one, z)
			d := io.load(Mem{Base: dh})
			dn := mul(s, d, omz) // dh·(1 − z)
			hv, nv := io.load(Mem{Base: h}), io.load(am[2])
			asm.VSUBPS(nv, hv, hv) // h − n
			asm.VMULPS(hv, d, hv)  // dz = dh·(h − n)
			asm.VMULPS(z, d, d)    // dh·z
			io.store(d, Mem{Base: dhPrev})
			asm.VMULPS(omz, z, z) // z·(1 − z)
			asm.VMULPS(z, hv, hv) // daz
			io.store(hv, xm[1])
			io.store(hv, hm[1])
			asm.VMULPS(nv, nv, nv)
			asm.VSUBPS(nv, one.r, nv) // 1 − n²
			asm.VMULPS(nv, dn, dn)    // dan
			io.store(dn, xm[2])
			r := io.load(am[0])
			dq := mul(s, dn, r)
			io.store(dq, hm[2])
			q := io.load(am[3])
			asm.VMULPS(q, dn, q) // dan·q
			w := oneMinus(s, one, r)
			asm.VMULPS(w, r, w)
			asm.VMULPS(w, q, q) // dar
			io.store(q, xm[0])
			io.store(q, hm[0])
		}
	}
	per := 1
	if s.evex {
		per = cellPairs
	}
	cellLoop(s, "grub", n, []GPVirtual{dGx, dGh, dhPrev, act, h, dh}, per, body)
}
