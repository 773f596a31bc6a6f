#!/usr/bin/env python3
"""PyTorch 1.13 recurrent layers (nn.LSTM, nn.GRU, nn.LSTMCell) for heed's benchmarks.

Float32, one thread, PyTorch's default initialisation (U(−1/√H, 1/√H)),
inputs N(0, 1), time-major (batch_first=False), initial state zero. Each case
is timed as attention.py's are (last element of the name):

  infer   forward under torch.no_grad()
  fwd     forward with autograd recording (the forward of a training step)
  fwdbwd  forward, then backward from fixed random N(0, 1) gradients of every
          output; the .grad of the parameters and the input are reset to None
          before each backward

Cases (names after BenchmarkTorch/):

  lstm/T=32/B=16/in=512/H=512     nn.LSTM(512, 512, num_layers=1) over x of
      shape (32, 16, 512) (x requires grad); backward from dy (32, 16, 512),
      dh_T and dc_T (1, 16, 512): torch.autograd.backward([y, h, c], [dy, dh, dc]).
  gru/T=32/B=16/in=512/H=512      nn.GRU likewise; backward from dy and dh_T.
  lstmcell/B=16/in=512/H=512      one nn.LSTMCell(512, 512) step at batch 16
      (infer and fwd only: one decoder step).

PyTorch's conventions, which heed's rnn package keeps (rnn/lstm.go, rnn/gru.go):
LSTM gates in the order i, f, g, o, gates = W_ih·x + b_ih + W_hh·h + b_hh,
c' = σ(f)⊙c + σ(i)⊙tanh(g), h' = σ(o)⊙tanh(c'); heed holds W = [W_ih | W_hh]
(4H × (in+H), columns concatenated) and b = b_ih + b_hh. GRU gates r, z, n:
r = σ(W_ir x + b_ir + W_hr h + b_hr), z likewise, n = tanh(W_in x + b_in +
r⊙(W_hn h + b_hn)), h' = (1 − z)⊙n + z⊙h; heed holds [W_ih | W_hh] and both
biases.

The `rnn-backend:` line says what PyTorch runs: torch.backends.mkldnn
.is_available(), and the ops that one profiled LSTM forward and backward
called (1.13 runs nn.LSTM on CPU as its native ATen composition: one addmm
(BLAS sgemm) for the input projection of all steps, then per step an addmm
for the recurrent part and the pointwise gates; oneDNN's fused RNN is not
used for float32 in this release).

--check compares nn.LSTM, nn.GRU and nn.LSTMCell with the cell equations
above written out on heed's concatenated layout, in float64 (outputs and all
gradients), and exits 1 if one differs by more than 1e-12 relative.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

torch = _common.setup()
nn = torch.nn

T, B, IN, H = 32, 16, 512, 512


class Layer:
    """A module, its input, its initial state (None for zero) and the
    upstream gradients of its outputs."""

    def __init__(self, name, module, x, grads):
        self.name, self.module, self.x, self.grads = name, module, x.requires_grad_(), grads
        self.leaves = [self.x] + list(module.parameters())

    def out(self):
        y = self.module(self.x)
        # LSTM: (y, (h, c)); GRU: (y, h); LSTMCell: (h, c)
        if isinstance(self.module, nn.LSTM):
            return [y[0], y[1][0], y[1][1]]
        if isinstance(self.module, nn.GRU):
            return [y[0], y[1]]
        return list(y)

    def fwdbwd(self):
        for t in self.leaves:
            t.grad = None
        torch.autograd.backward(self.out(), self.grads)

    def cases(self, backward=True):
        def infer():
            with torch.no_grad():
                self.out()

        cs = [_common.Case(self.name + "/infer", infer), _common.Case(self.name + "/fwd", self.out)]
        if backward:
            cs.append(_common.Case(self.name + "/fwdbwd", self.fwdbwd))
        return cs


def layers(dtype=torch.float32):
    torch.manual_seed(1)
    g = torch.Generator().manual_seed(2)

    def rn(*shape):
        return torch.randn(shape, generator=g).to(dtype)

    lstm = Layer("lstm/T=%d/B=%d/in=%d/H=%d" % (T, B, IN, H), nn.LSTM(IN, H).to(dtype),
                 rn(T, B, IN), [rn(T, B, H), rn(1, B, H), rn(1, B, H)])
    gru = Layer("gru/T=%d/B=%d/in=%d/H=%d" % (T, B, IN, H), nn.GRU(IN, H).to(dtype),
                rn(T, B, IN), [rn(T, B, H), rn(1, B, H)])
    cell = nn.LSTMCell(IN, H).to(dtype)
    x, h0, c0 = rn(B, IN), rn(B, H), rn(B, H)
    step = Layer("lstmcell/B=%d/in=%d/H=%d" % (B, IN, H), cell, x, [rn(B, H), rn(B, H)])
    step.out = lambda: list(cell(step.x, (h0, c0)))  # a step from a nonzero state
    step.h0, step.c0 = h0, c0
    return lstm, gru, step


def backend_line(lstm):
    """mkldnn availability and the ops one profiled LSTM fwd+bwd ran."""
    with torch.profiler.profile() as prof:
        lstm.fwdbwd()
    names = {e.key for e in prof.key_averages()}
    fused = sorted(n for n in names if "mkldnn" in n or "rnn" in n.lower())
    core = [n for n in ("aten::lstm", "aten::addmm", "aten::mm", "aten::sigmoid_", "aten::tanh")
            if n in names]
    return ("mkldnn available: %s; nn.LSTM ran %s%s" %
            (torch.backends.mkldnn.is_available(), ", ".join(core),
             "; fused: " + ", ".join(fused) if fused else
             " (native ATen composition, matrix products through BLAS; no fused oneDNN RNN)"))


# --- --check ---------------------------------------------------------------


def lstm_by_hand(W, b, x, h, c):
    """heed's layout: W (4H × (in+H)) = [W_ih | W_hh], b = b_ih + b_hh."""
    ys = []
    for t in range(x.shape[0]):
        gates = torch.cat([x[t], h], -1) @ W.t() + b
        i, f, g, o = gates.chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        ys.append(h)
    return torch.stack(ys), h, c


def gru_by_hand(W, bx, bh, x, h):
    """heed's GRU layout: W (3H × (in+H)) = [W_ih | W_hh], biases kept apart."""
    n_in = x.shape[-1]
    Wx, Wh = W[:, :n_in], W[:, n_in:]
    ys = []
    for t in range(x.shape[0]):
        gx, gh = x[t] @ Wx.t() + bx, h @ Wh.t() + bh
        rx, zx, nx = gx.chunk(3, -1)
        rh, zh, nh = gh.chunk(3, -1)
        r, z = torch.sigmoid(rx + rh), torch.sigmoid(zx + zh)
        n = torch.tanh(nx + r * nh)
        h = (1 - z) * n + z * h
        ys.append(h)
    return torch.stack(ys), h


def check():
    ok = True
    lstm, gru, step = layers(torch.float64)

    def compare(name, got, want):
        nonlocal ok
        e = _common.rel_err(got, want)
        bad = not (e <= 1e-12)
        ok &= not bad
        print("  %-28s %.2e%s" % (name, e, "  FAIL" if bad else ""))

    def grads_of(outs, grads, leaves):
        return torch.autograd.grad(outs, leaves, grads)

    for layer, kind in ((lstm, "lstm"), (gru, "gru"), (step, "cell")):
        print(layer.name)
        m = layer.module
        sfx = "_l0" if kind != "cell" else ""
        Wih, Whh = getattr(m, "weight_ih" + sfx), getattr(m, "weight_hh" + sfx)
        bih, bhh = getattr(m, "bias_ih" + sfx), getattr(m, "bias_hh" + sfx)
        # heed's parameters, as leaves of their own
        W = torch.cat([Wih, Whh], 1).detach().requires_grad_()
        x = layer.x.detach().requires_grad_()
        if kind == "gru":
            bx, bh = bih.detach().requires_grad_(), bhh.detach().requires_grad_()
            zero = torch.zeros(B, H, dtype=torch.float64)
            mine = list(gru_by_hand(W, bx, bh, x, zero))
            mine[1] = mine[1][None]
            hl = [x, W, bx, bh]
        else:
            b = (bih + bhh).detach().requires_grad_()
            if kind == "lstm":
                zero = torch.zeros(B, H, dtype=torch.float64)
                y, h, c = lstm_by_hand(W, b, x, zero, zero)
                mine = [y, h[None], c[None]]
            else:
                _, h, c = lstm_by_hand(W, b, x[None], step.h0, step.c0)
                mine = [h, c]
            hl = [x, W, b]
        theirs = layer.out()
        for i, (a, w) in enumerate(zip(mine, theirs)):
            compare("output %d %s" % (i, tuple(w.shape)), a, w)
        gm = grads_of(mine, layer.grads, hl)
        gt = grads_of(theirs, layer.grads, [layer.x, Wih, Whh, bih, bhh])
        compare("dx", gm[0], gt[0])
        compare("dW = [dW_ih | dW_hh]", gm[1], torch.cat([gt[1], gt[2]], 1))
        if kind == "gru":
            compare("db_ih", gm[2], gt[3])
            compare("db_hh", gm[3], gt[4])
        else:
            compare("db = db_ih = db_hh", gm[2], gt[3])
            compare("db_hh", gm[2], gt[4])
    print("check: %s" % ("ok" if ok else "FAILED"))
    return ok


def main():
    ap = _common.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="check the layers against the cell equations on heed's layout, then exit")
    args = ap.parse_args()
    if args.check:
        _common.header(torch)
        sys.exit(0 if check() else 1)
    lstm, gru, step = layers()
    cases = _common.select(lstm.cases() + gru.cases() + step.cases(backward=False), args)
    _common.header(torch, [("rnn-backend", backend_line(lstm))])
    _common.summary(_common.run(cases, args))


if __name__ == "__main__":
    main()
