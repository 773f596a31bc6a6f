package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// binaryOp is an element-wise kernel with its exact oracle.
type binaryOp struct {
	name   string
	kernel func(dst, x, y []float32)
	want   func(x, y float32) float32 // correctly rounded
}

// fmaExact returns a·b + c rounded once to float32.
func fmaExact(a, b, c float32) float32 {
	if !isFinite(a) || !isFinite(b) || !isFinite(c) {
		return float32(float64(a)*float64(b) + float64(c)) // IEEE special values
	}
	p := new(big.Float).SetPrec(300).SetFloat64(float64(a))
	p.Mul(p, new(big.Float).SetFloat64(float64(b)))
	p.Add(p, new(big.Float).SetFloat64(float64(c)))
	f, _ := p.Float32()
	if f == 0 && math.Signbit(float64(float32(float64(a)*float64(b)+float64(c)))) {
		return float32(math.Copysign(0, -1)) // the sign of an exact zero sum
	}
	return f
}

const testAlpha, testConst = float32(-1.7), float32(0.3)

// The float64 operations below round correctly once converted to float32
// (53 ≥ 2·24 + 2 bits).
var binaryOps = []binaryOp{
	{"Add", Add, func(x, y float32) float32 { return float32(float64(x) + float64(y)) }},
	{"Sub", Sub, func(x, y float32) float32 { return float32(float64(x) - float64(y)) }},
	{"Mul", Mul, func(x, y float32) float32 { return float32(float64(x) * float64(y)) }},
	{"Div", Div, func(x, y float32) float32 { return float32(float64(x) / float64(y)) }},
	{"AxpyTo", func(dst, x, y []float32) { AddScaled(dst, testAlpha, x, y) },
		func(x, y float32) float32 { return fmaExact(testAlpha, x, y) }},
	{"ScaleTo", func(dst, x, _ []float32) { Scale(dst, testAlpha, x) },
		func(x, _ float32) float32 { return float32(float64(testAlpha) * float64(x)) }},
	{"AddConstTo", func(dst, x, _ []float32) { AddConst(dst, testConst, x) },
		func(x, _ float32) float32 { return float32(float64(x) + float64(testConst)) }},
}

// sameResult reports whether got is want bit for bit, any NaN matching any NaN.
func sameResult(got, want float32) bool {
	if want != want {
		return got != got
	}
	return math.Float32bits(got) == math.Float32bits(want)
}

func TestElementwise(t *testing.T) {
	for _, op := range binaryOps {
		t.Run(op.name, func(t *testing.T) {
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(11, 12))
				for _, n := range smallLengths {
					for off := 0; off < 16; off += 1 + n/32 {
						x, xok := slab(t, n, off)
						y, yok := slab(t, n, (off+7)%16)
						dst, dok := slab(t, n, (off+3)%16)
						fill(rng, x)
						fill(rng, y)
						for i := range x {
							if rng.IntN(16) == 0 {
								x[i] = specials[rng.IntN(len(specials))]
							}
							if rng.IntN(16) == 0 {
								y[i] = specials[rng.IntN(len(specials))]
							}
						}
						want := make([]float32, n)
						for i := range want {
							want[i] = op.want(x[i], y[i])
						}
						check := func(how string, got []float32) {
							t.Helper()
							for i := range got {
								if !sameResult(got[i], want[i]) {
									t.Fatalf("%s n=%d off=%d: %s(x=%v, y=%v)[%d] = %v, want %v", how, n, off, op.name, x[i], y[i], i, got[i], want[i])
								}
							}
						}
						op.kernel(dst, x, y)
						check("out of place", dst)
						// dst = y, then dst = x: in place.
						yc := append([]float32(nil), y...)
						op.kernel(y, x, y)
						check("dst=y", y)
						copy(y, yc)
						op.kernel(x, x, y)
						check("dst=x", x)
						xok()
						yok()
						dok()
					}
				}
			})
		})
	}
}

// TestElementwiseGuard runs every element-wise kernel on slices flush against
// PROT_NONE pages, out of place and in place (dst = x, dst = y).
func TestElementwiseGuard(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	forEachGuarded(t, 257, 3, func(t *testing.T, n int, get func(int) []float32) {
		x, y, dst := get(n), get(n), get(n)
		fill(rng, x)
		fill(rng, y)
		x0, y0 := slices.Clone(x), slices.Clone(y)
		for _, op := range binaryOps {
			check := func(how string, got []float32) {
				t.Helper()
				for i := range got {
					if want := op.want(x0[i], y0[i]); !sameResult(got[i], want) {
						t.Fatalf("%s n=%d: %s(x=%v, y=%v)[%d] = %v, want %v", how, n, op.name, x0[i], y0[i], i, got[i], want)
					}
				}
			}
			op.kernel(dst, x, y)
			check("out of place", dst)
			op.kernel(x, x, y)
			check("dst=x", x)
			copy(x, x0)
			op.kernel(y, x, y)
			check("dst=y", y)
			copy(y, y0)
		}
	})
}

func TestElementwisePanics(t *testing.T) {
	a, b := make([]float32, 3), make([]float32, 4)
	buf := make([]float32, 16)
	x, y, z := buf[0:4], buf[1:5], buf[8:12] // x and y overlap, shifted; z is apart
	m := buf[8:14]                           // a 2×3 matrix apart from x and y
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/kernels: Add: len(dst)=3, len(x)=4, len(y)=4; want equal lengths", func() { Add(a, b, b) }},
		{"heed/kernels: Sub: len(dst)=4, len(x)=3, len(y)=4; want equal lengths", func() { Sub(b, a, b) }},
		{"heed/kernels: Mul: len(dst)=4, len(x)=4, len(y)=3; want equal lengths", func() { Mul(b, b, a) }},
		{"heed/kernels: Div: len(dst)=3, len(x)=4, len(y)=4; want equal lengths", func() { Div(a, b, b) }},
		{"heed/kernels: AddScaled: len(dst)=3, len(x)=4, len(y)=4; want equal lengths", func() { AddScaled(a, 1, b, b) }},
		{"heed/kernels: Scale: len(dst)=3 != len(x)=4", func() { Scale(a, 1, b) }},
		{"heed/kernels: AddConst: len(dst)=3 != len(x)=4", func() { AddConst(a, 1, b) }},
		{"heed/kernels: Add: dst overlaps x without being it", func() { Add(y, x, z) }},
		{"heed/kernels: Sub: dst overlaps y without being it", func() { Sub(y, z, x) }},
		{"heed/kernels: Mul: dst overlaps x without being it", func() { Mul(x, y, z) }},
		{"heed/kernels: Div: dst overlaps y without being it", func() { Div(x, z, y) }},
		{"heed/kernels: AddScaled: dst overlaps x without being it", func() { AddScaled(y, 2, x, z) }},
		{"heed/kernels: Scale: dst overlaps x without being it", func() { Scale(y, 2, x) }},
		{"heed/kernels: AddConst: dst overlaps x without being it", func() { AddConst(x, 2, y) }},
		{"heed/kernels: Exp: dst overlaps x without being it", func() { Exp(y, x) }},
		{"heed/kernels: Tanh: dst overlaps x without being it", func() { Tanh(x, y) }},
		{"heed/kernels: Sigmoid: dst overlaps x without being it", func() { Sigmoid(y, x) }},
		{"heed/kernels: Log: dst overlaps x without being it", func() { Log(y, x) }},
		{"heed/kernels: Softmax: dst overlaps x without being it", func() { Softmax(y, x) }},
		{"heed/kernels: LogSoftmax: dst overlaps x without being it", func() { LogSoftmax(x, y) }},
		{"heed/kernels: Axpy: y overlaps x without being it", func() { Axpy(1, x, y) }},
		{"heed/kernels: MatVec: dst overlaps x", func() { MatVec(x[:2], Matrix{Rows: 2, Cols: 3, Stride: 3, Data: m}, y[:3]) }},
		{"heed/kernels: MatVec: dst overlaps a", func() { MatVec(z[:2], Matrix{Rows: 2, Cols: 3, Stride: 3, Data: buf[9:15]}, x[:3]) }},
		{"heed/kernels: MatTVec: dst overlaps x", func() { MatTVec(x[:3], Matrix{Rows: 2, Cols: 3, Stride: 3, Data: m}, y[:2]) }},
		{"heed/kernels: Gemm: c overlaps a", func() {
			a := Matrix{Rows: 2, Cols: 2, Stride: 2, Data: x}
			Gemm(NoTrans, NoTrans, 1, a, Matrix{Rows: 2, Cols: 2, Stride: 2, Data: z}, 0, Matrix{Rows: 2, Cols: 2, Stride: 2, Data: y})
		}},
	} {
		mustPanic(t, c.want, c.f)
	}
	// Exact aliasing is allowed: in place.
	for i := range x {
		x[i] = float32(i)
	}
	Add(x, x, x)
	Scale(x, 0.5, x)
	AddScaled(x, 2, x, x)
	Exp(x, x)
	Softmax(x, x)
	Axpy(1, x, x)
	Add(z, x, y) // inputs may overlap each other
}

func TestStrided(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	incs := []int{1, 2, 3, -1, -2, -5}
	forEachISA(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 2, 7, 33, 100} {
			for _, incX := range incs {
				for _, incY := range incs {
					abs := func(i int) int { return max(i, -i) }
					x := make([]float32, 1+max(n-1, 0)*abs(incX))
					y := make([]float32, 1+max(n-1, 0)*abs(incY))
					fill(rng, x)
					fill(rng, y)
					// Element k of a BLAS vector with increment inc.
					at := func(inc, k int) int {
						if inc < 0 {
							return (n - 1 - k) * -inc
						}
						return k * inc
					}
					var exact, sabs float64
					for k := 0; k < n; k++ {
						p := float64(x[at(incX, k)]) * float64(y[at(incY, k)])
						exact += p
						sabs += math.Abs(p)
					}
					checkDot(t, "DotInc", DotInc(n, x, incX, y, incY), exact, sabs, n)
					// Exact results and bounds: one rounding of the product
					// and one of the sum, or one fused.
					want := make([]float64, len(y))
					bound := make([]float64, len(y))
					for i, v := range y {
						want[i] = float64(v)
					}
					for k := 0; k < n; k++ {
						i := at(incY, k)
						p := float64(testAlpha) * float64(x[at(incX, k)])
						want[i] += p
						bound[i] = u * (math.Abs(p) + math.Abs(want[i]))
					}
					AxpyInc(n, testAlpha, x, incX, y, incY)
					for i := range y {
						if err := math.Abs(float64(y[i]) - want[i]); !(err <= bound[i]) {
							t.Fatalf("AxpyInc n=%d incX=%d incY=%d: y[%d] = %v, want %v ± %.3g", n, incX, incY, i, y[i], want[i], bound[i])
						}
					}
				}
			}
		}
	})
}

func TestStridedPanics(t *testing.T) {
	x := make([]float32, 5)
	mustPanic(t, "heed/kernels: DotInc: n=-1 < 0", func() { DotInc(-1, x, 1, x, 1) })
	mustPanic(t, "heed/kernels: DotInc: incX=0, incY=1; want nonzero increments", func() { DotInc(1, x, 0, x, 1) })
	mustPanic(t, "heed/kernels: DotInc: n=3, incX=2, incY=3 need len(x), len(y) ≥ 1 + (n−1)·|inc|; have 5, 5", func() { DotInc(3, x, 2, x, 3) })
	mustPanic(t, "heed/kernels: AxpyInc: n=3, incX=-3, incY=1 need len(x), len(y) ≥ 1 + (n−1)·|inc|; have 5, 5", func() { AxpyInc(3, 1, x, -3, x, 1) })
	mustPanic(t, "heed/kernels: AxpyInc: n=2, incX=1, incY=9223372036854775807 need len(x), len(y) ≥ 1 + (n−1)·|inc|; have 5, 5", func() { AxpyInc(2, 1, x, 1, x, math.MaxInt) })
}
