//go:build unix

package rnn_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/heedml/heed/kernels"
	"github.com/heedml/heed/rnn"
)

// BenchmarkLSTMStep times one LSTM step (in = hidden) and, beside it, the
// step's gate product alone (MatVec over [x; h]), so that the difference is
// the element-wise part: bias, nonlinearities and the state update. Beside
// the wall time it reports the thread's CPU time per operation (cpu-ns/op),
// steadier on a shared machine.
func BenchmarkLSTMStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, H := range []int{128, 512} {
		w := kernels.Matrix{Rows: 4 * H, Cols: 2 * H, Stride: 2 * H, Data: make([]float32, 8*H*H)}
		for i := range w.Data {
			w.Data[i] = float32(rng.NormFloat64()) * 0.05
		}
		bias := make([]float32, 4*H)
		cell := rnn.NewLSTM(H, H, w, bias)
		x, h, c := make([]float32, H), make([]float32, H), make([]float32, H)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		b.Run(fmt.Sprintf("H=%d/step", H), func(b *testing.B) {
			timeCPU(b, func() { cell.Step(h, c, x, h, c) })
		})
		xh, g := make([]float32, 2*H), make([]float32, 4*H)
		b.Run(fmt.Sprintf("H=%d/matvec", H), func(b *testing.B) {
			timeCPU(b, func() { kernels.MatVec(g, w, xh) })
		})
	}
}

// timeCPU runs f in b's loop on a locked thread and reports cpu-ns/op.
func timeCPU(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var t0, t1 unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0)
	n := 0
	for b.Loop() {
		f()
		n++
	}
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1)
	b.ReportMetric(float64(t1.Nano()-t0.Nano())/float64(n), "cpu-ns/op")
}
