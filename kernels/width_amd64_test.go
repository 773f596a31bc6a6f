//go:build !purego

package kernels

import (
	"os"
	"strconv"
	"testing"
)

// TestAVX512WidthEnv runs this test binary with HEED_AVX512_WIDTH set and
// checks, in the child, the width it chose and what EnvErrors reports: a good
// value (surrounding spaces allowed) sets the width; a bad one is ignored,
// leaving the child's CPU's default, and reported. The child computes its
// own default: under an emulator it may run on another CPU than the parent.
func TestAVX512WidthEnv(t *testing.T) {
	if want := os.Getenv("HEED_TEST_WANT_WIDTH"); want != "" {
		w := defaultAVX512Width()
		if want != "default" {
			w, _ = strconv.Atoi(want)
		}
		if avx512Width != w {
			t.Fatalf("HEED_AVX512_WIDTH=%q: avx512Width = %d, want %d", os.Getenv("HEED_AVX512_WIDTH"), avx512Width, w)
		}
		if got, want := len(EnvErrors()) > 0, os.Getenv("HEED_TEST_WANT_ENVERR") == "1"; got != want {
			t.Fatalf("HEED_AVX512_WIDTH=%q: EnvErrors() = %v, want an error: %v", os.Getenv("HEED_AVX512_WIDTH"), EnvErrors(), want)
		}
		return
	}
	for _, c := range []struct {
		env, width string
		bad        bool
	}{{"256", "256", false}, {"512", "512", false}, {" 256 ", "256", false}, {"384", "default", true}, {"wide", "default", true}} {
		bad := "0"
		if c.bad {
			bad = "1"
		}
		cmd := selfCommand("-test.run", "^TestAVX512WidthEnv$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "HEED_AVX512_WIDTH="+c.env, "HEED_TEST_WANT_WIDTH="+c.width, "HEED_TEST_WANT_ENVERR="+bad)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("HEED_AVX512_WIDTH=%q: %v\n%s", c.env, err, out)
		}
	}
	if err := UseAVX512Width(300); err == nil {
		t.Error("UseAVX512Width(300) succeeded")
	}
}
