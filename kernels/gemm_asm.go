//go:build (amd64 || arm64) && !purego

package kernels

// gemmBlocking derives the blocking sizes of a micro-kernel from the cache
// sizes: kc = L1d/128 (a kc×32 strip of float32 fills L1), so that a packed
// mc×kc block of A takes half of L2, and a kc×nc block of B a quarter of L3
// (at most 4096 columns); a product may take inner blocks up to a third
// longer when that makes fewer of them (kcFor, with mcFor's rows), and a
// block of A read in place may take fewer rows (directMC).
// kernels/DESIGN.md ("GEMM", "Blocking") explains the rules.
func (mk *gemmMicro) gemmBlocking(l1, l2, l3 int) {
	mk.l1, mk.l2 = l1, l2
	mk.kc = max(128, min(512, l1/128)/8*8)
	mk.mc = max(mk.mr, min(1024, l2/2/(4*mk.kc))/mk.mr*mk.mr)
	mk.nc = max(mk.nr, min(4096, l3/4/(4*mk.kc))/mk.nr*mk.nr)
}
