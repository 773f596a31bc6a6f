package bench

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the benchmarks (make bench-full with BENCH_TAGS=heedcgo) on
// the OpenBLAS core that matches the CPU, as the report does.
func TestMain(m *testing.M) {
	if err := ReexecForOpenBLAS(); err != nil {
		fmt.Fprintln(os.Stderr, "bench: re-executing with OPENBLAS_CORETYPE:", err)
	}
	os.Exit(m.Run())
}
