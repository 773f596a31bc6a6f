package kernels

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestISAEnvChild is run by TestISAEnv in a subprocess with HEED_ISA set: it
// prints what the package made of the variable.
func TestISAEnvChild(t *testing.T) {
	if os.Getenv("HEED_ISA_CHILD") != "1" {
		t.Skip("run by TestISAEnv")
	}
	req, err := ISAConfig()
	fmt.Printf("active=%v supported=%v requested=%q err=%v\n", Active(), Supported(), req, err != nil)
}

// TestISAEnv starts this test binary with HEED_ISA set to good, badly spelt
// and unsupported values: none may kill the process; a bad or unsupported
// value leaves the best ISA active and is reported by ISAConfig. The
// expectations come from the child's own ISAs (a run without HEED_ISA), since
// under an emulator the child may run natively on a CPU with more ISAs.
func TestISAEnv(t *testing.T) {
	if os.Getenv("HEED_ISA") != "" {
		t.Skip("HEED_ISA is set in this run: the best ISA is unknown")
	}
	base := isaChild(t, "")
	all := parseSupported(t, base)
	best := all[len(all)-1]
	unsupported := "neon"
	if best == NEON {
		unsupported = "avx2"
	}
	cases := []struct {
		env    string
		active ISA
		err    bool
	}{
		{"", best, false},
		{"generic", Generic, false},
		{" Generic ", Generic, false},
		{"GENERIC\n", Generic, false},
		{best.String(), best, false},
		{"  " + strings.ToUpper(best.String()) + "\t", best, false},
		{"bogus", best, true},
		{"avx 2", best, true},
		{unsupported, best, true},
	}
	for _, c := range cases {
		out := isaChild(t, c.env)
		want := fmt.Sprintf("active=%v supported=%v requested=%q err=%v", c.active, capAt(all, c.active), strings.TrimSpace(c.env), c.err)
		if !strings.Contains(out, want) {
			t.Errorf("HEED_ISA=%q: want %q in\n%s", c.env, want, out)
		}
	}
}

// selfCommand returns the command that runs this test binary again with
// args, the way this one runs: through the wrapper HEED_TEST_EXEC names (the
// -exec command of make test's emulated steps, which set it), or directly.
func selfCommand(args ...string) *exec.Cmd {
	w := strings.Fields(os.Getenv("HEED_TEST_EXEC"))
	if len(w) == 0 {
		return exec.Command(os.Args[0], args...)
	}
	return exec.Command(w[0], append(append(w[1:], os.Args[0]), args...)...)
}

// isaChild runs TestISAEnvChild in a subprocess with HEED_ISA=env and returns
// its output.
func isaChild(t *testing.T, env string) string {
	t.Helper()
	cmd := selfCommand("-test.run", "^TestISAEnvChild$", "-test.v")
	cmd.Env = append(os.Environ(), "HEED_ISA_CHILD=1", "HEED_ISA="+env)
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.ENOEXEC) && os.Getenv("HEED_TEST_EXEC") == "" {
		t.Skipf("cannot start the test binary directly (run under an emulator without HEED_TEST_EXEC?): %v", err)
	}
	if err != nil {
		t.Fatalf("HEED_ISA=%q: %v\n%s", env, err, out)
	}
	return string(out)
}

// parseSupported reads the supported=[...] list that TestISAEnvChild printed.
func parseSupported(t *testing.T, out string) []ISA {
	t.Helper()
	i := strings.Index(out, "supported=[")
	j := strings.Index(out[max(i, 0):], "]")
	if i < 0 || j < 0 {
		t.Fatalf("no supported=[...] in the child's output:\n%s", out)
	}
	var isas []ISA
	for _, name := range strings.Fields(out[i+len("supported=[") : i+j]) {
		isa, err := ParseISA(name)
		if err != nil {
			t.Fatalf("child's output: %v", err)
		}
		isas = append(isas, isa)
	}
	if len(isas) == 0 {
		t.Fatalf("empty supported list in the child's output:\n%s", out)
	}
	return isas
}

// capAt is s capped at isa.
func capAt(s []ISA, isa ISA) []ISA {
	for i, v := range s {
		if v == isa {
			return s[:i+1]
		}
	}
	return s
}
