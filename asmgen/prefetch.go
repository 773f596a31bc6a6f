package main

import . "github.com/mmcloughlin/avo/operand"

// pfLevel is the cache level a kernel's software prefetches fill, for the
// families that come in both (kernels' route.pfL2 chooses by CPU class):
// pfL1 by PREFETCHT0, pfL2 by PREFETCHT1, which on Zen 4 keeps the lines in
// flight without holding the L1's miss buffers (kernels/DESIGN.md).
type pfLevel int

const (
	pfL1 pfLevel = iota
	pfL2
)

// prefetchLevels are the levels generated for each prefetching kernel.
var prefetchLevels = []pfLevel{pfL1, pfL2}

// prefetch emits the prefetch of the line at m into level l.
func (l pfLevel) prefetch(m Mem) {
	if l == pfL2 {
		asm.PREFETCHT1(m)
		return
	}
	asm.PREFETCHT0(m)
}

// suffix is the part of a kernel's name that tells its level: none for
// pfL1, "L2" for pfL2.
func (l pfLevel) suffix() string {
	if l == pfL2 {
		return "L2"
	}
	return ""
}
