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
