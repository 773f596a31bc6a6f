//go:build goexperiment.simd && amd64

package bench

import (
	"math"

	"github.com/ajroetker/go-highway/hwy/contrib/nn"
)

func init() {
	PrefillPeers = append(PrefillPeers, &PrefillPeer{
		Name: "highway-sdpa",
		Note: "nn.MultiHeadSDPAAuto (no pool, causal) on head-major copies of q, k, v made outside the timing; its output copied back to heed's layout inside",
		Bind: func(in *PrefillInputs) func() {
			s := in.Shape
			T, dk := s.T, s.Dk
			// heads-major: [head][t][c] from heed's [t][head·dk + c].
			toBHSD := func(dst, src []float32, heads, stride int) {
				for h := range heads {
					for t := range T {
						copy(dst[(h*T+t)*dk:(h*T+t+1)*dk], src[t*stride+h*dk:t*stride+(h+1)*dk])
					}
				}
			}
			q := make([]float32, s.Heads*T*dk)
			k := make([]float32, s.KVHeads*T*dk)
			v := make([]float32, s.KVHeads*T*dk)
			out := make([]float32, s.Heads*T*dk)
			toBHSD(q, in.Q.Data, s.Heads, in.Q.Stride)
			toBHSD(k, in.K.Data, s.KVHeads, in.K.Stride)
			toBHSD(v, in.V.Data, s.KVHeads, in.V.Stride)
			scale := float32(1 / math.Sqrt(float64(dk)))
			return func() {
				nn.MultiHeadSDPAAuto(nil, q, k, v, nil, out, 1, s.Heads, s.KVHeads, T, T, dk, 0, 0, scale, true)
				for h := range s.Heads {
					for t := range T {
						copy(in.Out.Data[t*in.Out.Stride+h*dk:t*in.Out.Stride+(h+1)*dk], out[(h*T+t)*dk:(h*T+t+1)*dk])
					}
				}
			}
		},
	})
}
