//go:build !amd64 || purego

package kernels

// decodeStepSplit is the multi-stream step's number of parts
// (lowprec_split_amd64.go); no such kernel here.
var decodeStepSplit int

// haveDecodeStepSplit tells whether the multi-stream step kernels exist.
const haveDecodeStepSplit = false
