//go:build amd64 && !purego

package bench

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/kernels"
)

// BenchmarkPrefillPeers times every prefill row (prefill.go) for heed's tiled
// attention (under each ISA), each peer's composition and each PrefillPeer,
// single-threaded: run it with GOMAXPROCS=1. It reports GFLOP/s of process CPU
// time over the causal FLOPs and that as a fraction of the FMA ceiling of the
// widest ISA ("of-ceiling") and of AVX2 ("of-avx2-ceiling").
func BenchmarkPrefillPeers(b *testing.B) {
	c512, c256 := gemmCeilings()
	b.Log(gemmPeaks())
	prev := kernels.Active()
	defer kernels.Use(prev)
	for _, s := range PrefillShapes {
		in := NewPrefillInputs(rand.New(rand.NewPCG(1, 2)), s)
		run := func(b *testing.B, f func()) { reportCeilingRate(b, f, s.Flops(), c512, c256) }
		for _, isa := range kernels.Supported() {
			if isa == kernels.Generic {
				continue
			}
			b.Run(s.String()+"/heed-"+isa.String(), func(b *testing.B) {
				kernels.Use(isa)
				run(b, in.Heed)
			})
		}
		kernels.Use(prev)
		for _, im := range Impls() {
			f := in.Composition(im)
			if f == nil {
				continue
			}
			b.Run(s.String()+"/"+im.Name, func(b *testing.B) { run(b, f) })
		}
		for _, p := range PrefillPeers {
			if f := p.Bind(in); f != nil {
				b.Run(s.String()+"/"+p.Name, func(b *testing.B) { run(b, f) })
			}
		}
	}
}

// TestPrefillPeersMatch checks every composition and PrefillPeer against
// heed's tiled attention on small grouped and ungrouped shapes, so the rows
// time the same work: each output element within 1e-4·(1 + max|v|) of heed's
// (both are within a few hundred u of the exact softmax-weighted average of
// values bounded by max|v| = 1; the peers' exponentials are less accurate).
func TestPrefillPeersMatch(t *testing.T) {
	for _, s := range []PrefillShape{{37, 16, 1, 1}, {29, 8, 4, 4}, {33, 8, 6, 2}, {20, 4, 4, 1}} {
		in := NewPrefillInputs(rand.New(rand.NewPCG(3, 4)), s)
		in.Heed()
		want := append([]float32(nil), in.Out.Data...)
		checked := 0
		check := func(name string, f func()) {
			checked++
			clear(in.Out.Data)
			f()
			for i, w := range want {
				if g := in.Out.Data[i]; !(math.Abs(float64(g-w)) <= 1e-4*2) {
					t.Fatalf("%v %s: out[%d] = %v, heed %v", s, name, i, g, w)
				}
			}
		}
		for _, im := range Impls() {
			if f := in.Composition(im); f != nil {
				check(im.Name, f)
			}
		}
		for _, p := range PrefillPeers {
			if f := p.Bind(in); f != nil {
				check(p.Name, f)
			}
		}
		if checked == 0 {
			t.Fatalf("%v: no peer to check", s)
		}
		t.Logf("%v: %d peers match", s, checked)
	}
}
