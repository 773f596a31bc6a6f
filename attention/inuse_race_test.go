//go:build race

package attention

import (
	"testing"

	"github.com/heedml/heed/internal/inuse"
	"github.com/heedml/heed/kernels"
)

// TestInUse checks, in race builds, that a call on a Memory, Batch,
// HeadCache, Workspace or Attentional (forward or backward) that another
// call holds panics with a message naming the type: each case takes the value's flag as a call in
// progress on another goroutine would, then calls.
func TestInUse(t *testing.T) {
	keys := kernels.Matrix{Rows: 4, Cols: 4, Stride: 4, Data: make([]float32, 16)}
	w, c, h := make([]float32, 4), make([]float32, 4), make([]float32, 4)
	m := NewMemory(Dot(), keys, keys)
	cache := NewEmptyMemory(Dot(), Float32, 4, 4, 8)
	var b Batch
	hc := NewHeadCache(Float32, 2, 1, 2, 2, 4)
	var ws Workspace
	att := NewAttentional(kernels.Matrix{Rows: 2, Cols: 4, Stride: 4, Data: make([]float32, 8)}, 2)
	mat := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	for _, tc := range []struct {
		name string
		flag *inuse.Flag
		call func()
	}{
		{"attention.Memory", &m.busy, func() { m.Attend(w, c, h) }},
		{"attention.Memory", &m.busy, func() { m.Scores(w, h) }},
		{"attention.Memory", &m.busy, func() { m.AttendMany(mat(2, 4), mat(2, 4), mat(2, 4)) }},
		{"attention.Memory", &m.busy, func() { m.Reset(keys, keys) }},
		{"attention.Memory", &cache.busy, func() { cache.Append(h, h) }},
		{"attention.Memory", &m.busy, func() { b.Attend([]*Memory{m}, [][]float32{w}, [][]float32{c}, [][]float32{h}) }},
		{"attention.Batch", &b.busy, func() { b.Attend([]*Memory{m}, [][]float32{w}, [][]float32{c}, [][]float32{h}) }},
		{"attention.HeadCache", &hc.busy, func() { hc.Attend(make([]float32, 4), make([]float32, 4)) }},
		{"attention.Workspace", &ws.busy, func() { MultiHead(mat(64, 8), mat(64, 8), mat(64, 8), mat(64, 8), 2, Causal, &ws) }},
		{"attention.Attentional", &att.busy, func() { att.Apply(make([]float32, 2), make([]float32, 2), make([]float32, 2)) }},
		{"attention.Memory", &m.busy, func() { m.AttendBackward(&Grads{Keys: mat(4, 4)}, make([]float32, 4), nil, c, w, h) }},
		{"attention.Memory", &m.busy, func() { m.AttendManyBackward(nil, mat(2, 4), kernels.Matrix{}, mat(2, 4), mat(2, 4), mat(2, 4)) }},
		{"attention.Workspace", &ws.busy, func() {
			MultiHeadTrain(mat(64, 8), make([]float32, 128), mat(64, 8), mat(64, 8), mat(64, 8), 2, Causal, &ws)
		}},
		{"attention.Workspace", &ws.busy, func() {
			MultiHeadBackward(mat(64, 8), mat(64, 8), mat(64, 8), mat(64, 8), mat(64, 8), make([]float32, 128), mat(64, 8), mat(64, 8), mat(64, 8), 2, Causal, &ws)
		}},
		{"attention.Attentional", &att.busy, func() { att.ApplyMany(mat(2, 2), mat(2, 2), mat(2, 2)) }},
		{"attention.Attentional", &att.busy, func() {
			att.ApplyBackward(mat(2, 4), make([]float32, 2), make([]float32, 2), make([]float32, 2), make([]float32, 2), make([]float32, 2), make([]float32, 2))
		}},
		{"attention.Attentional", &att.busy, func() {
			att.ApplyManyBackward(mat(2, 4), mat(3, 2), mat(3, 2), mat(3, 2), mat(3, 2), mat(3, 2), mat(3, 2))
		}},
	} {
		tc.flag.Enter("test")
		mustPanic(t, inuse.Message(tc.name), tc.call)
		tc.flag.Exit()
		tc.call() // free again: runs
	}
}
