//go:build !amd64 || purego

package kernels

// dotSoftmaxKernels names DotSoftmaxMatTVec's one implementation here.
var dotSoftmaxKernels = []string{"rows"}

// useDotSoftmaxKernel does nothing: there is one kernel.
func useDotSoftmaxKernel(string) (restore func()) { return func() {} }

// dotSoftmaxRuleKernels names the one kernel.
func dotSoftmaxRuleKernels() []string { return dotSoftmaxKernels }
