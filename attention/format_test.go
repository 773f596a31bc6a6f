package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/heedml/heed/kernels"

	"github.com/heedml/heed/internal/allocs"
)

var allFormats = []Format{Float32, BFloat16, Float16, Q8, Q8Q8}

var storedKinds = []kind{kindDot, kindScaled, kindGeneral}

// storeErr is the storage bound of element (s, j) of m in format f, from the
// format's definition (independent of the conversion code): relative 2⁻⁸ or
// 2⁻¹¹ plus the subnormal term for the 16-bit formats, half the block's
// quantisation step for Q8 (the step being the smallest float32 ≥
// max|block|/127).
func storeErr(f Format, m kernels.Matrix, s, j int) float64 {
	x := math.Abs(at(m, s, j))
	switch f {
	case BFloat16:
		return x*0x1p-8 + 0x1p-134
	case Float16:
		return x*0x1p-11 + 0x1p-25
	case Q8, Q8Q8:
		b := j / 32 * 32
		var mx float64
		for i := b; i < min(b+32, m.Cols); i++ {
			mx = max(mx, math.Abs(at(m, s, i)))
		}
		q := mx / 127
		sc := float32(q)
		if float64(sc) < q {
			sc = math.Nextafter32(sc, float32(math.Inf(1)))
		}
		return float64(sc) / 2
	}
	return 0
}

// storeScore bounds how far the storage rounding of key s moves its score:
// Σ_j storeErr(k_sj)·|q_j| for the prepared query q (h, h/√d, or Wᵀh bounded
// by Σ_i|h_i·W_ij|).
func (o oracle) storeScore(h []float32, keys kernels.Matrix, s int) float64 {
	var e float64
	for j := range keys.Cols {
		e += storeErr(o.store, keys, s, j) * o.queryAbs(h, keys.Cols, j)
	}
	return e
}

// queryAbs bounds |q_j| for the prepared query q of h and keys of length d.
func (o oracle) queryAbs(h []float32, d, j int) float64 {
	var q float64
	switch o.sc.kind {
	case kindGeneral:
		for i := range o.w.Rows {
			q += math.Abs(float64(h[i]) * at(o.w, i, j))
		}
	case kindScaled:
		q = math.Abs(float64(h[j])) / math.Sqrt(float64(d))
	default:
		q = math.Abs(float64(h[j]))
	}
	return q
}

// queryScore bounds how far Q8Q8's rounding of the prepared query q moves the
// score of key s: Σ_j|k̂_sj|·Scale_q(j)/2, with |k̂_sj| ≤ |k_sj| + its Q8
// storage bound and Scale_q(j) the smallest float32 ≥ max|q_i|/127 over j's
// block, q_i bounded by queryAbs (times 1 + 2⁻²⁰ for the float32 rounding of
// the prepared query, which General computes with at most 1 + γ_{d_q}).
func (o oracle) queryScore(h []float32, keys kernels.Matrix, s int) float64 {
	var e float64
	for b := 0; b < keys.Cols; b += 32 {
		mx := 0.0
		for j := b; j < min(b+32, keys.Cols); j++ {
			mx = max(mx, o.queryAbs(h, keys.Cols, j))
		}
		scale := mx / 127 * (1 + 0x1p-20)
		for j := b; j < min(b+32, keys.Cols); j++ {
			e += (math.Abs(at(keys, s, j)) + storeErr(Q8, keys, s, j)) * scale / 2
		}
	}
	return e
}

// widen returns the values a Memory stores for m in format f, as float32.
func widen(f Format, m kernels.Matrix) kernels.Matrix {
	out := kernels.Matrix{Rows: m.Rows, Cols: m.Cols, Stride: m.Cols, Data: make([]float32, m.Rows*m.Cols)}
	for i := range m.Rows {
		src, dst := m.Data[i*m.Stride:i*m.Stride+m.Cols], out.Data[i*m.Cols:(i+1)*m.Cols]
		switch f {
		case BFloat16:
			b := make([]kernels.BF16, m.Cols)
			kernels.ToBF16(b, src)
			kernels.FromBF16(dst, b)
		case Float16:
			b := make([]kernels.F16, m.Cols)
			kernels.ToF16(b, src)
			kernels.FromF16(dst, b)
		case Q8, Q8Q8:
			b := make([]kernels.Q8Block, kernels.Q8Blocks(m.Cols))
			kernels.ToQ8(b, src)
			kernels.FromQ8(dst, b)
		default:
			copy(dst, src)
		}
	}
	return out
}

func formatRounds(f Format) int {
	if f == Q8 || f == Q8Q8 {
		return 2
	}
	return 0
}

// storedMemory builds a Memory of format f holding keys and values (values
// the keys when sep is false): by NewMemoryFormat, or by NewEmptyMemory and Append
// one row at a time with spare capacity.
func storedMemory(sc Scorer, f Format, keys, vals kernels.Matrix, sep, byAppend bool) *Memory {
	if !byAppend {
		if !sep {
			return NewMemoryFormat(sc, f, keys, keys)
		}
		return NewMemoryFormat(sc, f, keys, vals)
	}
	m := NewEmptyMemory(sc, f, keys.Cols, vals.Cols, keys.Rows+3)
	for s := range keys.Rows {
		m.Append(row(keys, s), row(vals, s))
	}
	return m
}

// testFormatStep checks one step of a stored Memory against the oracle, on the
// stored values within the float32 bound and on the given values with the
// storage bound added.
func testFormatStep(t *testing.T, rng *rand.Rand, f Format, k kind, S, dk int, sep, byAppend bool, mode int) {
	t.Helper()
	sc, o, qd := newScorer(rng, k, 1+rng.IntN(20), dk, 0)
	keys := randMat(rng, S, dk, rng.IntN(3))
	vals := keys
	if sep || byAppend {
		vals = randMat(rng, S, 1+rng.IntN(40), rng.IntN(3))
		sep = true
	}
	m := storedMemory(sc, f, keys, vals, sep, byAppend)
	att := setMask(rng, m, mode)
	o.splits = m.plan(callAttend, 1).parts
	h := randVec(rng, qd)
	w, c := randVec(rng, S), randVec(rng, vals.Cols)
	m.Attend(w, c, h)
	what := fmt.Sprintf("%s %s S=%d d=%d sep=%v append=%v mode %d plan %+v", f, sc, S, dk, sep, byAppend, mode, m.plan(callAttend, 1))
	o.rounds, o.qquery = formatRounds(f), f == Q8Q8
	o.checkStep(t, what+" (stored values)", w, c, h, widen(f, keys), widen(f, vals), att)
	o.store = f
	o.checkStep(t, what+" (float32 values + storage)", w, c, h, keys, vals, att)

	sc2 := make([]float32, S)
	m.Scores(sc2, h)
	o.checkScores(t, what+" scores", sc2, h, keys, att)
	o.store = Float32
	o.checkScores(t, what+" scores (stored values)", sc2, h, widen(f, keys), att)
}

// TestFormatAttend checks steps of every format and dot-product scorer on
// many shapes, masks and valid lengths, built by conversion or by Append,
// with the values apart or the keys, plain, streamed, blocked and split,
// under every ISA.
func TestFormatAttend(t *testing.T) {
	for _, route := range []string{"default", "split", "blocks"} {
		t.Run(route, func(t *testing.T) {
			switch route {
			case "split":
				forceSplit(t, 3)
				setTuning(t, func(t *tuning) { t.contextBlock = 64 })
			case "blocks":
				setTuning(t, func(t *tuning) { t.contextBlock = 100 })
			}
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(7, 17))
				sizes, dims := []int{1, 17, 300}, []int{1, 40, 128}
				if testing.Short() { // under emulation
					sizes, dims = []int{17, 300}, []int{40}
				}
				for _, f := range allFormats {
					for _, k := range storedKinds {
						for _, S := range sizes {
							for _, dk := range dims {
								for mode := range 5 {
									if sparseKeeps(int(f)+int(k)+S, mode, 3) {
										testFormatStep(t, rng, f, k, S, dk, rng.IntN(2) == 0, (S+dk+mode)%2 == 0, mode)
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

// TestFormatAppendMatchesBulk checks that a cache grown by Append, across its
// capacity with Grow, holds what NewMemoryFormat stores: the same bits in
// every step as the Memory converted at once, at every length; and that
// Append panics, naming the sizes, when the cache is full.
func TestFormatAppendMatchesBulk(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 5))
		for _, f := range allFormats {
			S, dk, dv := 150, 40, 24
			keys, vals := randMat(rng, S, dk, 0), randMat(rng, S, dv, 1)
			c := NewEmptyMemory(ScaledDot(), f, dk, dv, 10)
			h := randVec(rng, dk)
			ctx, ctx2 := make([]float32, dv), make([]float32, dv)
			w, w2 := make([]float32, S), make([]float32, S)
			for n := 1; n <= S; n++ {
				if c.Len() == c.Cap() {
					msg := panicMessage(func() { c.Append(row(keys, n-1), row(vals, n-1)) })
					if want := fmt.Sprintf("cache full: %d keys of capacity %d", n-1, n-1); !strings.Contains(msg, want) {
						t.Fatalf("%s: Append on a full cache: panic %q, want it to contain %q", f, msg, want)
					}
					c.Grow(25)
					if c.Cap() != n-1+25 {
						t.Fatalf("%s: Grow(25) at %d keys: Cap %d", f, n-1, c.Cap())
					}
				}
				c.Append(row(keys, n-1), row(vals, n-1))
				if n%7 != 0 && n != S {
					continue
				}
				b := NewMemoryFormat(ScaledDot(), f, rows(keys, 0, n), rows(vals, 0, n))
				c.Attend(w[:n], ctx, h)
				b.Attend(w2[:n], ctx2, h)
				for i := range n {
					if math.Float32bits(w[i]) != math.Float32bits(w2[i]) {
						t.Fatalf("%s n=%d: weights[%d] %v by Append, %v by NewMemoryFormat", f, n, i, w[i], w2[i])
					}
				}
				for j := range dv {
					if math.Float32bits(ctx[j]) != math.Float32bits(ctx2[j]) {
						t.Fatalf("%s n=%d: context[%d] %v by Append, %v by NewMemoryFormat", f, n, j, ctx[j], ctx2[j])
					}
				}
			}
		}
	})
}

// panicMessage returns the message f panics with, or "" if it returns.
func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestFormatContracts checks the valid length and mask across Append and
// Truncate, and the named panics.
func TestFormatContracts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range allFormats {
		m := NewEmptyMemory(Dot(), f, 8, 4, 6)
		for range 3 {
			m.Append(randVec(rng, 8), randVec(rng, 4))
		}
		if m.Len() != 3 || m.Cap() != 6 || m.Format() != f {
			t.Fatalf("%s: Len %d Cap %d Format %s", f, m.Len(), m.Cap(), m.Format())
		}
		m.SetValid(2)
		m.Append(randVec(rng, 8), randVec(rng, 4))
		if m.valid != 2 {
			t.Fatalf("%s: valid length %d after Append, want 2 (set by SetValid)", f, m.valid)
		}
		m.SetValid(4)
		m.Append(randVec(rng, 8), randVec(rng, 4))
		if m.valid != 5 {
			t.Fatalf("%s: valid length %d after Append, want 5 (every key attended)", f, m.valid)
		}
		m.SetMask(make([]bool, 5))
		if msg := panicMessage(func() { m.Append(randVec(rng, 8), randVec(rng, 4)) }); !strings.Contains(msg, "the mask has 5 keys") {
			t.Fatalf("%s: Append past the mask: panic %q", f, msg)
		}
		m.SetMask(make([]bool, 6)) // Cap keys
		m.Append(randVec(rng, 8), randVec(rng, 4))
		m.Truncate(2)
		if m.Len() != 2 || m.valid != 2 {
			t.Fatalf("%s: Truncate(2): Len %d valid %d", f, m.Len(), m.valid)
		}
		for _, c := range []struct {
			f    func()
			want string
		}{
			{func() { m.Append(make([]float32, 7), make([]float32, 4)) }, "len(key)=7, want d_k=8"},
			{func() { m.Append(make([]float32, 8), make([]float32, 5)) }, "len(value)=5, want d_v=4"},
			{func() { m.Truncate(3) }, "Truncate: 3 out of range [0, 2]"},
			{func() { m.Grow(-1) }, "Grow: n=-1 < 0"},
			{func() { NewEmptyMemory(Cosine(), f, 8, 4, 6) }, "cosine: NewEmptyMemory: stored keys need a Dot, ScaledDot or General scorer"},
			{func() { NewEmptyMemory(Dot(), f, 8, 4, -1) }, "capacity -1: negative size"},
			{func() { newSelfMemory(Dot(), randMat(rng, 2, 2, 0)).Append(nil, nil) }, "references the caller's matrices"},
			{func() {
				newSelfMemoryFormat(Dot(), f, randMat(rng, 2, 2, 0)).Append(make([]float32, 2), make([]float32, 2))
			}, "cache full"},
			{func() {
				m := newSelfMemoryFormat(Dot(), f, randMat(rng, 2, 2, 0))
				m.Grow(1)
				m.Append(make([]float32, 2), make([]float32, 2))
			}, "the values are the keys: value must be nil"},
		} {
			if msg := panicMessage(c.f); !strings.Contains(msg, c.want) {
				t.Errorf("%s: panic %q, want it to contain %q", f, msg, c.want)
			}
		}
	}
}

// TestFormatSpecial checks special values in stored keys and values: the
// step follows Attend's rules on the stored values, which are those of a
// float32 Memory holding the widened matrices (NaN and ±Inf where the
// reference has them, exact zeros where it has them).
func TestFormatSpecial(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, f := range allFormats {
			for _, c := range []struct {
				name string
				x    float32 // put at key (or value) 3, column 1
				key  bool
			}{
				{"key NaN", nan, true}, {"key +Inf", inf, true}, {"key -Inf", -inf, true},
				{"key 1e5", 1e5, true}, {"value NaN", nan, false}, {"value Inf", inf, false}, {"value 7e4", 7e4, false},
			} {
				for _, S := range []int{8, 600} {
					keys, vals := randMat(rng, S, 40, 0), randMat(rng, S, 16, 0)
					if c.key {
						keys.Data[3*40+1] = c.x
					} else {
						vals.Data[3*16+1] = c.x
					}
					h := randVec(rng, 40)
					for i := range h {
						h[i] = float32(math.Abs(float64(h[i]))) + 0.25
					}
					m := NewMemoryFormat(Dot(), f, keys, vals)
					ref := NewMemory(Dot(), widen(f, keys), widen(f, vals))
					w, cx := make([]float32, S), make([]float32, 16)
					w2, cx2 := make([]float32, S), make([]float32, 16)
					m.Attend(w, cx, h)
					if f == Q8Q8 && kernels.Q8Q8Native() { // the reference takes the quantised query too
						h = widen(Q8, kernels.Matrix{Rows: 1, Cols: len(h), Stride: len(h), Data: h}).Data
					}
					ref.Attend(w2, cx2, h)
					what := fmt.Sprintf("%s %s S=%d", f, c.name, S)
					sameClass(t, what+" weights", w, w2)
					sameClass(t, what+" context", cx, cx2)
				}
			}
		}
	})
}

// sameClass fails t unless got and want agree on NaN, ±Inf and exact zero
// element by element, and the other elements are close (both kernels are
// within Attend's bound of the same exact step).
func sameClass(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(g) != math.IsNaN(w) {
				t.Fatalf("%s[%d] = %v, want %v", what, i, g, w)
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0) || w == 0 || g == 0:
			if g != w {
				t.Fatalf("%s[%d] = %v, want %v", what, i, g, w)
			}
		case math.Abs(g-w) > 1e-3*math.Abs(w)+1e-6:
			t.Fatalf("%s[%d] = %v, want %v", what, i, g, w)
		}
	}
}

// TestFormatAppendNoAllocs checks that Append and the step that follows
// allocate nothing once capacity is reserved, for every format and route
// (streamed; masked, blocked; split over goroutines) under every ISA.
func TestFormatAppendNoAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, f := range allFormats {
		for _, route := range []string{"stream", "masked", "split"} {
			t.Run(f.String()+"/"+route, func(t *testing.T) {
				S, dk, dv := 4096, 64, 64
				if route == "split" {
					forceSplit(t, 256)
				}
				m := NewEmptyMemory(ScaledDot(), f, dk, dv, S)
				for range S - 10 {
					m.Append(randVec(rng, dk), randVec(rng, dv))
				}
				if route == "masked" {
					mask := make([]bool, S)
					for i := range mask {
						mask[i] = i%3 != 0
					}
					m.SetMask(mask)
				}
				k, v, h := randVec(rng, dk), randVec(rng, dv), randVec(rng, dk)
				w, c := make([]float32, S), make([]float32, dv)
				n0 := m.Len()
				forEachISA(t, func(t *testing.T) {
					m.Truncate(n0)
					m.Append(k, v)
					m.Attend(w[:n0+1], c, h) // warm the scratch space and the pool
					n := allocs.Count(allocRuns(50), func() {
						m.Truncate(n0)
						m.Append(k, v)
						m.Attend(w[:n0+1], c, h)
					})
					if n != 0 {
						t.Fatalf("Append + Attend: %d allocations in the measured calls (plan %+v)", n, m.plan(callAttend, 1))
					}
				})
			})
		}
	}
}

// FuzzFormat checks a step of a stored Memory (random format, dot-product
// scorer, shape, mask, ISA and route, built by conversion or Append across
// its capacity) against the oracle, on the stored values and on the given
// ones with the storage bound (go test -run '^$' -fuzz '^FuzzFormat$'
// ./attention).
func FuzzFormat(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), uint8(1), uint8(0), false)
	f.Add(uint64(2), uint8(130), uint8(33), uint8(1), uint8(2), uint8(1), uint8(2), uint8(1), true)
	f.Add(uint64(3), uint8(40), uint8(64), uint8(2), uint8(3), uint8(2), uint8(3), uint8(2), true)
	f.Fuzz(func(t *testing.T, seed uint64, s, d, k, mode, isa, format, route uint8, byAppend bool) {
		useISA(t, isa)
		S, dk := 1+int(s)%160, 1+int(d)%72
		switch route % 3 {
		case 1:
			forceSplit(t, 3)
			setTuning(t, func(t *tuning) { t.contextBlock = 64 })
		case 2:
			setTuning(t, func(t *tuning) { t.contextBlock = 100 })
		}
		rng := rand.New(rand.NewPCG(seed, 97))
		testFormatStep(t, rng, allFormats[int(format)%len(allFormats)], storedKinds[int(k)%len(storedKinds)], S, dk, rng.IntN(2) == 0, byAppend, int(mode)%5)
	})
}

// TestFormatReset checks that Reset on a stored Memory stores the new
// matrices in its format (growing the capacity when they are longer), as
// NewMemoryFormat would, and clears the mask and valid length.
func TestFormatReset(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, f := range allFormats {
		for _, sep := range []bool{false, true} {
			k1, v1 := randMat(rng, 20, 33, 1), randMat(rng, 20, 9, 0)
			k2, v2 := randMat(rng, 70, 33, 2), randMat(rng, 70, 9, 1)
			if !sep {
				v1, v2 = k1, k2
			}
			m := NewMemoryFormat(Dot(), f, k1, v1)
			m.SetMask(make([]bool, 20))
			m.Reset(k2, v2)
			want := NewMemoryFormat(Dot(), f, k2, v2)
			if m.Len() != 70 || m.Cap() < 70 || m.valid != 70 || m.mask != nil {
				t.Fatalf("%s: after Reset: Len %d Cap %d valid %d mask %v", f, m.Len(), m.Cap(), m.valid, m.mask != nil)
			}
			h := randVec(rng, 33)
			dv := m.ValueDim()
			w, c, w2, c2 := make([]float32, 70), make([]float32, dv), make([]float32, 70), make([]float32, dv)
			m.Attend(w, c, h)
			want.Attend(w2, c2, h)
			for i := range w {
				if math.Float32bits(w[i]) != math.Float32bits(w2[i]) {
					t.Fatalf("%s sep=%v: weights[%d] %v after Reset, %v by NewMemoryFormat", f, sep, i, w[i], w2[i])
				}
			}
			for j := range c {
				if math.Float32bits(c[j]) != math.Float32bits(c2[j]) {
					t.Fatalf("%s sep=%v: context[%d] %v after Reset, %v by NewMemoryFormat", f, sep, j, c[j], c2[j])
				}
			}
			other := k2 // the values are the keys
			if !sep {
				other = randMat(rng, 70, 9, 0)
			}
			if msg := panicMessage(func() { m.Reset(k2, other) }); !strings.Contains(msg, "Reset: a stored Memory keeps its values and keys shared or apart as built") {
				t.Fatalf("%s sep=%v: Reset with the other sharing: panic %q", f, sep, msg)
			}
		}
	}
}

// testFormatMany checks one AttendMany of B queries on a stored Memory
// against the oracle, each row on the stored values within the float32 bound
// and on the given values with the storage bound added, then a second call
// after one more Append (the widening scratch reused, the new key attended).
func testFormatMany(t *testing.T, rng *rand.Rand, f Format, k kind, S, dk, B int, sep, byAppend bool, mode int) {
	t.Helper()
	sc, o, qd := newScorer(rng, k, 1+rng.IntN(20), dk, 0)
	keys := randMat(rng, S+1, dk, rng.IntN(3))
	vals := keys
	if sep || byAppend {
		vals = randMat(rng, S+1, 1+rng.IntN(40), rng.IntN(3))
		sep = true
	}
	m := storedMemory(sc, f, rows(keys, 0, S), rows(vals, 0, S), sep, byAppend)
	for call := range 2 {
		if call == 1 {
			if !byAppend {
				return
			}
			m.SetMask(nil)
			m.SetValid(m.Len())
			m.Append(row(keys, S), row(vals, S))
		}
		n := m.Len()
		kn, vn := rows(keys, 0, n), rows(vals, 0, n)
		att := setMask(rng, m, mode)
		q := randMat(rng, B, qd, rng.IntN(2))
		w, c := randMat(rng, B, n, 0), randMat(rng, B, vals.Cols, 0)
		m.AttendMany(w, c, q)
		what := fmt.Sprintf("%s %s S=%d d=%d B=%d sep=%v append=%v mode %d call %d plan %+v", f, sc, n, dk, B, sep, byAppend, mode, call, m.plan(callMany, B))
		for i := range B {
			o.rounds, o.store, o.qquery = 0, Float32, f == Q8Q8
			o.checkStep(t, fmt.Sprintf("%s query %d (stored values)", what, i), row(w, i), row(c, i), row(q, i), widen(f, kn), widen(f, vn), att)
			o.rounds, o.store = formatRounds(f), f
			o.checkStep(t, fmt.Sprintf("%s query %d (float32 values + storage)", what, i), row(w, i), row(c, i), row(q, i), kn, vn, att)
		}
	}
}

// TestFormatAttendMany checks AttendMany of several queries on every format
// and dot-product scorer, with masks and valid lengths, built by conversion
// or by Append, with blocks of one row, a few rows or the default, the
// contexts by MatTVec per query or by one Gemm per block, under every ISA.
func TestFormatAttendMany(t *testing.T) {
	for _, route := range []string{"default", "rows", "gemm"} {
		t.Run(route, func(t *testing.T) {
			switch route {
			case "rows":
				setTuning(t, func(t *tuning) { t.contextBlock = 300 })
			case "gemm":
				setTuning(t, func(t *tuning) { t.manyGemmMin, t.contextBlock = 2, 1 })
			}
			if route != "default" { // the widened route at every B
				setTuning(t, func(t *tuning) { t.manyWidenMin, t.manyWidenQ8Min = 2, 2 })
			}
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(21, 22))
				sizes, dims, bs := []int{1, 17, 300}, []int{1, 40, 128}, []int{2, 3, 7}
				if route != "default" {
					sizes, dims = []int{17, 300}, []int{33, 128}
				}
				if testing.Short() { // under emulation
					sizes, dims, bs = []int{17, 300}, []int{40}, []int{3}
				}
				for _, f := range allFormats {
					for _, k := range storedKinds {
						for _, S := range sizes {
							for _, dk := range dims {
								for mode := range 5 {
									if !sparseKeeps(int(f)+int(k)+S, mode, 3) {
										continue
									}
									B := bs[(S+dk+mode)%len(bs)]
									testFormatMany(t, rng, f, k, S, dk, B, rng.IntN(2) == 0, (S+dk+mode)%2 == 0, mode)
								}
							}
						}
					}
				}
			})
		})
	}
}

// TestFormatAttendManyNoAllocs checks that Append and an AttendMany of
// several queries that follows allocate nothing once the capacity is reserved
// and the scratch is warm, for every format and route (a step per query;
// widened blocks, the contexts by MatTVec or Gemm) under every ISA.
func TestFormatAttendManyNoAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(15, 16))
	for _, f := range allFormats {
		for _, B := range []int{2, 8, 64} {
			t.Run(fmt.Sprintf("%s/B=%d", f, B), func(t *testing.T) {
				S, dk, dv := 1024, 64, 64
				m := NewEmptyMemory(ScaledDot(), f, dk, dv, S)
				for range S - 10 {
					m.Append(randVec(rng, dk), randVec(rng, dv))
				}
				k, v := randVec(rng, dk), randVec(rng, dv)
				q, w, c := randMat(rng, B, dk, 0), randMat(rng, B, S, 0), randMat(rng, B, dv, 0)
				n0 := m.Len()
				w1 := cols(w, 0, n0+1)
				forEachISA(t, func(t *testing.T) {
					m.Truncate(n0)
					m.Append(k, v)
					m.AttendMany(w1, c, q) // warm the scratch and Gemm's buffers
					n := allocs.Count(allocRuns(20), func() {
						m.Truncate(n0)
						m.Append(k, v)
						m.AttendMany(w1, c, q)
					})
					if n != 0 {
						t.Fatalf("Append + AttendMany: %d allocations in the measured calls (plan %+v)", n, m.plan(callMany, B))
					}
				})
			})
		}
	}
}

// FuzzFormatMany checks AttendMany on a stored Memory (random format,
// dot-product scorer, shape, batch, mask, ISA and block size, built by
// conversion or Append) against the oracle (go test -run '^$' -fuzz
// '^FuzzFormatMany$' ./attention).
func FuzzFormatMany(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), uint8(1), uint8(2), uint8(0), false)
	f.Add(uint64(2), uint8(130), uint8(33), uint8(1), uint8(2), uint8(1), uint8(3), uint8(7), uint8(1), true)
	f.Fuzz(func(t *testing.T, seed uint64, s, d, k, mode, isa, format, b, route uint8, byAppend bool) {
		useISA(t, isa)
		switch route % 3 {
		case 1:
			setTuning(t, func(t *tuning) { t.contextBlock, t.manyWidenMin, t.manyWidenQ8Min = 100, 2, 2 })
		case 2:
			setTuning(t, func(t *tuning) { t.manyGemmMin, t.contextBlock, t.manyWidenMin, t.manyWidenQ8Min = 2, 200, 2, 2 })
		}
		S, dk, B := 1+int(s)%160, 1+int(d)%72, 2+int(b)%8
		rng := rand.New(rand.NewPCG(seed, 98))
		testFormatMany(t, rng, allFormats[int(format)%len(allFormats)], storedKinds[int(k)%len(storedKinds)], S, dk, B, rng.IntN(2) == 0, byAppend, int(mode)%5)
	})
}
