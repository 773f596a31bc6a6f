package kernels

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// TestExhaustive sweeps all 2³² float32 inputs of Exp and Tanh under every ISA
// against the float64 oracle (the special-value contract as well: checkExp,
// checkTanh) and logs the largest ULP error and where it occurs: for Exp over
// the inputs whose result is a normal float, for Tanh over all inputs. It runs
// only with HEED_EXHAUSTIVE=1, on all CPUs:
//
//	HEED_EXHAUSTIVE=1 go test -run Exhaustive -v -timeout 1h ./kernels
func TestExhaustive(t *testing.T) {
	if os.Getenv("HEED_EXHAUSTIVE") != "1" {
		t.Skip("set HEED_EXHAUSTIVE=1 to sweep all float32 inputs")
	}
	for _, u := range []unary{expUnary, tanhUnary} {
		t.Run(u.name, func(t *testing.T) {
			forEachISA(t, func(t *testing.T) { sweep(t, u) })
		})
	}
}

// sweepResult is one worker's share of a sweep.
type sweepResult struct {
	worst   int64   // largest ULP error over the checked inputs
	at      float32 // an input where it occurs
	over1   int64   // inputs with an error above 1 ULP
	checked int64
	failed  int64
	first   string
}

func sweep(t *testing.T, u unary) {
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
					var want float32
					if u.name == "Exp" {
						want = float32(math.Exp(float64(v)))
						if !(want >= 0x1p-126) || math.IsInf(float64(want), 0) {
							continue // not a normal result
						}
					} else {
						want = float32(math.Tanh(float64(v)))
						if v != v {
							continue
						}
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

// ftoa formats v with its bit pattern.
func ftoa(v float32) string {
	return strconv.FormatFloat(float64(v), 'g', -1, 32) + " [" + strconv.FormatUint(uint64(math.Float32bits(v)), 16) + "]"
}
