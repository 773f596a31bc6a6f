//go:build !purego

package kernels

import (
	"slices"
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// forEachMatVecRoute runs f with MatVec routed by span (the default), then
// with each of matVecFarVariants taken at every size (matVecFarBytes 0), so
// that the tests check every far kernel at every shape.
func forEachMatVecRoute(t *testing.T, f func(t *testing.T)) {
	t.Run("by-span", f)
	oldV, oldB := matVecFarVariant, matVecFarBytes
	defer func() { matVecFarVariant, matVecFarBytes = oldV, oldB }()
	for _, v := range matVecFarVariants {
		matVecFarVariant, matVecFarBytes = v, 0
		t.Run("far-"+v, f)
	}
}

// TestMatVecFarRule checks defaultMatVecFar: split4-pf1k on Intel, rows4 (the
// kernel for every span) elsewhere, and that every variant it names exists.
func TestMatVecFarRule(t *testing.T) {
	for _, c := range []struct {
		vendor cpuid.Vendor
		want   string
	}{{cpuid.Intel, "split4-pf1k"}, {cpuid.AMD, "rows4"}, {cpuid.Hygon, "rows4"}, {cpuid.VendorUnknown, "rows4"}} {
		got := defaultMatVecFar(c.vendor)
		if got != c.want {
			t.Errorf("defaultMatVecFar(%v) = %q, want %q", c.vendor, got, c.want)
		}
		if !slices.Contains(matVecFarVariants, got) {
			t.Errorf("defaultMatVecFar(%v) = %q: not in matVecFarVariants", c.vendor, got)
		}
	}
}
