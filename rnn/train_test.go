package rnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/heedml/heed/internal/allocs"
	"github.com/heedml/heed/kernels"
)

// trainShape is a sequence's shapes: input and hidden sizes, sequences,
// steps, and the padding of the matrices' rows.
type trainShape struct{ In, H, B, T, pad int }

// trainShapes cover In = 0, one sequence, one step, no step, hidden sizes
// around the vector widths and strided matrices.
var trainShapes = []trainShape{
	{3, 4, 2, 5, 0}, {0, 3, 2, 3, 1}, {1, 1, 1, 1, 0}, {5, 17, 3, 4, 2}, {2, 5, 3, 0, 1},
	{8, 12, 3, 6, 1}, {16, 33, 4, 6, 3}, {24, 40, 5, 7, 0},
}

// globalShapes are the trainShapes whose bounds carried through the whole
// recurrence stay below a few percent of the values (at the weight scales
// TestSeqTrain takes): beyond them the worst-case bound, which multiplies
// by Σ|W| at each step, grows past use, and TestSeqTrainSteps checks them
// step by step.
var globalShapes = trainShapes[:6]

// gradsWanted says which gradients a case asks for and which output
// gradients it gives.
type gradsWanted struct {
	dx, dh0, dc0, dW, db, dhs, dhT, dcT bool
}

var allGrads = gradsWanted{true, true, true, true, true, true, true, true}

// randM is randMatrix that also makes matrices of no rows.
func randM(rng *rand.Rand, rows, cols, pad int, s float64) kernels.Matrix {
	if rows == 0 {
		return kernels.Matrix{Cols: cols, Stride: cols + pad}
	}
	return randMatrix(rng, rows, cols, pad, s)
}

// newSeqCase returns a case of shape sh for an LSTM (gates = 4) or a GRU
// (gates = 3), with weights in [−ws, ws), the gradients' buffers holding
// random values (Backward adds to them), absent where want says.
func newSeqCase(rng *rand.Rand, sh trainShape, gates int, ws float64, want gradsWanted) *seqCase {
	In, H, B, T, pad := sh.In, sh.H, sh.B, sh.T, sh.pad
	n := T * B
	opt := func(ok bool, rows, cols int, s float64) kernels.Matrix {
		if !ok {
			return kernels.Matrix{}
		}
		return randM(rng, rows, cols, pad, s)
	}
	vec := func(ok bool, m int) []float32 {
		if !ok {
			return nil
		}
		return randVec(rng, m, 1)
	}
	sc := &seqCase{In: In, H: H, B: B, T: T,
		w: randMatrix(rng, gates*H, In+H, pad, ws),
		x: randM(rng, n, In, pad, 1), h0: randMatrix(rng, B, H, pad, 1), c0: randMatrix(rng, B, H, pad, 2),
		dhs: opt(want.dhs, n, H, 1), dhT: opt(want.dhT, B, H, 1), dcT: opt(want.dcT && gates == 4, B, H, 1),
		dW: opt(want.dW, gates*H, In+H, 1), dx: opt(want.dx && In > 0, n, In, 1),
		dh0: opt(want.dh0, B, H, 1), dc0: opt(want.dc0 && gates == 4, B, H, 1),
	}
	if gates == 4 {
		sc.b, sc.db = randVec(rng, 4*H, ws), vec(want.db, 4*H)
	} else {
		sc.bx, sc.bh = randVec(rng, 3*H, ws), randVec(rng, 3*H, ws)
		sc.dbx, sc.dbh = vec(want.db, 3*H), vec(want.db, 3*H)
	}
	return sc
}

// cloneM returns a copy of m (an empty one stays empty).
func cloneM(m kernels.Matrix) kernels.Matrix {
	m.Data = slices.Clone(m.Data)
	return m
}

// near fails t unless got is within want's bound (and the float64
// oracle's own rounding) of its value.
func near(t *testing.T, what string, got float32, want bv) {
	t.Helper()
	tol := want.e*(1+1e-9) + 1e-13*(1+math.Abs(want.v))
	if d := math.Abs(float64(got) - want.v); !(d <= tol) {
		t.Fatalf("%s = %v, want %v ± %.3g (error %.3g)", what, got, want.v, tol, d)
	}
}

func nearM(t *testing.T, what string, got kernels.Matrix, want [][]bv) {
	t.Helper()
	if !wanted(got) {
		return
	}
	for r := range got.Rows {
		for j := range got.Cols {
			near(t, fmt.Sprintf("%s[%d][%d]", what, r, j), got.Data[r*got.Stride+j], want[r][j])
		}
	}
}

func nearV(t *testing.T, what string, got []float32, want []bv) {
	t.Helper()
	for j := range got {
		near(t, fmt.Sprintf("%s[%d]", what, j), got[j], want[j])
	}
}

// sameM fails t unless a and b have the same bits (NaN for NaN).
func sameM(t *testing.T, what string, a, b kernels.Matrix) {
	t.Helper()
	for r := range a.Rows {
		for j := range a.Cols {
			x, y := a.Data[r*a.Stride+j], b.Data[r*b.Stride+j]
			if math.Float32bits(x) != math.Float32bits(y) && !(x != x && y != y) {
				t.Fatalf("%s[%d][%d]: %v, then %v", what, r, j, x, y)
			}
		}
	}
}

// runLSTMCase runs Forward and Backward of sc on l with tp and checks every
// output and gradient against the oracle, then that a second Backward into
// the same initial buffers gives the same bits.
func runLSTMCase(t *testing.T, l *LSTM, tp *LSTMTape, sc *seqCase) {
	t.Helper()
	o := lstmSeqOracle(sc)
	n := sc.T * sc.B
	hs, cT := randM(rand.New(rand.NewPCG(1, 2)), n, sc.H, 1, 1), randM(rand.New(rand.NewPCG(1, 3)), sc.B, sc.H, 2, 1)
	x0 := slices.Clone(sc.x.Data)
	l.Forward(tp, hs, cT, sc.x, sc.h0, sc.c0)
	if T, B := tp.Steps(); T != sc.T || B != sc.B {
		t.Fatalf("Steps() = %d, %d; want %d, %d", T, B, sc.T, sc.B)
	}
	nearM(t, "hs", hs, o.hs)
	nearM(t, "cT", cT, o.cT)
	backward := func() (LSTMGrads, kernels.Matrix, kernels.Matrix, kernels.Matrix) {
		g := LSTMGrads{W: cloneM(sc.dW), B: slices.Clone(sc.db)}
		dx, dh0, dc0 := cloneM(sc.dx), cloneM(sc.dh0), cloneM(sc.dc0)
		l.Backward(&g, dx, dh0, dc0, tp, sc.x, sc.dhs, sc.dhT, sc.dcT)
		return g, dx, dh0, dc0
	}
	g, dx, dh0, dc0 := backward()
	if !slices.Equal(sc.x.Data, x0) {
		t.Fatal("x was modified")
	}
	nearM(t, "dx", dx, o.dx)
	nearM(t, "dh0", dh0, o.dh0)
	nearM(t, "dc0", dc0, o.dc0)
	nearM(t, "dW", g.W, o.dW)
	nearV(t, "db", g.B, o.db)
	g2, dx2, dh02, dc02 := backward()
	sameM(t, "dW again", g2.W, g.W)
	sameM(t, "db again", kernels.Matrix{Rows: 1, Cols: len(g.B), Data: g2.B}, kernels.Matrix{Rows: 1, Cols: len(g.B), Data: g.B})
	sameM(t, "dx again", dx2, dx)
	sameM(t, "dh0 again", dh02, dh0)
	sameM(t, "dc0 again", dc02, dc0)
}

// runGRUCase is runLSTMCase for a GRU.
func runGRUCase(t *testing.T, gc *GRU, tp *GRUTape, sc *seqCase) {
	t.Helper()
	o := gruSeqOracle(sc)
	n := sc.T * sc.B
	hs := randM(rand.New(rand.NewPCG(1, 4)), n, sc.H, 1, 1)
	gc.Forward(tp, hs, sc.x, sc.h0)
	nearM(t, "hs", hs, o.hs)
	backward := func() (GRUGrads, kernels.Matrix, kernels.Matrix) {
		g := GRUGrads{W: cloneM(sc.dW), Bx: slices.Clone(sc.dbx), Bh: slices.Clone(sc.dbh)}
		dx, dh0 := cloneM(sc.dx), cloneM(sc.dh0)
		gc.Backward(&g, dx, dh0, tp, sc.x, sc.dhs, sc.dhT)
		return g, dx, dh0
	}
	g, dx, dh0 := backward()
	nearM(t, "dx", dx, o.dx)
	nearM(t, "dh0", dh0, o.dh0)
	nearM(t, "dW", g.W, o.dW)
	nearV(t, "dbx", g.Bx, o.dbx)
	nearV(t, "dbh", g.Bh, o.dbh)
	g2, dx2, dh02 := backward()
	sameM(t, "dW again", g2.W, g.W)
	sameM(t, "dx again", dx2, dx)
	sameM(t, "dh0 again", dh02, dh0)
}

// TestSeqTrain checks LSTM and GRU Forward and Backward against the
// oracle's values within its bounds carried through the whole recurrence,
// under every ISA, for the shapes where those bounds are of use, every
// gradient wanted and some not, one tape per cell reused across the cases
// (it grows and shrinks), and that a second Backward gives the same bits.
func TestSeqTrain(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 10))
	prev := kernels.Active()
	defer kernels.Use(prev)
	partial := []gradsWanted{
		allGrads,
		{dW: true, db: true, dhs: true}, // no input or state gradients, no final-state ones
		{dx: true, dh0: true, dc0: true, dhT: true}, // only the final state's gradient given
		{},
	}
	for _, isa := range testISAs(t) {
		if err := kernels.Use(isa); err != nil {
			t.Fatal(err)
		}
		var lt LSTMTape
		var gt GRUTape
		for i, sh := range globalShapes {
			for k, ws := range []float64{0.5 / math.Sqrt(float64(sh.H)), 1 / math.Sqrt(float64(sh.H))} {
				want := allGrads
				if k > 0 {
					want = partial[i%len(partial)]
				}
				name := fmt.Sprintf("%v/in=%d,H=%d,B=%d,T=%d,w=%.2g", isa, sh.In, sh.H, sh.B, sh.T, ws)
				t.Run(name, func(t *testing.T) {
					sc := newSeqCase(rng, sh, 4, ws, want)
					runLSTMCase(t, NewLSTM(sh.In, sh.H, sc.w, sc.b), &lt, sc)
					sg := newSeqCase(rng, sh, 3, ws, want)
					runGRUCase(t, NewGRU(sh.In, sh.H, sg.w, sg.bx, sg.bh), &gt, sg)
				})
			}
		}
	}
}

// TestSeqOracleFiniteDifferences checks the oracle's gradients (its float64
// values) against central finite differences of its float64 forward, the
// loss L = Σ dhs·h_t + dhT·h_T (+ dcT·c_T), for every input and parameter.
func TestSeqOracleFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 11))
	for _, sh := range []trainShape{{3, 4, 2, 4, 0}, {0, 2, 1, 3, 0}, {2, 3, 2, 0, 0}} {
		for _, gates := range []int{4, 3} {
			want := gradsWanted{dhs: true, dhT: true, dcT: true}
			sc := newSeqCase(rng, sh, gates, 0.8, want)
			oracle := lstmSeqOracle
			if gates == 3 {
				oracle = gruSeqOracle
			}
			o := oracle(sc)
			const eps = 1e-6
			check := func(what string, in input, r, c int, grad float64) {
				t.Helper()
				sc.pert = perturbation{in, r, c, eps}
				lp := oracle(sc).forward
				sc.pert.d = -eps
				lm := oracle(sc).forward
				sc.pert = perturbation{}
				fd := (lp - lm) / (2 * eps)
				if math.Abs(fd-grad) > 1e-6*(1+math.Abs(fd)) {
					t.Fatalf("gates=%d %+v: %s[%d][%d]: oracle %v, finite differences %v", gates, sh, what, r, c, grad, fd)
				}
			}
			In, H, B, T := sh.In, sh.H, sh.B, sh.T
			for k := range gates * H {
				for i := range In + H {
					if T > 0 {
						check("W", inW, k, i, o.dW[k][i].v)
					}
				}
				if gates == 4 {
					if T > 0 {
						check("b", inB, k, 0, o.db[k].v)
					}
				} else if T > 0 {
					check("bx", inBx, k, 0, o.dbx[k].v)
					check("bh", inBh, k, 0, o.dbh[k].v)
				}
			}
			for r := range T * B {
				for i := range In {
					check("x", inX, r, i, o.dx[r][i].v)
				}
			}
			for b := range B {
				for j := range H {
					check("h0", inH0, b, j, o.dh0[b][j].v)
					if gates == 4 {
						check("c0", inC0, b, j, o.dc0[b][j].v)
					}
				}
			}
		}
	}
}

func TestSeqTrainAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(36, 12))
	sh := trainShape{32, 48, 8, 6, 0}
	sc := newSeqCase(rng, sh, 4, 0.2, allGrads)
	l := NewLSTM(sh.In, sh.H, sc.w, sc.b)
	sg := newSeqCase(rng, sh, 3, 0.2, allGrads)
	g := NewGRU(sh.In, sh.H, sg.w, sg.bx, sg.bh)
	n := sh.T * sh.B
	hs, cT := randMatrix(rng, n, sh.H, 0, 1), randMatrix(rng, sh.B, sh.H, 0, 1)
	var lt LSTMTape
	var gt GRUTape
	lg := LSTMGrads{W: sc.dW, B: sc.db}
	gg := GRUGrads{W: sg.dW, Bx: sg.dbx, Bh: sg.dbh}
	step := func() {
		l.Forward(&lt, hs, cT, sc.x, sc.h0, sc.c0)
		l.Backward(&lg, sc.dx, sc.dh0, sc.dc0, &lt, sc.x, sc.dhs, sc.dhT, sc.dcT)
		g.Forward(&gt, hs, sg.x, sg.h0)
		g.Backward(&gg, sg.dx, sg.dh0, &gt, sg.x, sg.dhs, sg.dhT)
	}
	if a := allocs.Count(5, step); a != 0 {
		t.Errorf("Forward and Backward allocate %d times", a)
	}
	// A shorter sequence of fewer sequences reuses the tapes.
	short := func() {
		x, h0, c0 := rowsOf(sc.x, 0, 3*2), rowsOf(sc.h0, 0, 2), rowsOf(sc.c0, 0, 2)
		l.Forward(&lt, rowsOf(hs, 0, 6), rowsOf(cT, 0, 2), x, h0, c0)
		l.Backward(&lg, rowsOf(sc.dx, 0, 6), rowsOf(sc.dh0, 0, 2), rowsOf(sc.dc0, 0, 2), &lt, x, rowsOf(sc.dhs, 0, 6), kernels.Matrix{}, kernels.Matrix{})
	}
	if a := allocs.Count(5, short); a != 0 {
		t.Errorf("a shorter sequence allocates %d times", a)
	}
}

func TestSeqTrainPanics(t *testing.T) {
	m := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	l := NewLSTM(3, 2, m(8, 5), make([]float32, 8))
	l2 := NewLSTM(3, 2, m(8, 5), make([]float32, 8))
	var tp LSTMTape
	none := kernels.Matrix{}
	mustPanic(t, "heed/rnn: LSTM.Backward: the tape holds no Forward of this cell",
		func() { l.Backward(nil, none, none, none, &tp, m(0, 3), none, none, none) })
	mustPanic(t, "heed/rnn: LSTM.Forward: in=3, hidden=2, B=2 (h0's rows): x is 5×3 (stride 3, len 15), hs 4×2 (stride 2, len 8), cT 2×2 (stride 2, len 4), h0 2×2 (stride 2, len 4), c0 2×2 (stride 2, len 4); want x T·B×3, hs T·B×2, h0, c0 and cT B×2",
		func() { l.Forward(&tp, m(4, 2), m(2, 2), m(5, 3), m(2, 2), m(2, 2)) })
	x := m(4, 3)
	hs, cT, h0, c0 := m(4, 2), m(2, 2), m(2, 2), m(2, 2)
	mustPanic(t, "heed/rnn: LSTM.Forward: hs overlaps x",
		func() { l.Forward(&tp, kernels.Matrix{Rows: 4, Cols: 2, Stride: 2, Data: x.Data}, cT, x, h0, c0) })
	buf := make([]float32, 20)
	mustPanic(t, "heed/rnn: LSTM.Forward: cT overlaps c0",
		func() {
			l.Forward(&tp, hs, kernels.Matrix{Rows: 2, Cols: 2, Stride: 2, Data: buf[1:5]}, x, h0, kernels.Matrix{Rows: 2, Cols: 2, Stride: 2, Data: buf[:4]})
		})
	l.Forward(&tp, hs, c0, x, h0, c0) // cT = c0 in place
	mustPanic(t, "heed/rnn: LSTM.Backward: the tape holds no Forward of this cell",
		func() { l2.Backward(nil, none, none, none, &tp, x, none, none, none) })
	mustPanic(t, "heed/rnn: LSTM.Backward: in=3, hidden=2, T=2, B=2 (the tape's): x is 4×3 (stride 3, len 12), dhs 4×3 (stride 3, len 12), dhT 0×0 (stride 0, len 0), dcT 0×0 (stride 0, len 0), dx 0×0 (stride 0, len 0), dh0 0×0 (stride 0, len 0), dc0 0×0 (stride 0, len 0), g.W 0×0 (stride 0, len 0), len(g.B)=0; want x and dx T·B×3, dhs T·B×2, dhT, dcT, dh0 and dc0 B×2, g.W 8×5, len(g.B)=8 (each gradient and dhs, dhT, dcT may be empty)",
		func() { l.Backward(nil, none, none, none, &tp, x, m(4, 3), none, none) })
	mustPanic(t, "heed/rnn: LSTM.Backward: in=3, hidden=2, T=2, B=2 (the tape's): x is 4×3 (stride 3, len 12), dhs 0×0 (stride 0, len 0), dhT 0×0 (stride 0, len 0), dcT 0×0 (stride 0, len 0), dx 0×0 (stride 0, len 0), dh0 0×0 (stride 0, len 0), dc0 0×0 (stride 0, len 0), g.W 0×0 (stride 0, len 0), len(g.B)=7; want x and dx T·B×3, dhs T·B×2, dhT, dcT, dh0 and dc0 B×2, g.W 8×5, len(g.B)=8 (each gradient and dhs, dhT, dcT may be empty)",
		func() { l.Backward(&LSTMGrads{B: make([]float32, 7)}, none, none, none, &tp, x, none, none, none) })
	dhs := m(4, 2)
	mustPanic(t, "heed/rnn: LSTM.Backward: dx overlaps dhs",
		func() {
			l.Backward(nil, kernels.Matrix{Rows: 4, Cols: 3, Stride: 3, Data: buf[6:18]}, none, none, &tp, x,
				kernels.Matrix{Rows: 4, Cols: 2, Stride: 2, Data: buf[:8]}, none, none)
		})
	mustPanic(t, "heed/rnn: LSTM.Backward: g.W overlaps W",
		func() { l.Backward(&LSTMGrads{W: l.w}, none, none, none, &tp, x, dhs, none, none) })
	mustPanic(t, "heed/rnn: LSTM.Backward: dh0 overlaps dc0",
		func() { l.Backward(nil, none, c0, c0, &tp, x, dhs, none, none) })

	g := NewGRU(3, 2, m(6, 5), make([]float32, 6), make([]float32, 6))
	var gt GRUTape
	mustPanic(t, "heed/rnn: GRU.Backward: the tape holds no Forward of this cell",
		func() { g.Backward(nil, none, none, &gt, m(0, 3), none, none) })
	mustPanic(t, "heed/rnn: GRU.Forward: in=3, hidden=2, B=2 (h0's rows): x is 4×3 (stride 3, len 12), hs 4×3 (stride 3, len 12), h0 2×2 (stride 2, len 4); want x T·B×3, hs T·B×2, h0 B×2",
		func() { g.Forward(&gt, m(4, 3), x, h0) })
	mustPanic(t, "heed/rnn: GRU.Forward: hs overlaps h0",
		func() {
			g.Forward(&gt, kernels.Matrix{Rows: 4, Cols: 2, Stride: 2, Data: buf[2:10]}, x, kernels.Matrix{Rows: 2, Cols: 2, Stride: 2, Data: buf[:4]})
		})
	g.Forward(&gt, hs, x, h0)
	mustPanic(t, "heed/rnn: GRU.Backward: in=3, hidden=2, T=2, B=2 (the tape's): x is 4×3 (stride 3, len 12), dhs 0×0 (stride 0, len 0), dhT 0×0 (stride 0, len 0), dx 0×0 (stride 0, len 0), dh0 0×0 (stride 0, len 0), g.W 0×0 (stride 0, len 0), len(g.Bx)=6, len(g.Bh)=5; want x and dx T·B×3, dhs T·B×2, dhT and dh0 B×2, g.W 6×5, len(g.Bx)=len(g.Bh)=6 (each gradient and dhs, dhT may be empty)",
		func() {
			g.Backward(&GRUGrads{Bx: make([]float32, 6), Bh: make([]float32, 5)}, none, none, &gt, x, none, none)
		})
	mustPanic(t, "heed/rnn: GRU.Backward: g.Bh overlaps bh",
		func() { g.Backward(&GRUGrads{Bh: g.bh}, none, none, &gt, x, dhs, none) })
	mustPanic(t, "heed/rnn: GRU.Backward: dh0 overlaps dhT",
		func() { g.Backward(nil, none, h0, &gt, x, dhs, h0) })
}

// exactRows returns the n rows of cols elements of s as exact values.
func exactRows(s []float32, n, cols int) [][]bv {
	rows := make([][]bv, n)
	for r := range rows {
		rows[r] = make([]bv, cols)
		for j := range cols {
			rows[r][j] = ex(s[r*cols+j])
		}
	}
	return rows
}

// nearRows checks the n rows of cols elements of s (a tape's buffer)
// against want.
func nearRows(t *testing.T, what string, s []float32, n, cols int, want [][]bv) {
	t.Helper()
	nearM(t, what, kernels.Matrix{Rows: n, Cols: cols, Stride: cols, Data: s[:n*cols]}, want)
}

// TestSeqTrainSteps checks every step of heed's Forward and Backward
// against the oracle resynchronised at each step to heed's own saved
// values (sc.local): the forward of step t from heed's h_{t−1} and c_{t−1},
// the backward of step t from heed's saved activations and dG_{t+1}, the
// products over the sequence from heed's dG and states. Each bound then
// spans one step (the cell-state gradient, whose recurrence multiplies by
// f ≤ 1, and the GRU's direct path, by z ≤ 1, are carried over the steps),
// so it stays tight for long sequences, large hidden sizes and saturating
// weights, where the bound carried through the whole recurrence
// (TestSeqTrain) grows past use. It checks the tape's saved values too.
func TestSeqTrainSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 13))
	prev := kernels.Active()
	defer kernels.Use(prev)
	shapes := append(slices.Clone(trainShapes), trainShape{48, 64, 8, 10, 0})
	if testing.Short() {
		shapes = trainShapes
	}
	for _, isa := range testISAs(t) {
		if err := kernels.Use(isa); err != nil {
			t.Fatal(err)
		}
		for _, sh := range shapes {
			for _, ws := range []float64{1 / math.Sqrt(float64(sh.H)), 4 / math.Sqrt(float64(sh.H))} {
				t.Run(fmt.Sprintf("%v/in=%d,H=%d,B=%d,T=%d,w=%.2g", isa, sh.In, sh.H, sh.B, sh.T, ws), func(t *testing.T) {
					lstmSteps(t, newSeqCase(rng, sh, 4, ws, allGrads))
					gruSteps(t, newSeqCase(rng, sh, 3, ws, allGrads))
				})
			}
		}
	}
}

func lstmSteps(t *testing.T, sc *seqCase) {
	In, H, B, T := sc.In, sc.H, sc.B, sc.T
	n := T * B
	l := NewLSTM(In, H, sc.w, sc.b)
	var tp LSTMTape
	hs, cT := randM(rand.New(rand.NewPCG(2, 1)), n, H, 1, 1), randM(rand.New(rand.NewPCG(2, 2)), B, H, 0, 1)
	l.Forward(&tp, hs, cT, sc.x, sc.h0, sc.c0)
	lv := &localVals{hPrev: exactRows(tp.hPrev, n, H), cPrev: exactRows(tp.c, n, H), act: exactRows(tp.act, n, 5*H)}
	g := LSTMGrads{W: cloneM(sc.dW), B: slices.Clone(sc.db)}
	dx, dh0, dc0 := cloneM(sc.dx), cloneM(sc.dh0), cloneM(sc.dc0)
	l.Backward(&g, dx, dh0, dc0, &tp, sc.x, sc.dhs, sc.dhT, sc.dcT)
	lv.dG = exactRows(tp.g, n, 4*H)
	sc.local = lv
	o := lstmSeqOracle(sc)
	nearRows(t, "act", tp.act, n, 5*H, o.act)
	nearM(t, "hs", hs, o.hs)
	if T > 0 {
		nearRows(t, "c_t", tp.c[B*H:], n-B, H, o.cs[:n-B])
		nearM(t, "cT", cT, o.cs[n-B:])
		sameM(t, "the tape's h_t", mat(tp.hPrev[B*H:], n-B, H), rowsOf(hs, 0, n-B))
	}
	nearRows(t, "dG", tp.g, n, 4*H, o.dG)
	nearM(t, "dx", dx, o.dx)
	nearM(t, "dh0", dh0, o.dh0)
	nearM(t, "dc0", dc0, o.dc0)
	nearM(t, "dW", g.W, o.dW)
	nearV(t, "db", g.B, o.db)
}

func gruSteps(t *testing.T, sc *seqCase) {
	In, H, B, T := sc.In, sc.H, sc.B, sc.T
	n := T * B
	gc := NewGRU(In, H, sc.w, sc.bx, sc.bh)
	var tp GRUTape
	hs := randM(rand.New(rand.NewPCG(2, 3)), n, H, 1, 1)
	gc.Forward(&tp, hs, sc.x, sc.h0)
	lv := &localVals{hPrev: exactRows(tp.hPrev, n, H), act: exactRows(tp.act, n, 4*H)}
	g := GRUGrads{W: cloneM(sc.dW), Bx: slices.Clone(sc.dbx), Bh: slices.Clone(sc.dbh)}
	dx, dh0 := cloneM(sc.dx), cloneM(sc.dh0)
	gc.Backward(&g, dx, dh0, &tp, sc.x, sc.dhs, sc.dhT)
	lv.dG, lv.dGh = exactRows(tp.g, n, 3*H), exactRows(tp.dgh, n, 3*H)
	sc.local = lv
	o := gruSeqOracle(sc)
	nearRows(t, "act", tp.act, n, 4*H, o.act)
	nearM(t, "hs", hs, o.hs)
	if T > 0 {
		sameM(t, "the tape's h_t", mat(tp.hPrev[B*H:], n-B, H), rowsOf(hs, 0, n-B))
	}
	nearRows(t, "dGx", tp.g, n, 3*H, o.dG)
	nearRows(t, "dGh", tp.dgh, n, 3*H, o.dGh)
	nearM(t, "dx", dx, o.dx)
	nearM(t, "dh0", dh0, o.dh0)
	nearM(t, "dW", g.W, o.dW)
	nearV(t, "dbx", g.Bx, o.dbx)
	nearV(t, "dbh", g.Bh, o.dbh)
}
