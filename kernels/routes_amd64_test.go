//go:build !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/cpuid/v2"
)

// TestRouteClasses checks the rule that files a CPU under a class, and each
// class's AVX-512 width.
func TestRouteClasses(t *testing.T) {
	for _, c := range []struct {
		vendor cpuid.Vendor
		family int
		class  cpuClass
		width  int
	}{
		{cpuid.Intel, 6, classIntel, 512},    // Skylake-SP … Emerald Rapids, Ice Lake, Tiger Lake
		{cpuid.AMD, 0x19, classZen4, 256},    // Zen 4: 512-bit operations in two halves
		{cpuid.AMD, 0x1a, classZen5, 512},    // Zen 5: full-width 512-bit datapath
		{cpuid.AMD, 0x17, classOther, 256},   // Zen 1–2 (no AVX-512)
		{cpuid.Hygon, 0x18, classOther, 256}, // other vendors
		{cpuid.VendorUnknown, 6, classOther, 256},
	} {
		got := classOf(c.vendor, c.family)
		if got != c.class || routes[got].width != c.width {
			t.Errorf("classOf(%v, %#x) = %v with width %d, want %v with %d", c.vendor, c.family, got, routes[got].width, c.class, c.width)
		}
	}
	if rt != routes[class] {
		t.Errorf("rt = %+v, want routes[%v] = %+v", rt, class, routes[class])
	}
	t.Logf("this CPU: %v family %#x model %#x: class %v, route %+v, AVX512Width() = %d",
		cpuid.CPU.VendorID, cpuid.CPU.Family, cpuid.CPU.Model, class, rt, AVX512Width())
}

// tableRoutes returns the entries of the route table that differ beyond the
// width (which eachISA varies), each named by the classes that take it.
func tableRoutes() (names []string, rs []route) {
	for c := range routes {
		r := routes[c]
		r.width = 0
		if i := slices.Index(rs, r); i >= 0 {
			names[i] += "+" + cpuClass(c).String()
			continue
		}
		names, rs = append(names, cpuClass(c).String()), append(rs, r)
	}
	return names, rs
}

// forEachRoute runs f under each route of tableRoutes, rt set to it (the
// width left to eachISA), as a subtest named for its classes.
func forEachRoute[T runner[T]](t T, f func(T)) {
	old := rt
	defer func() { rt = old }()
	names, rs := tableRoutes()
	for i, r := range rs {
		rt = r
		rt.width = old.width
		t.Run(names[i], f)
	}
}

// forEachQ8Form runs f under each form of the Q8 context kernels on AVX-512
// (route.q8Stack false, then true), as subtests.
func forEachQ8Form[T runner[T]](t T, f func(T)) {
	defer func(q bool) { rt.q8Stack = q }(rt.q8Stack)
	for _, q := range []bool{false, true} {
		rt.q8Stack = q
		t.Run(map[bool]string{false: "q8vec", true: "q8stack"}[q], f)
	}
}

// forEachMatVecRoute runs f with MatVec routed by span (the default), then
// under each route of the table with its far kernels taken at every size
// (farBytes and memBytes 0), so that the tests check every kernel the table
// can choose at every shape.
func forEachMatVecRoute(t *testing.T, f func(t *testing.T)) {
	t.Run("by-span", f)
	defer func(b, m int) { farBytes, memBytes = b, m }(farBytes, memBytes)
	farBytes, memBytes = 0, 0
	forEachRoute(t, func(t *testing.T) { t.Run("far", f) })
}

// forEachDotSoftmaxKernel runs fn under DotSoftmaxMatTVec's near kernel,
// then under the far kernel of each route of the table: once under Generic,
// which has one.
func forEachDotSoftmaxKernel[T runner[T]](t T, fn func(T)) {
	defer func(k int) { dotSoftmaxKernel = k }(dotSoftmaxKernel)
	dotSoftmaxKernel = kernelNear
	t.Run("near", fn)
	if Active() == Generic {
		return
	}
	dotSoftmaxKernel = kernelFar
	forEachRoute(t, func(t T) { t.Run("far", fn) })
}

// BenchmarkMatVecFar is MatVec from memory under each route of the table
// (its far kernel taken at every size), beside Sum over one matrix (one
// stream, the same bytes): R×C×M takes M matrices in turn, so that each
// comes from memory (M·R·C·4 bytes beyond the L3 of the machine measured).
func BenchmarkMatVecFar(b *testing.B) {
	defer func(r route, fb int) { rt, farBytes = r, fb }(rt, farBytes)
	names, rs := tableRoutes()
	for _, sh := range [][3]int{{32000, 512, 4}, {4096, 4096, 4}} {
		r, c, m := sh[0], sh[1], sh[2]
		as := make([]Matrix, m)
		for i := range as {
			as[i] = Matrix{Rows: r, Cols: c, Stride: c, Data: ramp(r * c)}
		}
		x, dst := ramp(c), make([]float32, r)
		b.Run(fmt.Sprintf("%dx%dx%d", r, c, m), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				b.Run("sum", func(b *testing.B) {
					b.SetBytes(int64(4 * r * c))
					i := 0
					cl := startCPU(b)
					for b.Loop() {
						sink = Sum(as[i].Data)
						i = (i + 1) % m
					}
					cl.stop()
				})
				for k, route := range rs {
					rt, farBytes = route, 0
					b.Run(names[k], func(b *testing.B) {
						b.SetBytes(int64(4 * r * c))
						i := 0
						cl := startCPU(b)
						for b.Loop() {
							MatVec(dst, as[i], x)
							i = (i + 1) % m
						}
						cl.stop()
					})
				}
			})
		})
	}
}

// BenchmarkStepFar is the decode step from memory (BenchmarkDecode's "mem"
// working set: 32768×128 key and value matrices cycled through 768 MiB) per
// storage format under each kernel the route table can give it beyond L2:
// float32's near kernel and each route's far kernel (forEachDotSoftmaxKernel),
// the reduced-precision steps without and with software prefetch. The active
// ISA at the width HEED_AVX512_WIDTH gives; MB/s counts the bytes of K and V.
func BenchmarkStepFar(b *testing.B) {
	const S, d = 32768, 128
	sets := newDecodeSets(S, d, 768<<20)
	h, ctx, scores := make([]float32, d), make([]float32, d), make([]float32, S)
	for i := range h {
		h[i] = 0.01 * float32(i%7-3)
	}
	for _, s := range sets {
		b.Run(s.format, func(b *testing.B) {
			step := func(b *testing.B) {
				b.SetBytes(int64(2 * s.bytes))
				i := 0
				c := startCPU(b)
				for b.Loop() {
					clear(ctx)
					s.step(i, ctx, scores, h, false)
					i++
				}
				c.stop()
			}
			if s.format == "f32" {
				forEachDotSoftmaxKernel(b, step)
				return
			}
			defer func(k int) { decodeStepKernel = k }(decodeStepKernel)
			for _, k := range []struct {
				name string
				kind int
			}{{"near", stepNear}, {"pf", stepPF}, {"pfL2", stepPFL2}} {
				decodeStepKernel = k.kind
				b.Run(k.name, step)
			}
		})
	}
}

// TestDotSoftmaxFar checks the fused dot step's choice of kernel kind by
// span and stride under each far kind of the table.
func TestDotSoftmaxFar(t *testing.T) {
	defer func(r route, fb, k int) { rt, farBytes, dotSoftmaxKernel = r, fb, k }(rt, farBytes, dotSoftmaxKernel)
	farBytes = 1 << 20
	const near, beyond = 1024, 4096 // rows of 256 floats: 1 MiB, 4 MiB
	for _, c := range []struct {
		far    dotFarKind
		n, lda int
		kernel int
		want   dotFarKind
		why    string
	}{
		{dotFarOne, near, 256, kernelBySpan, dotFarNear, "in L2"},
		{dotFarOne, beyond, 256, kernelBySpan, dotFarOne, "beyond L2"},
		{dotFarOne, 16, 1024, kernelBySpan, dotFarOne, "rows 4 KiB apart"},
		{dotFarSplit, near, 256, kernelBySpan, dotFarNear, "in L2"},
		{dotFarSplit, beyond, 256, kernelBySpan, dotFarSplit, "beyond L2"},
		{dotFarSplit, 16, 2048, kernelBySpan, dotFarSplit, "rows 8 KiB apart"},
		{dotFarNear, beyond, 256, kernelBySpan, dotFarNear, "beyond L2"},
		{dotFarNear, 16, 1024, kernelBySpan, dotFarOne, "rows 4 KiB apart"},
		{dotFarNear, beyond, 1024, kernelBySpan, dotFarOne, "beyond L2, rows 4 KiB apart"},
		{dotFarNear, 16, 256, kernelFar, dotFarOne, "forced far"},
		{dotFarSplit, 16, 256, kernelFar, dotFarSplit, "forced far"},
		{dotFarSplit, beyond, 1024, kernelNear, dotFarNear, "forced near"},
	} {
		rt.dotFar, rt.splitBelow, dotSoftmaxKernel = c.far, 0, c.kernel
		if got := dotSoftmaxFar(c.n, c.lda); got != c.want {
			t.Errorf("route dotFar %d, %d rows at stride %d (%s): kind %d, want %d", c.far, c.n, c.lda, c.why, got, c.want)
		}
	}
	// splitBelow 1 KiB under dotFarOne: rows of 512 bytes split.
	for _, c := range []struct {
		n, lda, kernel int
		want           dotFarKind
		why            string
	}{
		{2 * beyond, 128, kernelBySpan, dotFarSplit, "short rows beyond farBytes"},
		{2 * near, 128, kernelBySpan, dotFarNear, "short rows within farBytes"},
		{beyond, 256, kernelBySpan, dotFarOne, "rows of 1 KiB"},
		{16, 128, kernelFar, dotFarSplit, "forced far, short rows"},
		{16, 1024, kernelFar, dotFarOne, "forced far, rows 4 KiB apart"},
	} {
		rt.dotFar, rt.splitBelow, dotSoftmaxKernel = dotFarOne, 1024, c.kernel
		if got := dotSoftmaxFar(c.n, c.lda); got != c.want {
			t.Errorf("splitBelow 1024, %d rows at stride %d (%s): kind %d, want %d", c.n, c.lda, c.why, got, c.want)
		}
	}
}

// TestDecodeStepPrefetch checks the reduced-precision step's choice of its
// variant by span, format and the route's stepPF and pfL2, and that every
// class's stepPF names formats only.
func TestDecodeStepPrefetch(t *testing.T) {
	defer func(r route, fb, k int) { rt, farBytes, decodeStepKernel = r, fb, k }(rt, farBytes, decodeStepKernel)
	farBytes = 1 << 20
	const near, beyond, row = 1024, 4096, 512 // rows of 512 bytes of keys and values: 512 KiB, 2 MiB
	for _, c := range []struct {
		pf     formatSet
		l2     bool
		f      Format
		n      int
		kernel int
		want   int
	}{
		{allFormats, false, FormatBF16, near, stepBySpan, 0},
		{allFormats, false, FormatBF16, beyond, stepBySpan, 1},
		{allFormats, true, FormatBF16, beyond, stepBySpan, 2},
		{allFormats, true, FormatBF16, near, stepBySpan, 0},
		{allFormats, false, FormatQ8, beyond, stepBySpan, 1},
		{formatsOf(FormatQ8), false, FormatBF16, beyond, stepBySpan, 0},
		{formatsOf(FormatQ8), true, FormatF16, beyond, stepBySpan, 0},
		{formatsOf(FormatQ8), true, FormatQ8, beyond, stepBySpan, 2},
		{formatsOf(FormatQ8), false, FormatQ8, near, stepBySpan, 0},
		{formatsOf(FormatQ8), false, FormatBF16, near, stepPF, 1},
		{formatsOf(FormatQ8), false, FormatBF16, near, stepPFL2, 2},
		{allFormats, true, FormatQ8, beyond, stepNear, 0},
		{allFormats, true, FormatQ8, beyond, stepPF, 1},
	} {
		rt.stepPF, rt.pfL2, decodeStepKernel = c.pf, c.l2, c.kernel
		if got := decodeStepVariant(c.f, c.n, row); got != c.want {
			t.Errorf("stepPF %b, pfL2 %v, %v, %d rows of %d bytes, kernel %d: variant %d, want %d", c.pf, c.l2, c.f, c.n, row, c.kernel, got, c.want)
		}
	}
	for c, r := range routes {
		if r.stepPF&^allFormats != 0 {
			t.Errorf("routes[%v].stepPF = %b: not a set of formats", cpuClass(c), r.stepPF)
		}
	}
}

// TestRouteQ8Stack checks that every class that prefetches its Q8 steps
// takes the form of the Q8 context whose prefetching kernels exist at its
// level (route.q8Stack): into L2 the stack form, into L1 the vector form;
// and that stepKernel takes the stack form's plain kernel for Q8 on
// AVX-512 only, where the route says so.
func TestRouteQ8Stack(t *testing.T) {
	for c, r := range routes {
		if r.stepPF.has(FormatQ8) && r.pfL2 != r.q8Stack {
			t.Errorf("routes[%v]: pfL2 %v with q8Stack %v: no such prefetching Q8 step", cpuClass(c), r.pfL2, r.q8Stack)
		}
	}
	defer func(r route) { rt = r }(rt)
	forEachISA(t, func(t *testing.T) {
		for _, q := range []bool{false, true} {
			rt.q8Stack = q
			for _, f := range []Format{FormatBF16, FormatF16, FormatQ8} {
				for v := range 3 {
					want := v
					if v == 0 && q && f == FormatQ8 && Active() == AVX512 {
						want = stepPlainStack
					}
					if got := stepKernel(f, v); got != want {
						t.Errorf("q8Stack %v, %v, variant %d: kernel %d, want %d", q, f, v, got, want)
					}
					if Active() != Generic && decodeSteps[f][widthIndex(stepFamily(f, v))][stepKernel(f, v)] == nil {
						t.Errorf("q8Stack %v, %v, variant %d: no kernel", q, f, v)
					}
				}
			}
		}
	})
}

// TestMatVecFarRule checks MatVec's choice of the four-stream kernel and of
// its prefetch into L2 by span, row length and the route's streamsBelow and
// pfL2.
func TestMatVecFarRule(t *testing.T) {
	defer func(r route, fb, mb int) { rt, farBytes, memBytes = r, fb, mb }(rt, farBytes, memBytes)
	farBytes, memBytes = 1<<20, 32<<20
	for _, c := range []struct {
		below          int
		l2             bool
		rows, lda, col int
		want, wantL2   bool
	}{
		{anyRow, false, 32000, 512, 512, true, false},
		{anyRow, false, 4096, 4096, 4096, true, false},
		{anyRow, false, 256, 512, 512, false, false},  // 512 KiB: within farBytes
		{anyRow, false, 32000, 512, 7, false, false},  // fewer columns than a vector
		{4096, false, 32000, 512, 512, true, false},   // rows 2 KiB apart
		{4096, false, 4096, 1024, 1000, false, false}, // rows 4 KiB apart
		{4096, false, 4096, 4096, 4096, false, false},
		{0, false, 32000, 512, 512, false, false},
		{4096, true, 8192, 512, 512, true, false},    // 16 MiB: may be in L3
		{4096, true, 4096, 2048, 2048, false, false}, // 32 MiB: not beyond
		{4096, true, 4096, 4096, 4096, true, true},   // 64 MiB, rows 16 KiB apart
		{4096, true, 32000, 512, 512, true, true},
		{0, true, 32000, 512, 512, true, true},
		{4096, true, 32000, 512, 7, false, true}, // fewer columns than a vector
	} {
		rt.pfL2 = c.l2
		if got, gotL2 := matVecFar(c.rows, c.lda, c.col, c.below), matVecL2(c.rows, c.lda); got != c.want || gotL2 != c.wantL2 {
			t.Errorf("streamsBelow %d, pfL2 %v, %d×%d at stride %d: four streams %v, into L2 %v; want %v, %v",
				c.below, c.l2, c.rows, c.col, c.lda, got, gotL2, c.want, c.wantL2)
		}
	}
}

// TestStreamsFor checks the four-stream threshold each class's route gives
// MatVec's AVX-512 and AVX2 kernels.
func TestStreamsFor(t *testing.T) {
	defer func(r route) { rt = r }(rt)
	for _, c := range []struct {
		class        cpuClass
		avx512, avx2 int
	}{
		{classOther, 0, 0},
		{classIntel, anyRow, anyRow},
		{classZen4, 4096, 0},
		{classZen5, anyRow, anyRow},
	} {
		rt = routes[c.class]
		if got, got2 := streamsFor(AVX512), streamsFor(AVX2); got != c.avx512 || got2 != c.avx2 {
			t.Errorf("%v: streamsFor(AVX512), streamsFor(AVX2) = %d, %d; want %d, %d", c.class, got, got2, c.avx512, c.avx2)
		}
	}
}

// TestSkinnyNNBandsRule checks skinnyNN's choice of the bands by batch and,
// under nnBandsBeyondL3, by W's span against memBytes.
func TestSkinnyNNBandsRule(t *testing.T) {
	defer func(r route) { rt = r }(rt)
	l3 := memBytes / 4 // elements
	for _, c := range []struct {
		bands  batchSet
		beyond bool
		batch  int
		span   int
		want   bool
	}{
		{batches(9, 16), false, 9, 1, true},
		{batches(9, 16), false, 8, l3 + 1, false},
		{batches(9, 16), false, 17, l3 + 1, false},
		{batches(9, 16), true, 16, l3, false},
		{batches(9, 16), true, 16, l3 + 1, true},
		{batches(9, 16), true, 8, l3 + 1, false},
		{0, false, 4, l3 + 1, false},
	} {
		rt.nnBands, rt.nnBandsBeyondL3 = c.bands, c.beyond
		if got := skinnyNNBands(c.batch, c.span); got != c.want {
			t.Errorf("nnBands %b, beyondL3 %v: skinnyNNBands(%d, %d) = %v, want %v", c.bands, c.beyond, c.batch, c.span, got, c.want)
		}
	}
}

// TestSkinnyNNBands checks skinnyNN's banded route (route.nnBands) for no
// batch and for every batch up to 32 whatever this CPU's class, through
// Gemm(NoTrans, NoTrans) for m from 1 to 17 (one row with β = 0 by MatTVec on every route) with β = 0 and
// β ≠ 0, against checkGemm's bound; k runs from under one band to many, with
// a last band short of the rest, and n = 16500 takes the bands in blocks of
// columns (skinnyNNBandCols) at m = 16 on an L2 of up to 2 MiB, from m = 8 on
// one of 1 MiB.
func TestSkinnyNNBands(t *testing.T) {
	defer func(r route) { rt = r }(rt)
	rt.nnBandsBeyondL3 = false
	for _, bands := range []batchSet{0, batches(1, 32)} {
		rt.nnBands = bands
		withSkinny(t, func(t *testing.T) {
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(45, uint64(bands)))
				for i, sh := range [][2]int{{7, 9}, {12, 130}, {33, 77}, {517, 11}, {301, 203}, {25, 3001}, {29, 16500}} {
					k, n := sh[0], sh[1]
					for m := 1; m <= 17; m++ {
						for _, beta := range []float32{0, 0.5} {
							checkGemm(t, rng, gemmCase{m: m, n: n, k: k, alpha: []float32{1, -0.5}[(i+m)%2], beta: beta, pad: (i + m) % 3, off: m % 4})
						}
					}
				}
			})
		})
	}
}

// TestStepPasses checks which steps each class's route sends through the
// two passes: its formats beyond stepPassesFrom, keys and values apart.
func TestStepPasses(t *testing.T) {
	defer func(r route) { rt = r }(rt)
	rng := rand.New(rand.NewPCG(23, 24))
	a, b := randMatrix(rng, 64, 32), randMatrix(rng, 64, 32)
	for _, c := range []struct {
		class cpuClass
		want  formatSet
	}{
		{classOther, 0},
		{classIntel, 0},
		{classZen4, formatsOf(FormatBF16, FormatF16)},
		{classZen5, 0},
	} {
		rt = routes[c.class]
		for _, f := range []Format{FormatBF16, FormatF16, FormatQ8} {
			for _, bytes := range []int{stepPassesFrom, stepPassesFrom + 1} {
				want := c.want.has(f) && bytes > stepPassesFrom
				if got := stepPassesFor(f, bytes); got != want {
					t.Errorf("%v: stepPassesFor(%v, %d) = %v, want %v", c.class, f, bytes, got, want)
				}
			}
		}
	}
	defer func(k int) { decodeStepKernel = k }(decodeStepKernel)
	decodeStepKernel = stepPasses
	for _, f := range []Format{FormatBF16, FormatF16, FormatQ8} {
		k, v := NewStored(f, a), NewStored(f, b)
		if !stepTwoPasses(k, v, 64) || stepTwoPasses(k, k, 64) {
			t.Errorf("%v forced: two passes apart %v, shared %v; want true, false", f, stepTwoPasses(k, v, 64), stepTwoPasses(k, k, 64))
		}
	}
}

// TestSkinnyNNBandCols checks the column blocks of skinnyNN's banded route.
func TestSkinnyNNBandCols(t *testing.T) {
	const l2 = 1 << 20
	for _, c := range []struct {
		batch, group, c0, n, want int
	}{
		{4, 8, 0, 32000, 32000},    // bands of 8 rows: all of n
		{8, 8, 0, 16384, 16384},    // D of half of L2: all of n
		{8, 8, 0, 32000, 4080},     // an eighth of L2 in rows of D, whole strips
		{8, 8, 28560, 32000, 3440}, // the last block
		{16, 8, 0, 32000, 2016},
		{16, 8, 0, 2021, 2021}, // D within L2/2
		{16, 8, 0, 10000, 2016},
		{16, 8, 8064, 10000, 1936}, // 1936 = the rest of the row
		{16, 8, 0, 2023 + 8192, 2016},
		{32, 4, 0, 9000, 1008},    // AVX2 groups
		{32, 4, 7998, 9000, 1002}, // 6 left after 996: the rest of the row
		{4, 4, 0, 40000, 8160},    // AVX2: bands of 12 from B = 3
		{2, 4, 0, 40000, 40000},   // AVX2 B = 2: bands of 8
	} {
		if got := skinnyNNBandCols(c.batch, c.group, c.c0, c.n, l2); got != c.want {
			t.Errorf("skinnyNNBandCols(%d, %d, %d, %d, 1 MiB) = %d, want %d", c.batch, c.group, c.c0, c.n, got, c.want)
		}
	}
}

// TestSkinnyNTQuads runs skinnyNT with groups of 8 rows of X (AVX-512) and
// the software prefetch of the next panel at every batch (ntQuads empty)
// into L1 and into L2 (pfL2), and with groups of 4 and no prefetch at Zen 4's
// batches and at every batch, whatever the host's class: MatVecBatch against the float64 oracle, nothing
// outside D written, A and X untouched.
func TestSkinnyNTQuads(t *testing.T) {
	defer func(r route) { rt = r }(rt)
	for i, quads := range []batchSet{0, routes[classZen4].ntQuads, batches(1, skinnyMaxRows), 0} {
		rt.ntQuads, rt.pfL2 = quads, i >= 1
		withSkinny(t, func(t *testing.T) {
			forEachISA(t, func(t *testing.T) {
				checkSkinnyNTShapes(t, rand.New(rand.NewPCG(47, uint64(quads))), []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 32}, nil)
			})
		})
	}
}

// TestSkinnyNTAhead runs skinnyNT with one group of rows of X under every
// prefetch distance of the route table, and under one that makes each panel
// a single step and one longer than A, so that each panel shape the table
// can give is checked.
func TestSkinnyNTAhead(t *testing.T) {
	defer func(r route) { rt = r }(rt)
	aheads := []int{1, 1 << 20}
	for _, r := range routes {
		if !slices.Contains(aheads, r.ntAhead) {
			aheads = append(aheads, r.ntAhead)
		}
	}
	for _, ahead := range aheads {
		rt.ntAhead, rt.ntQuads = ahead, 0
		t.Run(fmt.Sprintf("ahead=%d", ahead), func(t *testing.T) {
			withSkinny(t, func(t *testing.T) {
				forEachISA(t, func(t *testing.T) {
					checkSkinnyNTShapes(t, rand.New(rand.NewPCG(53, uint64(ahead))), []int{1, 2, 3, 4, 5, 7, 8, 9}, nil)
				})
			})
		})
	}
}

// TestRouteNTPairs checks that every route's ntPairs lies within the batches
// skinnyNTPairsAVX512 has code for, and that no route takes it with pfL2:
// the 2-row tiles come in the L1 form only.
func TestRouteNTPairs(t *testing.T) {
	for c, r := range routes {
		if r.ntPairs != 0 && r.pfL2 {
			t.Errorf("%v: ntPairs with pfL2, whose form of skinnyNTPairs is not generated", cpuClass(c))
		}
		for b := range 64 {
			if r.ntPairs.has(b) && (b < skinnyNTPairsLeast || b > skinnyNTPairsGroup) {
				t.Errorf("%v: ntPairs holds %d, outside %d to %d", cpuClass(c), b, skinnyNTPairsLeast, skinnyNTPairsGroup)
			}
		}
	}
}

// TestSkinnyNTPairs runs skinnyNT with and without the 2-row tiles
// (ntPairs) whatever the host's class: MatVecBatch, and Gemm(NoTrans,
// Trans) with α and β, for each batch the tiles take and its neighbours,
// then TestSkinnyGuard's guard pages.
func TestSkinnyNTPairs(t *testing.T) {
	defer func(r route) { rt = r }(rt)
	for _, pairs := range []batchSet{batches(skinnyNTPairsLeast, skinnyNTPairsGroup), 0} {
		rt.ntPairs, rt.ntQuads = pairs, 0
		t.Run(fmt.Sprintf("pairs=%#x", uint64(pairs)), func(t *testing.T) {
			withSkinny(t, func(t *testing.T) {
				forEachISA(t, func(t *testing.T) {
					var batches []int
					for b := skinnyNTPairsLeast - 1; b <= skinnyNTPairsGroup+1; b++ {
						batches = append(batches, b)
					}
					i := 0
					checkSkinnyNTShapes(t, rand.New(rand.NewPCG(59, uint64(pairs))), batches, func(rng *rand.Rand, rows, cols, batch, pad int) {
						i++
						checkGemm(t, rng, gemmCase{tb: true, m: batch, n: rows, k: cols, alpha: []float32{1, 0.75}[i%2], beta: []float32{0, 1, -0.5}[i%3], pad: pad, off: i % 5})
					})
				})
			})
			TestSkinnyGuard(t)
		})
	}
}

// TestRouteNTPanel holds every route's ntPanel and ntPanelLong within the
// skinny batches, apart, and away from ntPairs and ntQuads, which would
// take their batches first; a route with ntPanelLong names its columns.
func TestRouteNTPanel(t *testing.T) {
	for c, r := range routes {
		if r.ntPanelLong != 0 && r.ntPanelLongCols <= 0 {
			t.Errorf("%v: ntPanelLong without ntPanelLongCols", cpuClass(c))
		}
		if r.ntPanel&r.ntPanelLong != 0 {
			t.Errorf("%v: ntPanel and ntPanelLong share batches", cpuClass(c))
		}
		for b := range 64 {
			if !r.ntPanel.has(b) && !r.ntPanelLong.has(b) {
				continue
			}
			if b > skinnyMaxRows {
				t.Errorf("%v: ntPanel or ntPanelLong holds %d, beyond skinnyMaxRows", cpuClass(c), b)
			}
			if r.ntPairs.has(b) || r.ntQuads.has(b) {
				t.Errorf("%v: ntPanel or ntPanelLong holds %d, which ntPairs or ntQuads takes", cpuClass(c), b)
			}
		}
	}
}

// TestSkinnyNTPanelRoute checks which shapes the route sends to the panel
// kernels: ntPanel's batches at any columns, ntPanelLong's from
// ntPanelLongCols.
func TestSkinnyNTPanelRoute(t *testing.T) {
	defer func(r route) { rt = r }(rt)
	rt.ntPanel, rt.ntPanelLong, rt.ntPanelLongCols = batches(12, 16), batches(18, 24), 1024
	for _, c := range []struct {
		cols, batch int
		want        bool
	}{
		{512, 13, true}, {64, 16, true}, {512, 11, false}, {512, 20, false},
		{1023, 18, false}, {1024, 18, true}, {4096, 24, true}, {1024, 17, false},
		{1024, 25, false}, {8192, 32, false},
	} {
		if got := skinnyNTPanelRoute(c.cols, c.batch); got != c.want {
			t.Errorf("cols %d, batch %d: %v, want %v", c.cols, c.batch, got, c.want)
		}
	}
}

// TestSkinnyNTPanel runs skinnyNT through the panel kernels for every batch
// from 1 to skinnyMaxRows, and without them for their neighbours on the
// route, whatever the host's class: MatVecBatch, and Gemm(NoTrans, Trans)
// with α and β, over rows that leave every remainder after the tiles of 16
// and of 12, then TestSkinnyGuard's guard pages and TestSkinnySpecial's NaN
// and Inf.
func TestSkinnyNTPanel(t *testing.T) {
	defer func(r route) { rt = r }(rt)
	for _, panel := range []batchSet{batches(1, skinnyMaxRows), 0} {
		rt.ntPanel, rt.ntPanelLong, rt.ntPairs, rt.ntQuads = panel, 0, 0, 0
		t.Run(fmt.Sprintf("panel=%#x", uint64(panel)), func(t *testing.T) {
			withSkinny(t, func(t *testing.T) {
				forEachISA(t, func(t *testing.T) {
					var batches []int
					for b := 2; b <= skinnyMaxRows; b++ {
						if panel != 0 || b >= 12 && b <= 17 || b >= 31 {
							batches = append(batches, b)
						}
					}
					i := 0
					rng := rand.New(rand.NewPCG(61, uint64(panel)))
					checkSkinnyNTShapes(t, rng, batches, func(rng *rand.Rand, rows, cols, batch, pad int) {
						i++
						checkGemm(t, rng, gemmCase{tb: true, m: batch, n: rows, k: cols, alpha: []float32{1, 0.75}[i%2], beta: []float32{0, 1, -0.5}[i%3], pad: pad, off: i % 5})
					})
					// Rows 4 KiB apart: the one-vector panel's 12-row tiles,
					// with α and β too.
					for _, batch := range []int{3, 13, 16, 29} {
						checkMatVecBatchCase(t, rng, 41, 1021, batch, [3]int{3, 1, 2}, [3]int{1, 2, 3})
						checkGemm(t, rng, gemmCase{tb: true, m: batch, n: 41, k: 1000, alpha: 0.75, beta: -0.5, pad: 24, off: 1})
					}
				})
			})
			TestSkinnyGuard(t)
			TestSkinnySpecial(t)
			if panel != 0 && Active() == AVX512 {
				// A tile count's rows from the pool, nothing allocated.
				const rows, cols = 100, 70
				a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: ramp(rows * cols)}
				for _, batch := range []int{16, 32} {
					x := Matrix{Rows: batch, Cols: cols, Stride: cols, Data: ramp(batch * cols)}
					d := Matrix{Rows: batch, Cols: rows, Stride: rows, Data: make([]float32, batch*rows)}
					withSkinny(t, func(t *testing.T) {
						if n := testing.AllocsPerRun(20, func() { MatVecBatch(d, a, x) }); n != 0 {
							t.Errorf("B=%d: %v allocations per call", batch, n)
						}
					})
				}
			}
		})
	}
}

// TestSkinnyNTPanelTakes checks where the panel kernels may go (a panel of
// at most a quarter of L2, 16 or 32 lanes a column of X) and their tiles'
// rows: 16 for one-vector panels but over rows a multiple of 4 KiB apart,
// 12 for two.
func TestSkinnyNTPanelTakes(t *testing.T) {
	most16, most32 := skinnyL2()/4/64, skinnyL2()/4/128
	for _, c := range []struct {
		cols, batch int
		want        bool
	}{
		{512, 16, true}, {512, 32, true}, {most16, 16, true}, {most16 + 1, 16, false},
		{most32, 32, true}, {most32 + 1, 32, false}, {most32 + 1, 16, true}, {most32, 17, true},
	} {
		if got := skinnyNTPanelTakes(c.cols, c.batch); got != c.want {
			t.Errorf("skinnyNTPanelTakes(%d, %d) = %v, want %v", c.cols, c.batch, got, c.want)
		}
	}
	for _, c := range []struct{ v, lda, want int }{
		{1, 512, 16}, {1, 1000, 16}, {1, 1024, 12}, {1, 1025, 16}, {1, 2048, 12}, {1, 3072, 12},
		{2, 512, 12}, {2, 1024, 12},
	} {
		if got := skinnyNTPanelRows(c.v, c.lda); got != c.want {
			t.Errorf("skinnyNTPanelRows(%d, %d) = %d, want %d", c.v, c.lda, got, c.want)
		}
	}
}

// checkSkinnyNTShapes runs checkMatVecBatchCase (skinnyNT under the skinny
// route) for each batch over shapes whose rows leave every remainder after
// the chunks and whose columns every tail, with padding cycling; also, when
// set, calls each case.
func checkSkinnyNTShapes(t *testing.T, rng *rand.Rand, batches []int, also func(rng *rand.Rand, rows, cols, batch, pad int)) {
	t.Helper()
	for si, sh := range [][2]int{{7, 9}, {67, 129}, {100, 517}, {301, 64}, {302, 33}, {1500, 203}} {
		rows, cols := sh[0], sh[1]
		for _, batch := range batches {
			pad := (si + batch) % 4
			checkMatVecBatchCase(t, rng, rows, cols, batch, [3]int{pad, 3 - pad, pad + 1}, [3]int{rng.IntN(16), rng.IntN(16), rng.IntN(16)})
			if also != nil {
				also(rng, rows, cols, batch, pad)
			}
		}
	}
}

// TestBatchSet checks the route's sets of batch sizes.
func TestBatchSet(t *testing.T) {
	s := batches(1, 4) | batches(9, 16)
	for b := 0; b <= 64; b++ {
		want := (b >= 1 && b <= 4) || (b >= 9 && b <= 16)
		if got := s.has(b); got != want {
			t.Errorf("has(%d) = %v, want %v", b, got, want)
		}
	}
	if batches(1, 63).has(64) || !batches(1, 63).has(63) || batches(1, 63).has(0) {
		t.Error("batches(1, 63) does not hold exactly 1 to 63")
	}
}

// BenchmarkSkinnyNTPairs times MatVecBatch of 9 to 12 rows against a
// 32000×512 A from memory with and without the 2-row tiles (route.ntPairs),
// on AVX-512, the two alternated call by call (benchSkinnyNTSet):
//
//	go test -run '^$' -bench '^BenchmarkSkinnyNTPairs$' ./kernels
func BenchmarkSkinnyNTPairs(b *testing.B) {
	var sizes []int
	for bt := skinnyNTPairsLeast; bt <= skinnyNTPairsGroup; bt++ {
		sizes = append(sizes, bt)
	}
	benchSkinnyNTSet(b, []int{512}, sizes, "pairs", func(bt int, on bool) {
		rt.ntPairs, rt.ntQuads, rt.ntPanel, rt.ntPanelLong = 0, 0, 0, 0
		if on {
			rt.ntPairs = batches(bt, bt)
		}
	})
}

// BenchmarkSkinnyNTPanel times MatVecBatch of 11 to 32 rows against an A of
// 16.4 M floats (32000×512, 16000×1024 or 8000×2048) from memory
// with and without the panel kernels (route.ntPanel), on AVX-512, the two
// alternated call by call (benchSkinnyNTSet); without them, 9 to 12 rows
// take the 2-row tiles (ntPairs), the others the 3×8 tiles:
//
//	go test -run '^$' -bench '^BenchmarkSkinnyNTPanel$' ./kernels
func BenchmarkSkinnyNTPanel(b *testing.B) {
	benchSkinnyNTSet(b, []int{512, 1024, 2048}, []int{11, 12, 13, 16, 17, 18, 19, 20, 24, 25, 28, 32}, "panel", func(bt int, on bool) {
		rt.ntPanel, rt.ntPanelLong, rt.ntPairs, rt.ntQuads = 0, 0, 0, 0
		switch {
		case on:
			rt.ntPanel = batches(bt, bt)
		case bt >= skinnyNTPairsLeast && bt <= skinnyNTPairsGroup:
			rt.ntPairs = batches(bt, bt)
		}
	})
}

// benchSkinnyNTSet times MatVecBatch of each batch in sizes against an A of
// 16.4 M floats in rows of each of ks columns, from memory (two matrices in
// turn), on AVX-512: each iteration makes two calls, one with set(batch,
// true) applied to the route and one with set(batch, false), in alternating
// order. A leaf reports the median time of each (name-ms, tiles-ms) and the
// median of their ratios (name/tiles); ns/op counts both calls. The route is
// restored after.
func benchSkinnyNTSet(b *testing.B, ks, sizes []int, name string, set func(bt int, on bool)) {
	if Active() != AVX512 {
		b.Skip("AVX-512's kernels")
	}
	defer func(r route) { rt = r }(rt)
	const size = 32000 * 512
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	for _, k := range ks {
		n := size / k
		as := [2]Matrix{}
		for i := range as {
			as[i] = Matrix{Rows: n, Cols: k, Stride: k, Data: ramp(n * k)}
		}
		for _, bt := range sizes {
			x := Matrix{Rows: bt, Cols: k, Stride: k, Data: ramp(bt * k)}
			d := Matrix{Rows: bt, Cols: n, Stride: n, Data: make([]float32, bt*n)}
			b.Run(fmt.Sprintf("k=%d/B=%d", k, bt), func(b *testing.B) {
				var on, off, ratio []float64
				call := func(with bool, a Matrix) float64 {
					set(bt, with)
					start := time.Now()
					MatVecBatch(d, a, x)
					return time.Since(start).Seconds()
				}
				b.SetBytes(int64(2 * 4 * n * k))
				i := 0
				for b.Loop() {
					var t1, t0 float64
					if i%2 == 0 {
						t1, t0 = call(true, as[0]), call(false, as[1])
					} else {
						t0, t1 = call(false, as[0]), call(true, as[1])
					}
					on, off, ratio = append(on, t1), append(off, t0), append(ratio, t1/t0)
					i++
				}
				b.ReportMetric(1e3*median(on), name+"-ms")
				b.ReportMetric(1e3*median(off), "tiles-ms")
				b.ReportMetric(median(ratio), name+"/tiles")
			})
		}
	}
}
