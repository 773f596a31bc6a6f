package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refLoss is the model's loss on d evaluated in float64 from the float32
// parameters p (read through p's layout, converted): the reference the
// gradient test differentiates by central finite differences.
func refLoss(c Config, p *Params, flat []float64, d Batch) float64 {
	at := func(name string) ([]float64, []int) {
		for i, n := range p.names {
			if n == name {
				return flat[p.offsets[i] : p.offsets[i]+size(p.shapes[i])], p.shapes[i]
			}
		}
		return nil, nil
	}
	srcEmb, _ := at("src_emb")
	tgtEmb, _ := at("tgt_emb")
	encW, _ := at("enc_w")
	encB, _ := at("enc_b")
	decW, _ := at("dec_w")
	decB, _ := at("dec_b")
	wc, _ := at("wc")
	outW, _ := at("out_w")
	outB, _ := at("out_b")
	E, H, V := c.E, c.H, c.V
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	// lstm runs the cell over xs from (h, c) and returns every h and the final c.
	lstm := func(w, bias []float64, xs [][]float64, h, cs []float64) ([][]float64, []float64) {
		var out [][]float64
		for _, x := range xs {
			xh := append(append([]float64(nil), x...), h...)
			g := make([]float64, 4*H)
			for r := range g {
				s := bias[r]
				for j, v := range xh {
					s += w[r*(E+H)+j] * v
				}
				g[r] = s
			}
			nc, nh := make([]float64, H), make([]float64, H)
			for j := 0; j < H; j++ {
				i, f, gg, o := sig(g[j]), sig(g[H+j]), math.Tanh(g[2*H+j]), sig(g[3*H+j])
				nc[j] = f*cs[j] + i*gg
				nh[j] = o * math.Tanh(nc[j])
			}
			h, cs = nh, nc
			out = append(out, nh)
		}
		return out, cs
	}
	emb := func(table []float64, tok int32) []float64 { return table[int(tok)*E : int(tok)*E+E] }
	total := 0.0
	for b := 0; b < c.B; b++ {
		var xs, xt [][]float64
		for s := 0; s < c.Ts; s++ {
			xs = append(xs, emb(srcEmb, d.Src[b*c.Ts+s]))
		}
		for t := 0; t < c.Tt; t++ {
			xt = append(xt, emb(tgtEmb, d.TgtIn[b*c.Tt+t]))
		}
		hs, cT := lstm(encW, encB, xs, make([]float64, H), make([]float64, H))
		ht, _ := lstm(decW, decB, xt, hs[len(hs)-1], cT)
		for t, h := range ht {
			sc := make([]float64, c.Ts)
			for s, k := range hs {
				switch c.Score {
				case "dot":
					for j := range h {
						sc[s] += h[j] * k[j]
					}
				case "general":
					w, _ := at("att_w")
					for i := range h {
						for j := range k {
							sc[s] += h[i] * w[i*H+j] * k[j]
						}
					}
				case "additive":
					w1, _ := at("att_w1")
					w2, _ := at("att_w2")
					v, _ := at("att_v")
					for a := 0; a < H; a++ {
						z := 0.0
						for j := 0; j < H; j++ {
							z += w1[a*H+j]*h[j] + w2[a*H+j]*k[j]
						}
						sc[s] += v[a] * math.Tanh(z)
					}
				}
			}
			m := math.Inf(-1)
			for _, x := range sc {
				m = math.Max(m, x)
			}
			z := 0.0
			for _, x := range sc {
				z += math.Exp(x - m)
			}
			ctx := make([]float64, H)
			for s, k := range hs {
				a := math.Exp(sc[s]-m) / z
				for j := range ctx {
					ctx[j] += a * k[j]
				}
			}
			ch := append(append([]float64(nil), ctx...), h...)
			ht2 := make([]float64, H)
			for r := range ht2 {
				s := 0.0
				for j, v := range ch {
					s += wc[r*2*H+j] * v
				}
				ht2[r] = math.Tanh(s)
			}
			lg := make([]float64, V)
			mx := math.Inf(-1)
			for r := range lg {
				s := outB[r]
				for j, v := range ht2 {
					s += outW[r*H+j] * v
				}
				lg[r] = s
				mx = math.Max(mx, s)
			}
			zs := 0.0
			for _, x := range lg {
				zs += math.Exp(x - mx)
			}
			total += mx + math.Log(zs) - lg[d.TgtOut[b*c.Tt+t]]
		}
	}
	return total / float64(c.B*c.Tt)
}

// TestGradientsFiniteDifferences checks every gradient of a whole training
// step of a small model, under every score, against central finite
// differences of the float64 evaluation of the same model (refLoss) at
// heed's float32 parameters. The finite differences (step h = 10⁻⁵·max(1,
// |x|)) are accurate to about 10⁻⁹: O(h²) truncation, and 10⁻¹⁶·L/h of
// cancellation. The float32 step's gradients carry the rounding of its
// products and passes, each within γₙ of the magnitudes it sums (n up to
// E+H, V or B·T; u = 2⁻²⁴), through the half-dozen layers of the chain: of
// order 10⁻⁶ of the tensor's largest gradient. Every element must be within
// 2·10⁻⁵·max|g| + 10⁻⁷ of the reference (max over its tensor), and the loss
// within 10⁻⁵ relative.
func TestGradientsFiniteDifferences(t *testing.T) {
	for _, score := range []string{"dot", "general", "additive"} {
		t.Run(score, func(t *testing.T) {
			c := Config{V: 9, E: 5, H: 6, B: 3, Ts: 4, Tt: 3, Score: score}
			md := NewModel(c, 7)
			d := randomBatch(c, rand.New(rand.NewPCG(8, 9)))
			md.ZeroGrad()
			loss := md.Forward(d)
			md.Backward(d)
			flat := make([]float64, len(md.P.Flat))
			for i, v := range md.P.Flat {
				flat[i] = float64(v)
			}
			ref := refLoss(c, md.P, flat, d)
			if math.Abs(float64(loss)-ref) > 1e-5*math.Abs(ref) {
				t.Fatalf("loss %v, float64 reference %v", loss, ref)
			}
			for i, name := range md.P.names {
				lo, n := md.P.offsets[i], size(md.P.shapes[i])
				fd := make([]float64, n)
				gmax := 0.0
				for j := 0; j < n; j++ {
					x := flat[lo+j]
					h := 1e-5 * math.Max(1, math.Abs(x))
					flat[lo+j] = x + h
					up := refLoss(c, md.P, flat, d)
					flat[lo+j] = x - h
					down := refLoss(c, md.P, flat, d)
					flat[lo+j] = x
					fd[j] = (up - down) / (2 * h)
					gmax = math.Max(gmax, math.Abs(fd[j]))
				}
				for j, want := range fd {
					if got := float64(md.G.Flat[lo+j]); math.Abs(got-want) > 2e-5*gmax+1e-7 {
						t.Fatalf("%s[%d]: gradient %v, finite differences %v (max |g| %v)", name, j, got, want, gmax)
					}
				}
			}
		})
	}
}
