#!/usr/bin/env python3
"""Markdown table of medians from the scripts' Go benchmark output.

    python3 summarize.py out/*.txt > table.md

Reads lines `BenchmarkTorch/<case>/<column> N <ns> ns/op [<cpu> cpu-ns/op]`
(any number of rounds of each), and prints one row per case with, for each
column (infer, fwd, fwdbwd, step, ...), the median wall time in ms and, in
parentheses, the median process CPU time. Standard library only (no torch).
"""

import re
import statistics
import sys

LINE = re.compile(r"^BenchmarkTorch/(\S+)\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) cpu-ns/op)?")
ORDER = ("infer", "fwd", "fwdbwd", "zero_grad", "bwd", "optim", "step")


def main(paths):
    rows, cols = {}, set()
    for path in paths:
        with open(path) as f:
            for line in f:
                m = LINE.match(line)
                if not m:
                    continue
                base, _, col = m.group(1).rpartition("/")
                cell = rows.setdefault(base, {}).setdefault(col, ([], []))
                cell[0].append(float(m.group(2)))
                if m.group(3):
                    cell[1].append(float(m.group(3)))
                cols.add(col)
    cols = [c for c in ORDER if c in cols] + sorted(cols - set(ORDER))
    print("| case | " + " | ".join("%s ms" % c for c in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for base, by in rows.items():
        cells = []
        for c in cols:
            if c not in by:
                cells.append("")
                continue
            wall, cpu = by[c]
            s = fmt(statistics.median(wall) / 1e6)
            if cpu:
                s += " (%s)" % fmt(statistics.median(cpu) / 1e6)
            cells.append(s)
        print("| %s | %s |" % (base, " | ".join(cells)))
    return 0


def fmt(ms):
    return "%.3g" % ms if ms < 100 else "%.0f" % ms


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
