package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/heedml/heed/internal/allocs"
)

// checkOnlineSoftmax runs OnlineSoftmax on a copy of x with running max m
// (finite result) and fails t unless m' is the exact max, every x[i] is within
// the documented bound of the float64 e^(x[i]−m') and the sum within γₙ of
// the sum of the new x.
func checkOnlineSoftmax(t *testing.T, what string, x []float32, m float32) {
	t.Helper()
	got := append([]float32(nil), x...)
	gm, gs := OnlineSoftmax(got, m)
	want := float64(m)
	for _, v := range x {
		want = math.Max(want, float64(v))
	}
	if len(x) == 0 {
		if gm != m || gs != 0 {
			t.Fatalf("%s: empty x gives (%v, %v), want (%v, 0)", what, gm, gs, m)
		}
		return
	}
	if float64(gm) != want {
		t.Fatalf("%s: max %v, want %v", what, gm, want)
	}
	var s float64
	for i, v := range x {
		d := float64(v) - want
		e := math.Exp(d)
		bound := 0x1p-126
		if e > 0 {
			bound += (math.Abs(d) + 4) * u * e
		}
		if err := math.Abs(float64(got[i]) - e); !(err <= bound) {
			t.Fatalf("%s: x[%d] = %v → %v, want %v ± %.3g", what, i, v, got[i], e, bound)
		}
		s += float64(got[i])
	}
	if err := math.Abs(float64(gs) - s); !(err <= gamma(len(x))*s) {
		t.Fatalf("%s: sum %v, want %v ± %.3g", what, gs, s, gamma(len(x))*s)
	}
}

// TestOnlineSoftmax checks every length through 4 vectors of the widest ISA
// and longer rows, with the running max below, inside and above the row's
// range and −Inf, and −Inf entries, against float64, under every ISA.
func TestOnlineSoftmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	forEachISA(t, func(t *testing.T) {
		for _, n := range lengths(16) {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 8)
			}
			if n > 3 {
				x[n/3] = float32(math.Inf(-1))
			}
			for _, m := range []float32{float32(math.Inf(-1)), -100, 0, 5, 100} {
				checkOnlineSoftmax(t, fmt.Sprintf("n=%d m=%v", n, m), x, m)
				// The SIMD kernels take every finite row of a vector or
				// more (AVX-512 and NEON: every finite row).
				if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
					continue
				}
				if Active() != Generic && n >= 8 {
					if _, _, st := onlineSoftmax(append([]float32(nil), x...), m); st != softmaxDone {
						t.Fatalf("n=%d m=%v: kernel status %d", n, m, st)
					}
				}
			}
		}
	})
}

// TestOnlineSoftmaxSpecial checks the special values on every ISA: NaN in x
// or m, +Inf in x or m, and rows of −Inf, at lengths that put them in the
// vector loops and in the tails.
func TestOnlineSoftmaxSpecial(t *testing.T) {
	inf, ninf := float32(math.Inf(1)), float32(math.Inf(-1))
	nan := float32(math.NaN())
	forEachISA(t, func(t *testing.T) {
		for _, n := range []int{1, 3, 8, 9, 16, 17, 33, 64, 100} {
			for _, pos := range []int{0, n / 2, n - 1} {
				for _, tc := range []struct {
					name string
					v, m float32 // x[pos] = v
					fill float32 // the other elements
					// wantMax, wantSum; want is x[i] for i ≠ pos, wantPos x[pos]
					wantMax, wantSum, want, wantPos float32
				}{
					{"NaN in x", nan, 0, 1, nan, nan, nan, nan},
					{"NaN in x, m −Inf", nan, ninf, 1, nan, nan, nan, nan},
					{"NaN in x, rest −Inf", nan, ninf, ninf, nan, nan, nan, nan},
					{"NaN m", 1, nan, 1, nan, nan, nan, nan},
					{"+Inf in x", inf, 0, 1, inf, 1, 0, 1},
					{"+Inf m", 2, inf, 1, inf, 0, 0, 0},
					{"all −Inf", ninf, ninf, ninf, ninf, 0, 0, 0},
					{"−Inf in x", ninf, ninf, 0, 0, float32(n - 1), 1, 0},
				} {
					if n == 1 && tc.name == "−Inf in x" {
						continue // no finite element
					}
					x := make([]float32, n)
					for i := range x {
						x[i] = tc.fill
					}
					x[pos] = tc.v
					gm, gs := OnlineSoftmax(x, tc.m)
					same := func(a, b float32) bool { return a == b || (a != a && b != b) }
					if !same(gm, tc.wantMax) || !same(gs, tc.wantSum) {
						t.Fatalf("%s n=%d pos=%d: (%v, %v), want (%v, %v)", tc.name, n, pos, gm, gs, tc.wantMax, tc.wantSum)
					}
					for i, v := range x {
						w := tc.want
						if i == pos {
							w = tc.wantPos
						}
						if !same(v, w) {
							t.Fatalf("%s n=%d pos=%d: x[%d] = %v, want %v", tc.name, n, pos, i, v, w)
						}
					}
				}
			}
		}
	})
}

func TestOnlineSoftmaxNoAllocs(t *testing.T) {
	x := make([]float32, 300)
	forEachISA(t, func(t *testing.T) {
		if got := allocs.Count(20, func() { OnlineSoftmax(x, 0) }); got != 0 {
			t.Errorf("OnlineSoftmax allocates %d times in the measured calls", got)
		}
	})
}

// TestOnlineSoftmaxBand checks OnlineSoftmaxBand against OnlineSoftmax row by
// row, bit for bit, under every ISA: whole rows, staircases entering and
// leaving the block (d below 0, inside, at and past the columns), padded
// strides whose padding must stay untouched, widths around the vector sizes,
// running maxima of −Inf, finite and one above the row, and rows holding the
// special values (NaN in x or m, +Inf, all −Inf) among ordinary ones.
func TestOnlineSoftmaxBand(t *testing.T) {
	inf, ninf, nan := float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())
	rng := rand.New(rand.NewPCG(23, 24))
	forEachISA(t, func(t *testing.T) {
		for _, tc := range []struct {
			rows, cols, pad int
			ds              []int
		}{
			{0, 5, 0, []int{0}},
			{3, 0, 2, []int{1}},
			{1, 1, 0, []int{-1, 0, 1, 5}},
			{7, 5, 3, []int{-8, -2, 0, 1, 4, 6}},
			{20, 17, 0, []int{-3, 1, 9, 17, 40}},
			{40, 33, 15, []int{-10, 1, 7, 16, 30, 33}},
			{96, 512, 0, []int{1, 200, 417, 512}},
			{9, 130, 7, []int{100, 125, 130}},
			{5, 8, 8, []int{-4, 0, 3, 8}},
		} {
			for _, d := range tc.ds {
				stride := tc.cols + tc.pad
				data := make([]float32, max(0, (tc.rows-1)*stride+tc.cols)+tc.pad)
				for i := range data {
					data[i] = float32(rng.NormFloat64() * 6)
				}
				m := make([]float32, tc.rows)
				for i := range m {
					switch i % 4 {
					case 0:
						m[i] = ninf
					case 1:
						m[i] = float32(rng.NormFloat64())
					case 2:
						m[i] = 40 // above every score
					default:
						m[i] = ninf
					}
				}
				// Special rows.
				set := func(i, j int, v float32) {
					if i < tc.rows && j < tc.cols {
						data[i*stride+j] = v
					}
				}
				set(3, 0, nan)
				set(5, tc.cols-1, inf)
				if 6 < tc.rows {
					for j := range tc.cols {
						set(6, j, ninf)
					}
					m[6] = ninf
				}
				if 9 < tc.rows {
					m[9] = nan
				}
				if 10 < tc.rows {
					m[10] = inf
				}
				x := Matrix{Rows: tc.rows, Cols: tc.cols, Stride: stride, Data: data}
				checkBand(t, fmt.Sprintf("%d×%d stride %d d=%d", tc.rows, tc.cols, stride, d), x, d, m)
			}
		}
	})
}

// checkBand runs OnlineSoftmaxBand(x, d, m, sum) and fails t unless m, sum
// and every element of x.Data (padding included) have the bits of
// OnlineSoftmax run row by row on copies, with each row cleared past its
// scores.
func checkBand(t *testing.T, what string, x Matrix, d int, m []float32) {
	t.Helper()
	want := append([]float32(nil), x.Data...)
	wm := append([]float32(nil), m...)
	ws := make([]float32, x.Rows)
	for i := range x.Rows {
		r := want[i*x.Stride : i*x.Stride+x.Cols]
		n := min(x.Cols, max(0, d+i))
		wm[i], ws[i] = OnlineSoftmax(r[:n], wm[i])
		clear(r[n:])
	}
	sum := make([]float32, x.Rows)
	for i := range sum {
		sum[i] = 123
	}
	OnlineSoftmaxBand(x, d, m, sum)
	for i := range x.Rows {
		if !sameBits(m[i], wm[i]) || !sameBits(sum[i], ws[i]) {
			t.Fatalf("%s row %d: (m, sum) = (%v, %v), want (%v, %v)", what, i, m[i], sum[i], wm[i], ws[i])
		}
	}
	for i := range want {
		if !sameBits(x.Data[i], want[i]) {
			t.Fatalf("%s: element %d (row %d, column %d) = %v, want %v", what, i, i/max(1, x.Stride), i%max(1, x.Stride), x.Data[i], want[i])
		}
	}
}

// TestOnlineSoftmaxBandKernel checks that the SIMD kernels finish ordinary
// rows themselves: none is left to the Go path (AVX2: rows of a vector or
// more).
func TestOnlineSoftmaxBandKernel(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("no band kernel")
	}
	rng := rand.New(rand.NewPCG(25, 26))
	forEachISA(t, func(t *testing.T) {
		if a := Active(); a != AVX2 && a != AVX512 {
			return
		}
		for _, d := range []int{8, 30, 100} {
			x := Matrix{Rows: 50, Cols: 70, Stride: 75, Data: make([]float32, 49*75+70)}
			for i := range x.Data {
				x.Data[i] = float32(rng.NormFloat64() * 6)
			}
			m, sum := make([]float32, 50), make([]float32, 50)
			for i := range m {
				m[i] = float32(math.Inf(-1))
			}
			if marked, ok := onlineSoftmaxBand(x, d, m, sum); !ok || marked != 0 {
				t.Fatalf("d=%d: kernel ran %t, left %d rows", d, ok, marked)
			}
		}
	})
}

func TestOnlineSoftmaxBandPanics(t *testing.T) {
	x := Matrix{Rows: 3, Cols: 4, Stride: 4, Data: make([]float32, 12)}
	for _, tc := range []struct {
		name   string
		x      Matrix
		m, sum int
	}{
		{"short m", x, 2, 3},
		{"short sum", x, 3, 2},
		{"short data", Matrix{Rows: 3, Cols: 4, Stride: 4, Data: make([]float32, 11)}, 3, 3},
		{"stride below cols", Matrix{Rows: 3, Cols: 4, Stride: 3, Data: make([]float32, 12)}, 3, 3},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "OnlineSoftmaxBand") {
					t.Errorf("%s: panic %v, want one naming OnlineSoftmaxBand", tc.name, r)
				}
			}()
			OnlineSoftmaxBand(tc.x, 1, make([]float32, tc.m), make([]float32, tc.sum))
		}()
	}
}

func TestOnlineSoftmaxBandNoAllocs(t *testing.T) {
	x := Matrix{Rows: 8, Cols: 300, Stride: 300, Data: make([]float32, 2400)}
	m, sum := make([]float32, 8), make([]float32, 8)
	forEachISA(t, func(t *testing.T) {
		if got := allocs.Count(20, func() { OnlineSoftmaxBand(x, 100, m, sum) }); got != 0 {
			t.Errorf("OnlineSoftmaxBand allocates %d times in the measured calls", got)
		}
	})
}

// FuzzOnlineSoftmaxBand checks, under every ISA, that OnlineSoftmaxBand gives
// the bits of OnlineSoftmax row by row on any floats: the first three bytes
// choose the rows (1…8), the staircase's d (−8…247) and the first running
// max (one of −Inf, 0, NaN, +Inf or a float of the input); the rest are the
// rows' floats.
func FuzzOnlineSoftmaxBand(f *testing.F) {
	f.Add([]byte("\x02\x08\x00\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x3f"))
	f.Add([]byte("\x03\x02\x01\x00\x00\x80\xff\x00\x00\x80\xff\x00\x00\x80\x7f\x00\x00\x80\x3f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		rows, d, pick := 1+int(data[0])%8, int(data[1])-8, data[2]
		x := floats(data[3:])
		cols := len(x) / rows
		first := []float32{float32(math.Inf(-1)), 0, float32(math.NaN()), float32(math.Inf(1))}
		m0 := float32(math.Inf(-1))
		if i := int(pick) % 8; i < len(first) {
			m0 = first[i]
		} else if len(x) > 0 {
			m0 = x[int(pick)%len(x)]
		}
		eachISA(func(isa string) {
			m := make([]float32, rows)
			for i := range m {
				m[i] = m0
				if i > 0 {
					m[i] = float32(i) - 2
				}
			}
			got := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: append([]float32(nil), x[:rows*cols]...)}
			checkBand(t, isa, got, d, m)
		})
	})
}
