//go:build !purego

package kernels

import (
	"fmt"
	"slices"
	"testing"

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

// forEachMatVecRoute runs f with MatVec routed by span (the default), then
// under each route of the table with its far kernel taken at every size
// (farBytes 0), so that the tests check every kernel the table can choose at
// every shape.
func forEachMatVecRoute(t *testing.T, f func(t *testing.T)) {
	t.Run("by-span", f)
	defer func(b int) { farBytes = b }(farBytes)
	farBytes = 0
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
