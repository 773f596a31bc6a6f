//go:build !purego

package kernels

import (
	"strconv"
	"strings"
)

// dotSoftmaxKernels names the kernels DotSoftmaxMatTVec chooses between by
// the span of A: the one for A in L2 or L3, and the one for A from memory
// with each prefetch distance (far-pf0 is the hardware prefetcher alone).
var dotSoftmaxKernels = []string{"near", "far-pf0", "far-pf1", "far-pf2", "far-pf4"}

// useDotSoftmaxKernel makes DotSoftmaxMatTVec take kernel k at every size and
// returns the function that restores the choice by size.
func useDotSoftmaxKernel(k string) (restore func()) {
	old, oldPF := dotSoftmaxKernel, dotSoftmaxFarPF
	dotSoftmaxKernel = kernelNear
	if pf, ok := strings.CutPrefix(k, "far-pf"); ok {
		dotSoftmaxKernel = kernelFar
		dotSoftmaxFarPF, _ = strconv.Atoi(pf)
	}
	return func() { dotSoftmaxKernel, dotSoftmaxFarPF = old, oldPF }
}
