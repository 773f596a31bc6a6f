//go:build !purego

package kernels

import (
	"os"
	"slices"
	"strconv"
	"testing"
)

// TestAVX512WidthEnv runs this test binary with HEED_AVX512_WIDTH set and
// checks, in the child, the width it chose and what EnvErrors reports: a good
// value (surrounding spaces allowed) sets the width; a bad one is ignored,
// leaving the child's CPU's widths, and reported. The child reads its own
// route: under an emulator it may run on another CPU than the parent.
func TestAVX512WidthEnv(t *testing.T) {
	if want := os.Getenv("HEED_TEST_WANT_WIDTH"); want != "" {
		w := 0 // each family at its route's width
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

// TestAVX512WidthFamilies checks each class's width per family, what
// UseAVX512Width forces and that UseAVX512Width(0) restores the route.
func TestAVX512WidthFamilies(t *testing.T) {
	defer func(r route, w int) { rt, avx512Width = r, w }(rt, avx512Width)
	all := []families{famVector, famDot, famMatVecBatch, famStep, famMatTVec, famStepF16}
	for _, c := range []struct {
		class cpuClass
		zmm   []families
	}{
		{classOther, nil},
		{classIntel, all},
		{classZen4, []families{famDot, famMatVecBatch, famStep, famMatTVec}},
		{classZen5, all},
	} {
		rt = routes[c.class]
		for _, force := range []int{0, 256, 512} {
			if err := UseAVX512Width(force); err != nil {
				t.Fatal(err)
			}
			if force == 0 {
				avx512Width = 0 // the route's widths, whatever HEED_AVX512_WIDTH says
			}
			for _, f := range all {
				want := force == 512 || force == 0 && slices.Contains(c.zmm, f)
				if got := zmm(f); got != want {
					t.Errorf("%v, width forced to %d: zmm(%b) = %v, want %v", c.class, force, f, got, want)
				}
			}
		}
	}
	// The fused steps' families by format and variant.
	for _, c := range []struct {
		f       Format
		variant int
		want    families
	}{
		{FormatF16, 0, famStepF16},
		{FormatF16, 1, famStep},
		{FormatF16, 2, famStep},
		{FormatBF16, 0, famStep},
		{FormatQ8, 0, famStep},
	} {
		if got := stepFamily(c.f, c.variant); got != c.want {
			t.Errorf("stepFamily(%v, %d) = %b, want %b", c.f, c.variant, got, c.want)
		}
	}
	// MatVecBatch's columns under the route's batchZMMCols.
	for _, c := range []struct {
		class cpuClass
		force int
		cols  int
		want  bool
	}{
		{classZen4, 0, 255, false},
		{classZen4, 0, 256, true},
		{classZen4, 512, 64, true},
		{classZen4, 256, 1024, false},
		{classIntel, 0, 64, true},
		{classOther, 0, 1024, false},
	} {
		rt = routes[c.class]
		if err := UseAVX512Width(c.force); err != nil {
			t.Fatal(err)
		}
		if c.force == 0 {
			avx512Width = 0
		}
		if got := zmmBatch(c.cols); got != c.want {
			t.Errorf("%v, width forced to %d: zmmBatch(%d) = %v, want %v", c.class, c.force, c.cols, got, c.want)
		}
	}
	avx512Width = 512
	if err := UseAVX512Width(0); err != nil || avx512Width != envWidth {
		t.Errorf("UseAVX512Width(0) = %v: avx512Width = %d, want HEED_AVX512_WIDTH's %d", err, avx512Width, envWidth)
	}
}
