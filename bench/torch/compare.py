#!/usr/bin/env python3
"""heed beside PyTorch 1.13 on the same shapes, side by side in one run.

Builds heed's test binaries (attention, rnn, examples/seq2seq) and runs, for
--rounds rounds, each pair's heed benchmark and its PyTorch case one after the
other (heed first in even rounds, PyTorch first in odd ones), every run a fresh
process, single-threaded (GOMAXPROCS=1; PyTorch with one thread, as the
scripts set), then prints the medians and PyTorch ÷ heed for each pair beside
the issues' targets. Times are wall-clock ns/op: run it on a quiet machine.

    /usr/bin/python3 bench/torch/compare.py [--rounds 5] [--run REGEXP] [--out DIR]

The heed side is the default route of each call (the AVX-512 path where the
CPU has it); the PyTorch side is what bench/torch's scripts time (their
docstrings give the compositions).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# (label, heed package, heed benchmark leaf, GOMAXPROCS, torch script, torch case, target)
PAIRS = [
    ("causal MHA T=S=512, 8×64, fwd+bwd", "./attention",
     "BenchmarkMultiHeadBackward/T=S=512,dk=64,h=8,kv=8/parallel=false,procs=1/avx512/fwd+bwd", 1,
     "attention.py", "mha-causal/T=512/h=8/dk=64/fwdbwd", 2.5),
    ("causal MHA T=S=512, 1×64, fwd+bwd", "./attention",
     "BenchmarkMultiHeadBackward/T=S=512,dk=64,h=1,kv=1/parallel=false,procs=1/avx512/fwd+bwd", 1,
     "attention.py", "mha-causal/T=512/h=1/dk=64/fwdbwd", 2.5),
    ("causal GQA T=S=512, 8/2×64, fwd+bwd", "./attention",
     "BenchmarkMultiHeadBackward/T=S=512,dk=64,h=8,kv=2/parallel=false,procs=1/avx512/fwd+bwd", 1,
     "attention.py", "gqa-causal/T=512/h=8/kv=2/dk=64/fwdbwd", 2.5),
    ("causal MHA T=S=2048, 8×128, fwd+bwd", "./attention",
     "BenchmarkMultiHeadBackward/T=S=2048,dk=128,h=8,kv=8/parallel=false,procs=1/avx512/fwd+bwd", 1,
     "attention.py", "mha-causal/T=2048/h=8/dk=128/fwdbwd", 2.5),
    ("Bahdanau teacher forcing 16×32×64×256, fwd+bwd", "./attention",
     "BenchmarkAttendManyBackward/Bahdanau/seqs=16,B=32,S=64,d=256/avx512/fwd+bwd", 1,
     "attention.py", "bahdanau/B=16/T=32/S=64/d=256/da=256/fwdbwd", 5),
    ("Luong dot teacher forcing 16×32×64×256, fwd+bwd", "./attention",
     "BenchmarkAttendManyBackward/Luong_dot/seqs=16,B=32,S=64,d=256/avx512/fwd+bwd", 1,
     "attention.py", "luong-dot/B=16/T=32/S=64/d=256/fwdbwd", 5),
    ("LSTM 32 steps, batch 16, 512→512, fwd+bwd", "./rnn",
     "BenchmarkLSTMSeq/T=32/B=16/in=512/H=512/fwdbwd", 1,
     "rnn.py", "lstm/T=32/B=16/in=512/H=512/fwdbwd", 1.5),
    ("GRU 32 steps, batch 16, 512→512, fwd+bwd", "./rnn",
     "BenchmarkGRUSeq/T=32/B=16/in=512/H=512/fwdbwd", 1,
     "rnn.py", "gru/T=32/B=16/in=512/H=512/fwdbwd", 1.5),
    ("seq2seq training step, V=8000, dot", "./examples/seq2seq",
     "BenchmarkStep/V=8000/score=dot", 1,
     "seq2seq.py", "seq2seq/V=8000/E=256/H=256/B=16/Ts=24/Tt=24/score=dot/adam/step", 2),
    ("seq2seq training step, V=8000, additive", "./examples/seq2seq",
     "BenchmarkStep/V=8000/score=additive", 1,
     "seq2seq.py", "seq2seq/V=8000/E=256/H=256/B=16/Ts=24/Tt=24/score=additive/adam/step", 2),
    ("seq2seq training step, V=32000, dot", "./examples/seq2seq",
     "BenchmarkStep/V=32000/score=dot", 1,
     "seq2seq.py", "seq2seq/V=32000/E=256/H=256/B=16/Ts=24/Tt=24/score=dot/adam/step", 2),
]

LINE = re.compile(r"^(Benchmark\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op")


def exact(leaf):
    """A -test.bench regexp that selects exactly the leaf."""
    return "/".join("^" + re.escape(level) + "$" for level in leaf.split("/"))


def torch_args(script, case):
    if script == "seq2seq.py":
        m = re.match(r"seq2seq/V=(\d+)/.*score=(\w+)/(\w+)/", case)
        return ["--vocab", m.group(1), "--score", m.group(2), "--optim", m.group(3)]
    return ["--run", "^" + re.escape(case) + "$"]


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if p.returncode != 0:
        sys.exit("compare: %s failed:\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def times(out, name):
    """The ns/op values the output reports for the benchmark named name."""
    v = []
    for line in out.splitlines():
        m = LINE.match(line)
        if m and m.group(1) == name:
            v.append(float(m.group(3)))
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--run", default="", help="only the pairs whose label matches")
    ap.add_argument("--out", default="", help="keep the raw outputs in this directory")
    ap.add_argument("--python", default="/usr/bin/python3")
    a = ap.parse_args()
    pairs = [p for p in PAIRS if re.search(a.run, p[0])]
    out = a.out or tempfile.mkdtemp(prefix="heed-torch-")
    os.makedirs(out, exist_ok=True)
    bins = {}
    for pkg in sorted({p[1] for p in pairs}):
        b = os.path.join(out, pkg.strip("./").replace("/", "_") + ".test")
        run(["go", "test", "-c", "-o", b, pkg])
        bins[pkg] = b
    heed = {p[0]: [] for p in pairs}
    torch = {p[0]: [] for p in pairs}
    for r in range(a.rounds):
        for label, pkg, leaf, procs, script, case, _ in pairs:
            def go():
                env = dict(os.environ, GOMAXPROCS=str(procs))
                o = run([bins[pkg], "-test.run", "^$", "-test.bench", exact(leaf),
                         "-test.benchtime", "5x", "-test.count", "1"], env)
                heed[label] += times(o, leaf)
            def py():
                o = run([a.python, os.path.join(HERE, script), "--rounds", "1"] + torch_args(script, case))
                torch[label] += times(o, "BenchmarkTorch/" + case)
            first, second = (go, py) if r % 2 == 0 else (py, go)
            first()
            second()
        print("round %d of %d done" % (r + 1, a.rounds), file=sys.stderr)
    print("| work (single-threaded) | PyTorch 1.13 | heed | PyTorch ÷ heed | target |")
    print("|---|---:|---:|---:|---:|")
    for label, _, _, _, _, _, target in pairs:
        h, t = heed[label], torch[label]
        if not h or not t:
            print("| %s | %s | %s | — | ≥ %g× |" % (label, "—" if not t else "%.1f ms" % (statistics.median(t) / 1e6),
                                                  "—" if not h else "%.1f ms" % (statistics.median(h) / 1e6), target))
            continue
        mh, mt = statistics.median(h), statistics.median(t)
        print("| %s | %.2f ms | %.2f ms | %.2f× | ≥ %g× |" % (label, mt / 1e6, mh / 1e6, mt / mh, target))
    print("\n(medians of %d rounds, wall-clock; raw outputs in %s)" % (a.rounds, out))


if __name__ == "__main__":
    main()
