package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/fallback"
)

// matShapes are the rows×cols shapes the matrix-vector tests cover: every
// small shape around the 4-row block and the vector widths, then larger ones.
func matShapes() [][2]int {
	var s [][2]int
	for _, r := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13} {
		for c := 0; c <= 70; c++ {
			s = append(s, [2]int{r, c})
		}
		s = append(s, [2]int{r, 255}, [2]int{r, 256}, [2]int{r, 257})
	}
	return append(s, [2]int{64, 64}, [2]int{256, 256}, [2]int{129, 1000}, [2]int{1000, 33})
}

// newMatrix returns a random rows×cols matrix with stride cols+pad inside a
// canary slab at offset off.
func newMatrix(t *testing.T, rng *rand.Rand, rows, cols, pad, off int) (Matrix, func()) {
	n := 0
	if rows > 0 && cols > 0 {
		n = (rows-1)*(cols+pad) + cols
	}
	data, ok := slab(t, n, off)
	m := Matrix{Rows: rows, Cols: cols, Data: data, Stride: cols + pad}
	for i := 0; i < rows && cols > 0; i++ {
		fill(rng, m.Row(i))
	}
	return m, ok
}

func TestMatVec(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, sh := range matShapes() {
			rows, cols := sh[0], sh[1]
			for _, pad := range []int{0, 3} {
				a, aok := newMatrix(t, rng, rows, cols, pad, rng.IntN(16))
				x, xok := slab(t, cols, rng.IntN(16))
				fill(rng, x)
				dst, dok := slab(t, rows, rng.IntN(16))
				MatVec(dst, a, x)
				want := make([]float32, rows)
				fallback.MatVec(want, a.Data, a.Stride, x)
				for r := range dst {
					exact, abs := dot64(a.Row(r), x)
					checkDot(t, "MatVec", dst[r], exact, abs, cols)
					checkDot(t, "fallback.MatVec", want[r], exact, abs, cols)
				}
				aok()
				xok()
				dok()
			}
		}
	})
}

func TestMatVecGuard(t *testing.T) {
	forEachGuarded(t, 257*3, 3, func(t *testing.T, n int, get func(int) []float32) {
		for _, rows := range []int{1, 3, 5} {
			if n == 0 {
				continue
			}
			a := Matrix{Rows: rows, Cols: n, Stride: n, Data: get(rows * n)}
			x, dst := get(n), get(rows)
			MatVec(dst, a, x)
			for r := range dst {
				exact, abs := dot64(a.Row(r), x)
				checkDot(t, "MatVec", dst[r], exact, abs, n)
			}
			return
		}
	})
}

func TestMatVecPanics(t *testing.T) {
	a := Matrix{Rows: 3, Cols: 4, Stride: 5, Data: make([]float32, 14)}
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/kernels: MatVec: a is 3×4 but len(dst)=2, len(x)=4", func() { MatVec(make([]float32, 2), a, make([]float32, 4)) }},
		{"heed/kernels: MatVec: a is 3×4 but len(dst)=3, len(x)=5", func() { MatVec(make([]float32, 3), a, make([]float32, 5)) }},
		{"heed/kernels: MatVec: a is -1×4: negative size", func() { MatVec(nil, Matrix{Rows: -1, Cols: 4}, nil) }},
		{"heed/kernels: MatVec: a is 3×4 with stride 3 < 4 columns", func() { MatVec(nil, Matrix{Rows: 3, Cols: 4, Stride: 3, Data: a.Data}, nil) }},
		{"heed/kernels: MatVec: a is 3×4 with stride 5: len(a.Data)=13 < 14", func() { MatVec(nil, Matrix{Rows: 3, Cols: 4, Stride: 5, Data: a.Data[:13]}, nil) }},
	} {
		mustPanic(t, c.want, c.f)
	}
}

func FuzzMatVec(f *testing.F) {
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f\x00\x00\x80\x7f"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, cols uint8) {
		v := floats(data)
		c := int(cols)%17 + 1
		if len(v) < 2*c {
			return
		}
		rows := (len(v) - c) / c
		a := Matrix{Rows: rows, Cols: c, Stride: c, Data: v[:rows*c]}
		x := v[rows*c : rows*c+c]
		want := make([]float32, rows)
		fallback.MatVec(want, a.Data, c, x)
		prev := Active()
		defer Use(prev)
		got := make([]float32, rows)
		for _, isa := range Supported() {
			Use(isa)
			MatVec(got, a, x)
			for r := range got {
				checkDotAny(t, isa.String()+" MatVec", got[r], want[r], a.Row(r), x)
			}
		}
	})
}
