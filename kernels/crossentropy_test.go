package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/allocs"
	"github.com/heedml/heed/internal/fallback"
)

// xentTarget64 returns q, the target distribution of a row of n classes with
// target t and smoothing eps.
func xentTarget64(n, t int, eps float64) []float64 {
	q := make([]float64, n)
	for j := range q {
		q[j] = eps / float64(n)
	}
	q[t] += 1 - eps
	return q
}

// softmaxLimit64 is the float64 softmax of x with Softmax's rule for rows
// whose maximum is infinite: the +Inf entries share 1, an all −Inf row is
// zeros. x holds no NaN.
func softmaxLimit64(x []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	p := make([]float64, len(x))
	if math.IsInf(m, 0) {
		if m > 0 {
			k := 0
			for _, v := range x {
				if math.IsInf(float64(v), 1) {
					k++
				}
			}
			for j, v := range x {
				if math.IsInf(float64(v), 1) {
					p[j] = 1 / float64(k)
				}
			}
		}
		return p
	}
	var s float64
	for j, v := range x {
		p[j] = math.Exp(float64(v) - m)
		s += p[j]
	}
	for j := range p {
		p[j] /= s
	}
	return p
}

// xentLoss64 is the float64 oracle of the loss of x (no NaN) against q:
// −Σⱼ qⱼ·ln pⱼ over the qⱼ > 0, ln pⱼ taken as (xⱼ − m) − ln Σ where m is
// finite (so that tiny probabilities keep their logarithm), and from the
// limit softmax where it is not (+Inf where a qⱼ > 0 meets pⱼ = 0).
func xentLoss64(x []float32, q []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var loss float64
	if !math.IsInf(m, 0) {
		var s float64
		for _, v := range x {
			s += math.Exp(float64(v) - m)
		}
		l := math.Log(s)
		for j, v := range x {
			if q[j] > 0 {
				loss -= q[j] * ((float64(v) - m) - l)
			}
		}
		return loss
	}
	p := softmaxLimit64(x)
	for j := range x {
		if q[j] > 0 {
			loss -= q[j] * math.Log(p[j])
		}
	}
	return loss
}

// xentLossOf64 is the float64 loss of float64 logits x against target t
// with smoothing eps, for the finite differences.
func xentLossOf64(x []float64, t int, eps float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	var s, d float64
	for _, v := range x {
		s += math.Exp(v - m)
		d += m - v
	}
	l := math.Log(s)
	return (1-eps)*(m-x[t]+l) + eps*(l+d/float64(len(x)))
}

// xentGrad64 is the float64 gradient formula of the loss: p − q.
func xentGrad64(x []float64, t int, eps float64) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	var s float64
	g := make([]float64, len(x))
	for j, v := range x {
		g[j] = math.Exp(v - m)
		s += g[j]
	}
	q := xentTarget64(len(x), t, eps)
	for j := range g {
		g[j] = g[j]/s - q[j]
	}
	return g
}

// TestSoftmaxCrossEntropyGradientFormula checks the float64 gradient
// formula against central finite differences of the float64 loss.
func TestSoftmaxCrossEntropyGradientFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(12)
		x := make([]float64, n)
		for j := range x {
			x[j] = rng.NormFloat64() * 3
		}
		tg := rng.IntN(n)
		eps := []float64{0, 0.1, 0.5, 1}[trial%4]
		g := xentGrad64(x, tg, eps)
		const h = 1e-5
		for j := range x {
			xp := append([]float64(nil), x...)
			xm := append([]float64(nil), x...)
			xp[j] += h
			xm[j] -= h
			fd := (xentLossOf64(xp, tg, eps) - xentLossOf64(xm, tg, eps)) / (2 * h)
			if err := math.Abs(fd - g[j]); err > 1e-8 {
				t.Fatalf("n=%d t=%d ε=%v: ∂L/∂x[%d] = %v by the formula, %v by finite differences", n, tg, eps, j, g[j], fd)
			}
		}
	}
}

// checkCrossEntropy fails t unless loss and d are the loss and the gradient
// of x against target tg (smoothing eps, scale s) within the documented
// bounds. x has no NaN and a finite maximum; the loss may be the float32 one
// (float32 says so: one more rounding).
func checkCrossEntropy(t *testing.T, what string, loss float64, float32Loss bool, d, x []float32, tg int, eps, s float32) {
	t.Helper()
	n := len(x)
	e := float64(eps)
	q := xentTarget64(n, tg, e)
	m := float64(fallback.Max(x))
	p := softmaxLimit64(x)
	want := xentLoss64(x, q)
	var dsum float64
	for _, v := range x {
		dsum += m - float64(v)
	}
	delta := (1.5*float64(n) + 4) * u
	bound := delta/(1-delta) + 0x1p-50*(math.Abs(m-float64(x[tg]))+math.Log(float64(n)))
	if eps > 0 {
		bound += e * float64(n+1) * u * dsum / float64(n)
	}
	if float32Loss {
		bound += u * math.Abs(want)
	}
	// With smoothing, a difference xⱼ − m or their sum beyond float32's range
	// may make the loss +Inf (documented).
	overflow := eps > 0 && dsum > math.MaxFloat32/2
	switch {
	case overflow && math.IsInf(loss, 1):
	case math.IsInf(want, 1):
		if !math.IsInf(loss, 1) {
			t.Fatalf("%s: n=%d t=%d ε=%v: loss %v, want +Inf", what, n, tg, eps, loss)
		}
	case float32Loss && math.Abs(want) > math.MaxFloat32:
		if !math.IsInf(loss, 1) && math.Abs(loss-want) > bound {
			t.Fatalf("%s: n=%d t=%d ε=%v: loss %v, want %v (+Inf in float32)", what, n, tg, eps, loss, want)
		}
	case !(math.Abs(loss-want) <= bound):
		t.Fatalf("%s: n=%d t=%d ε=%v: loss %v, want %v ± %.3g (error %.3g)", what, n, tg, eps, loss, want, bound, math.Abs(loss-want))
	}
	sc := math.Abs(float64(s))
	for j, v := range x {
		exact := float64(s) * (p[j] - q[j])
		pt := 0.0 // p[j]·(|x[j] − m| + 1.5·n + 9), 0 for p[j] = 0 (x[j] = −Inf)
		if p[j] > 0 {
			pt = p[j] * (math.Abs(float64(v)-m) + 1.5*float64(n) + 9)
		}
		b := sc*((pt+q[j])*u+0x1p-126) + u*math.Abs(float64(d[j]))
		if err := math.Abs(float64(d[j]) - exact); !(err <= b) {
			t.Fatalf("%s: n=%d t=%d ε=%v s=%v: dlogits[%d] = %v, want %v ± %.3g (error %.3g; x−m = %v)",
				what, n, tg, eps, s, j, d[j], exact, b, err, float64(v)-m)
		}
	}
}

func TestSoftmaxCrossEntropyLengths(t *testing.T) {
	epss := []float32{0, 0.1, 1, 0.03}
	scales := []float32{0, 1, 1.0 / 7, -2}
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		c := 0
		for _, n := range smallLengths[1:] {
			for off := 0; off < 16; off += 1 + n/32 {
				c++
				x, xok := slab(t, n, off)
				d, dok := slab(t, n, (off+5)%16)
				fill(rng, x)
				sc := float32(math.Ldexp(1, rng.IntN(12)-2))
				for i := range x {
					x[i] *= sc
				}
				tg := rng.IntN(n)
				eps, s := epss[c%len(epss)], scales[(c/4)%len(scales)]
				if eps == 0 {
					for i := range x {
						if i != tg && rng.IntN(32) == 0 {
							x[i] = float32(math.Inf(-1)) // masked
						}
					}
				}
				o := CrossEntropyOptions{Ignore: -100, Smoothing: eps, Scale: s}
				loss := SoftmaxCrossEntropy(d, x, tg, o)
				if s == 0 {
					s = 1
				}
				checkCrossEntropy(t, "SoftmaxCrossEntropy", float64(loss), true, d, x, tg, eps, s)
				y := append([]float32(nil), x...)
				if l := SoftmaxCrossEntropy(y, y, tg, o); math.Float32bits(l) != math.Float32bits(loss) {
					t.Fatalf("n=%d: in place the loss is %v, out of place %v", n, l, loss)
				}
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(d[i]) {
						t.Fatalf("n=%d: in place dlogits[%d] = %v, out of place %v", n, i, y[i], d[i])
					}
				}
				xok()
				dok()
			}
		}
	})
}

// TestSoftmaxCrossEntropyWide checks rows of a vocabulary's length, and rows
// with a wide range where probabilities underflow.
func TestSoftmaxCrossEntropyWide(t *testing.T) {
	cases := []struct {
		x   []float32
		tg  int
		eps float32
	}{
		{[]float32{0, -200, -1000, 3e37, -3e37}, 1, 0},
		{[]float32{0, -200, -1000, 3e37, -3e37}, 3, 0.2},
		{[]float32{1e30, 1e30, 0}, 2, 0},
		{[]float32{-1e-30, 1e-30, 0}, 0, 0.5},
		{[]float32{100, 0, -100, -1e4}, 3, 0.1},
		{[]float32{-3e38, -3e38}, 0, 1},
		{[]float32{88, -88, 0}, 1, 0},
	}
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			d := make([]float32, len(c.x))
			loss := SoftmaxCrossEntropy(d, c.x, c.tg, CrossEntropyOptions{Smoothing: c.eps})
			checkCrossEntropy(t, fmt.Sprint(c.x), float64(loss), true, d, c.x, c.tg, c.eps, 1)
		}
		rng := rand.New(rand.NewPCG(9, 10))
		ns := []int{32000, 100003}
		if testing.Short() {
			ns = ns[:1]
		}
		for _, n := range ns {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 8)
			}
			d := make([]float32, n)
			for _, eps := range []float32{0, 0.1} {
				tg := rng.IntN(n)
				loss := SoftmaxCrossEntropy(d, x, tg, CrossEntropyOptions{Smoothing: eps, Scale: 1.0 / 256})
				checkCrossEntropy(t, "SoftmaxCrossEntropy", float64(loss), true, d, x, tg, eps, 1.0/256)
			}
		}
	})
}

// TestSoftmaxCrossEntropySpecial checks NaN and infinite logits against the
// limits, each pattern also repeated to reach the vector loops.
func TestSoftmaxCrossEntropySpecial(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	cases := []struct {
		x   []float32
		tg  int
		eps float32
	}{
		{[]float32{1, nan, 2}, 0, 0},
		{[]float32{-inf, nan}, 0, 0.1},
		{[]float32{inf, nan, -inf}, 0, 0},
		{[]float32{-inf, -inf, -inf}, 1, 0},
		{[]float32{-inf, -inf, -inf}, 1, 0.3},
		{[]float32{-inf}, 0, 1},
		{[]float32{1, inf, 0, inf}, 1, 0},
		{[]float32{1, inf, 0, inf}, 1, 0.1},
		{[]float32{1, inf, 0, inf}, 0, 0},
		{[]float32{1, inf, 0, inf}, 0, 1},
		{[]float32{inf, inf}, 1, 0.2},
		{[]float32{inf}, 0, 1},
		{[]float32{3, -inf, 1}, 1, 0},
		{[]float32{3, -inf, 1}, 0, 0.1},
		{[]float32{3, -inf, 1}, 0, 0},
		{[]float32{-inf, 2, -inf}, 1, 0},
	}
	const s = 0.5
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			for _, rep := range []int{1, 9} {
				x := make([]float32, 0, len(c.x)*rep)
				for r := 0; r < rep; r++ {
					x = append(x, c.x...)
				}
				d := make([]float32, len(x))
				loss := SoftmaxCrossEntropy(d, x, c.tg, CrossEntropyOptions{Smoothing: c.eps, Scale: s})
				what := fmt.Sprintf("x=%v t=%d ε=%v", x, c.tg, c.eps)
				if fallback.Max(x) != fallback.Max(x) {
					if loss == loss {
						t.Fatalf("%s: loss %v, want NaN", what, loss)
					}
					for j := range d {
						if math.Float32bits(d[j]) != 0x7fc00000 {
							t.Fatalf("%s: dlogits[%d] = %v (%#x), want the default NaN", what, j, d[j], math.Float32bits(d[j]))
						}
					}
					continue
				}
				q := xentTarget64(len(x), c.tg, float64(c.eps))
				want := xentLoss64(x, q)
				if math.IsInf(want, 1) != math.IsInf(float64(loss), 1) || !math.IsInf(want, 1) && math.Abs(float64(loss)-want) > 1e-6*(1+want) {
					t.Fatalf("%s: loss %v, want %v", what, loss, want)
				}
				p := softmaxLimit64(x)
				for j := range d {
					exact := s * (p[j] - q[j])
					if err := math.Abs(float64(d[j]) - exact); !(err <= 1e-6*(s+math.Abs(exact))) {
						t.Fatalf("%s: dlogits[%d] = %v, want %v", what, j, d[j], exact)
					}
				}
			}
		}
	})
}

// TestSoftmaxCrossEntropyRows checks the rows' loss, count and gradients
// against single rows, padding rows, the scale of the mean, the stride's
// padding left alone, and the in-place call.
func TestSoftmaxCrossEntropyRows(t *testing.T) {
	const ignore = -100
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, shape := range [][2]int{{0, 5}, {1, 1}, {3, 0}, {5, 17}, {7, 100}, {4, 1000}} {
			rows, cols := shape[0], shape[1]
			for _, o := range []CrossEntropyOptions{{Ignore: ignore}, {Ignore: ignore, Smoothing: 0.1, Scale: 0.25}, {Smoothing: 1}} {
				stride := cols + 3
				x := make([]float32, rows*stride)
				for i := range x {
					x[i] = canary
				}
				lg := Matrix{Rows: rows, Cols: cols, Stride: stride, Data: x}
				targets := make([]int32, rows)
				want := 0
				for i := range targets {
					fill(rng, lg.Row(i))
					switch {
					case cols == 0 || o.Ignore < 0 && i%3 == 1:
						targets[i] = o.Ignore
						if o.Ignore >= 0 {
							targets[i] = 0
						}
						if cols > 0 {
							lg.Row(i)[0] = float32(math.NaN()) // padding: never read
						}
					default:
						targets[i] = int32(rng.IntN(cols))
					}
					if !o.ignores(int(targets[i])) {
						want++
					}
				}
				if cols == 0 && o.Ignore >= 0 {
					continue // every target out of range: the panic test's
				}
				dg := Matrix{Rows: rows, Cols: cols, Stride: stride, Data: append([]float32(nil), x...)}
				loss, counted := SoftmaxCrossEntropyRows(dg, lg, targets, o)
				if counted != want {
					t.Fatalf("%dx%d: counted %d, want %d", rows, cols, counted, want)
				}
				s := o.Scale
				if s == 0 && counted > 0 {
					s = 1 / float32(counted)
				}
				var total float64
				d1 := make([]float32, cols)
				for i, tg := range targets {
					row := dg.Row(i)
					if o.ignores(int(tg)) {
						for j, v := range row {
							if v != 0 || math.Signbit(float64(v)) {
								t.Fatalf("%dx%d: padding row %d: dlogits[%d] = %v, want +0", rows, cols, i, j, v)
							}
						}
						continue
					}
					total += crossEntropyRow(d1, lg.Row(i), int(tg), o.Smoothing, s)
					for j := range d1 {
						if math.Float32bits(d1[j]) != math.Float32bits(row[j]) {
							t.Fatalf("%dx%d: row %d: dlogits[%d] = %v, the single row's %v", rows, cols, i, j, row[j], d1[j])
						}
					}
				}
				if math.Float32bits(loss) != math.Float32bits(float32(total)) {
					t.Fatalf("%dx%d: loss %v, want %v", rows, cols, loss, float32(total))
				}
				for i := range rows {
					for j := cols; j < stride && i*stride+j < len(x); j++ {
						if math.Float32bits(dg.Data[i*stride+j]) != math.Float32bits(canary) {
							t.Fatalf("%dx%d: the padding after row %d was written", rows, cols, i)
						}
					}
				}
				// In place.
				l2, c2 := SoftmaxCrossEntropyRows(lg, lg, targets, o)
				if math.Float32bits(l2) != math.Float32bits(loss) || c2 != counted {
					t.Fatalf("%dx%d: in place (%v, %d), out of place (%v, %d)", rows, cols, l2, c2, loss, counted)
				}
				for i := range x {
					if math.Float32bits(x[i]) != math.Float32bits(dg.Data[i]) {
						t.Fatalf("%dx%d: in place element %d = %v, out of place %v", rows, cols, i, x[i], dg.Data[i])
					}
				}
			}
		}
	})
}

func TestSoftmaxCrossEntropyPanics(t *testing.T) {
	x := make([]float32, 8)
	m := Matrix{Rows: 2, Cols: 4, Stride: 4, Data: x}
	o := CrossEntropyOptions{Ignore: -1}
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/kernels: SoftmaxCrossEntropy: len(dlogits)=5 != len(logits)=4", func() { SoftmaxCrossEntropy(make([]float32, 5), x[:4], 0, o) }},
		{"heed/kernels: SoftmaxCrossEntropy: dlogits overlaps logits without being it", func() { SoftmaxCrossEntropy(x[1:5], x[:4], 0, o) }},
		{"heed/kernels: SoftmaxCrossEntropy: target 4 out of range [0, 4)", func() { SoftmaxCrossEntropy(x[4:], x[:4], 4, o) }},
		{"heed/kernels: SoftmaxCrossEntropy: target -2 out of range [0, 4)", func() { SoftmaxCrossEntropy(x[4:], x[:4], -2, o) }},
		{"heed/kernels: SoftmaxCrossEntropy: target -1 out of range [0, 4)", func() { SoftmaxCrossEntropy(x[4:], x[:4], -1, CrossEntropyOptions{}) }},
		{"heed/kernels: SoftmaxCrossEntropy: Smoothing=1.5 not in [0, 1]", func() { SoftmaxCrossEntropy(x[4:], x[:4], 0, CrossEntropyOptions{Smoothing: 1.5}) }},
		{"heed/kernels: SoftmaxCrossEntropy: Smoothing=NaN not in [0, 1]", func() {
			SoftmaxCrossEntropy(x[4:], x[:4], 0, CrossEntropyOptions{Smoothing: float32(math.NaN())})
		}},
		{"heed/kernels: SoftmaxCrossEntropyRows: targets[1]=4 out of range [0, 4)", func() {
			SoftmaxCrossEntropyRows(Matrix{Rows: 2, Cols: 4, Stride: 4, Data: make([]float32, 8)}, m, []int32{0, 4}, o)
		}},
		{"heed/kernels: SoftmaxCrossEntropyRows: targets[0]=-3 out of range [0, 4)", func() {
			SoftmaxCrossEntropyRows(m, m, []int32{-3, -1}, o)
		}},
		{"heed/kernels: SoftmaxCrossEntropyRows: len(targets)=1 != logits.Rows=2", func() { SoftmaxCrossEntropyRows(m, m, []int32{0}, o) }},
		{"heed/kernels: SoftmaxCrossEntropyRows: dlogits is 2×3, logits 2×4", func() {
			SoftmaxCrossEntropyRows(Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}, m, []int32{0, 0}, o)
		}},
		{"heed/kernels: SoftmaxCrossEntropyRows: dlogits overlaps logits without being it", func() {
			y := make([]float32, 9)
			SoftmaxCrossEntropyRows(Matrix{Rows: 2, Cols: 4, Stride: 4, Data: y[1:]}, Matrix{Rows: 2, Cols: 4, Stride: 4, Data: y[:8]}, []int32{0, 0}, o)
		}},
		{"heed/kernels: SoftmaxCrossEntropyRows: dlogits overlaps logits without being it", func() {
			SoftmaxCrossEntropyRows(Matrix{Rows: 2, Cols: 2, Stride: 3, Data: x}, Matrix{Rows: 2, Cols: 2, Stride: 4, Data: x}, []int32{0, 0}, o)
		}},
		{"heed/kernels: SoftmaxCrossEntropyRows: logits is 2×4 with stride 4: len(logits.Data)=7 < 8", func() {
			SoftmaxCrossEntropyRows(m, Matrix{Rows: 2, Cols: 4, Stride: 4, Data: make([]float32, 7)}, []int32{0, 0}, o)
		}},
	} {
		mustPanic(t, c.want, c.f)
	}
	// Rows of no class are all padding, whatever the stride.
	if l, c := SoftmaxCrossEntropyRows(Matrix{Rows: 3, Cols: 0, Stride: 5}, Matrix{Rows: 3, Cols: 0, Stride: 7}, []int32{-1, -1, -1}, o); l != 0 || c != 0 {
		t.Fatalf("0 columns: (%v, %d), want (0, 0)", l, c)
	}
	// A panic leaves the rows before the bad target alone.
	for i := range x {
		x[i] = 1
	}
	mustPanic(t, "heed/kernels: SoftmaxCrossEntropyRows: targets[1]=9 out of range [0, 4)", func() { SoftmaxCrossEntropyRows(m, m, []int32{0, 9}, o) })
	for i, v := range x {
		if v != 1 {
			t.Fatalf("element %d written before the panic", i)
		}
	}
}

// TestSoftmaxCrossEntropyGuard runs the loss on rows flush against PROT_NONE
// pages, out of place and in place.
func TestSoftmaxCrossEntropyGuard(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	forEachGuarded(t, 257, 2, func(t *testing.T, n int, get func(int) []float32) {
		x, d := get(n), get(n)
		if n == 0 {
			SoftmaxCrossEntropy(d, x, -1, CrossEntropyOptions{Ignore: -1})
			return
		}
		fill(rng, x)
		tg := rng.IntN(n)
		loss := SoftmaxCrossEntropy(d, x, tg, CrossEntropyOptions{Smoothing: 0.1})
		checkCrossEntropy(t, "SoftmaxCrossEntropy", float64(loss), true, d, x, tg, 0.1, 1)
		SoftmaxCrossEntropy(x, x, tg, CrossEntropyOptions{})
	})
}

// TestSoftmaxCrossEntropyNoAllocs checks that the loss does not allocate.
func TestSoftmaxCrossEntropyNoAllocs(t *testing.T) {
	skipSparse(t)
	x, d := ramp(300), make([]float32, 300)
	lg := Matrix{Rows: 3, Cols: 100, Stride: 100, Data: x}
	dg := Matrix{Rows: 3, Cols: 100, Stride: 100, Data: d}
	targets := []int32{5, -100, 99}
	o := CrossEntropyOptions{Ignore: -100, Smoothing: 0.1}
	xinf := []float32{1, float32(math.Inf(1)), 2, float32(math.Inf(1))}
	forEachISA(t, func(t *testing.T) {
		for name, f := range map[string]func(){
			"SoftmaxCrossEntropy":      func() { SoftmaxCrossEntropy(d, x, 7, o) },
			"SoftmaxCrossEntropyRows":  func() { SoftmaxCrossEntropyRows(dg, lg, targets, o) },
			"SoftmaxCrossEntropy/+Inf": func() { SoftmaxCrossEntropy(d[:4], xinf, 1, o) },
		} {
			if got := allocs.Count(10, f); got != 0 {
				t.Errorf("%s allocates %d times in the measured calls", name, got)
			}
		}
	})
}

func FuzzSoftmaxCrossEntropy(f *testing.F) {
	f.Add([]byte{}, uint16(0), uint8(0))
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x80\x7f\x00\x00\x80\xff\x00\x00\x00\x80"), uint16(1), uint8(30))
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40"), uint16(3), uint8(255))
	f.Fuzz(func(t *testing.T, data []byte, target uint16, smooth uint8) {
		x := floats(data)
		if len(x) == 0 {
			return
		}
		tg := int(target) % len(x)
		eps := float32(smooth) / 255
		o := CrossEntropyOptions{Smoothing: eps, Scale: 0.5}
		want := make([]float32, len(x))
		prev := Active()
		if err := Use(Generic); err != nil {
			t.Fatal(err)
		}
		wantLoss := SoftmaxCrossEntropy(want, x, tg, o)
		Use(prev)
		got := make([]float32, len(x))
		eachISA(func(isa string) {
			loss := SoftmaxCrossEntropy(got, x, tg, o)
			if softmaxSpecialRow(x) {
				if math.Float32bits(loss) != math.Float32bits(wantLoss) {
					t.Fatalf("%s: loss %v, generic %v", isa, loss, wantLoss)
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: dlogits[%d] = %v, generic %v", isa, i, got[i], want[i])
					}
				}
				return
			}
			checkCrossEntropy(t, isa, float64(loss), true, got, x, tg, eps, 0.5)
		})
	})
}

// TestOutputLayerGradients checks the composition the example shows: the
// logits L = H·Wᵀ + b by Gemm, the mean loss's gradient dL fused, then
// dW = dLᵀ·H and dH = dL·W by Gemm and db = dLᵀ·1 by MatTVec, against the
// float64 gradients of the float64 loss (themselves checked against central
// finite differences), within dL's bound carried through the products plus
// the products' own γ.
func TestOutputLayerGradients(t *testing.T) {
	const n, d, v, eps = 5, 6, 9, 0.1
	targets := []int32{2, -1, 8, 0, 5}
	rng := rand.New(rand.NewPCG(31, 32))
	h64, w64, b64 := make([]float64, n*d), make([]float64, v*d), make([]float64, v)
	for _, s := range [][]float64{h64, w64, b64} {
		for i := range s {
			s[i] = float64(float32(rng.NormFloat64()))
		}
	}
	counted := 4.0
	// loss64 is the float64 mean loss of the layer.
	loss64 := func(h, w, b []float64) float64 {
		var total float64
		for r, tg := range targets {
			if tg < 0 {
				continue
			}
			x := make([]float64, v)
			for j := range x {
				x[j] = b[j]
				for k := 0; k < d; k++ {
					x[j] += h[r*d+k] * w[j*d+k]
				}
			}
			total += xentLossOf64(x, int(tg), eps)
		}
		return total / counted
	}
	// The float64 gradients by the formula: dL = (p − q)/counted.
	dL64 := make([]float64, n*v)
	for r, tg := range targets {
		if tg < 0 {
			continue
		}
		x := make([]float64, v)
		for j := range x {
			x[j] = b64[j]
			for k := 0; k < d; k++ {
				x[j] += h64[r*d+k] * w64[j*d+k]
			}
		}
		for j, g := range xentGrad64(x, int(tg), eps) {
			dL64[r*v+j] = g / counted
		}
	}
	dW64, dH64, db64 := make([]float64, v*d), make([]float64, n*d), make([]float64, v)
	for r := 0; r < n; r++ {
		for j := 0; j < v; j++ {
			db64[j] += dL64[r*v+j]
			for k := 0; k < d; k++ {
				dW64[j*d+k] += dL64[r*v+j] * h64[r*d+k]
				dH64[r*d+k] += dL64[r*v+j] * w64[j*d+k]
			}
		}
	}
	// The formula against finite differences of the float64 loss.
	const fd = 1e-6
	for _, c := range []struct {
		name string
		x    []float64
		g    []float64
	}{{"dH", h64, dH64}, {"dW", w64, dW64}, {"db", b64, db64}} {
		for i := range c.x {
			x0 := c.x[i]
			c.x[i] = x0 + fd
			lp := loss64(h64, w64, b64)
			c.x[i] = x0 - fd
			lm := loss64(h64, w64, b64)
			c.x[i] = x0
			if diff := (lp - lm) / (2 * fd); math.Abs(diff-c.g[i]) > 1e-7 {
				t.Fatalf("%s[%d]: formula %v, finite differences %v", c.name, i, c.g[i], diff)
			}
		}
	}
	f32 := func(r, c int, s []float64) Matrix {
		m := Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
		for i, x := range s {
			m.Data[i] = float32(x)
		}
		return m
	}
	forEachISA(t, func(t *testing.T) {
		h, w, b := f32(n, d, h64), f32(v, d, w64), f32(1, v, b64)
		logits := Matrix{Rows: n, Cols: v, Stride: v, Data: make([]float32, n*v)}
		for r := 0; r < n; r++ {
			copy(logits.Row(r), b.Data)
		}
		Gemm(NoTrans, Trans, 1, h, w, 1, logits)
		x := append([]float32(nil), logits.Data...)
		_, cnt := SoftmaxCrossEntropyRows(logits, logits, targets, CrossEntropyOptions{Ignore: -1, Smoothing: eps})
		if cnt != int(counted) {
			t.Fatalf("counted %d, want %v", cnt, counted)
		}
		// dL's own bound, element by element (the doc's, from float32 logits).
		errL := make([]float64, n*v)
		for r, tg := range targets {
			if tg < 0 {
				continue
			}
			row := x[r*v : (r+1)*v]
			m := float64(fallback.Max(row))
			p := softmaxLimit64(row)
			q := xentTarget64(v, int(tg), eps)
			s := 1 / counted
			for j := range row {
				errL[r*v+j] = s*((p[j]*(math.Abs(float64(row[j])-m)+1.5*v+9)+q[j])*u+0x1p-126) + u*math.Abs(float64(logits.Data[r*v+j]))
			}
		}
		dW, dH := Matrix{Rows: v, Cols: d, Stride: d, Data: make([]float32, v*d)}, Matrix{Rows: n, Cols: d, Stride: d, Data: make([]float32, n*d)}
		db := make([]float32, v)
		Gemm(Trans, NoTrans, 1, logits, h, 0, dW)
		Gemm(NoTrans, NoTrans, 1, logits, w, 0, dH)
		MatTVec(db, logits, []float32{1, 1, 1, 1, 1})
		// The logits themselves are off by γ_{d+1}·Σ|h·w| + |b|·u from the float64
		// ones, which moves p − q by at most that times 2 (Σⱼ|∂pⱼ/∂xₖ| ≤ 2pₖ ≤ 2).
		var xErr float64
		for r := 0; r < n; r++ {
			for j := 0; j < v; j++ {
				var abs float64
				for k := 0; k < d; k++ {
					abs += math.Abs(h64[r*d+k] * w64[j*d+k])
				}
				xErr = math.Max(xErr, gamma(d+1)*(abs+math.Abs(b64[j])))
			}
		}
		shift := 2 * xErr / counted // per element of dL, at most
		check := func(name string, got []float32, want []float64, terms func(i int) (err, abs float64), k int) {
			for i := range want {
				e, a := terms(i)
				bound := e + gamma(k+1)*a
				if diff := math.Abs(float64(got[i]) - want[i]); !(diff <= bound) {
					t.Fatalf("%s[%d] = %v, want %v ± %.3g (error %.3g)", name, i, got[i], want[i], bound, diff)
				}
			}
		}
		check("dW", dW.Data, dW64, func(i int) (float64, float64) {
			j, k := i/d, i%d
			var e, a float64
			for r := 0; r < n; r++ {
				if targets[r] < 0 {
					continue
				}
				e += (errL[r*v+j] + shift) * math.Abs(h64[r*d+k])
				a += math.Abs(float64(logits.Data[r*v+j]) * h64[r*d+k])
			}
			return e, a
		}, n)
		check("dH", dH.Data, dH64, func(i int) (float64, float64) {
			r, k := i/d, i%d
			var e, a float64
			if targets[r] >= 0 {
				for j := 0; j < v; j++ {
					e += (errL[r*v+j] + shift) * math.Abs(w64[j*d+k])
					a += math.Abs(float64(logits.Data[r*v+j]) * w64[j*d+k])
				}
			}
			return e, a
		}, v)
		check("db", db, db64, func(j int) (float64, float64) {
			var e, a float64
			for r := 0; r < n; r++ {
				if targets[r] >= 0 {
					e += errL[r*v+j] + shift
					a += math.Abs(float64(logits.Data[r*v+j]))
				}
			}
			return e, a
		}, n)
	})
}
