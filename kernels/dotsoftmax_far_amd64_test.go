//go:build !purego

package kernels

import (
	"strconv"
	"strings"
)

// dotSoftmaxKernels names the kernels DotSoftmaxMatTVec chooses between by
// the span of A: the one for A in L2 or L3, and the one for A from memory
// with each prefetch distance (far-pf0 is the hardware prefetcher alone), and
// on AVX-512 the one that scores a block before the previous block's context
// (far-ahead; elsewhere it is far-pf's default).
var dotSoftmaxKernels = []string{"near", "far-pf0", "far-pf1", "far-pf2", "far-pf4", "far-ahead"}

// useDotSoftmaxKernel makes DotSoftmaxMatTVec take kernel k at every size and
// returns the function that restores the choice by size.
func useDotSoftmaxKernel(k string) (restore func()) {
	old, oldPF, oldAhead := dotSoftmaxKernel, dotSoftmaxFarPF, dotSoftmaxFarAhead
	dotSoftmaxKernel, dotSoftmaxFarAhead = kernelNear, false
	if pf, ok := strings.CutPrefix(k, "far-pf"); ok {
		dotSoftmaxKernel = kernelFar
		dotSoftmaxFarPF, _ = strconv.Atoi(pf)
	}
	if k == "far-ahead" {
		dotSoftmaxKernel, dotSoftmaxFarAhead = kernelFar, true
	}
	return func() { dotSoftmaxKernel, dotSoftmaxFarPF, dotSoftmaxFarAhead = old, oldPF, oldAhead }
}
