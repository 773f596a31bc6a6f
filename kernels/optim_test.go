package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/allocs"
	"github.com/heedml/heed/internal/fallback"
)

// adamConfigs are the configurations the Adam tests sweep: each decay mode,
// a zero Eps, and β's at their ends.
var adamConfigs = []AdamConfig{
	{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8},
	{LR: 3e-4, Beta1: 0.9, Beta2: 0.98, Eps: 1e-6, WeightDecay: 0.01, Decay: L2Decay},
	{LR: 1e-2, Beta1: 0.8, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1, Decay: DecoupledDecay},
	{LR: 0.5, Beta1: 0, Beta2: 0, Eps: 0},
}

// sgdConfigs are the SGD configurations, one per mode of the kernels.
var sgdConfigs = []SGDConfig{
	{LR: 0.1},
	{LR: 0.1, WeightDecay: 1e-4},
	{LR: 0.05, Momentum: 0.9},
	{LR: 0.05, Momentum: 0.9, WeightDecay: 5e-4},
	{LR: 0.01, Momentum: 0.99, Kind: Nesterov},
	{LR: 0.01, Momentum: 0.5, WeightDecay: 1e-3, Kind: Nesterov},
}

// optimSpecials are the values the optimizer tests mix in: zeros of both
// signs, subnormals, infinities, NaN and extremes.
var optimSpecials = []float32{0, float32(math.Copysign(0, -1)), 1e-40, -1e-40, math.SmallestNonzeroFloat32,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32, 1e20, -1e-20}

// fillOptim sets s to random values of a few magnitudes, with one element in
// every special a special value; v-like slices (nonNeg) stay ≥ 0 apart from
// the specials.
func fillOptim(rng *rand.Rand, s []float32, special int, nonNeg bool) {
	fill(rng, s)
	for i := range s {
		if nonNeg {
			s[i] = s[i] * s[i]
		}
		if special > 0 && rng.IntN(special) == 0 {
			s[i] = optimSpecials[rng.IntN(len(optimSpecials))]
		}
	}
}

// sameOptimBits fails t unless got and want hold the same bits, NaN against any NaN.
func sameOptimBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		g, w := got[i], want[i]
		if g != g && w != w {
			continue
		}
		if math.Float32bits(g) != math.Float32bits(w) {
			t.Fatalf("%s[%d] = %v (%#x), fallback %v (%#x)", what, i, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
}

// TestAdamStepSameBits checks every ISA against fallback, bit for bit, over
// every length and offsets, for each configuration over three steps, with
// special values mixed in.
func TestAdamStepSameBits(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		c := 0
		forEachSlab(t, 16, []int{0, 3, 6, 9}, func(n, off int, s [][]float32) {
			c++
			p, g, m, v := s[0], s[1], s[2], s[3]
			special := 0
			if c%3 == 0 {
				special = 5
			}
			fillOptim(rng, p, special, false)
			fillOptim(rng, g, special, false)
			fillOptim(rng, m, special, false)
			fillOptim(rng, v, special, true)
			cfg := adamConfigs[c%len(adamConfigs)]
			wp, wm, wv := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
			g0 := append([]float32(nil), g...)
			for step := 1; step <= 3; step++ {
				st := step
				if c%2 == 0 {
					st = 1000 * step
				}
				k := cfg.consts(st)
				fallback.AdamStep(wp, g, wm, wv, k.lr, k.b1, k.c1, k.b2, k.c2, k.rs, k.eps, k.wd, k.mode)
				AdamStep(p, g, m, v, cfg, st)
				what := fmt.Sprintf("n=%d off=%d config %d step %d: ", n, off, c%len(adamConfigs), st)
				sameOptimBits(t, what+"p", p, wp)
				sameOptimBits(t, what+"m", m, wm)
				sameOptimBits(t, what+"v", v, wv)
			}
			for i := range g {
				if math.Float32bits(g[i]) != math.Float32bits(g0[i]) {
					t.Fatalf("n=%d: g[%d] was written", n, i)
				}
			}
		})
	})
}

// TestAdamStepFormula checks fallback's update, the arithmetic every ISA
// repeats, against Adam computed in float64 (PyTorch's formula): m and v
// within a few roundings, the step within 12u relative plus u·|p|.
func TestAdamStepFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const n = 1000
	for ci, cfg := range adamConfigs {
		if cfg.Eps == 0 {
			continue // v = 0 lanes divide 0 by 0
		}
		for _, step := range []int{1, 2, 10, 10000} {
			p, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			fillOptim(rng, p, 0, false)
			fillOptim(rng, g, 0, false)
			fillOptim(rng, m, 0, false)
			fillOptim(rng, v, 0, true)
			p0, m0, v0 := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
			k := cfg.consts(step)
			fallback.AdamStep(p, g, m, v, k.lr, k.b1, k.c1, k.b2, k.c2, k.rs, k.eps, k.wd, k.mode)
			b1, b2, lr, wd := float64(cfg.Beta1), float64(cfg.Beta2), float64(cfg.LR), float64(cfg.WeightDecay)
			for i := range p {
				pi, gi := float64(p0[i]), float64(g[i])
				switch {
				case wd != 0 && cfg.Decay == L2Decay:
					gi += wd * pi
				case wd != 0:
					pi *= 1 - lr*wd
				}
				mi := b1*float64(m0[i]) + (1-b1)*gi
				vi := b2*float64(v0[i]) + (1-b2)*gi*gi
				bc1, bc2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
				den := math.Sqrt(vi)/math.Sqrt(bc2) + float64(cfg.Eps)
				delta := lr / bc1 * mi / den
				want := pi - delta
				what := fmt.Sprintf("config %d step %d: element %d", ci, step, i)
				if err := math.Abs(float64(m[i]) - mi); err > 4*u*(b1*math.Abs(float64(m0[i]))+(1-b1)*math.Abs(gi))+eta {
					t.Fatalf("%s: m = %v, want %v", what, m[i], mi)
				}
				if err := math.Abs(float64(v[i]) - vi); err > 5*u*vi+eta {
					t.Fatalf("%s: v = %v, want %v", what, v[i], vi)
				}
				// The step's error: m's, v's (halved by the root), and the
				// roundings of α, r, √, fma, / and the final fma.
				mErr := 4 * u * (b1*math.Abs(float64(m0[i])) + (1-b1)*math.Abs(gi)) / math.Max(math.Abs(mi), 1e-300)
				bound := (mErr+12*u)*math.Abs(delta) + 2*u*math.Abs(want) + eta
				if err := math.Abs(float64(p[i]) - want); err > bound {
					t.Fatalf("%s: p = %v, want %v ± %.3g (error %.3g)", what, p[i], want, bound, err)
				}
			}
		}
	}
}

func TestSGDStepSameBits(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(25, 26))
		c := 0
		forEachSlab(t, 16, []int{0, 5, 11}, func(n, off int, s [][]float32) {
			c++
			p, g, b := s[0], s[1], s[2]
			special := 0
			if c%3 == 0 {
				special = 5
			}
			fillOptim(rng, p, special, false)
			fillOptim(rng, g, special, false)
			fillOptim(rng, b, special, false)
			cfg := sgdConfigs[c%len(sgdConfigs)]
			mode := 0
			if cfg.WeightDecay != 0 {
				mode |= fallback.SGDDecay
			}
			if cfg.Momentum != 0 {
				mode |= fallback.SGDMomentum
				if cfg.Kind == Nesterov {
					mode |= fallback.SGDNesterov
				}
			}
			buf := b
			if cfg.Momentum == 0 && c%2 == 0 {
				buf = nil // not used
			}
			wp, wb := append([]float32(nil), p...), append([]float32(nil), b...)
			b0, g0 := append([]float32(nil), b...), append([]float32(nil), g...)
			for step := 0; step < 3; step++ {
				fallback.SGDStep(wp, g, wb, cfg.LR, cfg.Momentum, cfg.WeightDecay, mode)
				SGDStep(p, g, buf, cfg)
				what := fmt.Sprintf("n=%d off=%d config %d step %d: ", n, off, c%len(sgdConfigs), step)
				sameOptimBits(t, what+"p", p, wp)
				sameOptimBits(t, what+"buf", b, wb)
			}
			for i := range g {
				if math.Float32bits(g[i]) != math.Float32bits(g0[i]) {
					t.Fatalf("n=%d: g[%d] was written", n, i)
				}
				if cfg.Momentum == 0 && math.Float32bits(b[i]) != math.Float32bits(b0[i]) {
					t.Fatalf("n=%d: buf[%d] was written without momentum", n, i)
				}
			}
		})
	})
}

// TestSGDStepFormula checks fallback's update against float64 SGD.
func TestSGDStepFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	const n = 1000
	for ci, cfg := range sgdConfigs {
		p, g, b := make([]float32, n), make([]float32, n), make([]float32, n)
		fillOptim(rng, p, 0, false)
		fillOptim(rng, g, 0, false)
		fillOptim(rng, b, 0, false)
		p0, b0 := append([]float32(nil), p...), append([]float32(nil), b...)
		SGDStep(p, g, b, cfg)
		lr, mu, wd := float64(cfg.LR), float64(cfg.Momentum), float64(cfg.WeightDecay)
		for i := range p {
			gi := float64(g[i]) + wd*float64(p0[i])
			d, bi := gi, float64(b0[i])
			if mu != 0 {
				bi = mu*bi + gi
				d = bi
				if cfg.Kind == Nesterov {
					d = gi + mu*bi
				}
				if err := math.Abs(float64(b[i]) - bi); err > 3*u*(mu*math.Abs(float64(b0[i]))+math.Abs(gi))+eta {
					t.Fatalf("config %d element %d: buf = %v, want %v", ci, i, b[i], bi)
				}
			}
			want := float64(p0[i]) - lr*d
			scale := math.Abs(float64(p0[i])) + lr*(math.Abs(float64(g[i]))+wd*math.Abs(float64(p0[i]))+mu*math.Abs(float64(b0[i])))*(1+mu)
			if err := math.Abs(float64(p[i]) - want); err > 5*u*scale+eta {
				t.Fatalf("config %d element %d: p = %v, want %v (error %.3g)", ci, i, p[i], want, err)
			}
		}
	}
}

// TestOptimGuard runs the steps on slices flush against PROT_NONE pages.
func TestOptimGuard(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	forEachGuarded(t, 257, 4, func(t *testing.T, n int, get func(int) []float32) {
		p, g, m, v := get(n), get(n), get(n), get(n)
		fillOptim(rng, v, 0, true)
		AdamStep(p, g, m, v, adamConfigs[1], 3)
		AdamStep(p, g, m, v, adamConfigs[2], 4)
		for _, c := range sgdConfigs {
			SGDStep(p, g, m, c)
		}
	})
}

func TestOptimPanics(t *testing.T) {
	x := make([]float32, 16)
	cfg := adamConfigs[0]
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/kernels: AdamStep: len(p)=4 != len(g)=3", func() { AdamStep(x[:4], x[4:7], x[8:12], x[12:16], cfg, 1) }},
		{"heed/kernels: AdamStep: len(p)=4 != len(v)=3", func() { AdamStep(x[:4], x[4:8], x[8:12], x[12:15], cfg, 1) }},
		{"heed/kernels: AdamStep: p overlaps g", func() { AdamStep(x[:4], x[3:7], x[8:12], x[12:16], cfg, 1) }},
		{"heed/kernels: AdamStep: p overlaps g", func() { AdamStep(x[:4], x[:4], x[8:12], x[12:16], cfg, 1) }},
		{"heed/kernels: AdamStep: m overlaps v", func() { AdamStep(x[:4], x[4:8], x[8:12], x[9:13], cfg, 1) }},
		{"heed/kernels: AdamStep: step=0 < 1", func() { AdamStep(x[:4], x[4:8], x[8:12], x[12:16], cfg, 0) }},
		{"heed/kernels: AdamStep: Beta1=1 not in [0, 1)", func() {
			AdamStep(x[:4], x[4:8], x[8:12], x[12:16], AdamConfig{Beta1: 1, Beta2: 0.9}, 1)
		}},
		{"heed/kernels: AdamStep: Beta2=-0.1 not in [0, 1)", func() {
			AdamStep(x[:4], x[4:8], x[8:12], x[12:16], AdamConfig{Beta1: 0.9, Beta2: -0.1}, 1)
		}},
		{"heed/kernels: AdamStep: unknown Decay 2", func() {
			AdamStep(x[:4], x[4:8], x[8:12], x[12:16], AdamConfig{Beta1: 0.9, Beta2: 0.9, Decay: 2}, 1)
		}},
		{"heed/kernels: SGDStep: len(p)=4 != len(g)=5", func() { SGDStep(x[:4], x[4:9], nil, sgdConfigs[0]) }},
		{"heed/kernels: SGDStep: len(p)=4 != len(buf)=0", func() { SGDStep(x[:4], x[4:8], nil, sgdConfigs[2]) }},
		{"heed/kernels: SGDStep: g overlaps buf", func() { SGDStep(x[:4], x[4:8], x[7:11], sgdConfigs[2]) }},
		{"heed/kernels: SGDStep: p overlaps g", func() { SGDStep(x[:4], x[2:6], nil, sgdConfigs[0]) }},
		{"heed/kernels: SGDStep: Nesterov momentum with Momentum=0", func() {
			SGDStep(x[:4], x[4:8], nil, SGDConfig{LR: 1, Kind: Nesterov})
		}},
	} {
		mustPanic(t, c.want, c.f)
	}
	for i, v := range x {
		if v != 0 {
			t.Fatalf("element %d written before a panic", i)
		}
	}
}

// TestOptimNoAllocs checks that the steps do not allocate.
func TestOptimNoAllocs(t *testing.T) {
	skipSparse(t)
	x := make([]float32, 4*300)
	p, g, m, v := x[:300], x[300:600], x[600:900], x[900:]
	forEachISA(t, func(t *testing.T) {
		for name, f := range map[string]func(){
			"AdamStep":  func() { AdamStep(p, g, m, v, adamConfigs[2], 5) },
			"SGDStep":   func() { SGDStep(p, g, m, sgdConfigs[5]) },
			"SGDStep/0": func() { SGDStep(p, g, nil, sgdConfigs[1]) },
		} {
			if got := allocs.Count(10, f); got != 0 {
				t.Errorf("%s allocates %d times in the measured calls", name, got)
			}
		}
	})
}

// optimFuzzInputs splits data into k slices of equal length.
func optimFuzzInputs(data []byte, k int) [][]float32 {
	x := floats(data)
	n := len(x) / k
	s := make([][]float32, k)
	for i := range s {
		s[i] = x[i*n : (i+1)*n : (i+1)*n]
	}
	return s
}

func FuzzAdamStep(f *testing.F) {
	f.Add([]byte{}, uint8(0), uint16(1))
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x80\x7f\x00\x00\x80\xff\x00\x00\x00\x80\x00\x00\xc0\x7f\x01\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x80\xbf"), uint8(1), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, config uint8, step uint16) {
		s := optimFuzzInputs(data, 4)
		cfg := adamConfigs[int(config)%len(adamConfigs)]
		st := 1 + int(step)
		k := cfg.consts(st)
		want := make([][]float32, 4)
		for i := range want {
			want[i] = append([]float32(nil), s[i]...)
		}
		fallback.AdamStep(want[0], want[1], want[2], want[3], k.lr, k.b1, k.c1, k.b2, k.c2, k.rs, k.eps, k.wd, k.mode)
		eachISA(func(isa string) {
			got := make([][]float32, 4)
			for i := range got {
				got[i] = append([]float32(nil), s[i]...)
			}
			AdamStep(got[0], got[1], got[2], got[3], cfg, st)
			for i, name := range []string{"p", "g", "m", "v"} {
				sameOptimBits(t, isa+": "+name, got[i], want[i])
			}
		})
	})
}

func FuzzSGDStep(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x80\x7f\x00\x00\x80\xff\x00\x00\x00\x80\x00\x00\xc0\x7f\x01\x00\x00\x00"), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, config uint8) {
		s := optimFuzzInputs(data, 3)
		cfg := sgdConfigs[int(config)%len(sgdConfigs)]
		ref := make([][]float32, 3)
		for i := range ref {
			ref[i] = append([]float32(nil), s[i]...)
		}
		prev := Active()
		if err := Use(Generic); err != nil {
			t.Fatal(err)
		}
		SGDStep(ref[0], ref[1], ref[2], cfg)
		Use(prev)
		eachISA(func(isa string) {
			got := make([][]float32, 3)
			for i := range got {
				got[i] = append([]float32(nil), s[i]...)
			}
			SGDStep(got[0], got[1], got[2], cfg)
			for i, name := range []string{"p", "g", "buf"} {
				sameOptimBits(t, isa+": "+name, got[i], ref[i])
			}
		})
	})
}

// TestOptimGolden checks the bits of a few steps of each configuration on
// fixed inputs against a hash recorded on amd64: the update's arithmetic is
// the same on every architecture (arm64 runs it under qemu, purego in Go).
func TestOptimGolden(t *testing.T) {
	const n = 300
	hash := func(s ...[]float32) uint64 {
		h := uint64(14695981039346656037)
		for _, x := range s {
			for _, v := range x {
				if v != v {
					v = defaultNaN() // payloads are unspecified
				}
				h ^= uint64(math.Float32bits(v))
				h *= 1099511628211
			}
		}
		return h
	}
	inputs := func(k int) [][]float32 {
		rng := rand.New(rand.NewPCG(41, 42))
		s := make([][]float32, k)
		for i := range s {
			s[i] = make([]float32, n)
			fillOptim(rng, s[i], 7, i == 3)
		}
		return s
	}
	want := []uint64{0xcea5ee6403628c6b, 0x732047bb36fcc7f6}
	forEachISA(t, func(t *testing.T) {
		s := inputs(4)
		for _, c := range adamConfigs {
			for step := 1; step <= 3; step++ {
				AdamStep(s[0], s[1], s[2], s[3], c, 10*step-9)
			}
		}
		if got := hash(s...); got != want[0] {
			t.Errorf("AdamStep: hash %#x, want %#x", got, want[0])
		}
		s = inputs(3)
		for _, c := range sgdConfigs {
			for step := 0; step < 3; step++ {
				SGDStep(s[0], s[1], s[2], c)
			}
		}
		if got := hash(s...); got != want[1] {
			t.Errorf("SGDStep: hash %#x, want %#x", got, want[1])
		}
	})
}
