//go:build (amd64 || arm64) && !purego

package kernels

import "testing"

// TestGemmDirectMC checks the rows of an in-place block of A (directMC) for
// the blocking of a 2 MiB L2 and kc = 384, mr = 6.
func TestGemmDirectMC(t *testing.T) {
	mk := gemmMicro{mr: 6, nr: 64}
	mk.gemmBlocking(48<<10, 2<<20, 32<<20)
	if mk.kc != 384 || mk.mc != 678 {
		t.Fatalf("kc, mc = %d, %d; want 384, 678", mk.kc, mk.mc)
	}
	for _, tc := range []struct{ lda, want int }{
		{1, 678}, {1000, 678}, {384, 678}, {512, 510}, {1024, 252}, {4096, 60}, {1 << 16, 6}, {1 << 20, 6},
	} {
		if got := mk.directMC(tc.lda, 384); got != tc.want {
			t.Errorf("directMC(lda=%d) = %d, want %d", tc.lda, got, tc.want)
		}
	}
}
