package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/heedml/heed/internal/fallback"

	"github.com/heedml/heed/internal/allocs"
)

// intDotDefault is useIntDot as the package set it: whether this CPU runs the
// VPDPBUSD kernels.
var intDotDefault = useIntDot

// forEachIntDot calls f with the Go Q8Q8 kernels ("go") and, where the CPU has
// them, the VPDPBUSD ones ("intdot"; they run only under the AVX-512 ISA).
func forEachIntDot(f func(mode string)) {
	defer func(v bool) { useIntDot = v }(useIntDot)
	useIntDot = false
	f("go")
	if intDotDefault {
		useIntDot = true
		f("intdot")
	}
}

// TestMatVecQ8Q8 checks MatVecQ8Q8 against float64 on the stored key and
// query blocks (γₙ₊₂), against the float32 query (plus Σ|k̂|·Scale_h/2) and
// against the float32 matrix and query (plus Σ Scale_k/2·|h|), on every ISA,
// with and without VPDPBUSD; and that the query term is needed: some score's
// error against the float32 query exceeds the bound without it.
func TestMatVecQ8Q8(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		forEachIntDot(func(mode string) {
			rng := rand.New(rand.NewPCG(31, 32))
			needed := false
			for _, rows := range decodeRowCounts {
				for _, cols := range decodeCols {
					a := randMatrix(rng, rows, cols)
					nb := Q8Blocks(cols)
					pad := rng.IntN(3)
					q := StoredOf(rows, cols, nb+pad, make([]Q8Block, rows*(nb+pad)))
					for r := 0; r < rows && cols > 0; r++ {
						ToQ8(q.q8[r*(nb+pad):r*(nb+pad)+nb], a.Row(r))
					}
					h := make([]float32, cols)
					fill(rng, h)
					hq := make([]Q8Block, nb)
					ToQ8(hq, h)
					dst, dstOK := slab(t, rows, rng.IntN(8))
					MatVecQ8Q8(dst, q, hq)
					dstOK()
					for r := range dst {
						exact, abs, exactH, orig, query, store, sub := 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
						for c := range h {
							kb, xb := q.q8[r*q.lda+c/32], hq[c/32]
							kv := float64(kb.Scale) * float64(kb.Q[c%32])
							hv := float64(xb.Scale) * float64(xb.Q[c%32])
							exact += kv * hv
							abs += math.Abs(kv * hv)
							exactH += kv * float64(h[c])
							orig += float64(a.Data[r*cols+c]) * float64(h[c])
							query += math.Abs(kv) * float64(xb.Scale) / 2
							store += float64(kb.Scale) / 2 * math.Abs(float64(h[c]))
							if kb.Scale*xb.Scale < 0x1p-126 {
								sub += eta * math.Abs(float64(kb.Q[c%32])*float64(xb.Q[c%32]))
							}
						}
						what := fmt.Sprintf("%s %d×%d row %d", mode, rows, cols, r)
						bound := gamma(cols+2)*abs + sub + float64(cols)*eta
						got := float64(dst[r])
						if err := math.Abs(got - exact); !(err <= bound) {
							t.Fatalf("%s: %v, stored key and query give %v ± %.3g (error %.3g)", what, got, exact, bound, err)
						}
						if err := math.Abs(got - exactH); !(err <= bound+query) {
							t.Fatalf("%s: %v, float32 query gives %v ± %.3g (error %.3g)", what, got, exactH, bound+query, err)
						} else if err > bound {
							needed = true
						}
						if err := math.Abs(got - orig); !(err <= bound+query+store) {
							t.Fatalf("%s: %v, float32 matrix and query give %v ± %.3g (error %.3g)", what, got, orig, bound+query+store, err)
						}
					}
				}
			}
			if !needed {
				t.Fatalf("%s: no score's error against the float32 query exceeds the bound without the query's rounding", mode)
			}
		})
	})
}

// TestMatVecQ8Q8Special: a NaN scale in the key or the query block (what ToQ8
// stores for NaN or ±Inf) makes the row NaN.
func TestMatVecQ8Q8Special(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	forEachISA(t, func(t *testing.T) {
		forEachIntDot(func(mode string) {
			for _, sp := range specials[:3] {
				for _, cols := range []int{1, 32, 33, 100} {
					a := randMatrix(rng, 9, cols)
					h := make([]float32, cols)
					fill(rng, h)
					q := NewStored(FormatQ8, a)
					hq := make([]Q8Block, Q8Blocks(cols))
					dst := make([]float32, 9)
					// A special in the query: every row NaN.
					h[cols-1] = sp
					ToQ8(hq, h)
					MatVecQ8Q8(dst, q, hq)
					for r, v := range dst {
						if v == v {
							t.Fatalf("%s %v in h, %d cols: row %d = %v, want NaN", mode, sp, cols, r, v)
						}
					}
					// A special in row 5 of the keys: that row NaN.
					h[cols-1] = 0.5
					ToQ8(hq, h)
					a.Data[5*cols] = sp
					q = NewStored(FormatQ8, a)
					MatVecQ8Q8(dst, q, hq)
					for r, v := range dst {
						if (v != v) != (r == 5) {
							t.Fatalf("%s %v in key row 5, %d cols: row %d = %v", mode, sp, cols, r, v)
						}
					}
				}
			}
		})
	})
}

// TestDecodeQ8Q8Guard places the key blocks, the query blocks, the scores and
// the context flush against a PROT_NONE page, below and above, for
// MatVecQ8Q8 and DotSoftmaxMatTVecQ8Q8 on every ISA, with and without
// VPDPBUSD, both step variants.
func TestDecodeQ8Q8Guard(t *testing.T) {
	const maxCols, maxRows = 100, 17
	gs := make([]*guard, 5)
	for i := range gs {
		gs[i] = newGuard(t, 36*maxRows*Q8Blocks(maxCols))
	}
	blocksAt := func(g *guard, n int, atEnd bool) []Q8Block {
		p := unsafe.Pointer(&g.mem[g.page])
		if atEnd {
			p = unsafe.Pointer(&g.mem[g.page+g.size-36*n])
		}
		return unsafe.Slice((*Q8Block)(p), n)
	}
	ninf := float32(math.Inf(-1))
	forEachStepKernel(t, func(t *testing.T) {
		forEachISA(t, func(t *testing.T) {
			forEachIntDot(func(mode string) {
				for _, rows := range []int{1, 4, 7, 8, 9, 16, 17} {
					for _, kc := range []int{1, 31, 32, 33, 64, 100} {
						for _, vc := range []int{8, 32, 40, 64} {
							for _, atEnd := range []bool{false, true} {
								kb, vb := Q8Blocks(kc), Q8Blocks(vc)
								k := blocksAt(gs[0], rows*kb, atEnd)
								v := blocksAt(gs[1], rows*vb, atEnd)
								hq := blocksAt(gs[2], kb, atEnd)
								for i := range k {
									k[i] = Q8Block{Scale: 0.5, Q: [32]int8{1, -2, 3, -127, 127}}
								}
								for i := range v {
									v[i] = Q8Block{Scale: 0.25, Q: [32]int8{3, 2, 1}}
								}
								want := float32(0)
								for i := range hq {
									hq[i] = Q8Block{Scale: 0.125, Q: [32]int8{-1, 2, 127, -127}}
									for j := kc - 32*i; j >= 0 && j < 32; j++ {
										hq[i].Q[j] = 0 // past the columns, as ToQ8 leaves them
									}
									p := 0
									for j, x := range hq[i].Q {
										p += int(x) * int(k[0].Q[j])
									}
									want += 0.0625 * float32(p)
								}
								scores := gs[3].at(rows, atEnd)
								ctx := gs[4].at(vc, atEnd)
								km, vm := StoredOf(rows, kc, kb, k), StoredOf(rows, vc, vb, v)
								MatVecQ8Q8(scores, km, hq)
								for r, s := range scores {
									if s != want {
										t.Fatalf("%s %d×%d: score %d = %v, want %v", mode, rows, kc, r, s, want)
									}
								}
								clear(ctx)
								st := SoftmaxState{Max: ninf}
								if ok := DotSoftmaxMatTVecQ8Q8(ctx, scores, km, vm, hq, &st); !ok || !isFinite(st.Sum) || st.Sum < 1 {
									t.Fatalf("%s %d rows, %d/%d cols: ok %v, state %+v", mode, rows, kc, vc, ok, st)
								}
							}
						}
					}
				}
			})
		})
	})
}

// TestDecodeStepQ8Q8Special: a NaN or ±Inf in the query (a NaN query block)
// gives false.
func TestDecodeStepQ8Q8Special(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	forEachISA(t, func(t *testing.T) {
		forEachIntDot(func(mode string) {
			for _, sp := range specials[:3] {
				a := randMatrix(rng, 40, 64)
				h := make([]float32, 64)
				fill(rng, h)
				h[40] = sp
				hq := make([]Q8Block, 2)
				ToQ8(hq, h)
				q := NewStored(FormatQ8, a)
				scores, ctx := make([]float32, 40), make([]float32, 64)
				st := SoftmaxState{Max: float32(math.Inf(-1))}
				if DotSoftmaxMatTVecQ8Q8(ctx, scores, q, q, hq, &st) {
					t.Fatalf("%s h[40] = %v: true", mode, sp)
				}
			}
		})
	})
}

func TestDecodeQ8Q8Panics(t *testing.T) {
	q := NewStored(FormatQ8, Matrix{Rows: 2, Cols: 40, Stride: 40, Data: make([]float32, 80)})
	for name, f := range map[string]func(){
		"MatVecQ8Q8 dst": func() { MatVecQ8Q8(make([]float32, 3), q, make([]Q8Block, 2)) },
		"MatVecQ8Q8 x":   func() { MatVecQ8Q8(make([]float32, 2), q, make([]Q8Block, 1)) },
		"Step h": func() {
			DotSoftmaxMatTVecQ8Q8(make([]float32, 40), make([]float32, 2), q, q, make([]Q8Block, 3), &SoftmaxState{})
		},
		"Step ctx": func() {
			DotSoftmaxMatTVecQ8Q8(make([]float32, 39), make([]float32, 2), q, q, make([]Q8Block, 2), &SoftmaxState{})
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestDecodeQ8Q8NoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	q := NewStored(FormatQ8, randMatrix(rng, 300, 128))
	h := make([]float32, 128)
	fill(rng, h)
	hq := make([]Q8Block, 4)
	ToQ8(hq, h)
	scores, ctx := make([]float32, 300), make([]float32, 128)
	forEachISA(t, func(t *testing.T) {
		forEachIntDot(func(mode string) {
			for name, f := range map[string]func(){
				"MatVecQ8Q8": func() { MatVecQ8Q8(scores, q, hq) },
				"Step": func() {
					st := SoftmaxState{Max: float32(math.Inf(-1))}
					DotSoftmaxMatTVecQ8Q8(ctx, scores, q, q, hq, &st)
				},
			} {
				if n := allocs.Count(20, f); n != 0 {
					t.Errorf("%s %s: %d allocations", mode, name, n)
				}
			}
		})
	})
}

// TestFromQ8 checks FromQ8 bit for bit against the fallback on every ISA,
// for every length through four blocks and some longer, with scales from
// subnormal to huge, NaN scales and every int8 value; dst in a slab of
// canaries, and the blocks and dst flush against a PROT_NONE page.
func TestFromQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	const maxN = 4*32 + 1
	gb, gd := newGuard(t, 36*Q8Blocks(1000)), newGuard(t, 4*1000)
	forEachISA(t, func(t *testing.T) {
		for _, n := range append(lengths(maxN)[:maxN+1], 1000) {
			nb := Q8Blocks(n)
			src := make([]Q8Block, nb)
			for b := range src {
				src[b].Scale = float32(math.Ldexp(rng.Float64(), rng.IntN(300)-170))
				if rng.IntN(9) == 0 {
					src[b].Scale = float32(math.NaN())
				}
				for i := range src[b].Q {
					src[b].Q[i] = int8(rng.IntN(256) - 128)
				}
			}
			want := make([]float32, n)
			fallback.DequantizeQ8(want, fq8(src))
			dst, dstOK := slab(t, n, rng.IntN(8))
			FromQ8(dst, src)
			dstOK()
			for _, atEnd := range []bool{false, true} {
				gsrc := unsafe.Slice((*Q8Block)(unsafe.Pointer(&gb.mem[gb.page])), nb)
				if atEnd {
					gsrc = unsafe.Slice((*Q8Block)(unsafe.Pointer(&gb.mem[gb.page+gb.size-36*nb])), nb)
				}
				copy(gsrc, src)
				gdst := gd.at(n, atEnd)
				FromQ8(gdst, gsrc)
				for i := range want {
					if math.Float32bits(dst[i]) != math.Float32bits(want[i]) || math.Float32bits(gdst[i]) != math.Float32bits(want[i]) {
						t.Fatalf("n=%d [%d]: %v (guarded %v), want %v", n, i, dst[i], gdst[i], want[i])
					}
				}
			}
		}
	})
}

// TestToQ8 checks ToQ8 bit for bit against the fallback on every ISA: every
// length through four blocks and some longer, magnitudes from subnormal to
// the largest float32, exact ties, zeros of both signs, NaN and ±Inf in some
// blocks, all-zero blocks; the blocks and src flush against a PROT_NONE page.
func TestToQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const maxN = 4*32 + 1
	gb, gs := newGuard(t, 36*Q8Blocks(1000)), newGuard(t, 1000)
	forEachISA(t, func(t *testing.T) {
		for trial := 0; trial < 6; trial++ {
			for _, n := range append(lengths(maxN)[:maxN+1], 1000) {
				x := make([]float32, n)
				for b := 0; b < n; b += 32 {
					e := rng.IntN(300) - 170
					kind := rng.IntN(8)
					for i := b; i < min(n, b+32); i++ {
						if kind == 1 && i > b {
							break // set with the tie at b
						}
						x[i] = float32(math.Ldexp(rng.Float64()*2-1, e))
						switch {
						case kind == 0:
							x[i] = 0
						case kind == 1 && i == b: // exact ties against the scale
							s := float32(math.Ldexp(1, rng.IntN(40)-20))
							x[i] = 127 * s
							for j := i + 1; j < min(n, b+32); j++ {
								x[j] = (float32(rng.IntN(254)-127) + 0.5) * s
							}
						case kind == 2 && rng.IntN(8) == 0:
							x[i] = specials[rng.IntN(3)]
						case kind == 3:
							x[i] = specials[3+rng.IntN(len(specials)-3)]
						}
					}
				}
				nb := Q8Blocks(n)
				want := make([]Q8Block, nb)
				fallback.QuantizeQ8(fq8(want), x)
				got := make([]Q8Block, nb)
				ToQ8(got, x)
				for _, atEnd := range []bool{false, true} {
					gq := unsafe.Slice((*Q8Block)(unsafe.Pointer(&gb.mem[gb.page])), nb)
					if atEnd {
						gq = unsafe.Slice((*Q8Block)(unsafe.Pointer(&gb.mem[gb.page+gb.size-36*nb])), nb)
					}
					gx := gs.at(n, atEnd)
					copy(gx, x)
					ToQ8(gq, gx)
					for b := range want {
						w := want[b]
						for _, g := range []Q8Block{got[b], gq[b]} {
							if math.Float32bits(g.Scale) != math.Float32bits(w.Scale) || g.Q != w.Q {
								t.Fatalf("trial %d n=%d block %d (%v): %v %v, want %v %v", trial, n, b, x[b*32:min(n, b*32+32)], g.Scale, g.Q, w.Scale, w.Q)
							}
						}
					}
				}
			}
		}
	})
}
