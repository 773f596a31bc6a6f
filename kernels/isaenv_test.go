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
// value leaves the best ISA active and is reported by ISAConfig.
func TestISAEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	best := Supported()[len(Supported())-1]
	if os.Getenv("HEED_ISA") != "" {
		t.Skip("HEED_ISA is set in this run: the best ISA is unknown")
	}
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
		cmd := exec.Command(os.Args[0], "-test.run", "^TestISAEnvChild$", "-test.v")
		cmd.Env = append(os.Environ(), "HEED_ISA_CHILD=1", "HEED_ISA="+c.env)
		out, err := cmd.CombinedOutput()
		if errors.Is(err, syscall.ENOEXEC) {
			t.Skipf("cannot start the test binary as a subprocess (run under an emulator?): %v", err)
		}
		if err != nil {
			t.Errorf("HEED_ISA=%q: %v\n%s", c.env, err, out)
			continue
		}
		want := fmt.Sprintf("active=%v supported=%v requested=%q err=%v", c.active, wantSupported(c.active), strings.TrimSpace(c.env), c.err)
		if !strings.Contains(string(out), want) {
			t.Errorf("HEED_ISA=%q: want %q in\n%s", c.env, want, out)
		}
	}
}

// wantSupported is Supported() capped at isa.
func wantSupported(isa ISA) []ISA {
	s := Supported()
	for i, v := range s {
		if v == isa {
			return s[:i+1]
		}
	}
	return s
}
