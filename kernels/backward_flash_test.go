package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// bandLen is nᵢ = min(cols, max(0, d+i)), the scores row i of a band holds.
func bandLen(cols, d, i int) int {
	if d > cols {
		return cols
	}
	return min(cols, max(0, d+i))
}

// checkSoftmaxRecompute checks p = SoftmaxRecompute(s, scale, lse, d) (s
// the scores before the call, p the result): bit for bit Exp of the rounded
// argument on the active ISA inside the band of a row whose lse is not −Inf,
// +0 elsewhere; and, for finite inputs, the doc's bound against the float64
// exponential.
func checkSoftmaxRecompute(t *testing.T, what string, p, s Matrix, scale float32, lse []float32, d int) {
	t.Helper()
	arg := make([]float32, s.Cols)
	for i := 0; i < s.Rows; i++ {
		n := bandLen(s.Cols, d, i)
		if math.IsInf(float64(lse[i]), -1) {
			n = 0
		}
		sr, pr := s.Row(i), p.Row(i)
		for j := 0; j < n; j++ {
			arg[j] = fallback.FMA32(scale, sr[j], -lse[i])
		}
		Exp(arg[:n], arg[:n])
		for j := 0; j < s.Cols; j++ {
			if j >= n {
				if math.Float32bits(pr[j]) != 0 {
					t.Fatalf("%s: %d×%d d=%d: p[%d][%d] = %v past the band (n=%d) or lse = −Inf, want +0", what, s.Rows, s.Cols, d, i, j, pr[j], n)
				}
				continue
			}
			if !sameBits(pr[j], arg[j]) {
				t.Fatalf("%s: %d×%d: p[%d][%d] = %v [%#x], Exp of the rounded argument %v [%#x] (s=%v, scale=%v, lse=%v)",
					what, s.Rows, s.Cols, i, j, pr[j], math.Float32bits(pr[j]), arg[j], math.Float32bits(arg[j]), sr[j], scale, lse[i])
			}
			if !isFinite(sr[j]) || !isFinite(lse[i]) || !isFinite(scale) {
				continue
			}
			a := float64(scale)*float64(sr[j]) - float64(lse[i])
			e := math.Exp(a)
			got := float64(pr[j])
			switch {
			case e < 0x1p-126:
				if !(got >= 0 && got <= 0x1p-126) {
					t.Fatalf("%s: p[%d][%d] = %v, want within 2⁻¹²⁶ of %v", what, i, j, got, e)
				}
			case e*(1+(math.Abs(a)+5)*u) >= math.MaxFloat32 && math.IsInf(got, 1):
			default:
				if err, b := math.Abs(got-e), (math.Abs(a)+5)*u*(1+1e-3)*e; !(err <= b) {
					t.Fatalf("%s: p[%d][%d] = %v, want %v ± %.3g (a = %v)", what, i, j, got, e, b, a)
				}
			}
		}
	}
}

// flashDs are the staircase offsets the tests take for a tile of cols
// columns: every column, the diagonal block (d = 1), empty and partial
// staircases, and extremes.
func flashDs(cols int) []int {
	return []int{cols, 1, 0, -2, cols / 2, cols + 7, 1 << 40, -1 << 40}
}

// fillScores fills the scores of s (in [−8, 8)) and sets lse to each row's
// logsumexp of scale·s over its band, some rows −Inf (fully masked) and some
// moved by a few units (a stale or foreign logsumexp).
func fillScores(rng *rand.Rand, s Matrix, scale float32, lse []float32, d int) {
	for i := 0; i < s.Rows; i++ {
		r := s.Row(i)
		for j := range r {
			r[j] = float32(rng.Float64()*16 - 8)
		}
		n := bandLen(s.Cols, d, i)
		m := math.Inf(-1)
		for _, v := range r[:n] {
			m = math.Max(m, float64(scale)*float64(v))
		}
		var sum float64
		for _, v := range r[:n] {
			sum += math.Exp(float64(scale)*float64(v) - m)
		}
		lse[i] = float32(m + math.Log(sum))
		switch rng.IntN(8) {
		case 0:
			lse[i] = float32(math.Inf(-1))
		case 1:
			lse[i] += float32(rng.Float64()*8 - 4)
		}
	}
}

// TestSoftmaxRecompute runs every tile shape and staircase, with padded
// strides, canaries around p, and in place (p = s).
func TestSoftmaxRecompute(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(81, 82))
		for c, sh := range rowShapes {
			rows, cols := sh[0], sh[1]
			for di, d := range flashDs(cols) {
				if !sparseKeeps(c, di, 3) && d != cols && d != 1 {
					continue
				}
				scale := []float32{1, 0.125, float32(1 / math.Sqrt(48))}[rng.IntN(3)]
				for _, pad := range []int{0, 3} {
					stride := cols + pad
					pd, ok := slab(t, max(rows-1, 0)*stride+cols, rng.IntN(16))
					if rows == 0 || cols == 0 {
						pd = pd[:0]
					}
					p := Matrix{Rows: rows, Cols: cols, Stride: stride, Data: pd}
					s := Matrix{Rows: rows, Cols: cols, Stride: cols + 2*pad, Data: make([]float32, max(rows-1, 0)*(cols+2*pad)+cols)}
					if rows == 0 || cols == 0 {
						s.Data = s.Data[:0]
					}
					lse := make([]float32, rows)
					fillScores(rng, s, scale, lse, d)
					SoftmaxRecompute(p, s, scale, lse, d)
					ok()
					checkSoftmaxRecompute(t, "SoftmaxRecompute", p, s, scale, lse, d)
					// In place.
					in := Matrix{Rows: rows, Cols: cols, Stride: s.Stride, Data: append([]float32(nil), s.Data...)}
					SoftmaxRecompute(in, in, scale, lse, d)
					for i := 0; i < rows; i++ {
						for j := 0; j < cols; j++ {
							if !sameBits(in.Row(i)[j], p.Row(i)[j]) {
								t.Fatalf("%d×%d d=%d: in place p[%d][%d] = %v, out of place %v", rows, cols, d, i, j, in.Row(i)[j], p.Row(i)[j])
							}
						}
					}
				}
			}
		}
	})
}

// TestSoftmaxRecomputeSpecial mixes special values into s, lse and scale.
func TestSoftmaxRecomputeSpecial(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(83, 84))
		for _, cols := range []int{1, 7, 8, 9, 16, 17, 33, 64, 100} {
			for trial := 0; trial < 30; trial++ {
				if !sparseKeeps(cols, trial, 4) {
					continue
				}
				rows := 1 + rng.IntN(5)
				s := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
				p := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
				lse := make([]float32, rows)
				scale := float32(0.25)
				fillScores(rng, s, scale, lse, cols)
				for j := 0; j < 1+trial%4; j++ {
					v := specials[rng.IntN(len(specials))]
					switch rng.IntN(5) {
					case 0:
						lse[rng.IntN(rows)] = v
					case 1:
						scale = v
					default:
						s.Data[rng.IntN(len(s.Data))] = v
					}
				}
				d := []int{cols, 1, 3}[trial%3]
				SoftmaxRecompute(p, s, scale, lse, d)
				checkSoftmaxRecompute(t, "SoftmaxRecompute", p, s, scale, lse, d)
			}
		}
		// A fully masked row: zeros whatever the scores, NaN and ±Inf included.
		s := Matrix{Rows: 1, Cols: 4, Stride: 4, Data: []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1}}
		p := Matrix{Rows: 1, Cols: 4, Stride: 4, Data: []float32{7, 7, 7, 7}}
		SoftmaxRecompute(p, s, 1, []float32{float32(math.Inf(-1))}, 4)
		for j, v := range p.Data {
			if math.Float32bits(v) != 0 {
				t.Fatalf("lse = −Inf: p[0][%d] = %v, want +0", j, v)
			}
		}
	})
}

// checkSoftmaxBackwardBlock checks ds against fallback's bits and the doc's
// bound (p, dp, delta before the call).
func checkSoftmaxBackwardBlock(t *testing.T, what string, ds, p, dp Matrix, delta []float32) {
	t.Helper()
	want := make([]float32, p.Cols)
	for i := 0; i < p.Rows; i++ {
		pr, gr, dr := p.Row(i), dp.Row(i), ds.Row(i)
		fallback.SoftmaxBackwardBlock(want, 0, pr, 0, gr, 0, 1, p.Cols, delta[i:])
		for j := range pr {
			if pr[j] == 0 && math.Float32bits(dr[j]) != 0 {
				t.Fatalf("%s: ds[%d][%d] = %v where p = 0, want +0", what, i, j, dr[j])
			}
			if !sameBits(dr[j], want[j]) {
				t.Fatalf("%s: %d×%d: ds[%d][%d] = %v [%#x], fallback %v [%#x]", what, p.Rows, p.Cols, i, j, dr[j], math.Float32bits(dr[j]), want[j], math.Float32bits(want[j]))
			}
			if isFinite(pr[j]) && isFinite(gr[j]) && isFinite(delta[i]) && math.Abs(float64(gr[j]))+math.Abs(float64(delta[i])) <= math.MaxFloat32 {
				exact := block64(float64(pr[j]), float64(gr[j]), float64(delta[i]))
				if b := gamma(2)*math.Abs(exact) + eta/2; !within(dr[j], exact, b) {
					t.Fatalf("%s: ds[%d][%d] = %v, want %v ± %.3g", what, i, j, dr[j], exact, b)
				}
			}
		}
	}
}

// TestSoftmaxBackwardBlock runs every tile shape, with padded strides,
// canaries, masked probabilities over special dp, and in place (ds = dp,
// ds = p).
func TestSoftmaxBackwardBlock(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(85, 86))
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
				ds, p, dp := m[0], m[1], m[2]
				delta := make([]float32, rows)
				for i := 0; i < rows; i++ {
					softmaxOutputs(rng, p.Row(i))
					fill(rng, dp.Row(i))
					for j, v := range p.Row(i) {
						if v == 0 && rng.IntN(2) == 0 {
							dp.Row(i)[j] = []float32{float32(math.NaN()), float32(math.Inf(1))}[rng.IntN(2)]
						}
					}
					delta[i] = float32(rng.Float64()*2 - 1)
				}
				SoftmaxBackwardBlock(ds, p, dp, delta)
				for _, ok := range oks {
					ok()
				}
				checkSoftmaxBackwardBlock(t, "SoftmaxBackwardBlock", ds, p, dp, delta)
				for _, which := range []int{1, 2} {
					c := Matrix{Rows: rows, Cols: cols, Stride: m[which].Stride, Data: append([]float32(nil), m[which].Data...)}
					args := [3]Matrix{c, p, dp}
					args[which] = c
					SoftmaxBackwardBlock(args[0], args[1], args[2], delta)
					for i := 0; i < rows; i++ {
						for j := 0; j < cols; j++ {
							if !sameBits(c.Row(i)[j], ds.Row(i)[j]) {
								t.Fatalf("%d×%d: in place (argument %d): ds[%d][%d] = %v, out of place %v", rows, cols, which, i, j, c.Row(i)[j], ds.Row(i)[j])
							}
						}
					}
				}
			}
		}
	})
}

// TestSoftmaxBackwardBlockSpecial mixes special values into p, dp and delta.
func TestSoftmaxBackwardBlockSpecial(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(87, 88))
		for _, cols := range []int{1, 7, 8, 9, 16, 17, 33, 64, 100} {
			for trial := 0; trial < 30; trial++ {
				rows := 1 + rng.IntN(5)
				mk := func() Matrix { return Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)} }
				ds, p, dp := mk(), mk(), mk()
				fill(rng, p.Data)
				fill(rng, dp.Data)
				delta := make([]float32, rows)
				fill(rng, delta)
				for j := 0; j < 1+trial%4; j++ {
					v := specials[rng.IntN(len(specials))]
					switch rng.IntN(3) {
					case 0:
						delta[rng.IntN(rows)] = v
					case 1:
						p.Data[rng.IntN(len(p.Data))] = v
					default:
						dp.Data[rng.IntN(len(dp.Data))] = v
					}
				}
				SoftmaxBackwardBlock(ds, p, dp, delta)
				checkSoftmaxBackwardBlock(t, "SoftmaxBackwardBlock", ds, p, dp, delta)
			}
		}
	})
}

func TestFlashBackwardPanics(t *testing.T) {
	a := Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}
	b := Matrix{Rows: 2, Cols: 4, Stride: 4, Data: make([]float32, 8)}
	f2 := make([]float32, 2)
	mustPanic(t, "heed/kernels: SoftmaxRecompute: s is 2×3, p 2×4, len(lse)=2: want p the shape of s and len(lse) ≥ 2",
		func() { SoftmaxRecompute(b, a, 1, f2, 3) })
	mustPanic(t, "heed/kernels: SoftmaxRecompute: s is 2×3, p 2×3, len(lse)=1: want p the shape of s and len(lse) ≥ 2",
		func() { SoftmaxRecompute(a, a, 1, f2[:1], 3) })
	mustPanic(t, "heed/kernels: SoftmaxRecompute: s is 2×3 with stride 3: len(s.Data)=5 < 6",
		func() { SoftmaxRecompute(a, Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 5)}, 1, f2, 3) })
	c := Matrix{Rows: 2, Cols: 3, Stride: 4, Data: make([]float32, 8)}
	mustPanic(t, "heed/kernels: SoftmaxRecompute: p overlaps s without being it",
		func() { SoftmaxRecompute(Matrix{Rows: 2, Cols: 3, Stride: 4, Data: c.Data[1:]}, c, 1, f2, 3) })
	mustPanic(t, "heed/kernels: SoftmaxRecompute: p overlaps lse",
		func() { SoftmaxRecompute(c, c, 1, c.Data[6:], 3) })
	SoftmaxRecompute(c, c, 1, f2, 3)

	mustPanic(t, "heed/kernels: SoftmaxBackwardBlock: ds is 2×3, p 2×4, dp 2×3; want the same shape",
		func() { SoftmaxBackwardBlock(a, b, a, f2) })
	mustPanic(t, "heed/kernels: SoftmaxBackwardBlock: p has 2 rows but len(delta)=1",
		func() { SoftmaxBackwardBlock(a, a, a, f2[:1]) })
	mustPanic(t, "heed/kernels: SoftmaxBackwardBlock: ds overlaps p without being it",
		func() { SoftmaxBackwardBlock(Matrix{Rows: 2, Cols: 3, Stride: 3, Data: c.Data}, c, a, f2) })
	mustPanic(t, "heed/kernels: SoftmaxBackwardBlock: ds overlaps dp without being it",
		func() { SoftmaxBackwardBlock(Matrix{Rows: 2, Cols: 3, Stride: 4, Data: c.Data[1:]}, a, c, f2) })
	mustPanic(t, "heed/kernels: SoftmaxBackwardBlock: ds overlaps delta",
		func() { SoftmaxBackwardBlock(c, a, a, c.Data[6:]) })
	SoftmaxBackwardBlock(c, c, c, f2)
}

// FuzzSoftmaxRecompute checks every ISA on fuzzed scores, logsumexps, scale
// and staircase: Exp's bits of the rounded argument, zeros elsewhere.
func FuzzSoftmaxRecompute(f *testing.F) {
	f.Add(byte(3), int8(1), []byte{})
	f.Add(byte(1), int8(2), []byte("\x00\x00\x80\x3f\x00\x00\x80\xff\x00\x00\x80\x3f\x00\x00\x80\x7f\x00\x00\xc0\x7f\x00\x00\x00\x40"))
	f.Fuzz(func(t *testing.T, colsB byte, dB int8, data []byte) {
		x := floats(data)
		cols := int(colsB)%40 + 1
		if len(x) < cols+2 {
			return
		}
		scale, rest := x[0], x[1:]
		rows := min(len(rest)/(cols+1), maxFuzzRows)
		lse, sd := rest[:rows], rest[rows:rows+rows*cols]
		s := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: sd}
		d := int(dB)
		eachISA(func(isa string) {
			p := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
			SoftmaxRecompute(p, s, scale, lse, d)
			checkSoftmaxRecompute(t, isa+" SoftmaxRecompute", p, s, scale, lse, d)
		})
	})
}

// FuzzSoftmaxBackwardBlock checks every ISA against fallback's bits on
// fuzzed p, dp and delta.
func FuzzSoftmaxBackwardBlock(f *testing.F) {
	f.Add(byte(3), []byte{})
	f.Add(byte(1), []byte("\x00\x00\x00\x00\x00\x00\xc0\x7f\x00\x00\x80\x3e\x00\x00\x80\x7f\x00\x00\x80\x3f\x00\x00\x00\x40"))
	f.Fuzz(func(t *testing.T, colsB byte, data []byte) {
		x := floats(data)
		cols := int(colsB)%40 + 1
		rows := min(len(x)/(2*cols+1), maxFuzzRows)
		delta := x[:rows]
		mk := func(s []float32) Matrix { return Matrix{Rows: rows, Cols: cols, Stride: cols, Data: s} }
		p, dp := mk(x[rows:rows+rows*cols]), mk(x[rows+rows*cols:rows+2*rows*cols])
		eachISA(func(isa string) {
			ds := mk(make([]float32, rows*cols))
			SoftmaxBackwardBlock(ds, p, dp, delta)
			checkSoftmaxBackwardBlock(t, isa+" SoftmaxBackwardBlock", ds, p, dp, delta)
		})
	})
}
