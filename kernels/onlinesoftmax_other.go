//go:build purego || !amd64

package kernels

// onlineSoftmax leaves every row to onlineSoftmaxGo: there is no NEON
// onlineSoftmax kernel yet, and the Go composition runs the NEON Max, Exp and
// Sum kernels.
func onlineSoftmax(x []float32, m float32) (float32, float32, int) {
	return 0, 0, softmaxSpecial
}
