package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/allocs"
	"github.com/heedml/heed/internal/fallback"
)

// backward describes one of the kernels dx = f(y, dy) for the shared tests:
// SoftmaxBackward, LogSoftmaxBackward, TanhBackward and SigmoidBackward.
type backward struct {
	name string
	vec  func(dx, y, dy []float32)
	rows func(dx, y, dy Matrix) // nil: no rows form
	ref  func(dx, y, dy []float32)
	// outputs fills y with what the forward gives (and some masked entries).
	outputs func(rng *rand.Rand, y []float32)
	// check fails t unless dx meets the kernel's contract for y and dy.
	check func(t *testing.T, what string, dx, y, dy []float32)
}

var backwards = []backward{
	{name: "SoftmaxBackward", vec: SoftmaxBackward, rows: SoftmaxBackwardRows, ref: fallback.SoftmaxBackward,
		outputs: softmaxOutputs, check: checkSoftmaxBackward},
	{name: "LogSoftmaxBackward", vec: LogSoftmaxBackward, rows: LogSoftmaxBackwardRows, ref: fallback.LogSoftmaxBackward,
		outputs: logSoftmaxOutputs, check: checkLogSoftmaxBackward},
	{name: "TanhBackward", vec: TanhBackward, ref: fallback.TanhBackward, outputs: tanhOutputs,
		check: checkActivationBackward(fallback.TanhBackward, tanhBound)},
	{name: "SigmoidBackward", vec: SigmoidBackward, ref: fallback.SigmoidBackward, outputs: sigmoidOutputs,
		check: checkActivationBackward(fallback.SigmoidBackward, sigmoidBound)},
}

// softmaxOutputs sets y to a softmax of scores in [−8, 8), a few of them
// masked (−Inf, so y = 0).
func softmaxOutputs(rng *rand.Rand, y []float32) {
	for i := range y {
		y[i] = float32(rng.Float64()*16 - 8)
		if rng.IntN(8) == 0 {
			y[i] = float32(math.Inf(-1))
		}
	}
	if len(y) > 0 {
		y[rng.IntN(len(y))] = 0 // not every entry masked
	}
	fallback.Softmax(y, y)
}

func logSoftmaxOutputs(rng *rand.Rand, y []float32) {
	softmaxOutputs(rng, y)
	fallback.Log(y, y)
}

func tanhOutputs(rng *rand.Rand, y []float32) {
	for i := range y {
		y[i] = float32(rng.Float64()*8 - 4)
	}
	fallback.Tanh(y, y)
}

func sigmoidOutputs(rng *rand.Rand, y []float32) {
	for i := range y {
		y[i] = float32(rng.Float64()*24 - 12)
	}
	fallback.Sigmoid(y, y)
}

// within reports whether got is within bound of exact, or is the infinity
// of exact's sign where exact ± bound reaches past MaxFloat32 (the float32
// result overflows).
func within(got float32, exact, bound float64) bool {
	if math.Abs(float64(got)-exact) <= bound {
		return true
	}
	return math.IsInf(float64(got), 0) && math.Abs(exact)+bound > math.MaxFloat32 && (got > 0) == (exact > 0)
}

// checkSoftmaxBackward checks dx against SoftmaxBackward's contract: +0 where
// y = 0; the bound of the doc where every term of ⟨y, dy⟩ is finite and can
// not overflow; fallback's special values where a term is not finite; and,
// where the sum or dy[i] − ⟨y, dy⟩ may overflow, either a non-finite result
// or one within the bound.
func checkSoftmaxBackward(t *testing.T, what string, dx, y, dy []float32) {
	t.Helper()
	n := len(y)
	want := make([]float32, n)
	fallback.SoftmaxBackward(want, y, dy)
	var c, S float64
	special := false
	for j := range y {
		if y[j] == 0 {
			continue
		}
		p := float64(y[j]) * float64(dy[j])
		if math.IsNaN(p) || math.IsInf(p, 0) {
			special = true
		} else {
			S += math.Abs(p)
		}
		c += p
	}
	sumOverflow := S > math.MaxFloat32/2
	for i := range y {
		if y[i] == 0 {
			if math.Float32bits(dx[i]) != 0 {
				t.Fatalf("%s: n=%d: dx[%d] = %v with y = 0, want +0", what, n, i, dx[i])
			}
			continue
		}
		overflow := sumOverflow || math.Abs(float64(dy[i]))+S > math.MaxFloat32
		exact := float64(y[i]) * (float64(dy[i]) - c)
		bound := gamma(n+2)*math.Abs(float64(y[i]))*(math.Abs(float64(dy[i]))+S) + (float64(n)*math.Abs(float64(y[i]))+1)*eta
		switch {
		case special && overflow:
			if isFinite(dx[i]) {
				t.Fatalf("%s: n=%d: dx[%d] = %v, want NaN or ±Inf (a term of ⟨y, dy⟩ is)", what, n, i, dx[i])
			}
		case special:
			if !sameSpecial(dx[i], want[i]) {
				t.Fatalf("%s: n=%d: dx[%d] = %v, fallback %v", what, n, i, dx[i], want[i])
			}
		case overflow && !isFinite(dx[i]):
		default:
			if !within(dx[i], exact, bound) {
				t.Fatalf("%s: n=%d: dx[%d] = %v (y=%v, dy=%v), want %v ± %.3g (error %.3g)",
					what, n, i, dx[i], y[i], dy[i], exact, bound, math.Abs(float64(dx[i])-exact))
			}
		}
	}
}

// checkLogSoftmaxBackward checks dx against LogSoftmaxBackward's contract:
// the bound where dy is finite and its sum cannot overflow and e^y[i] is
// finite; fallback's special values where dy holds NaN or ±Inf (without
// overflow) or y[i] is NaN; a non-finite result where e^y[i] overflows (its
// sign is Σ dy's) or the sum may overflow (or one within the bound).
func checkLogSoftmaxBackward(t *testing.T, what string, dx, y, dy []float32) {
	t.Helper()
	n := len(y)
	want := make([]float32, n)
	fallback.LogSoftmaxBackward(want, y, dy)
	var s, T float64
	special := false
	for _, v := range dy {
		if isFinite(v) {
			T += math.Abs(float64(v))
		} else {
			special = true
		}
		s += float64(v)
	}
	overflow := T > math.MaxFloat32/2
	for i := range y {
		e := math.Exp(float64(y[i]))
		hugeExp := e >= math.MaxFloat32 // Exp gives +Inf from 88.72284
		exact := float64(dy[i]) - e*s
		bound := u*math.Abs(float64(dy[i])) + gamma(n+6)*e*T + 0x1p-125*T + eta
		switch {
		case y[i] != y[i] || special && !overflow && !hugeExp:
			if !sameSpecial(dx[i], want[i]) {
				t.Fatalf("%s: n=%d: dx[%d] = %v, fallback %v", what, n, i, dx[i], want[i])
			}
		case special || hugeExp:
			if isFinite(dx[i]) && !(hugeExp && !special && within(dx[i], exact, bound)) {
				t.Fatalf("%s: n=%d: dx[%d] = %v, want NaN or ±Inf", what, n, i, dx[i])
			}
		case overflow && !isFinite(dx[i]):
		default:
			if !within(dx[i], exact, bound) {
				t.Fatalf("%s: n=%d: dx[%d] = %v (y=%v, dy=%v), want %v ± %.3g (error %.3g)",
					what, n, i, dx[i], y[i], dy[i], exact, bound, math.Abs(float64(dx[i])-exact))
			}
		}
	}
}

// tanhBound and sigmoidBound return the exact gradient and the doc's bound.
func tanhBound(y, dy float32) (exact, bound float64) {
	exact = float64(dy) * (1 - float64(y)*float64(y))
	return exact, gamma(2)*math.Abs(exact) + eta/2
}

func sigmoidBound(y, dy float32) (exact, bound float64) {
	exact = float64(dy) * float64(y) * (1 - float64(y))
	return exact, gamma(2)*math.Abs(exact) + (1+math.Abs(float64(dy)))*eta/2
}

// checkActivationBackward returns the check of TanhBackward or
// SigmoidBackward: fallback's bits (NaN: any NaN) and, where the inputs are
// finite, the doc's bound.
func checkActivationBackward(ref func(dx, y, dy []float32), bound func(y, dy float32) (float64, float64)) func(*testing.T, string, []float32, []float32, []float32) {
	return func(t *testing.T, what string, dx, y, dy []float32) {
		t.Helper()
		want := make([]float32, len(y))
		ref(want, y, dy)
		for i := range y {
			if !sameBits(dx[i], want[i]) {
				t.Fatalf("%s: n=%d: dx[%d] = %v [%#x] (y=%v, dy=%v), fallback %v [%#x]",
					what, len(y), i, dx[i], math.Float32bits(dx[i]), y[i], dy[i], want[i], math.Float32bits(want[i]))
			}
			// |y| ≥ 2⁶⁴: 1 − y² (y − y²) overflows before the product.
			if isFinite(y[i]) && isFinite(dy[i]) && math.Abs(float64(y[i])) < 0x1p64 {
				if exact, b := bound(y[i], dy[i]); !within(dx[i], exact, b) {
					t.Fatalf("%s: dx[%d] = %v (y=%v, dy=%v), want %v ± %.3g", what, i, dx[i], y[i], dy[i], exact, b)
				}
			}
		}
	}
}

// TestBackward runs each kernel at every length and several offsets, out of
// place and in place (dx = y, dx = dy: the same bits), against its contract.
func TestBackward(t *testing.T) {
	for _, k := range backwards {
		t.Run(k.name, func(t *testing.T) {
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(71, 72))
				forEachSlab(t, 32, []int{0, 3, 7}, func(n, off int, s [][]float32) {
					dx, y, dy := s[0], s[1], s[2]
					k.outputs(rng, y)
					fill(rng, dy)
					k.vec(dx, y, dy)
					k.check(t, k.name, dx, y, dy)
					out := append([]float32(nil), dx...)
					y0, dy0 := append([]float32(nil), y...), append([]float32(nil), dy...)
					k.vec(y, y, dy)
					k.vec(dy0, y0, dy0)
					for i := range out {
						if !sameBits(y[i], out[i]) || !sameBits(dy0[i], out[i]) {
							t.Fatalf("n=%d: in place dx[%d] = %v (dx=y), %v (dx=dy), out of place %v", n, i, y[i], dy0[i], out[i])
						}
					}
				})
			})
		})
	}
}

// TestBackwardSpecial mixes special values into the inputs of every kernel
// and checks the contract (fallback's special values, the bound elsewhere).
func TestBackwardSpecial(t *testing.T) {
	for _, k := range backwards {
		t.Run(k.name, func(t *testing.T) {
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(73, 74))
				for _, n := range []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100} {
					for trial := 0; trial < 40; trial++ {
						if !sparseKeeps(n, trial, 4) {
							continue
						}
						y, dy, dx := make([]float32, n), make([]float32, n), make([]float32, n)
						k.outputs(rng, y)
						fill(rng, dy)
						for j := 0; j < 1+trial%4; j++ {
							sl := [][]float32{y, dy}[rng.IntN(2)]
							sl[rng.IntN(n)] = specials[rng.IntN(len(specials))]
						}
						k.vec(dx, y, dy)
						k.check(t, k.name, dx, y, dy)
					}
				}
			})
		})
	}
}

// TestSoftmaxBackwardMasked checks the masked entries: a fully masked row
// gives zeros, and what dy holds at y = 0 (±Inf, NaN) changes nothing.
func TestSoftmaxBackwardMasked(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(75, 76))
		for _, n := range []int{1, 5, 8, 16, 17, 64, 100, 257} {
			y, dy, dx, ref := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			fill(rng, dy)
			SoftmaxBackward(dx, y, dy)
			for i, v := range dx {
				if math.Float32bits(v) != 0 {
					t.Fatalf("n=%d: fully masked row: dx[%d] = %v, want +0", n, i, v)
				}
			}
			softmaxOutputs(rng, y)
			SoftmaxBackward(ref, y, dy)
			for i := range y {
				if y[i] == 0 {
					dy[i] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32}[i%4]
				}
			}
			SoftmaxBackward(dx, y, dy)
			for i := range dx {
				if math.Float32bits(dx[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("n=%d: dx[%d] = %v with special dy at the masked entries, %v without", n, i, dx[i], ref[i])
				}
			}
		}
	})
}

// rowShapes are the rows×cols of the rows tests: every column count through
// four AVX-512 vectors and one, then longer rows, with few or many rows.
var rowShapes = func() [][2]int {
	var s [][2]int
	for c := 0; c <= 65; c++ {
		s = append(s, [2]int{1 + c%4, c})
	}
	for _, c := range []int{127, 128, 129, 255, 256, 257, 512, 1000} {
		s = append(s, [2]int{3, c}, [2]int{17, c})
	}
	return append(s, [2]int{0, 5}, [2]int{4, 0})
}()

// TestBackwardRows checks the rows kernels row by row against the vector
// kernel on the same ISA (the same bits), with padded strides, canaries
// around every matrix, and in place.
func TestBackwardRows(t *testing.T) {
	for _, k := range backwards {
		if k.rows == nil {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(77, 78))
				for _, sh := range rowShapes {
					rows, cols := sh[0], sh[1]
					for _, pads := range [][3]int{{0, 0, 0}, {3, 1, 5}} {
						m := make([]Matrix, 3)
						oks := make([]func(), 3)
						for a := range m {
							stride := cols + pads[a]
							var d []float32
							d, oks[a] = slab(t, max(rows-1, 0)*stride+cols, rng.IntN(16))
							if rows == 0 || cols == 0 {
								d = d[:0]
							}
							m[a] = Matrix{Rows: rows, Cols: cols, Stride: stride, Data: d}
						}
						dx, y, dy := m[0], m[1], m[2]
						for i := 0; i < rows; i++ {
							k.outputs(rng, y.Row(i))
							fill(rng, dy.Row(i))
						}
						k.rows(dx, y, dy)
						for _, ok := range oks {
							ok()
						}
						want := make([]float32, cols)
						for i := 0; i < rows; i++ {
							k.vec(want, y.Row(i), dy.Row(i))
							for j := range want {
								if !sameBits(dx.Row(i)[j], want[j]) {
									t.Fatalf("%d×%d: row %d: dx[%d] = %v, the vector kernel %v", rows, cols, i, j, dx.Row(i)[j], want[j])
								}
							}
						}
						// In place, on copies: dx = y, then dx = dy.
						for _, which := range []int{1, 2} {
							c := Matrix{Rows: rows, Cols: cols, Stride: m[which].Stride, Data: append([]float32(nil), m[which].Data...)}
							args := [3]Matrix{c, y, dy}
							args[which] = c
							k.rows(args[0], args[1], args[2])
							for i := 0; i < rows; i++ {
								for j := 0; j < cols; j++ {
									if !sameBits(c.Row(i)[j], dx.Row(i)[j]) {
										t.Fatalf("%d×%d: in place (argument %d) row %d: dx[%d] = %v, out of place %v", rows, cols, which, i, j, c.Row(i)[j], dx.Row(i)[j])
									}
								}
							}
						}
					}
				}
			})
		})
	}
}

// TestBackwardPanics checks the panics of the shapes and the overlaps.
func TestBackwardPanics(t *testing.T) {
	f3, f4 := make([]float32, 3), make([]float32, 4)
	buf := make([]float32, 8)
	for _, k := range backwards {
		mustPanic(t, fmt.Sprintf("heed/kernels: %s: len(dx)=3, len(y)=4, len(dy)=4; want equal lengths", k.name),
			func() { k.vec(f3, f4, f4) })
		mustPanic(t, fmt.Sprintf("heed/kernels: %s: len(dx)=4, len(y)=4, len(dy)=3; want equal lengths", k.name),
			func() { k.vec(f4, f4, f3) })
		mustPanic(t, fmt.Sprintf("heed/kernels: %s: dx overlaps y without being it", k.name),
			func() { k.vec(buf[1:5], buf[:4], f4) })
		mustPanic(t, fmt.Sprintf("heed/kernels: %s: dx overlaps dy without being it", k.name),
			func() { k.vec(buf[:4], f4, buf[3:7]) })
		k.vec(buf[:4], buf[:4], buf[:4]) // dx = y = dy is allowed
		if k.rows == nil {
			continue
		}
		a := Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}
		b := Matrix{Rows: 2, Cols: 4, Stride: 4, Data: make([]float32, 8)}
		name := k.name + "Rows"
		mustPanic(t, fmt.Sprintf("heed/kernels: %s: dx is 2×3, y 2×4, dy 2×3; want the same shape", name),
			func() { k.rows(a, b, a) })
		mustPanic(t, fmt.Sprintf("heed/kernels: %s: y is 2×3 with stride 3: len(y.Data)=5 < 6", name),
			func() { k.rows(a, Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 5)}, a) })
		c := Matrix{Rows: 2, Cols: 3, Stride: 4, Data: make([]float32, 8)}
		mustPanic(t, fmt.Sprintf("heed/kernels: %s: dx overlaps y without being it", name),
			func() { k.rows(Matrix{Rows: 2, Cols: 3, Stride: 3, Data: c.Data}, c, a) })
		mustPanic(t, fmt.Sprintf("heed/kernels: %s: dx overlaps dy without being it", name),
			func() { k.rows(Matrix{Rows: 2, Cols: 3, Stride: 4, Data: c.Data[1:]}, a, c) })
		k.rows(c, c, c)
	}
}

// FuzzSoftmaxBackward checks every ISA against SoftmaxBackward's contract
// on fuzzed y and dy.
func FuzzSoftmaxBackward(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x00\x3f\x00\x00\x00\x00\x00\x00\x80\x3e\x00\x00\x80\x7f\x00\x00\x80\x3f\x00\x00\xc0\x7f"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzBackward(t, backwards[0], data) })
}

// FuzzLogSoftmaxBackward is FuzzSoftmaxBackward for LogSoftmaxBackward.
func FuzzLogSoftmaxBackward(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x80\xbf\x00\x00\x80\xff\x00\x00\x00\xc0\x00\x00\x80\x3f\x00\x00\x80\x7f\x00\x00\xc0\x7f"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzBackward(t, backwards[1], data) })
}

// FuzzActivationBackward checks TanhBackward and SigmoidBackward on every
// ISA against fallback's bits on fuzzed y and dy.
func FuzzActivationBackward(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x80\x7f\x00\x00\x00\x3f\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBackward(t, backwards[2], data)
		fuzzBackward(t, backwards[3], data)
	})
}

// fuzzBackward splits data into y and dy and checks k on every ISA, the
// vector kernel and (on two rows of the halves) the rows kernel.
func fuzzBackward(t *testing.T, k backward, data []byte) {
	x := floats(data)
	n := len(x) / 2
	y, dy := x[:n], x[n:2*n]
	dx := make([]float32, n)
	eachISA(func(isa string) {
		k.vec(dx, y, dy)
		k.check(t, isa+" "+k.name, dx, y, dy)
		if k.rows == nil || n < 2 {
			return
		}
		h := n / 2
		m := func(s []float32) Matrix { return Matrix{Rows: 2, Cols: h, Stride: n - h, Data: s} }
		k.rows(m(dx), m(y), m(dy))
		for _, r := range [][2]int{{0, h}, {n - h, n}} {
			k.check(t, isa+" "+k.name+"Rows", dx[r[0]:r[0]+h], y[r[0]:r[0]+h], dy[r[0]:r[0]+h])
		}
	})
}

// TestBackwardNoAllocs checks that no backward kernel allocates, under every
// ISA.
func TestBackwardNoAllocs(t *testing.T) {
	skipSparse(t)
	const n = 300
	x, y, z := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i%13)-6, float32(i%7)/7
	}
	m := func(s []float32) Matrix { return Matrix{Rows: 4, Cols: 75, Stride: 75, Data: s} }
	k := Matrix{Rows: 20, Cols: 15, Stride: 15, Data: x[:300]}
	dk := Matrix{Rows: 20, Cols: 15, Stride: 15, Data: z[:300]}
	calls := map[string]func(){
		"SoftmaxBackward":        func() { SoftmaxBackward(z, y, x) },
		"SoftmaxBackwardRows":    func() { SoftmaxBackwardRows(m(z), m(y), m(x)) },
		"LogSoftmaxBackward":     func() { LogSoftmaxBackward(z, y, x) },
		"LogSoftmaxBackwardRows": func() { LogSoftmaxBackwardRows(m(z), m(y), m(x)) },
		"TanhBackward":           func() { TanhBackward(z, y, x) },
		"SigmoidBackward":        func() { SigmoidBackward(z, y, x) },
		"SoftmaxRecompute":       func() { SoftmaxRecompute(m(z), m(x), 0.5, y[:4], 40) },
		"SoftmaxBackwardBlock":   func() { SoftmaxBackwardBlock(m(z), m(y), m(x), y[:4]) },
		"AdditiveScoreBackwardAdd": func() {
			AdditiveScoreBackwardAdd(y[:15], y[15:30], dk, k, y[30:45], y[45:60], y[60:80])
		},
		"AdditiveScoreBackwardAdd/noDK": func() {
			AdditiveScoreBackwardAdd(y[:15], y[15:30], Matrix{}, k, y[30:45], y[45:60], y[60:80])
		},
	}
	forEachISA(t, func(t *testing.T) {
		for name, f := range calls {
			if got := allocs.Count(10, f); got != 0 {
				t.Errorf("%s allocates %d times in the measured calls", name, got)
			}
		}
	})
}
