package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Row is one comparison of benchstat's CSV output (-format csv, two
// inputs): a benchmark's centre in each file for one unit, the change and
// its p-value.
type Row struct {
	Pkg      string // the table's pkg configuration line
	Name     string // the benchmark, as benchstat names it
	Unit     string // sec/op, cpu-sec/op, B/s, …
	Old, New float64
	Delta    float64 // percent, (new − old)/old; NaN where benchstat shows "~" or nothing
	P        float64 // NaN where not given
	N        string  // the sample counts, "10" or "10+9"
}

// ParseBenchstatCSV reads benchstat's CSV output for two inputs: tables
// separated by blank lines, each preceded by its configuration lines, with
// two header rows (the files; the unit, CI, unit, CI, "vs base", P) and one
// row a benchmark (geomean rows skipped). A configuration line holds for
// the tables after it until its key appears again.
func ParseBenchstatCSV(s string) ([]Row, error) {
	var rows []Row
	pkg := ""
	inTable, header, unit := false, 0, ""
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "" {
			inTable, header, unit = false, 0, ""
			continue
		}
		if !inTable && !strings.HasPrefix(line, ",") {
			// A configuration line (key: value) holds until the key appears again.
			if k, v, ok := strings.Cut(line, ": "); ok && !strings.Contains(k, ",") {
				if k == "pkg" {
					pkg = v
				}
				continue
			}
		}
		rec, err := csv.NewReader(strings.NewReader(line)).Read()
		if err != nil {
			return nil, fmt.Errorf("benchstat CSV: %q: %v", line, err)
		}
		inTable = true
		if header < 2 {
			if header == 1 && len(rec) > 1 {
				unit = rec[1]
			}
			header++
			continue
		}
		if len(rec) < 7 || rec[0] == "geomean" {
			continue
		}
		r := Row{Pkg: pkg, Name: rec[0], Unit: unit,
			Old: parseFloat(rec[1]), New: parseFloat(rec[3]), Delta: parsePercent(rec[5]), P: math.NaN()}
		for f := range strings.FieldsSeq(rec[6]) {
			if v, ok := strings.CutPrefix(f, "p="); ok {
				r.P = parseFloat(v)
			} else if v, ok := strings.CutPrefix(f, "n="); ok {
				r.N = v
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func parseFloat(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func parsePercent(s string) float64 {
	s = strings.TrimSpace(s)
	if !strings.HasSuffix(s, "%") {
		return math.NaN()
	}
	return parseFloat(strings.TrimPrefix(strings.TrimSuffix(s, "%"), "+"))
}

// Direction is whether a unit is better lower (times), higher (rates) or
// says nothing of speed (allocations, counts).
func Direction(unit string) int {
	switch {
	case strings.HasSuffix(unit, "sec/op"), strings.HasSuffix(unit, "ns/op"):
		return -1 // lower is better
	case strings.HasSuffix(unit, "/s"):
		return +1 // higher is better
	}
	return 0
}

// Slower returns the rows whose change is significant (p < alpha) and
// makes the benchmark slower by more than threshold percent: a time that
// grew or a rate that fell by more than threshold.
func Slower(rows []Row, alpha, threshold float64) []Row {
	var out []Row
	for _, r := range rows {
		if math.IsNaN(r.Delta) || math.IsNaN(r.P) || !(r.P < alpha) {
			continue
		}
		switch Direction(r.Unit) {
		case -1:
			if r.Delta > threshold {
				out = append(out, r)
			}
		case +1:
			// A rate that fell by d% is a time that grew by d/(100−d)·100%;
			// the threshold applies to the time.
			if r.Delta < 0 && -r.Delta/(100+r.Delta)*100 > threshold {
				out = append(out, r)
			}
		}
	}
	return out
}
