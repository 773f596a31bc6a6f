//go:build heedtrial && unix

package attention

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heedml/heed/kernels"
)

// TestMultiHeadTrial alternates configurations of the tiled MultiHead inside
// one process, as attention/DESIGN.md's measurements do: each round runs every
// configuration in turn (one warm-up call, then the timed calls) on the prefill
// shapes of BenchmarkPrefill, and the log gives each configuration's median
// GFLOP/s of thread CPU time (causal FLOPs) and the median and quartiles of
// its per-round ratio to the first configuration. Alternating within a round
// is what makes the ratios hold on a machine whose speed moves between
// phases. A configuration is rows×keys×diag[/phase KiB], for example
//
//	MH_TRIAL='192x512x96,256x512x128,192x512x96/512' MH_TRIAL_ROUNDS=25 \
//	  GOMAXPROCS=1 go test -tags heedtrial -run TestMultiHeadTrial -v ./attention
//
// MH_TRIAL_ISA names the ISA (as HEED_ISA does; default the widest). A code
// change is compared by adding a temporary switch read by the code under
// test and setting it from a copy of this test.
func TestMultiHeadTrial(t *testing.T) {
	spec := os.Getenv("MH_TRIAL")
	if spec == "" {
		t.Skip("MH_TRIAL is not set")
	}
	rounds := 25
	if r, err := strconv.Atoi(os.Getenv("MH_TRIAL_ROUNDS")); err == nil && r > 0 {
		rounds = r
	}
	if name := os.Getenv("MH_TRIAL_ISA"); name != "" {
		found := false
		for _, isa := range kernels.Supported() {
			if isa.String() == name {
				defer kernels.Use(kernels.Active())
				kernels.Use(isa)
				found = true
			}
		}
		if !found {
			t.Fatalf("MH_TRIAL_ISA=%s is not supported here", name)
		}
	}
	type config struct {
		name            string
		rows, keys, dia int
		phase           int // bytes; 0 keeps the default
	}
	var cfgs []config
	for _, f := range strings.Split(spec, ",") {
		var c config
		c.name = f
		s, ph, hasPhase := strings.Cut(f, "/")
		if _, err := fmt.Sscanf(s, "%dx%dx%d", &c.rows, &c.keys, &c.dia); err != nil {
			t.Fatalf("MH_TRIAL: %q is not rows×keys×diag[/phase KiB]: %v", f, err)
		}
		if hasPhase {
			kib, err := strconv.Atoi(ph)
			if err != nil {
				t.Fatalf("MH_TRIAL: %q: phase %q is not KiB", f, ph)
			}
			c.phase = kib << 10
		}
		cfgs = append(cfgs, c)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, c := range []struct{ T, dk, heads, kv, calls int }{
		{512, 64, 1, 1, 16}, {512, 64, 8, 8, 2}, {512, 64, 8, 2, 2}, {2048, 128, 1, 1, 1}, {2048, 128, 8, 8, 1},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		q, k, v := randMat(rng, c.T, c.heads*c.dk, 0), randMat(rng, c.T, c.kv*c.dk, 0), randMat(rng, c.T, c.kv*c.dk, 0)
		out := randMat(rng, c.T, c.heads*c.dk, 0)
		flops := float64(c.heads) * 2 * float64(c.T) * float64(c.T) * float64(2*c.dk) / 2 * float64(c.calls)
		var ws Workspace
		rates := make([][]float64, len(cfgs))
		for range rounds {
			for i, cf := range cfgs {
				oldTiles, oldTune := tileSize, tune
				tileSize.rows, tileSize.keys, tileSize.diag = cf.rows, cf.keys, cf.dia
				if cf.phase > 0 {
					tune.multiHeadPhase = cf.phase
				}
				GroupedQuery(out, q, k, v, c.heads, c.kv, Causal, &ws)
				t0 := threadCPU()
				for range c.calls {
					GroupedQuery(out, q, k, v, c.heads, c.kv, Causal, &ws)
				}
				rates[i] = append(rates[i], flops/float64(threadCPU()-t0))
				tileSize, tune = oldTiles, oldTune
			}
		}
		line := fmt.Sprintf("T=S=%d d_k=%d heads=%d kv=%d:", c.T, c.dk, c.heads, c.kv)
		for i, cf := range cfgs {
			ratio := make([]float64, rounds)
			for j := range ratio {
				ratio[j] = rates[i][j] / rates[0][j]
			}
			slices.Sort(ratio)
			r := slices.Clone(rates[i])
			slices.Sort(r)
			line += fmt.Sprintf("  %s %.1f GFLOP/s ×%.3f (%.3f–%.3f)", cf.name, r[rounds/2], ratio[rounds/2], ratio[rounds/4], ratio[3*rounds/4])
		}
		t.Log(line)
	}
}
