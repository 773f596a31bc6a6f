//go:build !purego

package kernels

import (
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// dotSoftmaxKernels names the kernels DotSoftmaxMatTVec chooses between by
// the span of A: the one for A in L2 or L3, and the one for A from memory
// with each prefetch distance (far-pf0 is the hardware prefetcher alone), and
// on AVX-512 the one that scores a block before the previous block's context
// (far-ahead; elsewhere it is far-pf's default), the one that reads the rows
// as two streams without and with prefetch (far-split-pf0, far-split-pf1),
// and far-split<name> for each other split kernel of dotSoftmaxSplits
// (elsewhere these are far-pf0 or far-pf1).
var dotSoftmaxKernels = func() []string {
	ks := []string{"near", "far-pf0", "far-pf1", "far-pf2", "far-pf4", "far-ahead", "far-split-pf0", "far-split-pf1"}
	for _, k := range dotSoftmaxSplits {
		if k.parts > 2 {
			ks = append(ks, "far-split"+k.name)
		}
	}
	return ks
}()

// dotSoftmaxRuleKernels are the kernels of dotSoftmaxKernels that the cpuid
// rules (defaultDotSoftmaxFarPF, defaultDotSoftmaxFarSplit) can choose on the
// active ISA: near, and the far kernel of Intel and of other vendors.
func dotSoftmaxRuleKernels() []string {
	ks := []string{"near"}
	for _, v := range []cpuid.Vendor{cpuid.Intel, cpuid.AMD} {
		k := "far-pf" + strconv.Itoa(defaultDotSoftmaxFarPF(v))
		if s := defaultDotSoftmaxFarSplit(v); Active() == AVX512 && s != "0" {
			k = "far-split" + s
			if s == "2" {
				k = "far-split-pf" + strconv.Itoa(min(defaultDotSoftmaxFarPF(v), 1))
			}
		}
		if !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// useDotSoftmaxKernel makes DotSoftmaxMatTVec take kernel k at every size and
// returns the function that restores the choice by size.
func useDotSoftmaxKernel(k string) (restore func()) {
	old, oldPF, oldAhead, oldSplit := dotSoftmaxKernel, dotSoftmaxFarPF, dotSoftmaxFarAhead, dotSoftmaxFarSplit
	dotSoftmaxKernel, dotSoftmaxFarAhead, dotSoftmaxFarSplit = kernelNear, false, "0"
	if pf, ok := strings.CutPrefix(k, "far-split-pf"); ok {
		dotSoftmaxKernel, dotSoftmaxFarSplit = kernelFar, "2"
		dotSoftmaxFarPF, _ = strconv.Atoi(pf)
	} else if s, ok := strings.CutPrefix(k, "far-split"); ok {
		dotSoftmaxKernel, dotSoftmaxFarSplit, dotSoftmaxFarPF = kernelFar, s, 1
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
