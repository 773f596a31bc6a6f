package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCoefficientsUpToDate refits every polynomial and fails if the committed
// internal/coef/coef.go or internal/coef/log.go differs.
func TestCoefficientsUpToDate(t *testing.T) {
	dir := t.TempDir()
	if b, err := exec.Command("go", "run", ".", "-out", filepath.Join(dir, "coef.go")).CombinedOutput(); err != nil {
		t.Fatalf("fit: %v\n%s", err, b)
	}
	for _, name := range []string{"coef.go", "log.go"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("fit wrote no %s: %v", name, err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "internal", "coef", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("internal/coef/%s is not what asmgen/fit writes: run make generate", name)
		}
	}
}
