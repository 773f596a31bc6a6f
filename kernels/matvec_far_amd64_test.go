//go:build !purego

package kernels

import "testing"

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

