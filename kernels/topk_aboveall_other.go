//go:build purego || !amd64

package kernels

// aboveAll stores the indices i of x with !(x[i] ≤ t), in increasing order,
// into dst and returns how many, or −1 if there are more than len(dst).
func aboveAll(dst []int32, x []float32, t float32) int { return aboveAllGo(dst, x, t) }
