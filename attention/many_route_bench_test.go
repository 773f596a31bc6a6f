package attention

import (
	"fmt"
	"testing"
)

// BenchmarkManyRoute places manyGemmMin: the contexts of B queries by each
// AttendMany route (blocked MatTVec, MatVecBatch over the cached Vᵀ, one
// Gemm), Luong dot with separate values, S=512 and 1024, d=256.
func BenchmarkManyRoute(b *testing.B) {
	for _, S := range []int{512, 1024} {
		const d = 256
		keys, values := rampMat(S, d), rampMat(S, d)
		for _, B := range []int{2, 4, 8, 16, 32, 64, 256} {
			m := NewMemory(Dot(), keys, values)
			w, c, q := rampMat(B, S), rampMat(B, d), rampMat(B, d)
			b.Run(fmt.Sprintf("S=%d,d=%d,B=%d", S, d, B), func(b *testing.B) {
				benchISAs(b, func(b *testing.B) {
					for _, r := range []route{routeManyBlocked, routeManyTransposed, routeManyGemm} {
						b.Run(r.String()[5:], func(b *testing.B) {
							gemmMin := B + 1
							if r == routeManyGemm {
								gemmMin = 2
							}
							setTuning(b, func(t *tuning) { t.manyGemmMin = gemmMin })
							m.AttendMany(w, c, q)
							c0 := startCPU(b)
							for b.Loop() {
								m.many = r != routeManyBlocked
								m.AttendMany(w, c, q)
							}
							c0.stop(0)
						})
					}
				})
			})
		}
	}
}
