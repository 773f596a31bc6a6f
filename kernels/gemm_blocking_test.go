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

// TestGemmKCFor checks the inner blocks of kcFor and the rows of mcFor for
// the rule's kc of a 48 KiB and of a 32 KiB L1 (384 and 256), and that kcFor
// never takes more blocks than the rule's kc, nor a block above a third more.
func TestGemmKCFor(t *testing.T) {
	big := gemmMicro{mr: 6, nr: 64}
	big.gemmBlocking(48<<10, 2<<20, 32<<20)
	small := gemmMicro{mr: 6, nr: 64}
	small.gemmBlocking(32<<10, 1<<20, 8<<20)
	for _, tc := range []struct {
		mk      *gemmMicro
		k, want int
	}{
		{&big, 1, 1}, {&big, 384, 384}, {&big, 500, 500}, {&big, 512, 512}, {&big, 513, 384},
		{&big, 640, 384}, {&big, 768, 384}, {&big, 1000, 504}, {&big, 1024, 512}, {&big, 1536, 512},
		{&big, 2048, 512}, {&big, 2049, 416},
		{&small, 300, 300}, {&small, 336, 336}, {&small, 512, 256}, {&small, 1000, 336},
	} {
		if got := tc.mk.kcFor(tc.k); got != tc.want {
			t.Errorf("kc %d: kcFor(%d) = %d, want %d", tc.mk.kc, tc.k, got, tc.want)
		}
	}
	for _, tc := range []struct{ kc, want int }{{100, 678}, {384, 678}, {504, 516}, {512, 504}} {
		if got := big.mcFor(tc.kc); got != tc.want {
			t.Errorf("mcFor(%d) = %d, want %d", tc.kc, got, tc.want)
		}
	}
	if got := big.directMC(1024, 512); got != 252 {
		t.Errorf("directMC(1024, 512) = %d, want 252", got)
	}
	if got := big.directMC(1000, 504); got != 516 {
		t.Errorf("directMC(1000, 504) = %d, want 516", got)
	}
	for _, kc := range []int{5, 24, 256, 384} {
		mk := gemmMicro{mr: 6, nr: 64, kc: kc}
		hi := max(kc, kc*4/3/8*8)
		for k := 1; k <= 5000; k++ {
			got := mk.kcFor(k)
			if got < 1 || got > hi || (k+got-1)/got > (k+kc-1)/kc {
				t.Fatalf("kc %d: kcFor(%d) = %d: outside [1, %d] or more blocks than %d", kc, k, got, hi, (k+kc-1)/kc)
			}
		}
	}
}

// TestGemmStripsOuter checks the order rule of runPacked's tiles (strips
// outer once a kc×nr panel passes half of L1) and the columns of a block of
// op(B) gone through strip by strip (ncStrips: half of L2), for the 6×64
// and 6×16 tiles of a 48 KiB L1 and 2 MiB L2.
func TestGemmStripsOuter(t *testing.T) {
	defer func(o int) { gemmOrder = o }(gemmOrder)
	gemmOrder = 0
	for _, tc := range []struct {
		nr, kc  int
		strips  bool
		ncStrip int
	}{
		{64, 64, false, 4096}, {64, 96, false, 2730 / 64 * 64}, {64, 97, true, 2702 / 64 * 64},
		{64, 384, true, 640}, {64, 512, true, 512},
		{16, 256, false, 1024}, {16, 384, false, 672}, {16, 385, true, 672}, {16, 512, true, 512},
	} {
		mk := gemmMicro{mr: 6, nr: tc.nr}
		mk.gemmBlocking(48<<10, 2<<20, 32<<20)
		if got := mk.stripsOuter(tc.kc); got != tc.strips {
			t.Errorf("nr %d: stripsOuter(%d) = %t, want %t", tc.nr, tc.kc, got, tc.strips)
		}
		if got := mk.ncStrips(tc.kc); got != tc.ncStrip {
			t.Errorf("nr %d: ncStrips(%d) = %d, want %d", tc.nr, tc.kc, got, tc.ncStrip)
		}
	}
}
