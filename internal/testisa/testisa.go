// Package testisa reads HEED_TEST_ISAS for the test suites built on kernels
// (attention, rnn): make test's emulated steps set it to run a suite under
// the ISA the emulated CPU exists to check, the generic kernels there being
// kernels' own suite's to check.
package testisa

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/heedml/heed/kernels"
)

// FromEnv returns the ISAs a suite runs under: every ISA this CPU supports,
// or, when HEED_TEST_ISAS is set, those it names (comma-separated, in its
// order) that this CPU supports. A name that is no ISA is an error.
func FromEnv() ([]kernels.ISA, error) {
	only := os.Getenv("HEED_TEST_ISAS")
	if only == "" {
		return kernels.Supported(), nil
	}
	var isas []kernels.ISA
	for _, name := range strings.Split(only, ",") {
		isa, err := kernels.ParseISA(name)
		if err != nil {
			return nil, fmt.Errorf("HEED_TEST_ISAS=%q: %v", only, err)
		}
		if slices.Contains(kernels.Supported(), isa) {
			isas = append(isas, isa)
		}
	}
	return isas, nil
}
