// Command report compares heed with its peers on this CPU: it measures the
// machine's ceilings and every implementation built in (build with -tags
// heedcgo for OpenBLAS and SLEEF, GOEXPERIMENT=simd for go-highway and
// simd/archsimd), then writes a markdown table, a CSV, two SVG plots
// (throughput against size; heed ÷ the best peer) and a short section for
// README (PERFORMANCE.md). With OpenBLAS built in, it first re-executes itself
// with OPENBLAS_CORETYPE set where OpenBLAS does not know the CPU (see
// bench.ReexecForOpenBLAS).
// `make bench` runs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/heedml/heed/bench"
)

func main() {
	full := flag.Bool("full", false, "every size (default: the representative subset)")
	only := flag.String("kernels", "", "comma-separated kernels to run (default: all)")
	round := flag.Duration("round", 10*time.Millisecond, "length of one timing round")
	rounds := flag.Int("rounds", 11, "timing rounds per measurement (the median is kept)")
	md := flag.String("md", "RESULTS.md", "markdown output")
	csv := flag.String("csv", "results.csv", "CSV output")
	svg := flag.String("svg", "results.svg", "SVG plot output")
	ratioSVG := flag.String("ratio-svg", "results-ratio.svg", "SVG plot of heed ÷ best peer")
	perf := flag.String("perf", "PERFORMANCE.md", "short section for README")
	cmdName := flag.String("command", "make bench", "command named in the report")
	from := flag.String("from", "", "draw the ratio plot (-ratio-svg) from this results CSV instead of measuring")
	title := flag.String("title", "", "with -from: the machine named in the plot's title")
	obCore := flag.String("openblas-core", "auto", "auto: where OpenBLAS chose a core below this CPU's instruction set, run again with OPENBLAS_CORETYPE set to the matching one; native: keep OpenBLAS's choice")
	flag.Parse()
	if *from != "" {
		redraw(*from, *title, *ratioSVG)
		return
	}
	switch *obCore {
	case "auto":
		if err := bench.ReexecForOpenBLAS(); err != nil {
			fmt.Fprintln(os.Stderr, "report: re-executing with OPENBLAS_CORETYPE:", err)
			os.Exit(1)
		}
	case "native":
	default:
		fmt.Fprintf(os.Stderr, "report: -openblas-core %q: want auto or native\n", *obCore)
		os.Exit(2)
	}

	o := bench.Options{Full: *full, Round: *round, Rounds: *rounds, Progress: os.Stderr}
	if *only != "" {
		for _, name := range strings.Split(*only, ",") {
			found := false
			for _, k := range bench.Kernels {
				if strings.EqualFold(k.String(), name) {
					o.Kernels, found = append(o.Kernels, k), true
				}
			}
			if !found {
				fmt.Fprintf(os.Stderr, "report: unknown kernel %q\n", name)
				os.Exit(2)
			}
		}
	}
	env := bench.CurrentEnv(*cmdName)
	fmt.Fprintf(os.Stderr, "heed bench on %s (%s), %s\n", env.CPU, env.CPUID, env.Go)
	if env.OpenBLAS != "" {
		fmt.Fprintf(os.Stderr, "OpenBLAS: %s\n", env.OpenBLAS)
	}
	fmt.Fprintf(os.Stderr, "implementations:")
	for _, im := range bench.Impls() {
		fmt.Fprintf(os.Stderr, " %s", im.Name)
	}
	fmt.Fprintf(os.Stderr, "\nmeasuring ceilings...\n")
	ceil := bench.MeasureCeilings(*round, *rounds)
	rs := bench.Run(o, ceil)
	// Ceilings again after the kernels: keep the best of both, and recompute
	// the fractions against it.
	fmt.Fprintf(os.Stderr, "measuring ceilings again...\n")
	ceil = ceil.Max(bench.MeasureCeilings(*round, *rounds))
	bench.Refraction(rs, ceil)

	var buf bytes.Buffer
	bench.WriteMarkdown(&buf, env, ceil, rs)
	os.Stdout.Write(buf.Bytes())
	write(*md, buf.Bytes())
	buf.Reset()
	bench.WriteCSV(&buf, rs)
	write(*csv, buf.Bytes())
	buf.Reset()
	bench.WriteSVG(&buf, "heed vs peers: "+env.CPU, ceil, rs)
	write(*svg, buf.Bytes())
	buf.Reset()
	bench.WriteRatioSVG(&buf, "heed ÷ best peer: "+env.CPU, rs)
	write(*ratioSVG, buf.Bytes())
	buf.Reset()
	bench.WritePerformance(&buf, env, rs)
	write(*perf, buf.Bytes())
	fmt.Fprintln(os.Stderr)
	for _, s := range bench.Summary(rs) {
		fmt.Fprintln(os.Stderr, s)
	}
	fmt.Fprintf(os.Stderr, "wrote %s, %s, %s, %s, %s\n", *md, *csv, *svg, *ratioSVG, *perf)
}

// redraw writes the ratio plot of the results in a CSV that the report wrote
// (the throughput plot needs the ceilings, which the CSV does not hold).
func redraw(from, title, ratioSVG string) {
	f, err := os.Open(from)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	rs, err := bench.ReadCSV(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	if title == "" {
		title = from
	}
	var buf bytes.Buffer
	bench.WriteRatioSVG(&buf, "heed ÷ best peer: "+title, rs)
	write(ratioSVG, buf.Bytes())
	fmt.Fprintf(os.Stderr, "wrote %s from %s\n", ratioSVG, from)
}

func write(name string, b []byte) {
	if name == "" {
		return
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}
