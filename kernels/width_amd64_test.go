//go:build !purego

package kernels

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// TestAVX512WidthRule checks the start-up choice of the dual-width AVX-512
// kernels' width by CPU vendor and family.
func TestAVX512WidthRule(t *testing.T) {
	for _, c := range []struct {
		vendor cpuid.Vendor
		family int
		want   int
	}{
		{cpuid.Intel, 6, 512},    // Skylake-SP … Emerald Rapids, Ice Lake, Tiger Lake
		{cpuid.AMD, 0x19, 256},   // Zen 4: 512-bit operations in two halves
		{cpuid.AMD, 0x1a, 512},   // Zen 5: full-width 512-bit datapath
		{cpuid.AMD, 0x17, 256},   // Zen 1–2 (no AVX-512: never asked)
		{cpuid.Hygon, 0x18, 256}, // other vendors keep 256
		{cpuid.VendorUnknown, 6, 256},
	} {
		if got := avx512WidthFor(c.vendor, c.family); got != c.want {
			t.Errorf("avx512WidthFor(%v, %#x) = %d, want %d", c.vendor, c.family, got, c.want)
		}
	}
	t.Logf("this CPU: %v family %#x model %#x: AVX512Width() = %d", cpuid.CPU.VendorID, cpuid.CPU.Family, cpuid.CPU.Model, AVX512Width())
}

// TestAVX512WidthEnv runs this test binary with HEED_AVX512_WIDTH set and
// checks the width the child chose and what EnvErrors reports: a good value
// (surrounding spaces allowed) sets the width; a bad one is ignored, leaving
// the CPU's default, and reported.
func TestAVX512WidthEnv(t *testing.T) {
	if want := os.Getenv("HEED_TEST_WANT_WIDTH"); want != "" {
		w, _ := strconv.Atoi(want)
		if avx512Width != w {
			t.Fatalf("HEED_AVX512_WIDTH=%q: avx512Width = %d, want %d", os.Getenv("HEED_AVX512_WIDTH"), avx512Width, w)
		}
		if got, want := len(EnvErrors()) > 0, os.Getenv("HEED_TEST_WANT_ENVERR") == "1"; got != want {
			t.Fatalf("HEED_AVX512_WIDTH=%q: EnvErrors() = %v, want an error: %v", os.Getenv("HEED_AVX512_WIDTH"), EnvErrors(), want)
		}
		return
	}
	def := strconv.Itoa(defaultAVX512Width())
	for _, c := range []struct {
		env, width string
		bad        bool
	}{{"256", "256", false}, {"512", "512", false}, {" 256 ", "256", false}, {"384", def, true}, {"wide", def, true}} {
		bad := "0"
		if c.bad {
			bad = "1"
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestAVX512WidthEnv$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "HEED_AVX512_WIDTH="+c.env, "HEED_TEST_WANT_WIDTH="+c.width, "HEED_TEST_WANT_ENVERR="+bad, "HEED_DOTSOFTMAX_PF=", "HEED_DOTSOFTMAX_AHEAD=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("HEED_AVX512_WIDTH=%q: %v\n%s", c.env, err, out)
		}
	}
	if err := UseAVX512Width(300); err == nil {
		t.Error("UseAVX512Width(300) succeeded")
	}
}
