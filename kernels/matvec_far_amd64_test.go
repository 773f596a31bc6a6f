//go:build !purego

package kernels

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// forEachMatVecRoute runs f with MatVec routed by span (the default), then
// with each of matVecFarVariants taken at every size (matVecFarBytes 0), so
// that the tests check every far kernel at every shape. With -short (the
// emulated CI runs) it takes only the variants defaultMatVecFar can choose.
func forEachMatVecRoute(t *testing.T, f func(t *testing.T)) {
	t.Run("by-span", f)
	oldV, oldB := matVecFarVariant, matVecFarBytes
	defer func() { matVecFarVariant, matVecFarBytes = oldV, oldB }()
	variants := matVecFarVariants
	if testing.Short() {
		variants = []string{defaultMatVecFar(cpuid.Intel)}
		if v := defaultMatVecFar(cpuid.AMD); v != variants[0] {
			variants = append(variants, v)
		}
	}
	for _, v := range variants {
		matVecFarVariant, matVecFarBytes = v, 0
		t.Run("far-"+v, f)
	}
}

// TestMatVecFarRule checks defaultMatVecFar: split4-pf1k on Intel, rows4 (the
// kernel for every span) elsewhere, and that every variant it names exists.
func TestMatVecFarRule(t *testing.T) {
	for _, c := range []struct {
		vendor cpuid.Vendor
		want   string
	}{{cpuid.Intel, "split4-pf1k"}, {cpuid.AMD, "rows4"}, {cpuid.Hygon, "rows4"}, {cpuid.VendorUnknown, "rows4"}} {
		got := defaultMatVecFar(c.vendor)
		if got != c.want {
			t.Errorf("defaultMatVecFar(%v) = %q, want %q", c.vendor, got, c.want)
		}
		if !slices.Contains(matVecFarVariants, got) {
			t.Errorf("defaultMatVecFar(%v) = %q: not in matVecFarVariants", c.vendor, got)
		}
	}
}

// TestDotSoftmaxFarSplitRule checks defaultDotSoftmaxFarSplit: the
// four-stream far kernel on Intel, one stream elsewhere, and that every
// variant it names is in dotSoftmaxSplits.
func TestDotSoftmaxFarSplitRule(t *testing.T) {
	for _, c := range []struct {
		vendor cpuid.Vendor
		want   string
	}{{cpuid.Intel, "4"}, {cpuid.AMD, "0"}, {cpuid.Hygon, "0"}, {cpuid.VendorUnknown, "0"}} {
		got := defaultDotSoftmaxFarSplit(c.vendor)
		if got != c.want {
			t.Errorf("defaultDotSoftmaxFarSplit(%v) = %q, want %q", c.vendor, got, c.want)
		}
		if !slices.ContainsFunc(dotSoftmaxSplits, func(k dotSoftmaxSplit) bool { return k.name == got }) {
			t.Errorf("defaultDotSoftmaxFarSplit(%v) = %q: not in dotSoftmaxSplits", c.vendor, got)
		}
	}
}

// TestStreamEnv runs this test binary with HEED_MATVEC_FAR and
// HEED_DOTSOFTMAX_SPLIT set and checks what the child chose and whether
// EnvErrors reports the value: a good one sets the choice, a bad one is
// ignored (the CPU's default stays) and reported.
func TestStreamEnv(t *testing.T) {
	if want, ok := os.LookupEnv("HEED_TEST_WANT_STREAM"); ok {
		got := matVecFarVariant + "," + dotSoftmaxFarSplit
		if got != want {
			t.Fatalf("HEED_MATVEC_FAR=%q HEED_DOTSOFTMAX_SPLIT=%q: chose %s, want %s", os.Getenv("HEED_MATVEC_FAR"), os.Getenv("HEED_DOTSOFTMAX_SPLIT"), got, want)
		}
		if got, want := len(EnvErrors()), os.Getenv("HEED_TEST_WANT_ENVERRS"); strconv.Itoa(got) != want {
			t.Fatalf("EnvErrors() = %v, want %s errors", EnvErrors(), want)
		}
		return
	}
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	defV := defaultMatVecFar(cpuid.CPU.VendorID)
	defS := defaultDotSoftmaxFarSplit(cpuid.CPU.VendorID)
	for _, c := range []struct{ matvec, split, want, errs string }{
		{"split4", "0", "split4,0", "0"},
		{" rows4 ", "2", "rows4,2", "0"},
		{"seq-pf4k", " 4", "seq-pf4k,4", "0"},
		{"split4-pf1k", "", "split4-pf1k," + defS, "0"},
		{"split4", "8-t2", "split4,8-t2", "0"},
		{"split4", "8-pf0", "split4," + defS, "1"},
		{"split8", "3", defV + "," + defS, "2"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestStreamEnv$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "HEED_MATVEC_FAR="+c.matvec, "HEED_DOTSOFTMAX_SPLIT="+c.split,
			"HEED_TEST_WANT_STREAM="+c.want, "HEED_TEST_WANT_ENVERRS="+c.errs,
			"HEED_AVX512_WIDTH=", "HEED_DOTSOFTMAX_PF=", "HEED_DOTSOFTMAX_AHEAD=", "HEED_ISA=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("HEED_MATVEC_FAR=%q HEED_DOTSOFTMAX_SPLIT=%q: %v\n%s", c.matvec, c.split, err, out)
		}
	}
}

// BenchmarkMatVecFar is MatVec from memory under each of matVecFarVariants
// (taken at every size), beside Sum over one matrix (one stream, the same
// bytes): R×C×M takes M matrices in turn, so that each comes from memory
// (M·R·C·4 bytes beyond the L3 of the machine measured).
func BenchmarkMatVecFar(b *testing.B) {
	oldV, oldB := matVecFarVariant, matVecFarBytes
	defer func() { matVecFarVariant, matVecFarBytes = oldV, oldB }()
	for _, sh := range [][3]int{{32000, 512, 4}, {4096, 4096, 4}} {
		r, c, m := sh[0], sh[1], sh[2]
		as := make([]Matrix, m)
		for i := range as {
			as[i] = Matrix{Rows: r, Cols: c, Stride: c, Data: ramp(r * c)}
		}
		x, dst := ramp(c), make([]float32, r)
		b.Run(fmt.Sprintf("%dx%dx%d", r, c, m), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				b.Run("sum", func(b *testing.B) {
					b.SetBytes(int64(4 * r * c))
					i := 0
					cl := startCPU(b)
					for b.Loop() {
						sink = Sum(as[i].Data)
						i = (i + 1) % m
					}
					cl.stop()
				})
				for _, v := range matVecFarVariants {
					matVecFarVariant, matVecFarBytes = v, 0
					b.Run(v, func(b *testing.B) {
						b.SetBytes(int64(4 * r * c))
						i := 0
						cl := startCPU(b)
						for b.Loop() {
							MatVec(dst, as[i], x)
							i = (i + 1) % m
						}
						cl.stop()
					})
				}
				matVecFarVariant, matVecFarBytes = oldV, oldB
			})
		})
	}
}
