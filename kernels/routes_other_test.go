//go:build !amd64 || purego

package kernels

import "testing"

// forEachMatVecRoute runs f once: MatVec has one route here.
func forEachMatVecRoute(t *testing.T, f func(t *testing.T)) { f(t) }

// forEachDotSoftmaxKernel runs fn once: DotSoftmaxMatTVec has one kernel here.
func forEachDotSoftmaxKernel[T runner[T]](t T, fn func(T)) { t.Run("rows", fn) }

// forEachQ8Form runs f once: the Q8 context kernels have one form here.
func forEachQ8Form[T runner[T]](t T, f func(T)) { f(t) }
