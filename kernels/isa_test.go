package kernels

import (
	"os"
	"strings"
	"testing"
)

// TestRequiredISA fails when HEED_REQUIRE_ISA (a comma-separated list) names
// an ISA this run cannot exercise, so CI cannot pass by silently skipping one.
func TestRequiredISA(t *testing.T) {
	t.Logf("supported: %v, active: %v", Supported(), Active())
	req := os.Getenv("HEED_REQUIRE_ISA")
	if req == "" {
		t.Skip("HEED_REQUIRE_ISA not set")
	}
	for _, name := range strings.Split(req, ",") {
		isa, err := ParseISA(strings.TrimSpace(name))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range Supported() {
			found = found || s == isa
		}
		if !found {
			t.Errorf("HEED_REQUIRE_ISA names %v, which this run does not support (supported: %v)", isa, Supported())
		}
	}
}

func TestParseISA(t *testing.T) {
	for _, isa := range []ISA{Generic, AVX2, AVX512, NEON} {
		got, err := ParseISA(isa.String())
		if err != nil || got != isa {
			t.Errorf("ParseISA(%q) = %v, %v", isa.String(), got, err)
		}
	}
	if _, err := ParseISA("sse"); err == nil {
		t.Error("ParseISA(sse) succeeded")
	}
	if err := Use(ISA(200)); err == nil {
		t.Error("Use(ISA(200)) succeeded")
	}
}
