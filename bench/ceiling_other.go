//go:build !amd64

package bench

// ceilingLoops: without hand-written loops for this architecture, heed's own
// Sum (its best ISA) is the streaming loop and a Go loop the FMA loop, so the
// ceilings are lower bounds.
func ceilingLoops() (name string, streams []func([]float32) float32, block int, fmas []fmaLoop) {
	return genericLoops()
}
