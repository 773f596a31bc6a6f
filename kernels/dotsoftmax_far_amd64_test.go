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
// (far-ahead; elsewhere it is far-pf's default), and the one that reads the
// rows as two streams without and with prefetch (far-split-pf0, far-split-pf1)
// or as four (far-split4; elsewhere these are far-pf0, far-pf1, far-pf1).
var dotSoftmaxKernels = []string{"near", "far-pf0", "far-pf1", "far-pf2", "far-pf4", "far-ahead", "far-split-pf0", "far-split-pf1", "far-split4"}

// useDotSoftmaxKernel makes DotSoftmaxMatTVec take kernel k at every size and
// returns the function that restores the choice by size.
func useDotSoftmaxKernel(k string) (restore func()) {
	old, oldPF, oldAhead, oldSplit := dotSoftmaxKernel, dotSoftmaxFarPF, dotSoftmaxFarAhead, dotSoftmaxFarSplit
	dotSoftmaxKernel, dotSoftmaxFarAhead, dotSoftmaxFarSplit = kernelNear, false, 0
	if pf, ok := strings.CutPrefix(k, "far-split-pf"); ok {
		dotSoftmaxKernel, dotSoftmaxFarSplit = kernelFar, 2
		dotSoftmaxFarPF, _ = strconv.Atoi(pf)
	}
	if k == "far-split4" {
		dotSoftmaxKernel, dotSoftmaxFarSplit, dotSoftmaxFarPF = kernelFar, 4, 1
	}
	if pf, ok := strings.CutPrefix(k, "far-pf"); ok {
		dotSoftmaxKernel = kernelFar
		dotSoftmaxFarPF, _ = strconv.Atoi(pf)
	}
	if k == "far-ahead" {
		dotSoftmaxKernel, dotSoftmaxFarAhead = kernelFar, true
	}
	return func() {
		dotSoftmaxKernel, dotSoftmaxFarPF, dotSoftmaxFarAhead, dotSoftmaxFarSplit = old, oldPF, oldAhead, oldSplit
	}
}
