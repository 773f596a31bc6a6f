package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestLogCoefficientsUpToDate refits Log's polynomial and fails if the
// committed internal/coef/log.go differs.
func TestLogCoefficientsUpToDate(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeLog(dir); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "log.go"))
	got, err := os.ReadFile(filepath.Join("..", "..", "internal", "coef", "log.go"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("internal/coef/log.go is not what asmgen/fit writes: run make generate")
	}
}
