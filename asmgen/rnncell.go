package main

import (
	"math/bits"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("rnncell", genRNNCellFamily) }

// genRNNCellFamily emits the fused LSTM and GRU state updates (kernels
// LSTMCell and GRUCell) for AVX2 and AVX-512 (ZMM, as Sigmoid and Tanh: the
// pass is bound by its arithmetic, not by loads).
func genRNNCellFamily() {
	for _, s := range isas {
		genLSTMCell(s)
	}
	for _, s := range isas {
		genGRUCell(s)
	}
}

// cellIO is how one position of a cell pass moves data: whole vectors, an
// opmask tail (AVX-512) or one element (AVX2's tail: VBROADCASTSS loads it
// into every lane, a write of the whole register, so the register allocator
// sees no value live into the tail from before the loop; VMOVSS stores lane
// 0; no operand wider than the element touches memory).
type cellIO struct {
	s      *isa
	k      OpmaskVirtual // the tail's lanes, or nil
	scalar bool
	disp   int // the position's offset from the pointers, in bytes
}

func (io cellIO) load(m Mem) VecVirtual {
	m.Disp += io.disp
	v := io.s.vec()
	switch {
	case io.scalar:
		asm.VBROADCASTSS(m, v)
	case io.k != nil:
		asm.VMOVUPS_Z(m, io.k, v)
	default:
		asm.VMOVUPS(m, v)
	}
	return v
}

func (io cellIO) store(v VecVirtual, m Mem) {
	m.Disp += io.disp
	switch {
	case io.scalar:
		asm.VMOVSS(v.AsX(), m)
	case io.k != nil:
		asm.VMOVUPS(v, io.k, m)
	default:
		asm.VMOVUPS(v, m)
	}
}

// cellPairs is the number of vectors of positions a cell pass computes
// together on AVX-512, interleaving their chains (AVX2 has the registers
// for one).
const cellPairs = 2

// cellTail emits, at the label kernel+"Tail", the positions of n (mod the
// vector's lanes) that the vector loops left, and the return.
func cellTail(s *isa, kernel string, n GPVirtual, ptrs []GPVirtual, body func(ios []cellIO)) {
	lbl := func(l string) string { return kernel + l }
	asm.Label(lbl("Tail"))
	asm.ANDQ(U32(s.lanes-1), n)
	asm.JZ(LabelRef(lbl("Done")))
	if s.evex {
		body([]cellIO{{s: s, k: s.tailMask(n).k}})
	} else {
		asm.Label(lbl("Scalar"))
		body([]cellIO{{s: s, scalar: true}})
		for _, p := range ptrs {
			asm.ADDQ(U32(4), p)
		}
		asm.DECQ(n)
		asm.JNZ(LabelRef(lbl("Scalar")))
	}
	asm.Label(lbl("Done"))
	asm.VZEROUPPER()
	asm.RET()
}

// cellLoopPipelined emits the loop of a cell pass over n = len(c) (or
// len(h)) positions, a pass in two parts: a, which returns the vectors b
// needs (as many for every group), and b. It takes groups of per whole
// vectors (cellPairs on AVX-512, one on AVX2): each iteration runs a on
// group k, then b on group k−1 with what a returned for it, so that their
// independent chains sit side by side in the out-of-order window; b of the
// last group follows the loop. A single whole vector left (per = 2), then
// the tail (an opmask on AVX-512, one element at a time on AVX2), take both
// parts in turn. a and b get one cellIO per vector; ptrs advance by the
// bytes the positions take. Each part stores a position's outputs after
// its own loads of that position, and the positions b reads are only those
// a and b have not written yet, so an output may be an input of the same
// positions (in place) where the kernel's contract allows it.
func cellLoopPipelined(s *isa, kernel string, n GPVirtual, ptrs []GPVirtual, per int,
	a func(ios []cellIO) []VecVirtual, b func(ios []cellIO, v []VecVirtual)) {
	lbl := func(l string) string { return kernel + l }
	advance := func(bytes int) {
		for _, p := range ptrs {
			asm.ADDQ(U32(bytes), p)
		}
	}
	group := func(disp int) []cellIO {
		ios := make([]cellIO, per)
		for i := range ios {
			ios[i] = cellIO{s: s, disp: disp + i*s.bytes()}
		}
		return ios
	}
	step := per * s.bytes()
	cnt := asm.GP64()
	var prev []VecVirtual // what a returned for the previous group
	keep := func(v []VecVirtual) {
		if prev == nil {
			prev = make([]VecVirtual, len(v))
			for i := range prev {
				prev[i] = s.vec()
			}
		}
		for i := range v {
			asm.VMOVAPS(v[i], prev[i])
		}
	}
	asm.MOVQ(n, cnt)
	asm.SHRQ(U8(bits.TrailingZeros(uint(per*s.lanes))), cnt)
	asm.JZ(LabelRef(lbl("Single")))
	keep(a(group(0)))
	advance(step)
	asm.DECQ(cnt)
	asm.JZ(LabelRef(lbl("Drain")))
	asm.Label(lbl("Loop"))
	v := a(group(0))
	b(group(-step), prev)
	keep(v)
	advance(step)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(lbl("Loop")))
	asm.Label(lbl("Drain"))
	b(group(-step), prev)
	both := func(ios []cellIO) { b(ios, a(ios)) }
	asm.Label(lbl("Single"))
	if per > 1 {
		asm.TESTQ(U32(s.lanes), n)
		asm.JZ(LabelRef(lbl("Tail")))
		both([]cellIO{{s: s}})
		advance(s.bytes())
	}
	cellTail(s, kernel, n, ptrs, both)
}

// each returns f applied to every io.
func each[T any](ios []cellIO, f func(io cellIO) T) []T {
	r := make([]T, len(ios))
	for i, io := range ios {
		r[i] = f(io)
	}
	return r
}

// gateAt returns the operands of the four H-element blocks of a 4H-element
// slice at position p: p, p + H, p + 2H and p + 3H elements (hb = 4H bytes,
// hb3 = 12H bytes).
func gateAt(p, hb, hb3 GPVirtual) [4]Mem {
	return [4]Mem{{Base: p}, {Base: p, Index: hb, Scale: 1}, {Base: p, Index: hb, Scale: 2}, {Base: p, Index: hb3, Scale: 1}}
}

// genLSTMCell emits lstmCell<ISA>(hOut, cOut, gates, b, c []float32), the
// pass of kernels.LSTMCell over H = len(c): from the pre-activations
// gates = [i; f; g; o] (4H) and the bias b (4H),
//
//	i = σ(gᵢ + bᵢ), f = σ(g_f + b_f), g = tanh(g_g + b_g), o = σ(g_o + b_o)
//	c' = f·c + i·g, h' = o·tanh(c')
//
// with σ and tanh the instruction sequences of sigmoid<ISA> and tanh<ISA>
// (sigmoidGen, tanhGen) and every other operation one instruction with the
// operand order of kernels.Add and Mul in rnn's composition (first source
// the left operand above), so the bits are those of the composition.
func genLSTMCell(s *isa) { genLSTMCellAs(s, false) }

// genLSTMCellAs emits lstmCell<ISA>, or with train lstmCellTrain<ISA>(hOut,
// cOut, act, gates, b, c []float32), the pass of kernels.LSTMCellTrain: the
// same instructions, with stores of i, f, g, o and tanh(c') into the five
// H-element blocks of act as each is computed (before the register holding
// it is overwritten).
func genLSTMCellAs(s *isa, train bool) {
	var name string
	var act GPVirtual
	if train {
		name = s.name("lstmCellTrain")
		TEXT(name, NOSPLIT, "func(hOut, cOut, act, gates, b, c []float32)")
		asm.Doc(name+" is lstmCell"+s.suffix+" that also stores the activated gates i, f, g, o and tanh(c') into the",
			"five H-element blocks of act (5H); cOut may be c.")
	} else {
		name = s.name("lstmCell")
		TEXT(name, NOSPLIT, "func(hOut, cOut, gates, b, c []float32)")
		asm.Doc(name+" sets, for j < H = len(c), from the pre-activations gates = [i; f; g; o] (4H) and the bias b (4H),",
			"c' = σ(f+b_f)·c + σ(i+b_i)·tanh(g+b_g) into cOut[j] and σ(o+b_o)·tanh(c') into hOut[j]; cOut may be c.")
	}
	hOut := load(asm.Param("hOut").Base())
	cOut := load(asm.Param("cOut").Base())
	if train {
		act = load(asm.Param("act").Base())
	}
	g := load(asm.Param("gates").Base())
	b := load(asm.Param("b").Base())
	c := load(asm.Param("c").Base())
	n := load(asm.Param("c").Len())
	hb, hb3 := asm.GP64(), asm.GP64()
	asm.MOVQ(n, hb)
	asm.SHLQ(U8(2), hb) // H elements in bytes
	asm.LEAQ(Mem{Base: hb, Index: hb, Scale: 2}, hb3)
	sg, th := newSigmoidGen(s), newTanhGen(s)
	sg.keep()
	gm, bm := gateAt(g, hb, hb3), gateAt(b, hb, hb3)
	// save stores v, computed for the positions of ios, into block k of act.
	save := func(k int, ios []cellIO, v []VecVirtual) {
		if !train {
			return
		}
		m := Mem{Base: act, Index: hb, Scale: 4} // block 4: tanh(c')
		if k < 4 {
			m = gateAt(act, hb, hb3)[k]
		}
		for p, io := range ios {
			io.store(v[p], m)
		}
	}
	pre := func(k int) func(io cellIO) VecVirtual {
		return func(io cellIO) VecVirtual { // gates + b, as kernels.Add(g, g, b)
			v, w := io.load(gm[k]), io.load(bm[k])
			asm.VADDPS(w, v, v)
			return v
		}
	}
	// c' = σ(f)·c + σ(i)·tanh(g): tanh(g) first, then σ(i) and σ(f) of
	// every vector interleaved.
	cell := func(ios []cellIO) []VecVirtual {
		gg := th.applyN(each(ios, pre(2))...)
		save(2, ios, gg)
		var in []VecVirtual
		for _, io := range ios {
			in = append(in, pre(0)(io), pre(1)(io))
		}
		sv := sg.applyN(in...)
		cn := make([]VecVirtual, len(ios))
		for p, io := range ios {
			ig, fg := sv[2*p], sv[2*p+1]
			save(0, ios[p:p+1], sv[2*p:2*p+1])
			save(1, ios[p:p+1], sv[2*p+1:2*p+2])
			cv := io.load(Mem{Base: c})
			asm.VMULPS(cv, fg, fg)    // f·c
			asm.VMULPS(gg[p], ig, ig) // i·g
			asm.VADDPS(ig, fg, fg)    // c' = f·c + i·g
			io.store(fg, Mem{Base: cOut})
			cn[p] = fg
		}
		return cn
	}
	// h' = σ(o)·tanh(c').
	hidden := func(ios []cellIO, cn []VecVirtual) {
		og := sg.applyN(each(ios, pre(3))...)
		tc := th.applyN(cn...)
		save(3, ios, og)
		save(4, ios, tc)
		for p, io := range ios {
			asm.VMULPS(tc[p], og[p], og[p])
			io.store(og[p], Mem{Base: hOut})
		}
	}
	per := 1
	if s.evex {
		per = cellPairs
	}
	ptrs := []GPVirtual{hOut, cOut, g, b, c}
	if train {
		ptrs = append(ptrs, act)
	}
	cellLoopPipelined(s, "lstm", n, ptrs, per, cell, hidden)
}

// genGRUCell emits gruCell<ISA>(hOut, gates, nh, bx, bh, h []float32), the
// pass of kernels.GRUCell over H = len(h): from gates = [r; z; n] (3H: the
// r and z rows' products over [x; h], then W_nx·x), nh = W_nh·h (H) and the
// biases bx, bh (3H each),
//
//	r = σ((r + bx_r) + bh_r), z = σ((z + bx_z) + bh_z)
//	n = tanh((n + bx_n) + r·(nh + bh_n))
//	h' = n + z·(h − n)
//
// each operation one instruction in the order and operand order of rnn's
// composition of kernels.Add, Sub, Mul, Sigmoid and Tanh, so the bits are
// those of the composition.
func genGRUCell(s *isa) { genGRUCellAs(s, false) }

// genGRUCellAs emits gruCell<ISA>, or with train gruCellTrain<ISA>(hOut,
// act, gates, nh, bx, bh, h []float32), the pass of kernels.GRUCellTrain:
// the same instructions, with stores of r, z, n and q = nh + bh_n into the
// four H-element blocks of act as each is computed.
func genGRUCellAs(s *isa, train bool) {
	var name string
	var act GPVirtual
	if train {
		name = s.name("gruCellTrain")
		TEXT(name, NOSPLIT, "func(hOut, act, gates, nh, bx, bh, h []float32)")
		asm.Doc(name+" is gruCell"+s.suffix+" that also stores r, z, n and q = nh + bh_n into the four H-element",
			"blocks of act (4H); hOut may be h.")
	} else {
		name = s.name("gruCell")
		TEXT(name, NOSPLIT, "func(hOut, gates, nh, bx, bh, h []float32)")
		asm.Doc(name+" sets, for j < H = len(h), hOut[j] = n + z·(h[j] − n) with r = σ(gates[j]+bx+bh),",
			"z = σ(gates[H+j]+bx+bh), n = tanh(gates[2H+j]+bx + r·(nh[j]+bh)) (bx, bh at the same offsets); hOut may be h.")
	}
	hOut := load(asm.Param("hOut").Base())
	if train {
		act = load(asm.Param("act").Base())
	}
	g := load(asm.Param("gates").Base())
	nh := load(asm.Param("nh").Base())
	bx := load(asm.Param("bx").Base())
	bh := load(asm.Param("bh").Base())
	h := load(asm.Param("h").Base())
	n := load(asm.Param("h").Len())
	hb := asm.GP64()
	asm.MOVQ(n, hb)
	asm.SHLQ(U8(2), hb) // H elements in bytes
	sg, th := newSigmoidGen(s), newTanhGen(s)
	sg.keep()
	at := func(p GPVirtual, k int) Mem { return gateAt(p, hb, hb)[k] }
	var hb3 GPVirtual // 12H bytes: act's block 3
	if train {
		hb3 = asm.GP64()
		asm.LEAQ(Mem{Base: hb, Index: hb, Scale: 2}, hb3)
	}
	save := func(k int, io cellIO, v VecVirtual) {
		if train {
			io.store(v, gateAt(act, hb, hb3)[k])
		}
	}
	pre := func(k int) func(io cellIO) VecVirtual {
		return func(io cellIO) VecVirtual { // (gates + bx) + bh, as two kernels.Add
			v, w := io.load(at(g, k)), io.load(at(bx, k))
			asm.VADDPS(w, v, v)
			w = io.load(at(bh, k))
			asm.VADDPS(w, v, v)
			return v
		}
	}
	// r, z and tanh's argument (n + bx_n) + r·(nh + bh_n): z and the
	// argument for each vector, in that order.
	gates := func(ios []cellIO) []VecVirtual {
		var in []VecVirtual
		for _, io := range ios {
			in = append(in, pre(0)(io), pre(1)(io))
		}
		sv := sg.applyN(in...)
		var out []VecVirtual
		for p, io := range ios {
			r := sv[2*p]
			save(0, io, r)
			save(1, io, sv[2*p+1])
			v, w := io.load(at(g, 2)), io.load(at(bx, 2))
			asm.VADDPS(w, v, v) // n + bx_n
			q, w2 := io.load(Mem{Base: nh}), io.load(at(bh, 2))
			asm.VADDPS(w2, q, q) // nh + bh_n
			save(3, io, q)
			asm.VMULPS(q, r, r) // r·(nh + bh_n)
			asm.VADDPS(r, v, v)
			out = append(out, sv[2*p+1], v)
		}
		return out
	}
	// h' = n + z·(h − n), n = tanh(argument).
	update := func(ios []cellIO, zn []VecVirtual) {
		var args []VecVirtual
		for p := range ios {
			args = append(args, zn[2*p+1])
		}
		t := th.applyN(args...)
		for p, io := range ios {
			save(2, io, t[p])
			z := zn[2*p]
			hv := io.load(Mem{Base: h})
			asm.VSUBPS(t[p], hv, hv)   // h − n
			asm.VMULPS(hv, z, hv)      // z·(h − n)
			asm.VADDPS(hv, t[p], t[p]) // n + z·(h − n)
			io.store(t[p], Mem{Base: hOut})
		}
	}
	per := 1
	if s.evex {
		per = cellPairs
	}
	ptrs := []GPVirtual{hOut, g, nh, bx, bh, h}
	if train {
		ptrs = append(ptrs, act)
	}
	cellLoopPipelined(s, "gru", n, ptrs, per, gates, update)
}
