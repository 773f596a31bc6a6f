package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/allocs"
	"github.com/heedml/heed/kernels"
)

// attentional64 evaluates h̃ = tanh(W_c[c; h]) and its gradients in
// float64, the rows x_b = [c_b; h_b].
type attentional64 struct {
	w [][]float64
	x [][]float64
}

func (a *attentional64) z(b, i int) (z, abs float64) {
	for j, xj := range a.x[b] {
		z += a.w[i][j] * xj
		abs += math.Abs(a.w[i][j] * xj)
	}
	return z, abs
}

func (a *attentional64) loss(dout [][]float64) float64 {
	var l float64
	for b := range a.x {
		for i := range a.w {
			z, _ := a.z(b, i)
			l += dout[b][i] * math.Tanh(z)
		}
	}
	return l
}

// grads returns dW_c and dx (rows [dc_b; dh_b]) for loss, from outputs
// within the forward's bound (computed: true) or exact.
func (a *attentional64) grads(dout [][]float64, computed bool) (dw, dx [][]ev) {
	B, n, d := len(a.x), len(a.w), len(a.w[0])
	dz := evMat(B, n)
	for b := range B {
		for i := range n {
			z, abs := a.z(b, i)
			out := exact(math.Tanh(z))
			if computed {
				out = evTanh(ev{z, gamma(d+2)*abs + float64(d)*eta})
			}
			dz[b][i] = evMul(exact(dout[b][i]), evSub(exact(1), evMul(out, out)))
		}
	}
	dw, dx = evMat(n, d), evMat(B, d)
	for i := range n {
		for j := range d {
			var s evSummer
			for b := range B {
				s.addProd(dz[b][i], exact(a.x[b][j]))
			}
			dw[i][j] = s.sum(2)
		}
	}
	for b := range B {
		for j := range d {
			var s evSummer
			for i := range n {
				s.addProd(exact(a.w[i][j]), dz[b][i])
			}
			dx[b][j] = s.sum(2)
		}
	}
	return dw, dx
}

// TestAttentionalBackward checks ApplyMany against Apply's formula and
// ApplyBackward and ApplyManyBackward against the float64 oracle (itself
// checked by finite differences), under every ISA.
func TestAttentionalBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	// The oracle's formulas against finite differences.
	for _, sh := range [][3]int{{3, 2, 2}, {1, 0, 3}, {4, 3, 0}} {
		w := toF64(randMat(rng, sh[0], sh[1]+sh[2], 0))
		a := &attentional64{w: w, x: [][]float64{vecF64(randVec(rng, sh[1]+sh[2])), vecF64(randVec(rng, sh[1]+sh[2]))}}
		dout := [][]float64{vecF64(randVec(rng, sh[0])), vecF64(randVec(rng, sh[0]))}
		dw, dx := a.grads(dout, false)
		loss := func() float64 { return a.loss(dout) }
		fdCheck(t, fmt.Sprint(sh, " dWc"), loss, a.w, dw)
		fdCheck(t, fmt.Sprint(sh, " dx"), loss, a.x, dx)
	}
	forEachISA(t, func(t *testing.T) {
		for _, sh := range [][3]int{{1, 1, 1}, {5, 3, 4}, {17, 33, 16}, {64, 40, 24}, {3, 0, 5}, {4, 6, 0}} {
			for _, B := range []int{1, 2, 7} {
				dout, dcl, dhl := sh[0], sh[1], sh[2]
				wc := randMat(rng, dout, dcl+dhl, rng.IntN(3))
				at := NewAttentional(wc, dcl)
				c, h := randMat(rng, B, dcl, 1), randMat(rng, B, dhl, 1)
				out := randMat(rng, B, dout, 1)
				at.ApplyMany(out, c, h)
				x := make([][]float64, B)
				for b := range B {
					x[b] = append(vecF64(row(c, b)), vecF64(row(h, b))...)
					want := make([]float32, dout)
					at.Apply(want, row(c, b), row(h, b))
					for i, y := range row(out, b) {
						if math.Abs(float64(y-want[i])) > 1e-5 {
							t.Fatalf("%v B=%d: ApplyMany row %d [%d] = %v, Apply %v", sh, B, b, i, y, want[i])
						}
					}
				}
				a64 := &attentional64{w: toF64(wc), x: x}
				dOut := randMat(rng, B, dout, 1)
				dwc := gradBuf(rng, dout, dcl+dhl, dout, true)
				dc, dh := gradBuf(rng, B, dcl, B, true), gradBuf(rng, B, dhl, B, true)
				what := fmt.Sprintf("%v B=%d", sh, B)
				if B == 1 {
					at.ApplyBackward(dwc, row(dc, 0), row(dh, 0), row(dOut, 0), row(out, 0), row(c, 0), row(h, 0))
				} else {
					at.ApplyManyBackward(dwc, dc, dh, dOut, out, c, h)
				}
				dw, dx := a64.grads(toF64(dOut), true)
				checkGrad(t, what+" dWc", dwc, dw, dout, nil)
				dxc, dxh := make([][]ev, B), make([][]ev, B)
				for b := range B {
					dxc[b], dxh[b] = dx[b][:dcl], dx[b][dcl:]
				}
				checkGrad(t, what+" dc", dc, dxc, B, nil)
				checkGrad(t, what+" dh", dh, dxh, B, nil)
			}
		}
	})
}

// TestAttentionalBackwardNoAllocs checks that warm calls allocate nothing.
func TestAttentionalBackwardNoAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(63, 64))
	wc := randMat(rng, 32, 48, 0)
	at := NewAttentional(wc, 16)
	c, h, out, dout := randMat(rng, 6, 16, 0), randMat(rng, 6, 32, 0), randMat(rng, 6, 32, 0), randMat(rng, 6, 32, 0)
	dwc, dc, dh := randMat(rng, 32, 48, 0), randMat(rng, 6, 16, 0), randMat(rng, 6, 32, 0)
	f := func() {
		at.ApplyMany(out, c, h)
		at.ApplyManyBackward(dwc, dc, dh, dout, out, c, h)
		at.ApplyBackward(dwc, row(dc, 0), row(dh, 0), row(dout, 0), row(out, 0), row(c, 0), row(h, 0))
	}
	if n := allocs.Count(allocRuns(10), f); n != 0 {
		t.Errorf("%d allocations in the measured calls", n)
	}
}

// TestAttentionalBackwardPanics checks the shape and overlap errors.
func TestAttentionalBackwardPanics(t *testing.T) {
	m := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	wc := m(3, 5)
	at := NewAttentional(wc, 2)
	v := func(n int) []float32 { return make([]float32, n) }
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/attention: Attentional: ApplyMany: Wc is 3×5 with context length 2; dst is 2×3, c 2×2, h 2×2, want B×3, B×2, B×3", func() { at.ApplyMany(m(2, 3), m(2, 2), m(2, 2)) }},
		{"heed/attention: Attentional: dst overlaps Wc", func() { at.ApplyMany(kernels.Matrix{Rows: 1, Cols: 3, Stride: 3, Data: wc.Data}, m(1, 2), m(1, 3)) }},
		{"heed/attention: Attentional: ApplyBackward: Wc is 3×5 with context length 2; got len(dout)=2, len(out)=3, len(c)=2, len(h)=3, len(dc)=0, len(dh)=0, want 3, 3, 2, 3, 2 or nil, 3 or nil", func() {
			at.ApplyBackward(kernels.Matrix{}, nil, nil, v(2), v(3), v(2), v(3))
		}},
		{"heed/attention: Attentional: ApplyBackward: dwc is 3×4, want empty or 3×5 (Wc)", func() { at.ApplyBackward(m(3, 4), nil, nil, v(3), v(3), v(2), v(3)) }},
		{"heed/attention: Attentional: ApplyBackward: dwc overlaps Wc", func() { at.ApplyBackward(wc, nil, nil, v(3), v(3), v(2), v(3)) }},
		{"heed/attention: Attentional: ApplyBackward: dc overlaps c", func() {
			c := v(2)
			at.ApplyBackward(kernels.Matrix{}, c, nil, v(3), v(3), c, v(3))
		}},
		{"heed/attention: Attentional: ApplyManyBackward: Wc is 3×5 with context length 2; dout is 2×3, out 2×3, c 2×2, h 2×3, dc 1×2, dh 0×0; want B×3, B×3, B×2, B×3, empty or B×2, empty or B×3", func() {
			at.ApplyManyBackward(kernels.Matrix{}, m(1, 2), kernels.Matrix{}, m(2, 3), m(2, 3), m(2, 2), m(2, 3))
		}},
		{"heed/attention: Attentional: ApplyManyBackward: dh overlaps dout", func() {
			d := m(2, 3)
			at.ApplyManyBackward(kernels.Matrix{}, kernels.Matrix{}, d, d, m(2, 3), m(2, 2), m(2, 3))
		}},
	} {
		mustPanic(t, c.want, c.f)
	}
}
