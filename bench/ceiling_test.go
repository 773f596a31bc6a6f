package bench

import "testing"

// The ceiling loops must read every element: their sum of ones is the length.
func TestCeilingLoops(t *testing.T) {
	_, streams, block, fma, _ := ceilingLoops()
	for _, blocks := range []int{0, 1, 3, 64} {
		n := blocks * block
		buf := make([]float32, n)
		for i := range buf {
			buf[i] = 1
		}
		for i, stream := range streams {
			if got := stream(buf); got != float32(n) {
				t.Errorf("stream %d of %d ones = %v", i, n, got)
			}
		}
	}
	if got := fma(10, 1); got <= 0 {
		t.Errorf("fma(10, 1) = %v, want > 0", got)
	}
}
