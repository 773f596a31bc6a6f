package bench

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// TestWriteCSV checks that sizes holding commas (S=16,d=64) stay one field.
func TestWriteCSV(t *testing.T) {
	var buf bytes.Buffer
	WriteCSV(&buf, []Result{{Case: &Case{Kernel: StepDot, Label: "S=16,d=64"}, Impl: &Impl{Name: "heed/avx2"}, Ns: 97.5, Rate: 84, Frac: 0.39, Bound: "BW L1"}})
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Step Luong dot", "S=16,d=64", "heed/avx2", "97.50", "84", "GB/s", "0.3900", "BW L1"}
	if len(recs) != 2 || len(recs[1]) != len(want) {
		t.Fatalf("records %q, want a header and %q", recs, want)
	}
	for i := range want {
		if recs[1][i] != want[i] {
			t.Errorf("field %d (%s) = %q, want %q", i, recs[0][i], recs[1][i], want[i])
		}
	}
}

// TestReadCSV checks that ReadCSV reads back what WriteCSV wrote, with the
// size each label names.
func TestReadCSV(t *testing.T) {
	heed := Impls()[0]
	in := []Result{
		{Case: &Case{Kernel: Dot, N: 4096, Label: "n=4096"}, Impl: heed, Ns: 97.5, Rate: 84, Frac: 0.39, Bound: "BW L1"},
		{Case: &Case{Kernel: MatVecBatch, N: 256, Label: "8×(256×256)"}, Impl: &Impl{Name: "openblas"}, Ns: 12, Rate: 3, Frac: 0.5, Bound: "FMA"},
		{Case: &Case{Kernel: StepBatch, N: 512, Label: "8×(S=512,d=128)"}, Impl: heed, Ns: 1, Rate: 2, Frac: 0.25, Bound: "BW L2"},
		{Case: &Case{Kernel: MultiHead, N: 128, Label: "T=S=128,d=256,4h"}, Impl: heed, Ns: 1, Rate: 2, Frac: 0.25, Bound: "FMA"},
		{Case: &Case{Kernel: StepMemory, N: 32768, Label: "33×(S=32768,d=128) in turn"}, Impl: heed, Ns: 1, Rate: 2, Frac: 0.25, Bound: "BW memory"},
	}
	var buf bytes.Buffer
	WriteCSV(&buf, in)
	out, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d results, wrote %d", len(out), len(in))
	}
	for i, w := range in {
		g := out[i]
		if g.Case.Kernel != w.Case.Kernel || g.Case.N != w.Case.N || g.Case.Label != w.Case.Label || g.Impl.Name != w.Impl.Name ||
			g.Impl.Heed != w.Impl.Heed || g.Ns != w.Ns || g.Rate != w.Rate || g.Frac != w.Frac || g.Bound != w.Bound {
			t.Errorf("result %d: read %v %d %q %s heed=%v %v %v %v %s, wrote %v %d %q %s heed=%v %v %v %v %s", i,
				g.Case.Kernel, g.Case.N, g.Case.Label, g.Impl.Name, g.Impl.Heed, g.Ns, g.Rate, g.Frac, g.Bound,
				w.Case.Kernel, w.Case.N, w.Case.Label, w.Impl.Name, w.Impl.Heed, w.Ns, w.Rate, w.Frac, w.Bound)
		}
	}
	if out[0].Impl != heed {
		t.Errorf("heed's implementation read as a stand-in")
	}
}
