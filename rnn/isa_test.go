package rnn

import (
	"os"
	"testing"

	"github.com/heedml/heed/internal/testisa"
	"github.com/heedml/heed/kernels"
)

// testISAs returns the ISAs rnn's tests run under: every ISA this CPU
// supports, or those HEED_TEST_ISAS names (internal/testisa).
func testISAs(t *testing.T) []kernels.ISA {
	t.Helper()
	isas, err := testisa.FromEnv()
	if err != nil {
		t.Fatal(err)
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
