#!/usr/bin/env python3
"""One training step of heed's reference attentional encoder–decoder, in PyTorch 1.13.

heed implements the identical model; this docstring is its specification.

Sizes: vocabulary V (--vocab, default 8000; also 32000), embedding E and
hidden H (--emb, --hidden, default 256 each), a batch of B = 16 sentence
pairs (--batch), source length Ts = 24 and target length Tt = 24 (--src-len,
--tgt-len). Every sequence has exactly Ts (Tt) tokens: there is no padding
and no mask. Token ids are integers in [0, V); 0 is reserved (PAD, never
used here), 1 is BOS, and the random data draws tokens from [2, V). All
arithmetic is float32.

Model, for each pair b (a row of the batch) independently:

  source embeddings   x_s = src_emb[src_tokens[b, s]]        src_emb (V × E)
  encoder             one-layer unidirectional LSTM (E → H) over x_0..x_{Ts−1},
                      initial (h, c) = (0, 0); h̄_s its hidden state after x_s
  target input        tgt_in[b] = [BOS, y_0, ..., y_{Tt−2}] (teacher forcing:
                      the targets shifted right), tgt_out[b] = [y_0, ..., y_{Tt−1}]
  decoder             one-layer LSTM (E → H) over tgt_emb[tgt_in[b, t]]
                      (tgt_emb V × E, separate from src_emb), initial (h, c) =
                      the encoder's final (h, c); no input feeding, so all
                      decoder states h_0..h_{Tt−1} exist before attention
  scores              over the Ts encoder states of the same pair, --score:
                        dot       s_ts = h_tᵀ h̄_s
                        general   s_ts = h_tᵀ W h̄_s            att_w (H × H)
                        additive  s_ts = vᵀ tanh(W1 h_t + W2 h̄_s)
                                  att_w1, att_w2 (H × H), att_v (H)
  attention           α_t = softmax_s(s_t·),  c_t = Σ_s α_ts h̄_s
  attentional state   h̃_t = tanh(W_c [c_t; h_t])            wc (H × 2H), no bias,
                      columns [0, H) multiply c_t, [H, 2H) multiply h_t
  projection          logits_t = W_out h̃_t + b_out           out_w (V × H), out_b (V)
  loss                mean over all B·Tt target tokens of −log softmax(logits_t)[y_t]

LSTM cell (PyTorch's, gate order i, f, g, o), with heed's parameters
W (4H × (E+H)) and b (4H):

  [i; f; g; o] = W·[x_t; h_{t−1}] + b
  c_t = σ(f)⊙c_{t−1} + σ(i)⊙tanh(g),   h_t = σ(o)⊙tanh(c_t)

In PyTorch W = [weight_ih | weight_hh] (columns concatenated) and b = bias_ih
with bias_hh held at 0 (requires_grad False, not given to the optimizer), so
that the model has exactly heed's parameters and heed's bias gradient is
bias_ih.grad.

Training step: optimizer.zero_grad() (PyTorch 1.13's default, which fills the
gradients with zeros), the forward above, loss.backward() through everything
(embeddings included: their gradients are dense V × E, zero in the rows of
tokens that do not occur), then one torch.optim.Adam step (lr 1e-3, betas
(0.9, 0.999), eps 1e-8, weight_decay 0; --optim adamw: torch.optim.AdamW
with weight_decay 0.01, decoupled: p ← p·(1 − lr·wd) before the Adam update).
At the first step Adam's bias-corrected moments are m̂ = g and v̂ = g², so
the update is p ← p − lr·g/(|g| + eps) elementwise.

Initialisation (seeded by --seed; its exact values matter only to dumps made
here): embeddings N(0, 1); LSTM weights and bias_ih U(−1/√H, 1/√H) (PyTorch's
nn.LSTM default); att_w, att_w1, att_w2, att_v, wc U(−1/√n, 1/√n) with n
their number of columns (H, or 2H for wc); out_w and out_b nn.Linear's
default (U(−1/√H, 1/√H)). Tokens uniform over [2, V).

Timing: each round runs the step n times and reports the mean of each phase
(zero_grad, fwd, bwd, optim), of fwd+bwd (fwdbwd) and of the whole step
(step), as Go benchmark lines (see _common.py) named
seq2seq/V=../E=../H=../B=../Ts=../Tt=../score=../<optim>/<phase>.
--vocab and --score take comma-separated lists for several configurations.

Dump format (--dump DIR): DIR/<name>.bin, raw little-endian float32 (int32
for the token ids), row-major, and DIR/manifest.json:
  {"format": "heed-seq2seq-dump/1",
   "config": {"V", "E", "H", "B", "Ts", "Tt", "score", "optim", "lr", "betas",
              "eps", "weight_decay", "seed", "bos"},
   "tensors": {"<name>": {"shape": [...], "dtype": "float32" | "int32"}, ...}}
Names: the parameters src_emb (V×E), tgt_emb (V×E), enc_w (4H×(E+H)),
enc_b (4H), dec_w, dec_b, att_w (general), att_w1, att_w2, att_v (additive),
wc (H×2H), out_w (V×H), out_b (V); the data src_tokens (B×Ts), tgt_in (B×Tt),
tgt_out (B×Tt); loss (shape [], the loss of the step); grad_<param> (each
parameter's gradient, before the optimizer step) and after_<param> (each
parameter after the step).

--load DIR reads the parameters and the tokens from such a directory instead
of initialising them (shapes and the score come from the tensors present:
att_w means general, att_w1 additive, neither dot; the optimizer from --optim,
else the manifest's config, else adam), so heed can write weights, PyTorch
computes the gradients and the step, and a Go test compares. With --dump OUT
it writes the full dump of that step to OUT; without, it benchmarks on those
weights.

--check: a dump from the seed, then --load of it dumped again, must agree
bit for bit (parameters, tokens, loss, gradients, parameters after the
step); the parameters after the step must match the closed-form first Adam
(AdamW) step; bias_hh must still be 0; and the float32 gradients are compared
with the same step in float64 (the relative error max|g32 − g64| / max|g64|
is printed per parameter, as a tolerance guide for heed's tests). Exits 1 if
a check fails.
"""

import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

torch = _common.setup()
import numpy as np  # noqa: E402
import torch.nn.functional as F  # noqa: E402

nn = torch.nn

BOS = 1
LR, BETAS, EPS = 1e-3, (0.9, 0.999), 1e-8
WEIGHT_DECAY = {"adam": 0.0, "adamw": 0.01}
FORMAT = "heed-seq2seq-dump/1"
SCORES = ("dot", "general", "additive")


class Seq2Seq(nn.Module):
    """The model of the module doc; parameters in PyTorch's layout."""

    def __init__(self, V, E, H, score):
        super().__init__()
        self.V, self.E, self.H, self.score = V, E, H, score
        self.src_emb = nn.Embedding(V, E)
        self.tgt_emb = nn.Embedding(V, E)
        self.enc = nn.LSTM(E, H)
        self.dec = nn.LSTM(E, H)
        if score == "general":
            self.att_w = nn.Parameter(torch.empty(H, H))
        elif score == "additive":
            self.att_w1 = nn.Parameter(torch.empty(H, H))
            self.att_w2 = nn.Parameter(torch.empty(H, H))
            self.att_v = nn.Parameter(torch.empty(H))
        self.wc = nn.Parameter(torch.empty(H, 2 * H))
        self.out = nn.Linear(H, V)
        with torch.no_grad():
            for name in ("att_w", "att_w1", "att_w2", "wc"):
                if hasattr(self, name):
                    w = getattr(self, name)
                    w.uniform_(-w.shape[1] ** -0.5, w.shape[1] ** -0.5)
            if score == "additive":
                self.att_v.uniform_(-H ** -0.5, H ** -0.5)
        for lstm in (self.enc, self.dec):
            lstm.bias_hh_l0.data.zero_()          # heed has one bias per gate row
            lstm.bias_hh_l0.requires_grad_(False)

    def trainable(self):
        return [p for p in self.parameters() if p.requires_grad]

    def forward(self, src, tgt_in, tgt_out):
        """src (B, Ts), tgt_in, tgt_out (B, Tt) int64 → the scalar mean loss."""
        B, Tt = tgt_in.shape
        enc_out, (h, c) = self.enc(self.src_emb(src.t()))        # (Ts, B, H); (1, B, H)
        dec_out, _ = self.dec(self.tgt_emb(tgt_in.t()), (h, c))  # (Tt, B, H)
        Hb = enc_out.transpose(0, 1)                             # (B, Ts, H) encoder states
        Hd = dec_out.transpose(0, 1)                             # (B, Tt, H) decoder states
        if self.score == "dot":
            s = torch.bmm(Hd, Hb.transpose(1, 2))
        elif self.score == "general":
            s = torch.bmm(Hd @ self.att_w, Hb.transpose(1, 2))   # h_tᵀ W h̄_s
        else:
            q = Hd @ self.att_w1.t()                             # W1 h_t
            k = Hb @ self.att_w2.t()                             # W2 h̄_s
            s = (q[:, :, None, :] + k[:, None, :, :]).tanh() @ self.att_v
        a = torch.softmax(s, dim=-1)                             # (B, Tt, Ts)
        ctx = torch.bmm(a, Hb)                                   # (B, Tt, H)
        ht = torch.tanh(torch.cat([ctx, Hd], dim=-1) @ self.wc.t())
        logits = F.linear(ht, self.out.weight, self.out.bias)    # (B, Tt, V)
        return F.cross_entropy(logits.reshape(B * Tt, self.V), tgt_out.reshape(B * Tt))


# --- heed's layout -----------------------------------------------------------


def _lstm_w(lstm, attr="data"):
    wi, wh = lstm.weight_ih_l0, lstm.weight_hh_l0
    if attr == "grad":
        wi, wh = wi.grad, wh.grad
    return torch.cat([wi.detach(), wh.detach()], dim=1)


def heed_params(m):
    """name → float32 copy of each parameter in heed's layout."""
    p = {"src_emb": m.src_emb.weight, "tgt_emb": m.tgt_emb.weight,
         "enc_w": _lstm_w(m.enc), "enc_b": m.enc.bias_ih_l0,
         "dec_w": _lstm_w(m.dec), "dec_b": m.dec.bias_ih_l0}
    for name in ("att_w", "att_w1", "att_w2", "att_v"):
        if hasattr(m, name):
            p[name] = getattr(m, name)
    p.update(wc=m.wc, out_w=m.out.weight, out_b=m.out.bias)
    return {k: v.detach().clone() for k, v in p.items()}


def heed_grads(m):
    g = {"src_emb": m.src_emb.weight.grad, "tgt_emb": m.tgt_emb.weight.grad,
         "enc_w": _lstm_w(m.enc, "grad"), "enc_b": m.enc.bias_ih_l0.grad,
         "dec_w": _lstm_w(m.dec, "grad"), "dec_b": m.dec.bias_ih_l0.grad}
    for name in ("att_w", "att_w1", "att_w2", "att_v"):
        if hasattr(m, name):
            g[name] = getattr(m, name).grad
    g.update(wc=m.wc.grad, out_w=m.out.weight.grad, out_b=m.out.bias.grad)
    return {k: v.detach().clone() for k, v in g.items()}


def load_params(m, p):
    """Set m's parameters from heed-layout tensors p (the inverse of heed_params)."""
    E = m.E
    with torch.no_grad():
        m.src_emb.weight.copy_(p["src_emb"])
        m.tgt_emb.weight.copy_(p["tgt_emb"])
        for lstm, w, b in ((m.enc, "enc_w", "enc_b"), (m.dec, "dec_w", "dec_b")):
            lstm.weight_ih_l0.copy_(p[w][:, :E])
            lstm.weight_hh_l0.copy_(p[w][:, E:])
            lstm.bias_ih_l0.copy_(p[b])
            lstm.bias_hh_l0.zero_()
        for name in ("att_w", "att_w1", "att_w2", "att_v", "wc"):
            if hasattr(m, name):
                getattr(m, name).copy_(p[name])
        m.out.weight.copy_(p["out_w"])
        m.out.bias.copy_(p["out_b"])


def random_tokens(V, B, Ts, Tt, gen):
    src = torch.randint(2, V, (B, Ts), generator=gen)
    y = torch.randint(2, V, (B, Tt), generator=gen)
    tgt_in = torch.cat([torch.full((B, 1), BOS), y[:, :-1]], dim=1)
    return src, tgt_in, y


def make_optimizer(m, optim):
    if optim == "adam":
        return torch.optim.Adam(m.trainable(), lr=LR, betas=BETAS, eps=EPS, weight_decay=0.0)
    return torch.optim.AdamW(m.trainable(), lr=LR, betas=BETAS, eps=EPS,
                             weight_decay=WEIGHT_DECAY["adamw"])


# --- dump and load -------------------------------------------------------------


def write_dump(d, cfg, tensors):
    """tensors: name → torch tensor (float32 or int64 token ids)."""
    os.makedirs(d, exist_ok=True)
    manifest = {"format": FORMAT, "config": cfg, "tensors": {}}
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        if t.is_floating_point():
            a, dt = t.to(torch.float32).numpy().astype("<f4"), "float32"
        else:
            a, dt = t.numpy().astype("<i4"), "int32"
        a.tofile(os.path.join(d, name + ".bin"))
        manifest["tensors"][name] = {"shape": list(t.shape), "dtype": dt}
    # one line per tensor, so that the manifest reads (and diffs) as a table
    lines = ['{"format": %s,' % json.dumps(FORMAT), ' "config": %s,' % json.dumps(cfg),
             ' "tensors": {']
    items = list(manifest["tensors"].items())
    for i, (name, spec) in enumerate(items):
        lines.append('  %s: %s%s' % (json.dumps(name), json.dumps(spec),
                                     "," if i + 1 < len(items) else ""))
    lines.append(" }}")
    with open(os.path.join(d, "manifest.json"), "w") as f:
        f.write("\n".join(lines) + "\n")


def read_dump(d):
    """(manifest, name → numpy array) of a dump directory."""
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    arrays = {}
    for name, spec in manifest["tensors"].items():
        dt = {"float32": "<f4", "int32": "<i4"}[spec["dtype"]]
        a = np.fromfile(os.path.join(d, name + ".bin"), dtype=dt)
        want = int(np.prod(spec["shape"], dtype=np.int64))
        if a.size != want:
            sys.exit("%s/%s.bin: %d values, manifest shape %s wants %d" %
                     (d, name, a.size, spec["shape"], want))
        arrays[name] = a.reshape(spec["shape"])
    return manifest, arrays


def from_dump(d, score_arg, optim_arg):
    """A model, its tokens and the optimizer name from a dump directory."""
    manifest, a = read_dump(d)
    need = ["src_emb", "tgt_emb", "enc_w", "enc_b", "dec_w", "dec_b", "wc", "out_w", "out_b",
            "src_tokens", "tgt_in", "tgt_out"]
    missing = [n for n in need if n not in a]
    if missing:
        sys.exit("%s: missing %s" % (d, ", ".join(missing)))
    score = "general" if "att_w" in a else "additive" if "att_w1" in a else "dot"
    if "att_w" in a and "att_w1" in a:
        sys.exit("%s: both att_w (general) and att_w1 (additive)" % d)
    if score_arg and score_arg != score:
        sys.exit("%s holds a %s model, --score says %s" % (d, score, score_arg))
    V, E = a["src_emb"].shape
    H = a["enc_w"].shape[0] // 4
    optim = optim_arg or manifest.get("config", {}).get("optim") or "adam"
    m = Seq2Seq(V, E, H, score)
    load_params(m, {k: torch.from_numpy(v.astype(np.float32)) for k, v in a.items()
                    if v.dtype.kind == "f"})
    toks = [torch.from_numpy(a[n].astype(np.int64)) for n in ("src_tokens", "tgt_in", "tgt_out")]
    return m, toks, optim


def one_step(m, toks, optim):
    """One training step; returns (loss, grads, params before, params after), heed layout."""
    opt = make_optimizer(m, optim)
    before = heed_params(m)
    opt.zero_grad()
    loss = m(*toks)
    loss.backward()
    grads = heed_grads(m)
    opt.step()
    return loss.detach(), grads, before, heed_params(m)


def dump_step(d, m, toks, optim, seed):
    loss, grads, before, after = one_step(m, toks, optim)
    B, Ts = toks[0].shape
    cfg = {"V": m.V, "E": m.E, "H": m.H, "B": B, "Ts": Ts, "Tt": toks[1].shape[1],
           "score": m.score, "optim": optim, "lr": LR, "betas": list(BETAS), "eps": EPS,
           "weight_decay": WEIGHT_DECAY[optim], "seed": seed, "bos": BOS}
    t = dict(before)
    t.update(src_tokens=toks[0], tgt_in=toks[1], tgt_out=toks[2], loss=loss)
    t.update({"grad_" + k: v for k, v in grads.items()})
    t.update({"after_" + k: v for k, v in after.items()})
    write_dump(d, cfg, t)
    return loss.item()


def seeded(V, E, H, B, Ts, Tt, score, seed):
    torch.manual_seed(seed)
    m = Seq2Seq(V, E, H, score)
    toks = random_tokens(V, B, Ts, Tt, torch.Generator().manual_seed(seed + 1))
    return m, toks


# --- timing --------------------------------------------------------------------

PHASES = ("zero_grad", "fwd", "bwd", "optim")


class Config:
    def __init__(self, args, V, score):
        self.m, self.toks = seeded(V, args.emb, args.hidden, args.batch, args.src_len,
                                   args.tgt_len, score, args.seed)
        self.setup(args.optim or "adam")
        self.name = "seq2seq/V=%d/E=%d/H=%d/B=%d/Ts=%d/Tt=%d/score=%s/%s" % (
            V, args.emb, args.hidden, args.batch, args.src_len, args.tgt_len, score, self.optim)

    def setup(self, optim):
        self.optim = optim
        self.opt = make_optimizer(self.m, optim)

    def step(self, clock):
        """One step; returns each phase's (wall ns, cpu ns)."""
        t = [clock()]
        self.opt.zero_grad()
        t.append(clock())
        loss = self.m(*self.toks)
        t.append(clock())
        loss.backward()
        t.append(clock())
        self.opt.step()
        t.append(clock())
        return t


def _clock():
    return (time.perf_counter_ns(), time.process_time_ns())


def bench(configs, args):
    """Rounds over the configurations; per round n steps, each phase's mean."""
    cases = {}
    for c in configs:  # warm-up, then n steps fill min_time
        t_end = time.perf_counter() + args.warmup
        per = None
        while per is None or time.perf_counter() < t_end:
            t = c.step(_clock)
            d = t[-1][0] - t[0][0]
            per = d if per is None else min(per, d)
        c.n = max(1, int(-(-args.min_time * 1e9 // max(per, 1))))
        for ph in PHASES + ("fwdbwd", "step"):
            cases[c.name + "/" + ph] = _common.Case(c.name + "/" + ph, None)
    for _ in range(args.rounds):
        for c in configs:
            c.step(_clock)
            acc = [[0, 0] for _ in PHASES]
            for _ in range(c.n):
                t = c.step(_clock)
                for i in range(len(PHASES)):
                    acc[i][0] += t[i + 1][0] - t[i][0]
                    acc[i][1] += t[i + 1][1] - t[i][1]
            res = {ph: (w / c.n, u / c.n) for ph, (w, u) in zip(PHASES, acc)}
            res["fwdbwd"] = tuple(res["fwd"][j] + res["bwd"][j] for j in (0, 1))
            res["step"] = tuple(sum(res[ph][j] for ph in PHASES) for j in (0, 1))
            for ph in ("step", "fwd", "bwd", "fwdbwd", "optim", "zero_grad"):
                case = cases[c.name + "/" + ph]
                case.ns.append(res[ph][0])
                case.cpu.append(res[ph][1])
                print("BenchmarkTorch/%s/%s %d %.0f ns/op %.0f cpu-ns/op" %
                      (c.name, ph, c.n, res[ph][0], res[ph][1]), flush=True)
    return list(cases.values())


# --- check ---------------------------------------------------------------------


def check(args):
    ok = True

    def verdict(what, good, detail=""):
        nonlocal ok
        ok &= bool(good)
        print("  %-44s %s%s" % (what, "ok" if good else "FAIL", detail))

    tmp = tempfile.mkdtemp(prefix="heed-seq2seq-check-")
    try:
        for score in args.score.split(",") if args.score else SCORES:
            for optim in ("adam", "adamw"):
                V = int(args.vocab.split(",")[0])
                print("score=%s optim=%s V=%d" % (score, optim, V))
                a_dir, b_dir = os.path.join(tmp, "a"), os.path.join(tmp, "b")
                m, toks = seeded(V, args.emb, args.hidden, args.batch, args.src_len,
                                 args.tgt_len, score, args.seed)
                loss = dump_step(a_dir, m, toks, optim, args.seed)
                verdict("bias_hh still 0 after the step",
                        all(float(l.bias_hh_l0.abs().max()) == 0.0 for l in (m.enc, m.dec)))
                m2, toks2, optim2 = from_dump(a_dir, score, optim)
                dump_step(b_dir, m2, toks2, optim2, args.seed)
                _, A = read_dump(a_dir)
                _, Bd = read_dump(b_dir)
                diff = [n for n in A if n not in Bd or A[n].tobytes() != Bd[n].tobytes()]
                verdict("dump → load → dump bit-identical (%d tensors)" % len(A), not diff,
                        "" if not diff else ": " + ", ".join(diff))
                print("  loss %.7f (log V = %.4f)" % (loss, np.log(V)))
                # the closed-form first step
                wd = WEIGHT_DECAY[optim]
                worst = 0.0
                for n in (k[len("grad_"):] for k in A if k.startswith("grad_")):
                    p, g, after = (A[n].astype(np.float64), A["grad_" + n].astype(np.float64),
                                   A["after_" + n].astype(np.float64))
                    want = p * (1 - LR * wd) - LR * g / (np.abs(g) + EPS)
                    # a few float32 roundings of p and of the lr-sized update
                    tol = 2 * np.spacing(np.abs(A[n]).astype(np.float32)).astype(np.float64) + LR * 1e-5
                    worst = max(worst, float(np.max(np.abs(after - want) / tol)))
                verdict("after = closed-form first %s step" % optim, worst <= 1.0,
                        " (worst |err|/tol %.2f)" % worst)
                # float64 against float32, from the same parameters and tokens
                m64, toks64, _ = from_dump(a_dir, score, optim)
                m64 = m64.double()
                m64(*toks64).backward()
                g64 = heed_grads(m64)
                errs = ["%s %.1e" % (n, _common.rel_err(torch.from_numpy(A["grad_" + n]), g64[n]))
                        for n in g64]
                worst64 = max(float(e.split()[1]) for e in errs)
                verdict("float32 gradients vs float64 (max rel err)", worst64 < 1e-3,
                        " %.1e" % worst64)
                print("    " + ", ".join(errs))
                shutil.rmtree(a_dir)
                shutil.rmtree(b_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("check: %s" % ("ok" if ok else "FAILED"))
    return ok


def main():
    ap = _common.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", default="8000", help="V, or a comma-separated list (default 8000)")
    ap.add_argument("--emb", type=int, default=256, help="E (default 256)")
    ap.add_argument("--hidden", type=int, default=256, help="H (default 256)")
    ap.add_argument("--batch", type=int, default=16, help="B (default 16)")
    ap.add_argument("--src-len", type=int, default=24, help="Ts (default 24)")
    ap.add_argument("--tgt-len", type=int, default=24, help="Tt (default 24)")
    ap.add_argument("--score", default=None,
                    help="dot|general|additive, or a comma-separated list (default dot)")
    ap.add_argument("--optim", choices=("adam", "adamw"), default=None, help="default adam")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dump", metavar="DIR", help="write one step's dump to DIR and exit")
    ap.add_argument("--load", metavar="DIR", help="take parameters and tokens from a dump in DIR")
    ap.add_argument("--check", action="store_true",
                    help="dump/load round trip, Adam closed form, float64 comparison; then exit")
    args = ap.parse_args()
    for s in (args.score or "dot").split(","):
        if s not in SCORES:
            ap.error("--score %s: want dot, general or additive" % s)

    _common.header(torch)
    if args.check:
        sys.exit(0 if check(args) else 1)
    if args.load:
        m, toks, optim = from_dump(args.load, args.score, args.optim)
        if args.dump:
            loss = dump_step(args.dump, m, toks, optim, None)
            print("loaded %s, wrote %s: loss %.7f" % (args.load, args.dump, loss))
            return
        c = Config.__new__(Config)
        c.m, c.toks = m, toks
        c.setup(optim)
        B, Ts = toks[0].shape
        c.name = "seq2seq/V=%d/E=%d/H=%d/B=%d/Ts=%d/Tt=%d/score=%s/%s" % (
            m.V, m.E, m.H, B, Ts, toks[1].shape[1], m.score, optim)
        configs = [c]
    elif args.dump:
        if "," in args.vocab or "," in (args.score or ""):
            ap.error("--dump takes one --vocab and one --score")
        m, toks = seeded(int(args.vocab), args.emb, args.hidden, args.batch, args.src_len,
                         args.tgt_len, args.score or "dot", args.seed)
        loss = dump_step(args.dump, m, toks, args.optim or "adam", args.seed)
        print("wrote %s: loss %.7f" % (args.dump, loss))
        return
    else:
        configs = [Config(args, int(V), s) for V in args.vocab.split(",")
                   for s in (args.score or "dot").split(",")]
    if args.run:
        rx = _common.re.compile(args.run)
        configs = [c for c in configs if rx.search(c.name)]
    if args.list:
        for c in configs:
            print(c.name)
        return
    _common.summary(bench(configs, args))


if __name__ == "__main__":
    main()
