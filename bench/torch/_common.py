"""Shared harness of heed's PyTorch comparison scripts (bench/torch/*.py).

What every script gets from here, in this order (see setup()):

1. Single-threaded PyTorch: OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and
   MKL_NUM_THREADS are set to 1 in os.environ before torch is imported, and
   torch.set_num_threads(1) right after, so that every number is one core's,
   as heed's single-goroutine benchmarks are.

2. An interpreter that has torch. Debian's python3-torch installs into
   /usr/bin/python3's dist-packages; a shell whose `python3` is another
   interpreter (pyenv, a venv) cannot import it. When torch is missing the
   script re-runs itself once under /usr/bin/python3 if that one has torch;
   when neither has it, it prints `SKIP: python3-torch not installed` and
   exits 0.

3. A BLAS that does not cripple PyTorch. Debian's torch calls sgemm through
   libblas.so.3, which the alternatives system points at the reference
   (netlib, unvectorised) BLAS unless an optimised one is installed; every
   matrix product then runs an order of magnitude below the machine. With
   OpenBLAS installed (apt-get install libopenblas0-pthread), OpenBLAS 0.3.21
   picks its kernels from a table of CPU models and gives CPUs newer than the
   table an old core (Prescott, SSE3, on an Intel Xeon of family 6 model 207);
   as bench/openblas.go does for heed's own OpenBLAS peer, the harness then
   sets OPENBLAS_CORETYPE to the core that matches the CPU's instruction set
   (SkylakeX for Intel with AVX-512, Zen for AMD with AVX2, Haswell for other
   AVX2 CPUs) before torch loads the library. Likewise ATen's own vectorised
   kernels (tanh, exp, softmax, the elementwise ops) dispatch on a CPU
   capability that Debian's 1.13 (its cpuinfo of 2022) puts at AVX2 on that
   Xeon; where the CPU has AVX-512 F/BW/DQ/VL and PyTorch chose less, the
   harness sets ATEN_CPU_CAPABILITY=avx512. A variable the caller set is left
   alone, and --isa=own keeps both libraries' own choices. What is in use is
   reported on the `blas:` and `aten-cpu-capability:` lines.

4. Timing in Go's benchmark format, so benchstat reads the output:

       BenchmarkTorch/<case> <iterations> <ns per op> ns/op <cpu ns per op> cpu-ns/op

   (ns/op wall time, cpu-ns/op the process's CPU time, as heed's own
   benchmarks report it: under load from other processes the wall time
   includes waiting for a core, the CPU time does not), one line per case per round (like `go test -count`), preceded by benchstat
   configuration lines (goos, goarch, pkg, cpu, torch, blas,
   aten-cpu-capability). Rounds visit the cases round-robin, so that a burst
   of load from other processes lands on all cases alike rather than on one;
   each visit runs the case once as a warm-up and then the calibrated number
   of iterations. A median summary goes to stderr.

Python 3, standard library (plus torch and numpy in the scripts).
"""

import argparse
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
DEBIAN_PYTHON = "/usr/bin/python3"
_REEXEC_ENV = "HEED_TORCH_REEXEC"          # set when re-run under DEBIAN_PYTHON
_CHOSE_ENV = "HEED_TORCH_ISA_CHOSEN"  # what the harness set, and what OpenBLAS and ATen chose

# ---------------------------------------------------------------------------
# Arguments shared by all scripts.


def parser(description):
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5,
                   help="timed rounds per case (one output line each; default 5)")
    p.add_argument("--min-time", type=float, default=0.2,
                   help="seconds one round of a case lasts at least (default 0.2); "
                        "a case slower than that runs once per round")
    p.add_argument("--warmup", type=float, default=0.2,
                   help="seconds of warm-up per case before the rounds (default 0.2)")
    p.add_argument("--run", default="",
                   help="regular expression: only the cases whose name matches")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--isa", choices=("auto", "own"), default="auto",
                   help="auto (default): where OpenBLAS or ATen would run kernels below this CPU's "
                        "instruction set, set OPENBLAS_CORETYPE / ATEN_CPU_CAPABILITY to match it; "
                        "own: keep their own choices")
    return p


def pre_parse_isa(argv):
    """--isa must act before torch is imported, so before the scripts' own
    parsing (which needs torch); read it by hand."""
    for i, a in enumerate(argv):
        if a == "--isa" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--isa="):
            return a.split("=", 1)[1]
    return "auto"


# ---------------------------------------------------------------------------
# Torch import, threads and BLAS.


def _cpuinfo():
    """vendor_id, model name, family, model and flags of CPU 0 (Linux)."""
    info = {"vendor_id": "", "model name": platform.processor() or platform.machine(),
            "cpu family": "", "model": "", "flags": ""}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # end of the first CPU's block
                k, _, v = line.partition(":")
                info[k.strip()] = v.strip()
    except OSError:
        pass
    return info


def _openblas_level(core):
    """Rank of an OpenBLAS x86-64 core by the widest instructions its kernels
    use: 3 AVX-512, 2 AVX2+FMA, 1 AVX, 0 older or unknown (bench/openblas.go)."""
    core = core.lower()
    if core in ("skylakex", "cooperlake", "sapphirerapids"):
        return 3
    if core in ("haswell", "zen", "excavator"):
        return 2
    if core in ("sandybridge", "bulldozer", "piledriver", "steamroller"):
        return 1
    return 0


def _has_avx512():
    """AVX-512 F, BW, DQ and VL, which ATen's AVX512 kernels need (x86-64)."""
    flags = set(_cpuinfo()["flags"].split())
    return {"avx512f", "avx512bw", "avx512dq", "avx512vl", "fma"} <= flags


def _matching_core():
    if platform.machine() not in ("x86_64", "AMD64"):
        return ""
    c = _cpuinfo()
    flags = set(c["flags"].split())
    vendor = c["vendor_id"]
    if vendor == "GenuineIntel" and {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "SkylakeX"
    avx2fma = {"avx2", "fma"} <= flags
    if vendor in ("AuthenticAMD", "HygonGenuine") and avx2fma:
        return "Zen"  # OpenBLAS 0.3.21 has no AVX-512 core for AMD
    if avx2fma:
        return "Haswell"
    return ""


def _sgemm_provider():
    """Path of the library that provides the sgemm_ torch calls: looked up
    from libtorch_cpu's handle (its dependencies in load order, as its own
    references resolve) and named by dladdr. Several BLAS can be mapped at
    once (Debian's liblapack.so.3 alternative may bring OpenBLAS beside the
    reference libblas.so.3), so which one is mapped does not tell."""
    import ctypes
    torch_cpu = ""
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and os.path.basename(parts[5]).startswith("libtorch_cpu.so"):
                torch_cpu = parts[5]
                break
    if not torch_cpu:
        return ""

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    try:
        addr = ctypes.cast(ctypes.CDLL(torch_cpu).sgemm_, ctypes.c_void_p).value
        libc = ctypes.CDLL(None)
        info = DlInfo()
        if not libc.dladdr(ctypes.c_void_p(addr), ctypes.byref(info)) or not info.dli_fname:
            return ""
        return info.dli_fname.decode()
    except (OSError, AttributeError):
        return ""


def _blas_in_process():
    """(path, config, core) of the BLAS whose sgemm torch calls: core and
    config are '' for a BLAS other than OpenBLAS, path '' if none is found."""
    import ctypes
    try:
        path = _sgemm_provider()
    except OSError:
        return "", "", ""
    if not path:
        return "", "", ""
    try:
        lib = ctypes.CDLL(path)  # already loaded: the same handle
    except OSError:
        return path, "", ""
    if not hasattr(lib, "openblas_get_corename"):
        return path, "", ""
    lib.openblas_get_corename.restype = ctypes.c_char_p
    lib.openblas_get_config.restype = ctypes.c_char_p
    return path, lib.openblas_get_config().decode(), lib.openblas_get_corename().decode()


def _aten_capability(torch):
    """The CPU capability ATen's kernels dispatch on (DEFAULT, AVX2, AVX512)."""
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return ""


def _probe_child():
    """Entry of the child interpreter that _choose_isa runs: what torch
    chooses by itself, printed as "blas path, config, core, capability"."""
    import torch
    print("\t".join(_blas_in_process() + (_aten_capability(torch),)))


def _choose_isa(mode):
    """Before torch is imported: where OpenBLAS would choose a core below this
    CPU's instruction set, set OPENBLAS_CORETYPE; where ATen would dispatch
    below AVX-512 on a CPU that has it, set ATEN_CPU_CAPABILITY=avx512 (see
    the module doc). Each variable the caller set is left alone."""
    if mode == "own" or os.environ.get(_CHOSE_ENV):
        return
    want_core = _matching_core()
    want_avx512 = _has_avx512()
    need_core = want_core and not os.environ.get("OPENBLAS_CORETYPE")
    need_cap = want_avx512 and not os.environ.get("ATEN_CPU_CAPABILITY")
    if not (need_core or need_cap):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    code = "import sys; sys.path.insert(0, %r); import _common; _common._probe_child()" % here
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                             text=True, timeout=300).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return
    fields = out.split("\t")
    if len(fields) != 4:
        return
    chose_core, chose_cap = fields[2], fields[3]
    set_core = set_cap = ""
    if need_core and chose_core and _openblas_level(chose_core) < _openblas_level(want_core):
        os.environ["OPENBLAS_CORETYPE"] = set_core = want_core
    if need_cap and chose_cap and chose_cap.upper() != "AVX512":
        os.environ["ATEN_CPU_CAPABILITY"] = set_cap = "avx512"
    os.environ[_CHOSE_ENV] = "%s,%s,%s,%s" % (set_core, chose_core, set_cap, chose_cap)


def _chosen():
    """(core set, core OpenBLAS chose, capability set, capability ATen chose)
    as _choose_isa recorded them; empty strings where it set nothing."""
    f = os.environ.get(_CHOSE_ENV, "").split(",")
    return tuple(f) if len(f) == 4 else ("", "", "", "")


def setup(argv=None):
    """Threads, interpreter and BLAS as the module doc says; returns torch.
    Exits 0 with SKIP when python3-torch is not installed."""
    argv = sys.argv if argv is None else argv
    for k in THREAD_VARS:
        os.environ[k] = "1"
    import importlib.util
    if importlib.util.find_spec("torch") is None:
        exe = os.path.realpath(sys.executable)
        if (not os.environ.get(_REEXEC_ENV) and os.path.exists(DEBIAN_PYTHON)
                and os.path.realpath(DEBIAN_PYTHON) != exe):
            r = subprocess.run([DEBIAN_PYTHON, "-c", "import importlib.util, sys; "
                                "sys.exit(importlib.util.find_spec('torch') is None)"])
            if r.returncode == 0:
                print("note: torch is not importable from %s; re-running under %s "
                      "(where python3-torch installs)" % (sys.executable, DEBIAN_PYTHON),
                      file=sys.stderr)
                os.environ[_REEXEC_ENV] = "1"
                sys.stdout.flush()
                sys.stderr.flush()
                os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + argv)
        print("SKIP: python3-torch not installed")
        sys.exit(0)
    _choose_isa(pre_parse_isa(argv[1:]))
    import torch
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    return torch


def blas_line():
    """The BLAS in this process, its core and who chose it, for the report."""
    path, config, core = _blas_in_process()
    if not path:
        return "no sgemm_ found behind torch (PyTorch's own fallback GEMM?)"
    if not core:
        real = os.path.realpath(path)
        kind = "reference BLAS (netlib, unoptimised)" if "/blas/" in real else "not OpenBLAS"
        return "%s, %s: install libopenblas0-pthread for an optimised sgemm" % (real, kind)
    env = os.environ.get("OPENBLAS_CORETYPE", "")
    set_core, chose_core, _, _ = _chosen()
    if env and set_core == env:
        return ("%s, core %s: OPENBLAS_CORETYPE=%s set by the script, since OpenBLAS chose %s, "
                "whose kernels are below this CPU's instruction set" % (config, core, env, chose_core))
    if env:
        return "%s, core %s (OPENBLAS_CORETYPE=%s set by the caller)" % (config, core, env)
    return "%s, core %s (OpenBLAS's own choice)" % (config, core)


def aten_line(torch):
    """ATen's CPU capability and who chose it."""
    cap = _aten_capability(torch)
    env = os.environ.get("ATEN_CPU_CAPABILITY", "")
    _, _, set_cap, chose_cap = _chosen()
    if env and set_cap == env:
        return ("%s: ATEN_CPU_CAPABILITY=%s set by the script, since PyTorch chose %s on a CPU "
                "with AVX-512" % (cap, env, chose_cap))
    if env:
        return "%s (ATEN_CPU_CAPABILITY=%s set by the caller)" % (cap, env)
    return "%s (PyTorch's own choice)" % cap


def header(torch, extra=None):
    """benchstat configuration lines on stdout, and the same to stderr."""
    c = _cpuinfo()
    lines = [
        ("goos", sys.platform),
        ("goarch", {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())),
        ("pkg", "github.com/heedml/heed/bench/torch"),
        ("cpu", "%s (family %s model %s)" % (c["model name"], c["cpu family"], c["model"])),
        ("torch", "%s, %d thread, python %s" % (torch.__version__, torch.get_num_threads(),
                                                 platform.python_version())),
        ("blas", blas_line()),
        ("aten-cpu-capability", aten_line(torch)),
    ]
    lines += list(extra or [])
    for k, v in lines:
        print("%s: %s" % (k, v))
        print("%s: %s" % (k, v), file=sys.stderr)
    sys.stdout.flush()


# ---------------------------------------------------------------------------
# Timing.


class Case:
    """One benchmark: name (after BenchmarkTorch/) and fn, which runs one op."""

    def __init__(self, name, fn):
        self.name, self.fn = name, fn
        self.n = 1
        self.ns = []   # wall ns/op of each round
        self.cpu = []  # process CPU ns/op of each round


def _time(fn, n):
    """Wall and process CPU ns per call of fn over n calls."""
    c0, t0 = time.process_time_ns(), time.perf_counter_ns()
    for _ in range(n):
        fn()
    t1, c1 = time.perf_counter_ns(), time.process_time_ns()
    return (t1 - t0) / n, (c1 - c0) / n


def select(cases, args):
    if args.run:
        rx = re.compile(args.run)
        cases = [c for c in cases if rx.search(c.name)]
    if args.list:
        for c in cases:
            print(c.name)
        sys.exit(0)
    return cases


def run(cases, args):
    """Calibrate, then args.rounds rounds over all cases; prints one Go
    benchmark line per case per round and returns the cases with their times."""
    for c in cases:  # warm-up and calibration: n iterations fill min_time
        t_end = time.perf_counter() + args.warmup
        per = _time(c.fn, 1)[0]
        while time.perf_counter() < t_end:
            per = min(per, _time(c.fn, 1)[0])
        c.n = max(1, int(math.ceil(args.min_time * 1e9 / max(per, 1.0))))
    for _ in range(args.rounds):
        for c in cases:
            c.fn()  # warm caches and allocator after the other cases ran
            ns, cpu = _time(c.fn, c.n)
            c.ns.append(ns)
            c.cpu.append(cpu)
            print("BenchmarkTorch/%s %d %.0f ns/op %.0f cpu-ns/op" % (c.name, c.n, ns, cpu), flush=True)
    return cases


def summary(cases, file=sys.stderr):
    """Median tables on stderr, wall time then CPU time: rows are the cases
    without their last name element, columns the last element (fwd, fwdbwd,
    ...), in ms."""
    if not cases:
        return
    for title, key in (("wall time", "ns"), ("process CPU time", "cpu")):
        rows, cols = {}, []
        for c in cases:
            base, _, col = c.name.rpartition("/")
            rows.setdefault(base, {})[col] = getattr(c, key)
            if col not in cols:
                cols.append(col)
        width = max([len(r) for r in rows] + [4])
        print("\n%s: medians of %d rounds, ms per op (min..max over rounds)" %
              (title, len(cases[0].ns)), file=file)
        print("%-*s  %s" % (width, "case", "  ".join("%-26s" % c for c in cols)), file=file)
        for base, by in rows.items():
            cells = []
            for col in cols:
                ns = by.get(col)
                cells.append("%-26s" % ("-" if not ns else "%.3f (%.3f..%.3f)" % (
                    statistics.median(ns) / 1e6, min(ns) / 1e6, max(ns) / 1e6)))
            print("%-*s  %s" % (width, base, "  ".join(cells)), file=file)


def rel_err(a, b):
    """max|a − b| / max|b| (b the reference), 0 when both are all zero."""
    d = (a.double() - b.double()).abs().max().item()
    m = b.double().abs().max().item()
    return d / m if m > 0 else d
