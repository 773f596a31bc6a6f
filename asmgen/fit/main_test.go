package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCoefficientsUpToDate refits the coefficients and fails if the committed
// internal/coef/coef.go differs.
func TestCoefficientsUpToDate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "coef.go")
	if b, err := exec.Command("go", "run", ".", "-out", out).CombinedOutput(); err != nil {
		t.Fatalf("fit: %v\n%s", err, b)
	}
	want, _ := os.ReadFile(out)
	got, err := os.ReadFile(filepath.Join("..", "..", "internal", "coef", "coef.go"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("internal/coef/coef.go is not what asmgen/fit writes: run make generate")
	}
}
