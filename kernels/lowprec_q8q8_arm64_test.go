//go:build !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The Q8Q8 scores by SDOT: detection, and the kernel bit for bit against
// matVecQ8Q8Go. TestMatVecQ8Q8, TestMatVecQ8Q8Special, TestDecodeQ8Q8Guard,
// TestDecodeStepQ8Q8Special and TestDecodeQ8Q8NoAllocs run it too, as their
// "intdot" mode, where the CPU has SDOT.

// TestSDOTDetect checks cpuid's ASIMDDP against golang.org/x/sys/cpu's
// reading of the hwcaps, and that Q8Q8Native is true exactly under NEON with
// SDOT on.
func TestSDOTDetect(t *testing.T) {
	t.Logf("SDOT: cpuid %v, x/sys/cpu %v; useIntDot %v", hasIntDot, cpu.ARM64.HasASIMDDP, useIntDot)
	if hasIntDot != cpu.ARM64.HasASIMDDP {
		t.Errorf("cpuid reports SDOT %v, x/sys/cpu %v", hasIntDot, cpu.ARM64.HasASIMDDP)
	}
	if useIntDot && !hasIntDot {
		t.Errorf("useIntDot is set on a CPU without SDOT")
	}
	forEachIntDot(func(mode string) {
		eachISA(func(isa string) {
			want := mode == "intdot" && Active() == NEON
			if got := Q8Q8Native(); got != want {
				t.Errorf("%s under %s: Q8Q8Native() = %v, want %v", mode, isa, got, want)
			}
		})
	})
}

// q8At returns n blocks flush against g's upper guard page if atEnd, else
// against its lower one.
func q8At(g *guard, n int, atEnd bool) []Q8Block {
	p := unsafe.Pointer(&g.mem[g.page])
	if atEnd {
		p = unsafe.Pointer(&g.mem[g.page+g.size-36*n])
	}
	return unsafe.Slice((*Q8Block)(p), n)
}

// sdotScale returns a block scale of the given kind: 0 moderate, either
// sign; 1 from subnormal to beyond float32's range once multiplied (products
// that underflow or overflow), zeros of both signs, ±Inf and NaNs with
// random payloads, quiet and signalling.
func sdotScale(rng *rand.Rand, kind int) float32 {
	if kind == 0 {
		return float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(41)-20))
	}
	switch rng.IntN(16) {
	case 0:
		return float32(math.Copysign(0, float64(rng.IntN(2)*2-1)))
	case 1:
		return float32(math.Inf(rng.IntN(2)*2 - 1))
	case 2:
		return math.Float32frombits(0x7fc00000 | rng.Uint32()&0x803fffff) // quiet NaN
	case 3:
		return math.Float32frombits(0x7f800001 | rng.Uint32()&0x801fffff) // signalling NaN
	}
	return float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(290)-160))
}

// TestMatVecQ8Q8SDOTBits checks the SDOT kernel bit for bit against
// matVecQ8Q8Go: every row count through 17 and some above (groups of eight,
// four and one), 1 to 8 blocks, row strides with padding, values over the
// whole int8 range (−128 included) or all at the extremes, scales of every
// kind (sdotScale); dst in a slab of canaries, and the matrix, the query
// and dst flush against PROT_NONE pages (the last row's padding not
// mapped).
func TestMatVecQ8Q8SDOTBits(t *testing.T) {
	if !hasIntDot {
		t.Skip("no SDOT on this CPU: Q8Q8 runs matVecQ8Q8Go (TestSDOTDetect checks the choice)")
	}
	defer Use(Active())
	if err := Use(NEON); err != nil {
		t.Fatal(err)
	}
	defer func(v bool) { useIntDot = v }(useIntDot)
	useIntDot = true
	rng := rand.New(rand.NewPCG(51, 52))
	const maxRows, maxBlocks, maxPad = 33, 8, 3
	gk, gx, gd := newGuard(t, 9*maxRows*(maxBlocks+maxPad)), newGuard(t, 9*maxBlocks), newGuard(t, maxRows)
	for _, rows := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 20, 24, 33} {
		for _, nb := range []int{1, 2, 3, 4, 5, 8} {
			for _, pad := range []int{0, 1, 3} {
				for kind := 0; kind < 3; kind++ {
					lda := nb + pad
					a, x := make([]Q8Block, rows*lda), make([]Q8Block, nb)
					fillQ8 := func(bs []Q8Block) {
						for i := range bs {
							bs[i].Scale = sdotScale(rng, kind&1)
							for j := range bs[i].Q {
								if kind == 2 {
									bs[i].Q[j] = int8(-128 + 255*rng.IntN(2))
								} else {
									bs[i].Q[j] = int8(rng.IntN(256) - 128)
								}
							}
						}
					}
					fillQ8(a)
					fillQ8(x)
					want := make([]float32, rows)
					matVecQ8Q8Go(want, a, lda, x)
					got, gotOK := slab(t, rows, rng.IntN(8))
					matVecQ8Q8(got, a, lda, x)
					gotOK()
					for r := range want {
						if math.Float32bits(got[r]) != math.Float32bits(want[r]) {
							t.Fatalf("%d×%d blocks (stride %d, kind %d) row %d: %v (%#08x), Go gives %v (%#08x)",
								rows, nb, lda, kind, r, got[r], math.Float32bits(got[r]), want[r], math.Float32bits(want[r]))
						}
					}
					if rows == 0 {
						continue
					}
					for _, atEnd := range []bool{false, true} {
						ga := q8At(gk, (rows-1)*lda+nb, atEnd)
						copy(ga, a)
						gq := q8At(gx, nb, atEnd)
						copy(gq, x)
						gdst := gd.at(rows, atEnd)
						matVecQ8Q8(gdst, ga, lda, gq)
						for r := range want {
							if math.Float32bits(gdst[r]) != math.Float32bits(want[r]) {
								t.Fatalf("guarded (at end %v) %d×%d blocks (stride %d, kind %d) row %d: %v, Go gives %v",
									atEnd, rows, nb, lda, kind, r, gdst[r], want[r])
							}
						}
					}
				}
			}
		}
	}
}

// TestDecodeStepQ8Q8SDOTBits checks that DotSoftmaxMatTVecQ8Q8 under NEON
// gives the same bits (scores, context, state) with the SDOT scores as with
// the Go ones: the rest of the step is the same code.
func TestDecodeStepQ8Q8SDOTBits(t *testing.T) {
	if !hasIntDot {
		t.Skip("no SDOT on this CPU")
	}
	defer Use(Active())
	if err := Use(NEON); err != nil {
		t.Fatal(err)
	}
	defer func(v bool) { useIntDot = v }(useIntDot)
	rng := rand.New(rand.NewPCG(53, 54))
	for _, rows := range []int{1, 7, 8, 9, 100, 300} {
		for _, cols := range []int{1, 31, 32, 33, 64, 100, 128} {
			k, v := NewStored(FormatQ8, randMatrix(rng, rows, cols)), NewStored(FormatQ8, randMatrix(rng, rows, cols))
			h := make([]float32, cols)
			fill(rng, h)
			hq := make([]Q8Block, Q8Blocks(cols))
			ToQ8(hq, h)
			var scores, ctx [2][]float32
			var st [2]SoftmaxState
			var ok [2]bool
			for i, on := range []bool{false, true} {
				useIntDot = on
				scores[i], ctx[i] = make([]float32, rows), make([]float32, cols)
				st[i] = SoftmaxState{Max: float32(math.Inf(-1))}
				ok[i] = DotSoftmaxMatTVecQ8Q8(ctx[i], scores[i], k, v, hq, &st[i])
			}
			same := func(x, y []float32) bool {
				for i := range x {
					if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
						return false
					}
				}
				return true
			}
			if ok[0] != ok[1] || !same([]float32{st[0].Max, st[0].Sum}, []float32{st[1].Max, st[1].Sum}) || !same(scores[0], scores[1]) || !same(ctx[0], ctx[1]) {
				t.Fatalf("%d×%d: SDOT gives ok %v, %+v, Go ok %v, %+v, or their scores or contexts differ",
					rows, cols, ok[1], st[1], ok[0], st[0])
			}
		}
	}
}
