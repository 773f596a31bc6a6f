#!/usr/bin/env python3
"""PyTorch 1.13 cross-entropy over a 32000-word vocabulary, for heed's benchmarks.

Float32, one thread. Logits are R × V (V = 32000, R ∈ {16, 256, 384} rows:
one decoder step of a batch of 16, and 16 or 24 target tokens of a batch of
16), N(0, 1) entries; targets uniform over [1, V). Cases (names after
BenchmarkTorch/; last element fwd = forward with autograd recording,
fwdbwd = forward and backward, the leaves' .grad reset to None first):

  xent/R=../V=32000           F.cross_entropy(logits, y), mean reduction;
      backward from the scalar (d loss = 1): d logits = (softmax − onehot)/R.
  xent-ignore/R=../V=32000    the same with ignore_index=0 and R/8 of the
      targets set to 0: the mean is over the R − R/8 other rows, and the
      ignored rows' gradient is zero.
  xent-smooth/R=../V=32000    label_smoothing=0.1: the target distribution is
      (1 − ε)·onehot + ε/V, loss = −Σ_j q_j log p_j averaged over rows.
  softmax/R=../V=32000/fwd    one torch.softmax(logits, -1) pass under
      torch.no_grad(), the floor the loss is compared with (one read of the
      logits for the max, one for the sum of exponentials, one write).
  proj-xent/R=../H=512/V=32000    the output projection and the loss
      together: logits = F.linear(h, W, b) (h·Wᵀ + b, h R×512, W 32000×512,
      b 32000), then F.cross_entropy; h, W and b require grad, so backward
      computes dh = dlogits·W, dW = dlogitsᵀ·h and db = Σ_rows dlogits.

--check compares each loss and its logits gradient with the closed forms
above evaluated in float64 from the same logits (so the float32 error of
PyTorch's fused log_softmax + nll_loss shows), and proj-xent's parameter
gradients with dlogits pushed through the projection by hand.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

torch = _common.setup()
import torch.nn.functional as F  # noqa: E402

V, HID, ROWS = 32000, 512, (16, 256, 384)
IGNORE, SMOOTH = 0, 0.1


def make(R, gen):
    logits = torch.randn(R, V, generator=gen).requires_grad_()
    y = torch.randint(1, V, (R,), generator=gen)
    y_ign = y.clone()
    y_ign[torch.randperm(R, generator=gen)[: R // 8]] = IGNORE
    h = torch.randn(R, HID, generator=gen).requires_grad_()
    W = (torch.randn(V, HID, generator=gen) * HID ** -0.5).requires_grad_()
    b = torch.zeros(V).requires_grad_()
    return logits, y, y_ign, h, W, b


def losses(logits, y, y_ign):
    """name → the scalar loss of that variant (autograd recording)."""
    return {
        "xent": lambda: F.cross_entropy(logits, y),
        "xent-ignore": lambda: F.cross_entropy(logits, y_ign, ignore_index=IGNORE),
        "xent-smooth": lambda: F.cross_entropy(logits, y, label_smoothing=SMOOTH),
    }


def cases():
    gen = torch.Generator().manual_seed(1)
    out = []
    for R in ROWS:
        logits, y, y_ign, h, W, b = make(R, gen)
        for name, loss in losses(logits, y, y_ign).items():
            def fwdbwd(loss=loss):
                logits.grad = None
                loss().backward()
            base = "%s/R=%d/V=%d" % (name, R, V)
            out += [_common.Case(base + "/fwd", loss), _common.Case(base + "/fwdbwd", fwdbwd)]

        def softmax(logits=logits):
            with torch.no_grad():
                torch.softmax(logits, dim=-1)
        out.append(_common.Case("softmax/R=%d/V=%d/fwd" % (R, V), softmax))

        def proj(h=h, W=W, b=b, y=y):
            return F.cross_entropy(F.linear(h, W, b), y)

        def proj_fwdbwd(h=h, W=W, b=b, proj=proj):
            h.grad = W.grad = b.grad = None
            proj().backward()
        base = "proj-xent/R=%d/H=%d/V=%d" % (R, HID, V)
        out += [_common.Case(base + "/fwd", proj), _common.Case(base + "/fwdbwd", proj_fwdbwd)]
    return out


def reference(z, y, ignore=None, eps=0.0):
    """Loss and d loss/d z in float64 from the closed forms in the doc."""
    z = z.double()
    logp = z - torch.logsumexp(z, -1, keepdim=True)
    q = torch.zeros_like(z)
    q[torch.arange(len(y)), y] = 1.0
    q = (1 - eps) * q + eps / z.shape[1]
    keep = torch.ones(len(y), dtype=torch.bool) if ignore is None else y != ignore
    q[~keep] = 0.0
    n = keep.sum().item()
    loss = -(q * logp).sum() / n
    dz = (logp.exp() * keep[:, None] - q) / n
    return loss, dz


def check():
    ok = True

    def report(what, err, tol):
        nonlocal ok
        bad = not (err <= tol)
        ok &= not bad
        print("  %-36s %.2e%s" % (what, err, "  FAIL (tol %.0e)" % tol if bad else ""))

    gen = torch.Generator().manual_seed(1)
    for R in ROWS:
        logits, y, y_ign, h, W, b = make(R, gen)
        print("R=%d V=%d" % (R, V))
        args = {"xent": (y, None, 0.0), "xent-ignore": (y_ign, IGNORE, 0.0),
                "xent-smooth": (y, None, SMOOTH)}
        for name, loss in losses(logits, y, y_ign).items():
            logits.grad = None
            l32 = loss()
            l32.backward()
            l64, dz = reference(logits.detach(), *args[name])
            report("%s loss rel err vs f64" % name, abs(l32.item() - l64.item()) / abs(l64.item()), 1e-5)
            report("%s dlogits rel err vs f64" % name, _common.rel_err(logits.grad, dz), 1e-5)
            if name == "xent-ignore":
                zero = logits.grad[y_ign == IGNORE].abs().max().item() == 0.0
                print("  %-36s %s" % ("ignored rows' gradient exactly 0", zero))
                ok &= zero
        h.grad = W.grad = b.grad = None
        z = F.linear(h, W, b)
        F.cross_entropy(z, y).backward()
        _, dz = reference(z.detach(), y)
        h64, W64 = h.detach().double(), W.detach().double()
        report("proj dh rel err vs f64", _common.rel_err(h.grad, dz @ W64), 1e-5)
        report("proj dW rel err vs f64", _common.rel_err(W.grad, dz.t() @ h64), 1e-5)
        report("proj db rel err vs f64", _common.rel_err(b.grad, dz.sum(0)), 1e-5)
    print("check: %s" % ("ok" if ok else "FAILED"))
    return ok


def main():
    ap = _common.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="check the losses and gradients against float64 closed forms, then exit")
    args = ap.parse_args()
    if args.check:
        _common.header(torch)
        sys.exit(0 if check() else 1)
    cs = _common.select(cases(), args)
    _common.header(torch)
    _common.summary(_common.run(cs, args))


if __name__ == "__main__":
    main()
