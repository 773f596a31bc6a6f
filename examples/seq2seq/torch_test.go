package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// torchPython returns a Python with PyTorch (Debian's python3-torch is
// /usr/bin/python3's), or "" if none.
func torchPython() string {
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import torch").Run() == nil {
			return py
		}
	}
	return ""
}

type dumpTensor struct {
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
}

// writeDump writes the model's parameters and the batch as a
// bench/torch/seq2seq.py dump directory (its --load reads it).
func writeDump(dir string, md *Model, d Batch) error {
	c := md.C
	tensors := map[string]dumpTensor{}
	put := func(name string, shape []int, dtype string, data any) error {
		tensors[name] = dumpTensor{shape, dtype}
		f, err := os.Create(filepath.Join(dir, name+".bin"))
		if err != nil {
			return err
		}
		defer f.Close()
		return binary.Write(f, binary.LittleEndian, data)
	}
	for i, name := range md.P.names {
		if err := put(name, md.P.shapes[i], "float32", md.P.Flat[md.P.offsets[i]:md.P.offsets[i]+size(md.P.shapes[i])]); err != nil {
			return err
		}
	}
	for name, toks := range map[string][]int32{"src_tokens": d.Src, "tgt_in": d.TgtIn, "tgt_out": d.TgtOut} {
		T := c.Tt
		if name == "src_tokens" {
			T = c.Ts
		}
		if err := put(name, []int{c.B, T}, "int32", toks); err != nil {
			return err
		}
	}
	m, err := json.Marshal(map[string]any{"format": "heed-seq2seq-dump/1",
		"config": map[string]any{"V": c.V, "E": c.E, "H": c.H, "B": c.B, "Ts": c.Ts, "Tt": c.Tt, "score": c.Score,
			"optim": "adam", "lr": c.Adam.LR, "betas": []float32{c.Adam.Beta1, c.Adam.Beta2}, "eps": c.Adam.Eps,
			"weight_decay": 0, "seed": 0, "bos": BOS},
		"tensors": tensors})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), m, 0o644)
}

// readTensor reads a float32 tensor of a dump directory.
func readTensor(dir, name string, n int) ([]float32, error) {
	b, err := os.ReadFile(filepath.Join(dir, name+".bin"))
	if err != nil {
		return nil, err
	}
	if len(b) != 4*n {
		return nil, fmt.Errorf("%s: %d bytes, want %d", name, len(b), 4*n)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// TestAgainstPyTorch runs one training step of heed's model and of
// bench/torch/seq2seq.py's on the same weights and batch (heed writes them,
// PyTorch loads them), where python3-torch is installed, and compares the
// loss, every parameter's gradient and every parameter after the Adam step.
// Both compute in float32 in different orders, each within its products'
// and passes' rounding (order 10⁻⁶ of a tensor's largest gradient): every
// gradient element must agree within 5·10⁻⁵·max|g| of its tensor + 10⁻⁷, the
// loss within 10⁻⁵ relative. After the step the parameters differ by the
// update's sensitivity to the gradients: Adam's first step moves each by
// lr·g/(|g| + eps), ±lr for any gradient well above eps, so they must agree
// within 10⁻⁶ + 10⁻⁵·|p| except where a gradient is within 10⁻⁴·max|g| of
// zero (its sign or magnitude relative to eps is then not determined by
// float32), where they agree within lr.
func TestAgainstPyTorch(t *testing.T) {
	py := torchPython()
	if py == "" {
		t.Skip("python3-torch is not installed (apt-get install python3-torch)")
	}
	script, err := filepath.Abs("../../bench/torch/seq2seq.py")
	if err != nil {
		t.Fatal(err)
	}
	for _, score := range []string{"dot", "general", "additive"} {
		t.Run(score, func(t *testing.T) {
			c := Config{V: 50, E: 16, H: 24, B: 4, Ts: 7, Tt: 6, Score: score, Adam: defaultAdam}
			md := NewModel(c, 11)
			d := randomBatch(c, rand.New(rand.NewPCG(12, 13)))
			in, out := t.TempDir(), t.TempDir()
			if err := writeDump(in, md, d); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(py, script, "--load", in, "--dump", out, "--optim", "adam")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", script, err, b)
			}
			md.ZeroGrad()
			loss := md.Forward(d)
			md.Backward(d)
			grads := append([]float32(nil), md.G.Flat...)
			md.Update()
			tl, err := readTensor(out, "loss", 1)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(float64(loss-tl[0])) > 1e-5*math.Abs(float64(tl[0])) {
				t.Errorf("loss %v, PyTorch %v", loss, tl[0])
			}
			for i, name := range md.P.names {
				lo, n := md.P.offsets[i], size(md.P.shapes[i])
				tg, err := readTensor(out, "grad_"+name, n)
				if err != nil {
					t.Fatal(err)
				}
				ta, err := readTensor(out, "after_"+name, n)
				if err != nil {
					t.Fatal(err)
				}
				gmax := 0.0
				for _, g := range tg {
					gmax = math.Max(gmax, math.Abs(float64(g)))
				}
				for j := range tg {
					g, w := float64(grads[lo+j]), float64(tg[j])
					if math.Abs(g-w) > 5e-5*gmax+1e-7 {
						t.Fatalf("grad_%s[%d] = %v, PyTorch %v (max |g| %v)", name, j, g, w, gmax)
					}
					p, a := float64(md.P.Flat[lo+j]), float64(ta[j])
					tol := 1e-6 + 1e-5*math.Abs(a)
					if math.Abs(w) < 1e-4*gmax {
						tol = float64(c.Adam.LR) + tol
					}
					if math.Abs(p-a) > tol {
						t.Fatalf("after_%s[%d] = %v, PyTorch %v (gradient %v, PyTorch's %v)", name, j, p, a, g, w)
					}
				}
			}
		})
	}
}
