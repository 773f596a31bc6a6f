package rnn

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/heedml/heed/kernels"
)

// testISAs returns every ISA this CPU supports, or only those named in
// HEED_TEST_ISAS (comma-separated) when it is set: make test's emulated steps
// set it, since the generic kernels there are what kernels' suite checks and
// rnn's own code is the same Go under every ISA.
func testISAs(t *testing.T) []kernels.ISA {
	t.Helper()
	only := os.Getenv("HEED_TEST_ISAS")
	if only == "" {
		return kernels.Supported()
	}
	var isas []kernels.ISA
	for _, name := range strings.Split(only, ",") {
		isa, err := kernels.ParseISA(name)
		if err != nil {
			t.Fatalf("HEED_TEST_ISAS=%q: %v", only, err)
		}
		if slices.Contains(kernels.Supported(), isa) {
			isas = append(isas, isa)
		}
	}
	return isas
}

// skipSparse skips t when HEED_TEST_SPARSE is set (make test's Haswell
// step): what it checks (allocations) is Go that the native run checks.
func skipSparse(t *testing.T) {
	t.Helper()
	if os.Getenv("HEED_TEST_SPARSE") != "" {
		t.Skip("HEED_TEST_SPARSE: checked by the native run")
	}
}
