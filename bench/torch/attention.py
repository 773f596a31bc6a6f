#!/usr/bin/env python3
"""PyTorch 1.13 attention, composed as its users write it, for heed's benchmarks.

Every case is float32, batch 1 of its own kind, one thread. Each is timed
three ways (the last element of the case name):

  infer   forward under torch.no_grad() (inference: no graph, nothing saved)
  fwd     forward with autograd recording, as in a training step (the graph
          and its saved tensors are built, then dropped)
  fwdbwd  forward, then backward from a fixed random upstream gradient; the
          leaves' .grad are reset to None before each backward (so backward
          writes, not accumulates, the gradients: PyTorch 2's zero_grad default)

Cases (names after BenchmarkTorch/):

  mha-causal/T=../h=../dk=..        causal self-attention, q, k, v of shape
                                    (h, T, dk), T = S:
        s   = torch.baddbmm(mask, q, kᵀ, alpha=1/√dk)   mask (T, T): 0 on and
              below the diagonal, −inf above (additive), broadcast over heads
        p   = torch.softmax(s, -1)
        out = torch.bmm(p, v)                            (h, T, dk)
      at T=512, dk=64 and T=2048, dk=128, h ∈ {1, 8}. PyTorch 1.13 has no
      fused scaled_dot_product_attention (2.0 added it): this materialises the
      h×T×T scores and probabilities, and backward keeps p.
  gqa-causal/T=../h=8/kv=2/dk=..    grouped-query: 8 query heads over 2 KV
      heads, k, v of shape (2, T, dk) expanded by k.repeat_interleave(4, 0),
      so query head i uses KV head i // 4 (heed's GroupedQuery: i/(heads/kvHeads)),
      then as mha-causal; backward sums the 4 copies' gradients into k, v.
  bahdanau/B=16/T=32/S=64/d=256/da=256   additive attention, teacher forcing:
      h (B, T, d) decoder states, H̄ (B, S, d) encoder states (keys = values),
        q   = h·W1ᵀ                   (B, T, da)     W1 (da, d)
        K   = H̄·W2ᵀ                   (B, S, da)     W2 (da, d)
        e   = (q[:,:,None,:] + K[:,None,:,:]).tanh() @ v     (B, T, S), v (da)
        α   = softmax(e, -1);  ctx = α·H̄  (torch.bmm)        (B, T, d)
      the broadcast materialises B×T×S×da (16×32×64×256 = 8 Mi floats, 32 MiB)
      tanh values, which autograd keeps for backward: what PyTorch users do.
      h, H̄, W1, W2 and v require grad.
  luong-dot/B=16/T=32/S=64/d=256    s = torch.bmm(Q, Hᵀ), α = softmax(s, -1),
      ctx = torch.bmm(α, H); Q (B, T, d), H (B, S, d) (keys = values).
  luong-general/B=16/T=32/S=64/d=256    s = Q·W·Hᵀ (s_ts = q_tᵀ W h̄_s, W (d, d)
      learned), composed as torch.bmm(Q @ W, Hᵀ) (the T×d·d product: T < S),
      then as luong-dot. Q, H (and W) require grad.
  attentional/R=512/d=256           Luong's attentional layer for 16×32 rows:
      h̃ = tanh(torch.cat([c, h], -1) @ W_cᵀ), c, h (R, d), W_c (d, 2d), no
      bias; c, h, W_c require grad.

Upstream gradients (dO, dctx, dh̃) are N(0, 1); inputs are N(0, 1) and
weights N(0, 1/fan_in), except that Luong dot's Q is N(0, 1/d) and Luong
general's W is N(0, 1/d²), so that every score is O(1): no tanh saturates and
no softmax is one-hot (the cost does not depend on it; the checks' errors do).

--check runs every case once in float32 and in float64 (the same composition)
and prints the relative error max|x32 − x64| / max|x64| of the output and of
every gradient, checks each gradient's shape against its leaf's, that the
causal cases are causal (changing the keys and values after position t leaves
out[:, :t+1] bit-identical) and, for Bahdanau and Luong general, compares
autograd with the gradient written out by hand (the formulas heed implements)
in float64. It exits 1 if a check fails.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

torch = _common.setup()


class Problem:
    """A case's inputs and its composition: leaves (requiring grad), other
    constants, the forward f(leaves, consts) and the upstream gradient."""

    def __init__(self, name, leaves, consts, forward, dout_shape, gen):
        self.name = name
        self.leaves = {k: v.requires_grad_() for k, v in leaves.items()}
        self.consts = consts
        self.forward = forward
        self.dout = torch.randn(dout_shape, generator=gen)

    def cast(self, dtype):
        """A copy in another dtype (for --check's float64 reference)."""
        p = Problem.__new__(Problem)
        p.name, p.forward = self.name, self.forward
        p.leaves = {k: v.detach().to(dtype).requires_grad_() for k, v in self.leaves.items()}
        p.consts = {k: v.to(dtype) if v.is_floating_point() else v for k, v in self.consts.items()}
        p.dout = self.dout.to(dtype)
        return p

    def out(self):
        return self.forward(self.leaves, self.consts)

    def fwdbwd(self):
        for t in self.leaves.values():
            t.grad = None
        self.out().backward(self.dout)

    def cases(self):
        def infer():
            with torch.no_grad():
                self.out()

        return [_common.Case(self.name + "/infer", infer),
                _common.Case(self.name + "/fwd", self.out),
                _common.Case(self.name + "/fwdbwd", self.fwdbwd)]


def randn(gen, *shape, scale=1.0):
    return torch.randn(shape, generator=gen) * scale


# --- the compositions ------------------------------------------------------


def causal_attention(L, C):
    """mha-causal and gqa-causal: C holds the mask, the scale and the group."""
    k, v = L["k"], L["v"]
    g = C["group"].item()
    if g > 1:  # grouped-query: query head i reads KV head i // g
        k = k.repeat_interleave(g, dim=0)
        v = v.repeat_interleave(g, dim=0)
    s = torch.baddbmm(C["mask"], L["q"], k.transpose(1, 2), alpha=C["scale"].item())
    p = torch.softmax(s, dim=-1)
    return torch.bmm(p, v)


def bahdanau(L, C):
    h, Hb = L["h"], L["Hbar"]
    q = h @ L["W1"].t()                      # (B, T, da)
    K = Hb @ L["W2"].t()                     # (B, S, da)
    e = (q[:, :, None, :] + K[:, None, :, :]).tanh() @ L["v"]   # (B, T, S)
    a = torch.softmax(e, dim=-1)
    return torch.bmm(a, Hb)                  # (B, T, d)


def luong_dot(L, C):
    H = L["H"]
    a = torch.softmax(torch.bmm(L["Q"], H.transpose(1, 2)), dim=-1)
    return torch.bmm(a, H)


def luong_general(L, C):
    H = L["H"]
    a = torch.softmax(torch.bmm(L["Q"] @ L["W"], H.transpose(1, 2)), dim=-1)
    return torch.bmm(a, H)


def attentional(L, C):
    return torch.tanh(torch.cat([L["c"], L["h"]], dim=-1) @ L["Wc"].t())


# --- the cases -------------------------------------------------------------


def causal_mask(T):
    return torch.full((T, T), float("-inf")).triu(1)


def problems():
    gen = torch.Generator().manual_seed(1)
    out = []
    for T, dk in ((512, 64), (2048, 128)):
        for heads, kv in ((1, 1), (8, 8), (8, 2)):
            name = ("mha-causal/T=%d/h=%d/dk=%d" % (T, heads, dk) if kv == heads else
                    "gqa-causal/T=%d/h=%d/kv=%d/dk=%d" % (T, heads, kv, dk))
            L = {"q": randn(gen, heads, T, dk), "k": randn(gen, kv, T, dk), "v": randn(gen, kv, T, dk)}
            C = {"mask": causal_mask(T), "scale": torch.tensor(1 / math.sqrt(dk)),
                 "group": torch.tensor(heads // kv)}
            out.append(Problem(name, L, C, causal_attention, (heads, T, dk), gen))
    B, T, S, d, da = 16, 32, 64, 256, 256
    out.append(Problem("bahdanau/B=%d/T=%d/S=%d/d=%d/da=%d" % (B, T, S, d, da),
                       {"h": randn(gen, B, T, d), "Hbar": randn(gen, B, S, d),
                        "W1": randn(gen, da, d, scale=d ** -0.5), "W2": randn(gen, da, d, scale=d ** -0.5),
                        "v": randn(gen, da, scale=da ** -0.5)},
                       {}, bahdanau, (B, T, d), gen))
    out.append(Problem("luong-dot/B=%d/T=%d/S=%d/d=%d" % (B, T, S, d),
                       {"Q": randn(gen, B, T, d, scale=d ** -0.5), "H": randn(gen, B, S, d)},
                       {}, luong_dot, (B, T, d), gen))
    out.append(Problem("luong-general/B=%d/T=%d/S=%d/d=%d" % (B, T, S, d),
                       {"Q": randn(gen, B, T, d), "H": randn(gen, B, S, d),
                        "W": randn(gen, d, d, scale=d ** -1.0)},
                       {}, luong_general, (B, T, d), gen))
    R = B * T
    out.append(Problem("attentional/R=%d/d=%d" % (R, d),
                       {"c": randn(gen, R, d), "h": randn(gen, R, d),
                        "Wc": randn(gen, d, 2 * d, scale=(2 * d) ** -0.5)},
                       {}, attentional, (R, d), gen))
    return out


# --- --check ---------------------------------------------------------------


def bahdanau_by_hand(L, dctx):
    """Gradients of bahdanau() written out (float64), as heed computes them."""
    h, Hb, W1, W2, v = (L[k].detach() for k in ("h", "Hbar", "W1", "W2", "v"))
    q, K = h @ W1.t(), Hb @ W2.t()
    th = (q[:, :, None, :] + K[:, None, :, :]).tanh()          # (B, T, S, da)
    a = torch.softmax(th @ v, dim=-1)                           # (B, T, S)
    g = {}
    da_ = torch.bmm(dctx, Hb.transpose(1, 2))                   # dα = dctx·H̄ᵀ
    dHb = torch.bmm(a.transpose(1, 2), dctx)                    # H̄ as values: αᵀ·dctx
    de = a * (da_ - (da_ * a).sum(-1, keepdim=True))            # softmax backward
    g["v"] = torch.einsum("bts,btsi->i", de, th)                # Σ de·tanh
    dz = de[..., None] * v * (1 - th * th)                      # through tanh
    dq, dK = dz.sum(2), dz.sum(1)                               # (B, T, da), (B, S, da)
    g["W1"] = torch.einsum("bti,btj->ij", dq, h)
    g["h"] = dq @ W1
    g["W2"] = torch.einsum("bsi,bsj->ij", dK, Hb)
    g["Hbar"] = dHb + dK @ W2                                   # H̄ as keys too
    return g


def general_by_hand(L, dctx):
    Q, H, W = (L[k].detach() for k in ("Q", "H", "W"))
    U = Q @ W
    a = torch.softmax(torch.bmm(U, H.transpose(1, 2)), dim=-1)
    da_ = torch.bmm(dctx, H.transpose(1, 2))
    ds = a * (da_ - (da_ * a).sum(-1, keepdim=True))
    dU = torch.bmm(ds, H)
    return {"Q": dU @ W.t(), "W": torch.einsum("bti,btj->ij", Q, dU),
            "H": torch.bmm(a.transpose(1, 2), dctx) + torch.bmm(ds.transpose(1, 2), U)}


def check(probs):
    ok = True

    def report(what, err, tol):
        nonlocal ok
        bad = not (err <= tol)
        ok &= not bad
        print("  %-34s %.2e%s" % (what, err, "  FAIL (tol %.0e)" % tol if bad else ""))

    for p in probs:
        print(p.name)
        p64 = p.cast(torch.float64)
        p.fwdbwd()
        p64.fwdbwd()
        out32, out64 = p.out().detach(), p64.out().detach()
        # float32 against float64: generous bounds, these are sanity checks of
        # the composition (heed's tests hold its own kernels to their bounds).
        report("out  rel err f32 vs f64", _common.rel_err(out32, out64), 1e-4)
        for k, t in p.leaves.items():
            if t.grad is None or t.grad.shape != t.shape:
                print("  d%-5s shape %s, leaf %s  FAIL" % (k, None if t.grad is None else
                                                             tuple(t.grad.shape), tuple(t.shape)))
                ok = False
                continue
            report("d%-5s %-14s rel err" % (k, tuple(t.shape)),
                   _common.rel_err(t.grad, p64.leaves[k].grad), 1e-4)
        if p.forward is causal_attention:
            T = p.leaves["q"].shape[1]
            t0 = T // 3
            L = {k: v.detach().clone() for k, v in p.leaves.items()}
            for k in ("k", "v"):
                L[k][:, t0 + 1:] = torch.randn_like(L[k][:, t0 + 1:]) * 10
            with torch.no_grad():
                same = torch.equal(causal_attention(L, p.consts)[:, :t0 + 1], out32[:, :t0 + 1])
            print("  causal: out[:, :%d] unchanged by k, v[:, %d:]: %s" % (t0 + 1, t0 + 1, same))
            ok &= same
        by_hand = {bahdanau: bahdanau_by_hand, luong_general: general_by_hand}.get(p.forward)
        if by_hand:
            g = by_hand(p64.leaves, p64.dout)
            for k, t in p64.leaves.items():
                report("d%-5s by hand vs autograd (f64)" % k, _common.rel_err(g[k], t.grad), 1e-12)
    print("check: %s" % ("ok" if ok else "FAILED"))
    return ok


def main():
    ap = _common.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="check the compositions against float64 and by-hand gradients, then exit")
    args = ap.parse_args()
    probs = problems()
    if args.check:
        _common.header(torch)
        sys.exit(0 if check(probs) else 1)
    cases = _common.select([c for p in probs for c in p.cases()], args)
    _common.header(torch)
    _common.summary(_common.run(cases, args))


if __name__ == "__main__":
    main()
