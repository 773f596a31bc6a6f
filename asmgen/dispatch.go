package main

import (
	. "github.com/mmcloughlin/avo/attr"
)

func init() { register("dispatch", genDispatchFamily) }

// genDispatchFamily emits noescape(p *byte) *byte, which
// returns p. Its stub is go:noescape, so the compiler takes its result as
// unrelated to p: the route tables of kernels/dispatch_amd64.go pass their
// slices through it, so that a call through a table of kernels keeps the
// kernels' own go:noescape contract instead of making every argument escape.
func genDispatchFamily() {
	TEXT("noescape", NOSPLIT, "func(p *byte) *byte")
	asm.Doc("noescape returns p, hidden from escape analysis: its callers pass the result only to kernels that keep no pointer.")
	asm.Store(load(asm.Param("p")), asm.ReturnIndex(0))
	asm.RET()
}
