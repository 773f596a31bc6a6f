package bench

import (
	"testing"

	"github.com/klauspost/cpuid/v2"
)

func TestOpenBLASCoreFor(t *testing.T) {
	for _, c := range []struct {
		name            string
		v               cpuid.Vendor
		avx512, avx2fma bool
		want            string
	}{
		{"Intel AVX-512", cpuid.Intel, true, true, "SkylakeX"},
		{"Intel AVX2", cpuid.Intel, false, true, "Haswell"},
		{"AMD Zen 4", cpuid.AMD, true, true, "Zen"},
		{"AMD Zen 2", cpuid.AMD, false, true, "Zen"},
		{"Hygon", cpuid.Hygon, false, true, "Zen"},
		{"other AVX2", cpuid.VIA, false, true, "Haswell"},
		{"Intel SSE only", cpuid.Intel, false, false, ""},
	} {
		if got := openblasCoreFor(c.v, c.avx512, c.avx2fma); got != c.want {
			t.Errorf("%s: openblasCoreFor = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestOpenBLASOverride(t *testing.T) {
	for _, c := range []struct{ chose, want, set string }{
		{"Prescott", "SkylakeX", "SkylakeX"}, // Intel model newer than OpenBLAS's table
		{"Haswell", "SkylakeX", "SkylakeX"},
		{"SkylakeX", "SkylakeX", ""},
		{"Cooperlake", "SkylakeX", ""}, // a known newer core is kept
		{"Zen", "Zen", ""},
		{"SkylakeX", "Zen", ""}, // Zen 4 on a newer OpenBLAS
		{"Sandybridge", "Zen", "Zen"},
		{"Core2", "Haswell", "Haswell"},
		{"Prescott", "", ""},
	} {
		if got := openblasOverride(c.chose, c.want); got != c.set {
			t.Errorf("OpenBLAS chose %s, CPU matches %q: override %q, want %q", c.chose, c.want, got, c.set)
		}
	}
}
