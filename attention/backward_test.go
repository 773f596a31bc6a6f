package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/allocs"
	"github.com/heedml/heed/kernels"
)

// TestGradOracleFiniteDifferences checks the float64 gradient formulas of
// the oracle (the values of f64Mem.grads) against central finite
// differences of the float64 forward, for every scorer, mask mode, with and
// without dweights and with the values the keys or apart, on every
// coordinate of every input.
func TestGradOracleFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, k := range allKinds {
		for _, S := range []int{1, 4, 7} {
			for _, same := range []bool{false, true} {
				for mode := range 5 {
					d := 1 + rng.IntN(5)
					_, o, qd := newScorer(rng, k, 1+rng.IntN(4), d, 1+rng.IntN(4))
					keys := randMat(rng, S, d, 0)
					vals := keys
					if !same {
						vals = randMat(rng, S, 1+rng.IntN(4), 0)
					}
					m := NewMemory(o.sc, keys, vals)
					att := setMask(rng, m, mode)
					f := newF64Mem(o, keys, vals, att, same)
					const B = 2
					hs, dcs, dws := make([][]float64, B), make([][]float64, B), make([][]float64, B)
					for b := range B {
						hs[b], dcs[b] = vecF64(randVec(rng, qd)), vecF64(randVec(rng, vals.Cols))
						if b == 0 || mode%2 == 0 {
							dws[b] = vecF64(randVec(rng, S))
						}
					}
					g := f.grads(hs, dcs, dws, nil)
					what := fmt.Sprintf("%s S=%d d=%d same=%v mode %d", o.sc, S, d, same, mode)
					loss := func() float64 { return f.loss(hs, dcs, dws) }
					for b := range B {
						fdCheck(t, what+fmt.Sprintf(" dh[%d]", b), loss, [][]float64{hs[b]}, [][]ev{g.dh[b]})
					}
					fdCheck(t, what+" dK", loss, f.K, g.dK)
					if !same {
						fdCheck(t, what+" dV", loss, f.V, g.dV)
					}
					switch k {
					case kindGeneral:
						fdCheck(t, what+" dW", loss, f.W, g.dW)
					case kindAdditive:
						fdCheck(t, what+" dW1", loss, f.W1, g.dW1)
						fdCheck(t, what+" dW2", loss, f.W2, g.dW2)
						fdCheck(t, what+" dv", loss, [][]float64{f.v}, [][]ev{g.dv})
					}
				}
			}
		}
	}
}

// fdCheck fails t unless every element of want (the gradient of loss with
// respect to the elements of x, perturbed in place) matches the central
// finite difference of loss.
func fdCheck(t *testing.T, what string, loss func() float64, x [][]float64, want [][]ev) {
	t.Helper()
	for i := range x {
		for j := range x[i] {
			x0 := x[i][j]
			h := 1e-5 * max(1, math.Abs(x0))
			x[i][j] = x0 + h
			lp := loss()
			x[i][j] = x0 - h
			lm := loss()
			x[i][j] = x0
			fd := (lp - lm) / (2 * h)
			if g := want[i][j].v; !(math.Abs(fd-g) <= 1e-6*(1+math.Abs(g)+math.Abs(lp))) {
				t.Fatalf("%s[%d][%d]: formula %v, finite difference %v", what, i, j, g, fd)
			}
		}
	}
}

// gradBuf returns an r×c gradient buffer of zeros whose rows from valid on
// hold the sentinel 5 and whose row padding is NaN, or an empty matrix
// when not wanted.
func gradBuf(rng *rand.Rand, r, c, valid int, wanted bool) kernels.Matrix {
	if !wanted {
		return kernels.Matrix{}
	}
	m := randMat(rng, r, c, rng.IntN(3))
	for i := range r {
		for j := range c {
			m.Data[i*m.Stride+j] = 0
			if i >= valid {
				m.Data[i*m.Stride+j] = 5
			}
		}
	}
	return m
}

// checkGrad fails t unless got holds want's values within their bounds in
// rows [0, valid), exact zeros in the rows not attended (att[i] false, when
// att is not nil), the sentinel 5 from row valid on, and NaN padding.
func checkGrad(t *testing.T, what string, got kernels.Matrix, want [][]ev, valid int, att []bool) {
	t.Helper()
	if !wanted(got) {
		return
	}
	for i := range got.Rows {
		for j := range got.Cols {
			x := float64(got.Data[i*got.Stride+j])
			switch {
			case i >= valid:
				if x != 5 {
					t.Fatalf("%s[%d][%d] = %v beyond the valid length %d: written", what, i, j, x, valid)
				}
			case att != nil && !att[i]:
				if x != 0 {
					t.Fatalf("%s[%d][%d] = %v for a masked key, want 0", what, i, j, x)
				}
			default:
				w := want[i][j]
				if err := math.Abs(x - w.v); !(err <= w.e) {
					t.Fatalf("%s[%d][%d] = %v, want %v ± %.3g (error %.3g)", what, i, j, x, w.v, w.e, err)
				}
			}
		}
	}
	for i := range len(got.Data) {
		if i%got.Stride >= got.Cols && !math.IsNaN(float64(got.Data[i])) {
			t.Fatalf("%s: padding element %d written", what, i)
		}
	}
}

// backCase is one backward check: a Memory, its forward on B queries and the
// buffers of its backward.
type backCase struct {
	m                  *Memory
	o                  oracle
	keys, vals         kernels.Matrix
	same               bool
	att                []bool
	q, w, c            kernels.Matrix // queries, weights, contexts of the forward
	dc, dw, dq         kernels.Matrix // dcontext, dweights (maybe empty), dqueries (maybe empty)
	g                  Grads
	single             bool // AttendBackward (B = 1), else AttendManyBackward
	wantKeys, wantVals bool
}

// newBackCase builds a random case of scorer kind k and runs its forward.
func newBackCase(t *testing.T, rng *rand.Rand, k kind, S, d, B int, same bool, mode int, single bool) *backCase {
	t.Helper()
	sc, o, qd := newScorer(rng, k, 1+rng.IntN(20), d, 1+rng.IntN(20))
	c := &backCase{o: o, same: same, single: single}
	if single {
		B = 1
	}
	c.keys = randMat(rng, S, d, rng.IntN(3))
	c.vals = c.keys
	if !same {
		c.vals = randMat(rng, S, []int{1, 5, 24}[rng.IntN(3)], rng.IntN(3))
	}
	c.m = NewMemory(sc, c.keys, c.vals)
	c.att = setMask(rng, c.m, mode)
	c.q = randMat(rng, B, qd, 1)
	c.w = randMat(rng, B, S, 2)
	c.c = randMat(rng, B, c.vals.Cols, 1)
	if single {
		c.m.Attend(row(c.w, 0), row(c.c, 0), row(c.q, 0))
	} else {
		c.m.AttendMany(c.w, c.c, c.q)
	}
	for b := range B {
		o.checkStep(t, fmt.Sprintf("forward query %d", b), row(c.w, b), row(c.c, b), row(c.q, b), c.keys, c.vals, c.att)
	}
	c.dc = randMat(rng, B, c.vals.Cols, 1)
	if rng.IntN(2) == 0 {
		c.dw = randMat(rng, B, S, 1)
	}
	if rng.IntN(4) > 0 {
		c.dq = gradBuf(rng, B, qd, B, true)
	}
	valid := c.m.valid
	c.wantKeys, c.wantVals = rng.IntN(4) > 0, !same && rng.IntN(4) > 0
	c.g.Keys = gradBuf(rng, S, d, valid, c.wantKeys)
	c.g.Values = gradBuf(rng, S, c.vals.Cols, valid, c.wantVals)
	switch k {
	case kindGeneral:
		c.g.W = gradBuf(rng, o.w.Rows, o.w.Cols, o.w.Rows, rng.IntN(4) > 0)
	case kindAdditive:
		c.g.W1 = gradBuf(rng, o.w.Rows, o.w.Cols, o.w.Rows, rng.IntN(4) > 0)
		c.g.W2 = gradBuf(rng, o.w2.Rows, o.w2.Cols, o.w2.Rows, rng.IntN(4) > 0)
		if rng.IntN(4) > 0 {
			c.g.V = make([]float32, len(o.v))
		}
	}
	return c
}

// run runs the case's backward.
func (c *backCase) run() {
	if c.single {
		var dq, dw []float32
		if wanted(c.dq) {
			dq = row(c.dq, 0)
		}
		if wanted(c.dw) {
			dw = row(c.dw, 0)
		}
		c.m.AttendBackward(&c.g, dq, dw, row(c.dc, 0), row(c.w, 0), row(c.q, 0))
		return
	}
	c.m.AttendManyBackward(&c.g, c.dq, c.dw, c.dc, c.w, c.q)
}

// check fails t unless the case's gradients are within the oracle's bounds.
func (c *backCase) check(t *testing.T, what string) {
	t.Helper()
	f := newF64Mem(c.o, c.keys, c.vals, c.att, c.same)
	B := c.q.Rows
	hs, dcs, dws, da := make([][]float64, B), make([][]float64, B), make([][]float64, B), make([][]float64, B)
	for b := range B {
		hs[b], dcs[b] = vecF64(row(c.q, b)), vecF64(row(c.dc, b))
		if wanted(c.dw) {
			dws[b] = vecF64(row(c.dw, b))
		}
		da[b] = c.o.step(row(c.q, b), c.keys, c.vals, c.att).da
	}
	g := f.grads(hs, dcs, dws, da)
	valid := c.m.valid
	if c.m.mask == nil && !c.m.anyAttended() || c.m.mask != nil && !c.m.anyAttended() {
		// Nothing attended: nothing is written.
		g = f.grads(hs, dcs, dws, da)
	}
	checkGrad(t, what+" dqueries", c.dq, g.dh, B, nil)
	att := c.att
	if !c.m.anyAttended() {
		att = nil
	}
	checkGrad(t, what+" Grads.Keys", c.g.Keys, g.dK, valid, att)
	checkGrad(t, what+" Grads.Values", c.g.Values, g.dV, valid, att)
	checkGrad(t, what+" Grads.W", c.g.W, g.dW, c.g.W.Rows, nil)
	checkGrad(t, what+" Grads.W1", c.g.W1, g.dW1, c.g.W1.Rows, nil)
	checkGrad(t, what+" Grads.W2", c.g.W2, g.dW2, c.g.W2.Rows, nil)
	if c.g.V != nil {
		checkGrad(t, what+" Grads.V", vecMat(c.g.V), [][]ev{g.dv}, 1, nil)
	}
}

// TestAttendBackward checks AttendBackward and AttendManyBackward of every
// scorer against the float64 oracle within the derived bounds, over shapes,
// strides, separate values or the keys as values, masks, valid lengths,
// dweights or none and every subset of wanted gradients, under every ISA.
func TestAttendBackward(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(43, 44))
		Ss, ds := []int{1, 2, 3, 8, 17, 64}, []int{1, 2, 7, 16, 33}
		if testing.Short() {
			Ss, ds = []int{1, 3, 17, 64}, []int{1, 7, 33}
		}
		for _, k := range allKinds {
			for _, S := range Ss {
				for _, d := range ds {
					for _, B := range []int{0, 1, 3, 8} {
						for mode := range 5 {
							if !sparseKeeps(S+d+B+int(k), mode, 3) {
								continue
							}
							same := (S+d+B+mode)%2 == 0
							single := B == 0
							c := newBackCase(t, rng, k, S, d, max(1, B), same, mode, single)
							c.run()
							c.check(t, fmt.Sprintf("%s S=%d d=%d B=%d same=%v mode %d", c.m.sc, S, d, B, same, mode))
						}
					}
				}
			}
		}
	})
}

// TestAttendBackwardAccumulates checks that the backward adds to its
// buffers: a second call into the same buffers doubles the first's
// gradients, within a rounding of each.
func TestAttendBackwardAccumulates(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	for _, k := range allKinds {
		for _, single := range []bool{true, false} {
			c := newBackCase(t, rng, k, 9, 5, 3, k%2 == 0, 2, single)
			c.dq = gradBuf(rng, c.q.Rows, c.q.Cols, c.q.Rows, true)
			c.run()
			first := []kernels.Matrix{cloneMat(c.dq), cloneMat(c.g.Keys), cloneMat(c.g.Values), cloneMat(c.g.W), cloneMat(c.g.W1), cloneMat(c.g.W2)}
			v0 := append([]float32(nil), c.g.V...)
			c.run()
			for i, m := range []kernels.Matrix{c.dq, c.g.Keys, c.g.Values, c.g.W, c.g.W1, c.g.W2, vecMat(c.g.V)} {
				f := vecMat(v0)
				if i < len(first) {
					f = first[i]
				}
				for r := range m.Rows {
					for j := range m.Cols {
						a, b := float64(row(f, r)[j]), float64(row(m, r)[j])
						if a == 5 { // beyond the valid length
							continue
						}
						if !(math.Abs(b-2*a) <= 1e-5*math.Abs(a)+1e-30) {
							t.Fatalf("%s single=%v gradient %d [%d][%d]: first call %v, after the second %v, want twice", c.m.sc, single, i, r, j, a, b)
						}
					}
				}
			}
		}
	}
}

func cloneMat(m kernels.Matrix) kernels.Matrix {
	m.Data = append([]float32(nil), m.Data...)
	return m
}

// TestAttendBackwardFullyMasked checks that a step with no attended key
// (a full mask, a valid length of 0) writes nothing, whatever the buffers
// hold, and that masked keys and keys past the valid length whose values
// are NaN give finite gradients with zero rows.
func TestAttendBackwardFullyMasked(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	for _, k := range allKinds {
		for _, single := range []bool{true, false} {
			for _, mode := range []int{4, 1} {
				c := newBackCase(t, rng, k, 6, 4, 2, false, 0, single)
				if mode == 4 {
					c.m.SetMask(make([]bool, 6))
				} else {
					c.m.SetValid(0)
				}
				c.dq = gradBuf(rng, c.q.Rows, c.q.Cols, 0, true) // all sentinels
				c.g.Keys = gradBuf(rng, 6, 4, 0, true)
				c.g.Values = gradBuf(rng, 6, c.vals.Cols, 0, true)
				for _, m := range []kernels.Matrix{c.g.W, c.g.W1, c.g.W2} {
					for r := range m.Rows {
						for j := range row(m, r) {
							row(m, r)[j] = 5
						}
					}
				}
				for i := range c.g.V {
					c.g.V[i] = 5
				}
				for b := range c.w.Rows {
					clear(row(c.w, b))
				}
				c.run()
				for i, m := range []kernels.Matrix{c.dq, c.g.Keys, c.g.Values, c.g.W, c.g.W1, c.g.W2, vecMat(c.g.V)} {
					for r := range m.Rows {
						for j, x := range row(m, r) {
							if x != 5 {
								t.Fatalf("%s single=%v, nothing attended: gradient %d [%d][%d] = %v, written", c.m.sc, single, i, r, j, x)
							}
						}
					}
				}
			}
			// Masked keys and padding with NaN values.
			c := newBackCase(t, rng, k, 8, 4, 2, false, 0, single)
			mask := []bool{true, false, true, true, false, true, true, true}
			c.m.SetMask(mask)
			c.m.SetValid(7)
			c.att = make([]bool, 8)
			for s := range 7 {
				c.att[s] = mask[s]
			}
			if single {
				c.m.Attend(row(c.w, 0), row(c.c, 0), row(c.q, 0))
			} else {
				c.m.AttendMany(c.w, c.c, c.q)
			}
			for _, s := range []int{1, 4, 7} {
				for j := range c.vals.Cols {
					c.vals.Data[s*c.vals.Stride+j] = float32(math.NaN())
				}
			}
			c.dq = gradBuf(rng, c.q.Rows, c.q.Cols, c.q.Rows, true)
			c.g.Keys = gradBuf(rng, 8, 4, 7, true)
			c.g.Values = gradBuf(rng, 8, c.vals.Cols, 7, true)
			c.run()
			// The oracle's values do not depend on the NaN values.
			for _, s := range []int{1, 4, 7} {
				for j := range c.vals.Cols {
					c.vals.Data[s*c.vals.Stride+j] = 0
				}
			}
			c.check(t, fmt.Sprintf("%s single=%v NaN values masked", c.m.sc, single))
		}
	}
}

// TestAttendBackwardNoAllocs checks that warm backward calls allocate
// nothing, for every scorer, one query and many.
func TestAttendBackwardNoAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(49, 50))
	forEachISA(t, func(t *testing.T) {
		for _, k := range allKinds {
			for _, single := range []bool{true, false} {
				c := newBackCase(t, rng, k, 40, 16, 5, false, 2, single)
				c.dq = gradBuf(rng, c.q.Rows, c.q.Cols, c.q.Rows, true)
				c.g.Keys = gradBuf(rng, 40, 16, 40, true)
				c.g.Values = gradBuf(rng, 40, c.vals.Cols, 40, true)
				if n := allocs.Count(allocRuns(10), c.run); n != 0 {
					t.Errorf("%s single=%v: %d allocations in the measured calls", c.m.sc, single, n)
				}
			}
		}
	})
}

// TestAttendBackwardPanics checks the shape, overlap and format errors.
func TestAttendBackwardPanics(t *testing.T) {
	mat := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	keys, vals := mat(4, 3), mat(4, 2)
	m := NewMemory(Dot(), keys, vals)
	w, dc, h := make([]float32, 4), make([]float32, 2), make([]float32, 3)
	gen := NewMemory(General(mat(5, 3)), keys, keys)
	add := NewMemory(Additive(mat(2, 5), mat(2, 3), make([]float32, 2)), keys, keys)
	stored := NewMemoryFormat(Dot(), BFloat16, keys, vals)
	gk := mat(4, 3)
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/attention: Luong dot: AttendBackward: len(query)=2, len(dquery)=0, want 3 (dquery may be nil)", func() { m.AttendBackward(nil, nil, nil, dc, w, h[:2]) }},
		{"heed/attention: Luong dot: AttendBackward: len(query)=3, len(dquery)=2, want 3 (dquery may be nil)", func() { m.AttendBackward(nil, make([]float32, 2), nil, dc, w, h) }},
		{"heed/attention: Luong dot: AttendBackward: len(weights)=3, len(dweights)=0, want S=4 (dweights may be nil)", func() { m.AttendBackward(nil, nil, nil, dc, w[:3], h) }},
		{"heed/attention: Luong dot: AttendBackward: len(dcontext)=3, want d_v=2", func() { m.AttendBackward(nil, nil, nil, h, w, h) }},
		{"heed/attention: Luong dot: AttendBackward: Grads.Keys is 4×2, want empty or S×d_k = 4×3", func() { m.AttendBackward(&Grads{Keys: mat(4, 2)}, nil, nil, dc, w, h) }},
		{"heed/attention: Luong dot: AttendBackward: Grads.Values is 3×2, want empty or S×d_v = 4×2", func() { m.AttendBackward(&Grads{Values: mat(3, 2)}, nil, nil, dc, w, h) }},
		{"heed/attention: Luong dot: AttendBackward: Grads.W is 3×3 but the scorer has no W", func() { m.AttendBackward(&Grads{W: mat(3, 3)}, nil, nil, dc, w, h) }},
		{"heed/attention: Luong dot: AttendBackward: Grads.W1, W2 or V set but the scorer has no W1, W2, v", func() { m.AttendBackward(&Grads{V: make([]float32, 2)}, nil, nil, dc, w, h) }},
		{"heed/attention: Luong general: AttendBackward: Grads.W is 3×3, want empty or 5×3 (W)", func() { gen.AttendBackward(&Grads{W: mat(3, 3)}, nil, nil, make([]float32, 3), w, make([]float32, 5)) }},
		{"heed/attention: Luong general: AttendBackward: the values are the keys: their gradient adds into Grads.Keys, and Grads.Values (4×3) must be empty", func() {
			gen.AttendBackward(&Grads{Values: mat(4, 3)}, nil, nil, make([]float32, 3), w, make([]float32, 5))
		}},
		{"heed/attention: Bahdanau: AttendBackward: Grads.W1 is 2×5, Grads.W2 2×2, len(Grads.V)=0; want each empty or W1 2×5, W2 2×3, len(V)=2", func() {
			add.AttendBackward(&Grads{W1: mat(2, 5), W2: mat(2, 2)}, nil, nil, make([]float32, 3), w, make([]float32, 5))
		}},
		{"heed/attention: Luong dot: AttendBackward: Grads.Keys overlaps Grads.Values", func() {
			m.AttendBackward(&Grads{Keys: gk, Values: kernels.Matrix{Rows: 4, Cols: 2, Stride: 3, Data: gk.Data[1:]}}, nil, nil, dc, w, h)
		}},
		{"heed/attention: Luong dot: AttendBackward: dquery overlaps Grads.Keys", func() { m.AttendBackward(&Grads{Keys: gk}, gk.Data[9:], nil, dc, w, h) }},
		{"heed/attention: Luong dot: AttendBackward: Grads.Keys overlaps keys", func() { m.AttendBackward(&Grads{Keys: keys}, nil, nil, dc, w, h) }},
		{"heed/attention: Luong dot: AttendBackward: dquery overlaps query", func() { m.AttendBackward(nil, h, nil, dc, w, h) }},
		{"heed/attention: Luong dot: AttendBackward: Grads.Values overlaps weights", func() {
			buf := make([]float32, 8)
			m.AttendBackward(&Grads{Values: kernels.Matrix{Rows: 4, Cols: 2, Stride: 2, Data: buf}}, nil, nil, dc, buf[4:], h)
		}},
		{"heed/attention: Bahdanau: AttendBackward: Grads.V overlaps v", func() {
			add.AttendBackward(&Grads{V: add.sc.v}, nil, nil, make([]float32, 3), w, make([]float32, 5))
		}},
		{"heed/attention: Luong general: AttendBackward: Grads.W overlaps W", func() {
			gen.AttendBackward(&Grads{W: gen.sc.w}, nil, nil, make([]float32, 3), w, make([]float32, 5))
		}},
		{"heed/attention: Luong dot: AttendBackward: the keys and values are stored as bfloat16; the backward needs float32", func() { stored.AttendBackward(nil, nil, nil, dc, w, h) }},
		{"heed/attention: Luong dot: AttendManyBackward: queries is 2×3, weights 2×4, dcontext 2×2, dqueries 1×3, dweights 0×0; want queries B×3, weights B×4, dcontext B×2, dqueries empty or B×3, dweights empty or B×4", func() {
			m.AttendManyBackward(nil, mat(1, 3), kernels.Matrix{}, mat(2, 2), mat(2, 4), mat(2, 3))
		}},
		{"heed/attention: Luong dot: AttendManyBackward: dquery overlaps query", func() {
			q := mat(2, 3)
			m.AttendManyBackward(nil, q, kernels.Matrix{}, mat(2, 2), mat(2, 4), q)
		}},
	} {
		mustPanic(t, c.want, c.f)
	}
}

// TestCosineBackwardMagnitudes checks the Cosine backward, one query and
// many, for keys and queries of magnitudes 1e-38 to 1e38 (each key its own,
// the wide keys taken in float64), against the oracle.
func TestCosineBackwardMagnitudes(t *testing.T) {
	kmags := []float64{1e-38, 1e-30, 1e-20, 1e-10, 1, 1e10, 1e20, 1e30, 1e38}
	qmags := []float64{1e-30, 1e-10, 1, 1e10, 1e30}
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(65, 66))
		for _, d := range []int{1, 7, 33} {
			for _, qa := range qmags {
				for _, single := range []bool{true, false} {
					const S = 12
					c := newBackCase(t, rng, kindCosine, S, d, 3, false, 0, single)
					for s := range S {
						ka := kmags[rng.IntN(len(kmags))]
						for j := range row(c.keys, s) {
							row(c.keys, s)[j] = float32((rng.Float64()*2 - 1) * ka)
						}
					}
					for b := range c.q.Rows {
						for j := range row(c.q, b) {
							row(c.q, b)[j] = float32((rng.Float64()*2 - 1) * qa)
						}
					}
					c.m.Reset(c.keys, c.vals)
					c.att = setMask(rng, c.m, 2)
					if single {
						c.m.Attend(row(c.w, 0), row(c.c, 0), row(c.q, 0))
					} else {
						c.m.AttendMany(c.w, c.c, c.q)
					}
					c.dq = gradBuf(rng, c.q.Rows, c.q.Cols, c.q.Rows, true)
					c.g.Keys = gradBuf(rng, S, d, S, true)
					c.run()
					c.check(t, fmt.Sprintf("d=%d query magnitude %g single=%v", d, qa, single))
				}
			}
		}
	})
}

// TestAttendBackwardStoredFloat32 checks that a Memory storing its keys and
// values as Float32 (NewMemoryFormat) gives the bits of NewMemory's
// backward, one query and many, for the scorers a stored Memory takes.
func TestAttendBackwardStoredFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(67, 68))
	for _, k := range []kind{kindDot, kindScaled, kindGeneral} {
		for _, single := range []bool{true, false} {
			c := newBackCase(t, rng, k, 9, 6, 3, false, 2, single)
			c.dq = gradBuf(rng, c.q.Rows, c.q.Cols, c.q.Rows, true)
			c.g.Keys = gradBuf(rng, 9, 6, 9, true)
			c.g.Values = gradBuf(rng, 9, c.vals.Cols, 9, true)
			c.run()
			want := []kernels.Matrix{cloneMat(c.dq), cloneMat(c.g.Keys), cloneMat(c.g.Values)}
			st := NewMemoryFormat(c.m.sc, Float32, c.keys, c.vals)
			st.SetMask(c.m.mask)
			st.SetValid(c.m.valid)
			for _, m := range []kernels.Matrix{c.dq, c.g.Keys, c.g.Values} {
				clear(m.Data[:(m.Rows-1)*m.Stride+m.Cols])
			}
			c.m = st
			c.run()
			for i, m := range []kernels.Matrix{c.dq, c.g.Keys, c.g.Values} {
				for r := range m.Rows {
					for j, x := range row(m, r) {
						if w := row(want[i], r)[j]; math.Float32bits(x) != math.Float32bits(w) {
							t.Fatalf("%s single=%v gradient %d [%d][%d]: stored %v, NewMemory %v", c.m.sc, single, i, r, j, x, w)
						}
					}
				}
			}
		}
	}
}
