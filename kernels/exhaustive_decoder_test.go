package kernels

import (
	"math"
	"os"
	"runtime"
	"sync"
	"testing"
)

// TestExhaustiveSigmoidLog sweeps all 2³² float32 inputs of Sigmoid and Log
// under every ISA against the float64 oracle (and their special-value
// contracts: checkSigmoid, checkLog), logging the largest ULP error and where
// it occurs, over the inputs whose correctly rounded result is a normal or
// zero float32. It runs only with HEED_EXHAUSTIVE=1, and HEED_SWEEP_ISA=name
// limits it to one ISA:
//
//	HEED_EXHAUSTIVE=1 go test -run ExhaustiveSigmoidLog -v -timeout 1h ./kernels
func TestExhaustiveSigmoidLog(t *testing.T) {
	if os.Getenv("HEED_EXHAUSTIVE") != "1" {
		t.Skip("set HEED_EXHAUSTIVE=1 to sweep all float32 inputs")
	}
	oracles := map[string]func(float32) float32{
		"Sigmoid": func(x float32) float32 { return float32(sigmoid64(float64(x))) },
		"Log":     func(x float32) float32 { return float32(math.Log(float64(x))) },
	}
	for _, u := range []unary{sigmoidUnary, logUnary} {
		t.Run(u.name, func(t *testing.T) {
			oracle := oracles[u.name]
			only := os.Getenv("HEED_SWEEP_ISA")
			forEachISA(t, func(t *testing.T) {
				if only != "" && Active().String() != only {
					t.Skip("HEED_SWEEP_ISA=" + only)
				}
				sweepWith(t, u, func(x float32) (float32, bool) {
					w := oracle(x)
					return w, x == x && isFinite(w) && (w == 0 || math.Abs(float64(w)) >= 0x1p-126)
				})
			})
		})
	}
}

// sweepWith is sweep with the oracle as a parameter: oracle returns the
// correctly rounded result of x and whether x's ULP error counts.
func sweepWith(t *testing.T, u unary, oracle func(x float32) (float32, bool)) {
	const chunk = 1 << 16
	workers := runtime.GOMAXPROCS(0)
	results := make([]sweepResult, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := &results[w]
			x, got := make([]float32, chunk), make([]float32, chunk)
			for base := uint64(w) * chunk; base < 1<<32; base += uint64(workers) * chunk {
				for i := range x {
					x[i] = math.Float32frombits(uint32(base) + uint32(i))
				}
				u.kernel(got, x)
				for i, v := range x {
					if msg := u.check(v, got[i]); msg != "" {
						if r.failed++; r.first == "" {
							r.first = u.name + "(" + ftoa(v) + ") = " + ftoa(got[i]) + ": " + msg
						}
						continue
					}
					want, ok := oracle(v)
					if !ok {
						continue
					}
					r.checked++
					d := ulps(got[i], want)
					if d > 1 {
						r.over1++
					}
					if d > r.worst {
						r.worst, r.at = d, v
					}
				}
			}
		}(w)
	}
	wg.Wait()
	var total sweepResult
	for _, r := range results {
		total.checked += r.checked
		total.over1 += r.over1
		total.failed += r.failed
		if r.worst > total.worst {
			total.worst, total.at = r.worst, r.at
		}
		if total.first == "" {
			total.first = r.first
		}
	}
	t.Logf("%s: max error %d ULP at x = %v (%#08x); %d of %d checked inputs above 1 ULP",
		u.name, total.worst, total.at, math.Float32bits(total.at), total.over1, total.checked)
	if total.failed > 0 {
		t.Errorf("%d inputs fail the contract; first: %s", total.failed, total.first)
	}
}
