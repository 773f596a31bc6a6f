// Package bench compares heed's kernels with the Go peers, OpenBLAS and SLEEF,
// side by side in one process, against the machine's own ceilings. It is its
// own module so that the peers never enter the module graph of code that
// imports heed.
//
//	make bench       heed (every ISA) beside goloop, gonum, vek, tphakala
//	make bench-cgo   … and OpenBLAS and SLEEF (apt-get install libopenblas-dev libsleef-dev)
//	make bench-all   … and go-highway and simd/archsimd (GOEXPERIMENT=simd)
//	make bench-full  every size as go test benchmarks, -count 6, for benchstat
//
// The report (cmd/report) writes RESULTS.md (tables, targets), results.csv,
// results.svg (throughput against size, one line per implementation) and
// results-ratio.svg (heed ÷ the best single-threaded peer per kernel and
// size). It prints the CPU's vendor, family and model and OpenBLAS's core,
// which it sets (OPENBLAS_CORETYPE) where OpenBLAS does not know the CPU
// (openblas.go).
//
// Files: impl.go (the registry: one Impl per implementation, nil fields for
// kernels it lacks), heed.go (heed under each ISA and split over goroutines),
// goloop.go, gonum.go, vek.go, tphakala.go (pure-Go peers), cgo_peers.go
// (tag heedcgo), simd_peers.go (GOEXPERIMENT=simd), cases.go (inputs and the
// work per call), attention.go and decode.go (attention steps; the decode
// step from memory, Memories in turn), decode_format.go (the decode step on a
// cache stored as float32, bfloat16, float16 or q8, in L2 and from memory;
// the peers' own 16- and 8-bit steps in tphakala_format.go and format_simd.go), prefill.go and prefill_simd.go (causal
// multi-head and grouped-query prefill rows, timed by BenchmarkPrefillPeers),
// backward.go (the training calls' forward and backward, BenchmarkBackward),
// measure.go (round-robin timing on thread CPU time),
// ceiling.go and internal/roof (streaming and FMA ceilings), run.go, table.go,
// targets.go, svg.go, svg_ratio.go (the report). peers_test.go checks that every
// implementation's result matches heed's within the error bounds, so the
// comparison compares equal work.
package bench
