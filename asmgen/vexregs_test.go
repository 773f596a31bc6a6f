package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAVX2RegistersVEX fails if a generated AVX2 function uses X16–X31 or
// Y16–Y31: avo allocates vector registers from all 32, but those need EVEX
// (AVX-512VL) encodings, which fault on AVX2-only CPUs. Keeping more constants
// resident than 16 registers hold would do that.
func TestAVX2RegistersVEX(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "kernels", "*_amd64.s"))
	if len(files) == 0 {
		t.Fatal("no generated amd64 assembly found")
	}
	high := regexp.MustCompile(`\b[XY](1[6-9]|2[0-9]|3[01])\b`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fn := ""
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "TEXT ") {
				fn = strings.Fields(line)[1]
			}
			if strings.Contains(fn, "AVX2(SB)") && high.MatchString(line) {
				t.Errorf("%s:%d: %s uses an EVEX-only register: %s", filepath.Base(f), i+1, fn, strings.TrimSpace(line))
			}
		}
	}
}
