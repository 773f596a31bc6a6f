//go:build !purego

package kernels

// dotSoftmaxKernels names the kernels DotSoftmaxMatTVec chooses between by
// the span of A: the one for A in L2 or L3, and the one for A from memory.
var dotSoftmaxKernels = []string{"near", "far"}

// useDotSoftmaxKernel makes DotSoftmaxMatTVec take kernel k at every size and
// returns the function that restores the choice by size.
func useDotSoftmaxKernel(k string) (restore func()) {
	old := dotSoftmaxKernel
	dotSoftmaxKernel = kernelNear
	if k == "far" {
		dotSoftmaxKernel = kernelFar
	}
	return func() { dotSoftmaxKernel = old }
}
