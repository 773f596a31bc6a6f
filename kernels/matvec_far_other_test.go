//go:build !amd64 || purego

package kernels

import "testing"

// forEachMatVecRoute runs f once: MatVec has one route here.
func forEachMatVecRoute(t *testing.T, f func(t *testing.T)) { f(t) }
