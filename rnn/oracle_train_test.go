package rnn

import (
	"math"
	"slices"

	"github.com/heedml/heed/kernels"
)

// The training tests' oracle: the sequence forward and backward of both
// cells evaluated in float64 with, beside each value, a bound on the error of
// heed's float32 computation of it (a running error analysis). Every
// operation is modelled as heed performs it: a float32 operation rounded once
// (kernels.Add, the cells' sums and products), σ and tanh within 2 ULP of
// their function on the computed argument (and σ' ≤ 1/4, tanh' ≤ 1 carry
// the argument's error), and each matrix product element within Gemm's
// bound γ_{k+1}·(Σ|terms| + |the value it adds to|) on the computed
// operands. The bounds are thus derived operation by operation, to all
// orders (the products of errors are kept), and every heed output must lie
// within its bound of the oracle's value; the values themselves are checked
// against central finite differences of the float64 forward.

// bv is a float64 value and the bound on the error of heed's float32
// computation of it.
type bv struct{ v, e float64 }

func ex(x float32) bv { return bv{float64(x), 0} }

// rounded is the result of one float32 operation whose exact result on the
// computed operands is v ± e: one rounding more.
func rounded(v, e float64) bv { return bv{v, e + u*(math.Abs(v)+e)} }

func (a bv) add(b bv) bv { return rounded(a.v+b.v, a.e+b.e) }
func (a bv) sub(b bv) bv { return rounded(a.v-b.v, a.e+b.e) }
func (a bv) mul(b bv) bv {
	return rounded(a.v*b.v, math.Abs(a.v)*b.e+math.Abs(b.v)*a.e+a.e*b.e)
}

func (a bv) sigmoid() bv {
	s, e := sig64(a.v), a.e/4
	return bv{s, e + 4*u*(s+e) + 0x1p-126}
}

func (a bv) tanh() bv {
	t := math.Tanh(a.v)
	return bv{t, a.e + 4*u*(math.Abs(t)+a.e) + 0x1p-126}
}

var one = bv{1, 0}

// dot is one element of a Gemm product, Σ a_i·b_i, added (β = 1) to *c0
// unless c0 is nil.
func dot(a, b []bv, c0 *bv) bv {
	var s, prop, abs float64
	for i := range a {
		s += a[i].v * b[i].v
		prop += math.Abs(a[i].v)*b[i].e + math.Abs(b[i].v)*a[i].e + a[i].e*b[i].e
		abs += (math.Abs(a[i].v) + a[i].e) * (math.Abs(b[i].v) + b[i].e)
	}
	if c0 != nil {
		s += c0.v
		prop += c0.e
		abs += math.Abs(c0.v) + c0.e
	}
	k := len(a)
	return bv{s, prop + gamma(k+1)*abs + float64(k+1)*0x1p-149}
}

// An input of a case, for the finite differences: the oracle reads every
// input through seqCase.at, which adds pert.d to the one pert names.
type input int

const (
	inW input = iota
	inB
	inBx
	inBh
	inX
	inH0
	inC0
)

type perturbation struct {
	in   input
	r, c int
	d    float64
}

// at returns element (r, c) of input in (a vector's element r) as an exact
// value, perturbed as sc.pert says.
func (sc *seqCase) at(in input, r, c int) bv {
	var v float32
	switch in {
	case inW:
		v = sc.w.Data[r*sc.w.Stride+c]
	case inB:
		v = sc.b[r]
	case inBx:
		v = sc.bx[r]
	case inBh:
		v = sc.bh[r]
	case inX:
		v = sc.x.Data[r*sc.x.Stride+c]
	case inH0:
		v = sc.h0.Data[r*sc.h0.Stride+c]
	case inC0:
		v = sc.c0.Data[r*sc.c0.Stride+c]
	}
	x := ex(v)
	if p := sc.pert; p.d != 0 && p.in == in && p.r == r && p.c == c {
		x.v += p.d
	}
	return x
}

// row returns elements [c0, c1) of row r of input in.
func (sc *seqCase) row(in input, r, c0, c1 int) []bv {
	v := make([]bv, c1-c0)
	for i := range v {
		v[i] = sc.at(in, r, c0+i)
	}
	return v
}

// column returns element j of every row of rows.
func column(rows [][]bv, j int) []bv {
	c := make([]bv, len(rows))
	for i := range rows {
		c[i] = rows[i][j]
	}
	return c
}

// seqCase is one sequence: the cell's shapes, weights and biases, the
// inputs (step-major, T·B rows) and initial states, the output gradients
// (nil rows: not given) and the gradient buffers' initial contents, which
// Backward adds to.
type seqCase struct {
	In, H, B, T int
	w           kernels.Matrix
	b, bx, bh   []float32 // LSTM's b; GRU's bx, bh
	x           kernels.Matrix
	h0, c0      kernels.Matrix
	dhs         kernels.Matrix // may be empty
	dhT, dcT    kernels.Matrix // may be empty
	// Initial contents of the gradients (Backward accumulates).
	dW           kernels.Matrix
	db, dbx, dbh []float32
	dx, dh0, dc0 kernels.Matrix
	pert         perturbation // the oracle's, for finite differences
	// local, when set, holds heed's own saved values (exact): the oracle
	// then starts each step from them, so that its bounds span one step.
	local *localVals
}

// localVals are heed's values the oracle resynchronises to, by rows of the
// step-major T·B: the states each step started from, the saved activations
// (LSTM: i, f, g, o, tanh(c); GRU: r, z, n, q) and the gates' gradients
// (LSTM's dG; GRU's dGx and dGh).
type localVals struct {
	hPrev, cPrev, act, dG, dGh [][]bv
}

// seqOracle is the oracle's result for a case.
type seqOracle struct {
	hs      [][]bv // T·B rows of H
	cT      [][]bv // B rows (LSTM)
	dx      [][]bv // T·B × In
	dh0     [][]bv // B × H
	dc0     [][]bv // B × H (LSTM)
	dW      [][]bv // gate rows × (In+H)
	db      []bv   // LSTM
	dbx     []bv   // GRU
	dbh     []bv
	hPrev   [][]bv // the states each step started from
	act     [][]bv // T·B rows: the saved activations
	cs      [][]bv // T·B rows: c_t (LSTM)
	dG      [][]bv // T·B rows: the gates' gradients (LSTM's; GRU's dGx)
	dGh     [][]bv // GRU's dGh
	forward float64
}

// gradAt returns the given gradient's element (r, j), or exact 0 when m is
// empty.
func gradAt(m kernels.Matrix, r, j int) bv {
	if m.Rows == 0 || m.Cols == 0 {
		return bv{}
	}
	return ex(m.Data[r*m.Stride+j])
}

// lstmSeqOracle evaluates the LSTM's Forward and Backward for sc.
func lstmSeqOracle(sc *seqCase) *seqOracle {
	In, H, B, T := sc.In, sc.H, sc.B, sc.T
	o := &seqOracle{}
	type saved struct{ i, f, g, o, tc, cPrev []bv }
	tape := make([]saved, T*B)
	h := make([][]bv, B)
	c := make([][]bv, B)
	for b := range B {
		h[b], c[b] = sc.row(inH0, b, 0, H), sc.row(inC0, b, 0, H)
	}
	for t := range T {
		nh, nc := make([][]bv, B), make([][]bv, B)
		for b := range B {
			r := t*B + b
			xr := sc.row(inX, r, 0, In)
			if lv := sc.local; lv != nil {
				h[b], c[b] = lv.hPrev[r], lv.cPrev[r]
			}
			o.hPrev = append(o.hPrev, h[b])
			pre := make([]bv, 4*H)
			for k := range 4 * H {
				gx := dot(sc.row(inW, k, 0, In), xr, nil)
				pre[k] = dot(sc.row(inW, k, In, In+H), h[b], &gx).add(sc.at(inB, k, 0))
			}
			s := saved{make([]bv, H), make([]bv, H), make([]bv, H), make([]bv, H), make([]bv, H), c[b]}
			nh[b], nc[b] = make([]bv, H), make([]bv, H)
			for j := range H {
				s.i[j], s.f[j], s.g[j], s.o[j] = pre[j].sigmoid(), pre[H+j].sigmoid(), pre[2*H+j].tanh(), pre[3*H+j].sigmoid()
				nc[b][j] = s.f[j].mul(c[b][j]).add(s.i[j].mul(s.g[j]))
				s.tc[j] = nc[b][j].tanh()
				nh[b][j] = s.o[j].mul(s.tc[j])
			}
			o.act = append(o.act, slices.Concat(s.i, s.f, s.g, s.o, s.tc))
			o.cs = append(o.cs, nc[b])
			if lv := sc.local; lv != nil { // the backward starts from heed's saved values
				a := lv.act[r]
				s = saved{a[:H], a[H : 2*H], a[2*H : 3*H], a[3*H : 4*H], a[4*H:], lv.cPrev[r]}
			}
			tape[r] = s
			o.hs = append(o.hs, nh[b])
		}
		h, c = nh, nc
	}
	o.cT = c
	for b := range B {
		for j := range H {
			o.forward += gradAt(sc.dcT, b, j).v*c[b][j].v + gradAt(sc.dhT, b, j).v*h[b][j].v
		}
	}
	for r := range T * B {
		for j := range H {
			o.forward += gradAt(sc.dhs, r, j).v * o.hs[r][j].v
		}
	}

	// Backward.
	dG := make([][]bv, T*B)
	dh, dc := make([][]bv, B), make([][]bv, B)
	for b := range B {
		dh[b], dc[b] = make([]bv, H), make([]bv, H)
		for j := range H {
			if T > 0 {
				dh[b][j] = gradAt(sc.dhs, (T-1)*B+b, j)
				if wanted(sc.dhs) && wanted(sc.dhT) {
					dh[b][j] = dh[b][j].add(gradAt(sc.dhT, b, j))
				} else if wanted(sc.dhT) {
					dh[b][j] = gradAt(sc.dhT, b, j)
				}
			} else {
				dh[b][j] = gradAt(sc.dhT, b, j)
			}
			dc[b][j] = gradAt(sc.dcT, b, j)
		}
	}
	wh := make([][]bv, 4*H) // rows of W_h
	for k := range wh {
		wh[k] = sc.row(inW, k, In, In+H)
	}
	for t := T - 1; t >= 0; t-- {
		for b := range B {
			r := t*B + b
			s := tape[r]
			g := make([]bv, 4*H)
			for j := range H {
				i, f, gg, og, tc := s.i[j], s.f[j], s.g[j], s.o[j], s.tc[j]
				e := dh[b][j].mul(og).mul(one.sub(tc.mul(tc)))
				dct := dc[b][j].add(e)
				dc[b][j] = dct.mul(f)
				g[j] = dct.mul(gg).mul(i.mul(one.sub(i)))
				g[H+j] = dct.mul(s.cPrev[j]).mul(f.mul(one.sub(f)))
				g[2*H+j] = dct.mul(i).mul(one.sub(gg.mul(gg)))
				g[3*H+j] = dh[b][j].mul(tc).mul(og.mul(one.sub(og)))
			}
			dG[r] = g
		}
		src := dG
		if sc.local != nil {
			src = sc.local.dG
		}
		for b := range B {
			r := t*B + b
			next := make([]bv, H)
			for j := range H {
				col := column(wh, j)
				if t > 0 {
					c0 := gradAt(sc.dhs, r-B, j)
					next[j] = dot(src[r], col, &c0)
				} else {
					c0 := gradAt(sc.dh0, b, j)
					next[j] = dot(src[r], col, &c0)
				}
			}
			dh[b] = next
		}
	}
	if T == 0 {
		for b := range B {
			for j := range H {
				dh[b][j] = gradAt(sc.dh0, b, j).add(gradAt(sc.dhT, b, j))
				dc[b][j] = gradAt(sc.dc0, b, j).add(gradAt(sc.dcT, b, j))
			}
		}
		o.dh0, o.dc0 = dh, dc
	} else {
		o.dh0 = dh
		o.dc0 = make([][]bv, B)
		for b := range B {
			o.dc0[b] = make([]bv, H)
			for j := range H {
				o.dc0[b][j] = gradAt(sc.dc0, b, j).add(dc[b][j])
			}
		}
	}
	o.dG = dG
	if sc.local != nil {
		dG = sc.local.dG
	}
	o.gradsOver(sc, dG, dG, 4*H, false)
	return o
}

// gradsOver sets the oracle's dx, dW and bias gradients from the gate
// gradients of all T·B rows: gx multiplies the input (W's first In
// columns, and dx), gh the state (the last H).
func (o *seqOracle) gradsOver(sc *seqCase, gx, gh [][]bv, rows int, gru bool) {
	In, H, n := sc.In, sc.H, sc.T*sc.B
	o.dx = make([][]bv, n)
	for r := range n {
		o.dx[r] = make([]bv, In)
		for i := range In {
			c0 := gradAt(sc.dx, r, i)
			wcol := make([]bv, rows)
			for k := range rows {
				wcol[k] = sc.at(inW, k, i)
			}
			o.dx[r][i] = dot(gx[r], wcol, &c0)
		}
	}
	xs := make([][]bv, n)
	for r := range n {
		xs[r] = sc.row(inX, r, 0, In)
	}
	o.dW = make([][]bv, rows)
	for k := range rows {
		o.dW[k] = make([]bv, In+H)
		gk, hk := column(gx, k), column(gh, k)
		for i := range In {
			c0 := gradAt(sc.dW, k, i)
			o.dW[k][i] = dot(gk, column(xs, i), &c0)
		}
		for j := range H {
			c0 := gradAt(sc.dW, k, In+j)
			o.dW[k][In+j] = dot(hk, column(o.hPrev, j), &c0)
		}
	}
	ones := make([]bv, n)
	for i := range ones {
		ones[i] = one
	}
	bias := func(init []float32, g [][]bv) []bv {
		out := make([]bv, rows)
		for k := range rows {
			var c0 bv
			if k < len(init) {
				c0 = ex(init[k])
			}
			out[k] = dot(column(g, k), ones, &c0)
		}
		return out
	}
	if !gru {
		o.db = bias(sc.db, gx)
		return
	}
	o.dbx, o.dbh = bias(sc.dbx, gx), bias(sc.dbh, gh)
}

// gruSeqOracle evaluates the GRU's Forward and Backward for sc.
func gruSeqOracle(sc *seqCase) *seqOracle {
	In, H, B, T := sc.In, sc.H, sc.B, sc.T
	o := &seqOracle{}
	type saved struct{ r, z, n, q, h []bv }
	tape := make([]saved, T*B)
	h := make([][]bv, B)
	for b := range B {
		h[b] = sc.row(inH0, b, 0, H)
	}
	for t := range T {
		nh := make([][]bv, B)
		for b := range B {
			r := t*B + b
			xr := sc.row(inX, r, 0, In)
			if lv := sc.local; lv != nil {
				h[b] = lv.hPrev[r]
			}
			o.hPrev = append(o.hPrev, h[b])
			s := saved{make([]bv, H), make([]bv, H), make([]bv, H), make([]bv, H), h[b]}
			nh[b] = make([]bv, H)
			for j := range H {
				var pre [2]bv
				for k := range 2 {
					row := k*H + j
					gx := dot(sc.row(inW, row, 0, In), xr, nil)
					pre[k] = dot(sc.row(inW, row, In, In+H), h[b], &gx).add(sc.at(inBx, row, 0)).add(sc.at(inBh, row, 0))
				}
				nrow := 2*H + j
				gxn := dot(sc.row(inW, nrow, 0, In), xr, nil)
				q := dot(sc.row(inW, nrow, In, In+H), h[b], nil).add(sc.at(inBh, nrow, 0))
				s.r[j], s.z[j], s.q[j] = pre[0].sigmoid(), pre[1].sigmoid(), q
				s.n[j] = gxn.add(sc.at(inBx, nrow, 0)).add(s.r[j].mul(q)).tanh()
				nh[b][j] = s.n[j].add(s.z[j].mul(h[b][j].sub(s.n[j])))
			}
			o.act = append(o.act, slices.Concat(s.r, s.z, s.n, s.q))
			if lv := sc.local; lv != nil {
				a := lv.act[r]
				s = saved{a[:H], a[H : 2*H], a[2*H : 3*H], a[3*H:], lv.hPrev[r]}
			}
			tape[r] = s
			o.hs = append(o.hs, nh[b])
		}
		h = nh
	}
	for b := range B {
		for j := range H {
			o.forward += gradAt(sc.dhT, b, j).v * h[b][j].v
		}
	}
	for r := range T * B {
		for j := range H {
			o.forward += gradAt(sc.dhs, r, j).v * o.hs[r][j].v
		}
	}

	dGx, dGh := make([][]bv, T*B), make([][]bv, T*B)
	dh := make([][]bv, B)
	for b := range B {
		dh[b] = make([]bv, H)
		for j := range H {
			switch {
			case T == 0:
				dh[b][j] = gradAt(sc.dh0, b, j).add(gradAt(sc.dhT, b, j))
			case wanted(sc.dhs) && wanted(sc.dhT):
				dh[b][j] = gradAt(sc.dhs, (T-1)*B+b, j).add(gradAt(sc.dhT, b, j))
			case wanted(sc.dhT):
				dh[b][j] = gradAt(sc.dhT, b, j)
			default:
				dh[b][j] = gradAt(sc.dhs, (T-1)*B+b, j)
			}
		}
	}
	wh := make([][]bv, 3*H)
	for k := range wh {
		wh[k] = sc.row(inW, k, In, In+H)
	}
	for t := T - 1; t >= 0; t-- {
		direct := make([][]bv, B)
		for b := range B {
			r := t*B + b
			s := tape[r]
			gx, gh := make([]bv, 3*H), make([]bv, 3*H)
			direct[b] = make([]bv, H)
			for j := range H {
				d := dh[b][j]
				omz := one.sub(s.z[j])
				dn := d.mul(omz)
				dz := d.mul(s.h[j].sub(s.n[j]))
				direct[b][j] = d.mul(s.z[j])
				daz := dz.mul(s.z[j].mul(omz))
				dan := dn.mul(one.sub(s.n[j].mul(s.n[j])))
				dq := dan.mul(s.r[j])
				dar := dan.mul(s.q[j]).mul(s.r[j].mul(one.sub(s.r[j])))
				gx[j], gx[H+j], gx[2*H+j] = dar, daz, dan
				gh[j], gh[H+j], gh[2*H+j] = dar, daz, dq
			}
			dGx[r], dGh[r] = gx, gh
		}
		src := dGh
		if sc.local != nil {
			src = sc.local.dGh
		}
		for b := range B {
			r := t*B + b
			next := make([]bv, H)
			for j := range H {
				var c0 bv
				switch {
				case t > 0 && wanted(sc.dhs):
					c0 = direct[b][j].add(gradAt(sc.dhs, r-B, j))
				case t > 0:
					c0 = direct[b][j]
				default:
					c0 = gradAt(sc.dh0, b, j).add(direct[b][j])
				}
				next[j] = dot(src[r], column(wh, j), &c0)
			}
			dh[b] = next
		}
	}
	o.dh0 = dh
	o.dG, o.dGh = dGx, dGh
	if lv := sc.local; lv != nil {
		dGx, dGh = lv.dG, lv.dGh
	}
	o.gradsOver(sc, dGx, dGh, 3*H, true)
	return o
}
