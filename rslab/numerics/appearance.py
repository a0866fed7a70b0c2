"""The appearance test: the exact chance that n samples show a bias carried by rare tokens.

A χ² test needs expected counts of about 5 where the bias lies
(:func:`rslab.numerics.detect.approximation_holds`). A bias carried by tokens that the
target almost never gives, or that the draw never gives, has no such cells. The test that
sees it names a set A of tokens in advance and rejects when a token of A appears among the
n samples. With ``P(A)`` and ``p(A)`` the masses the draw and the target give A, the test
rejects with probability ``1 − (1 − P(A))^n`` under the draw and ``1 − (1 − p(A))^n`` under
the target, so its advantage is exactly

    |(1 − p(A))^n − (1 − P(A))^n|.

For a set the draw never gives (``P(A) = 0``) that is ``1 − (1 − p(A))^n``, which reaches
½ at ``n = ln 2 / −ln(1 − p(A))``. The sets tried are those of a likelihood ratio: the k
tokens of largest ``P_i/p_i`` (the draw gives them too often) or of largest ``p_i/P_i``
(too rarely), for every k. :func:`advantage_at` gives the largest advantage over these
sets at n samples, and :func:`samples_to_see` the fewest samples at which it reaches a
given advantage (½ by default), a whole number. Every figure is a property of one exact
test, so it is also an upper bound on the samples the best test needs.
"""

from __future__ import annotations

import numpy as np

BISECTIONS = 40
DOUBLINGS = 1100


def _check(P, p) -> tuple[np.ndarray, np.ndarray]:
    P, p = np.asarray(P, np.float64), np.asarray(p, np.float64)
    if P.shape != p.shape or P.ndim != 1 or np.any(P < 0) or np.any(p < 0):
        raise ValueError("P and p must be non-negative laws of the same shape [V]")
    return P, p


def _sets(P, p) -> list[dict]:
    """Per side (``over``: ranked by P/p, ``under``: by p/P): the masses ``a = P(A_k)`` and
    ``b = p(A_k)`` of the first k tokens, for every k of the tokens where the laws differ."""
    out = []
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for side, num, den in (("over", P, p), ("under", p, P)):
            keep = num > den
            ratio = np.where(den[keep] > 0, num[keep] / den[keep], np.inf)
            order = np.argsort(-ratio, kind="stable")
            out.append({"side": side, "a": np.cumsum(P[keep][order]),
                        "b": np.cumsum(p[keep][order])})
    return out


def _advantage(a, b, n):
    """``|(1 − b)^n − (1 − a)^n|`` for masses a, b ≤ 1 (element-wise)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.abs(np.exp(n * np.log1p(-np.minimum(b, 1.0)))
                     - np.exp(n * np.log1p(-np.minimum(a, 1.0))))
    return np.nan_to_num(out, nan=0.0)


def advantage_at(P, p, samples: float) -> dict:
    """The appearance test of largest advantage at ``samples`` (see the module docstring):
    its advantage, side, number of tokens and the masses the draw (``P``) and the target
    (``p``) give them."""
    P, p = _check(P, p)
    if not samples > 0:
        raise ValueError(f"samples must be positive, got {samples!r}")
    best = {"advantage": 0.0, "side": None, "tokens": 0, "P": 0.0, "p": 0.0}
    for s in _sets(P, p):
        if not s["a"].size:
            continue
        adv = _advantage(s["a"], s["b"], samples)
        k = int(np.argmax(adv))
        if adv[k] > best["advantage"]:
            best = {"advantage": float(adv[k]), "side": s["side"], "tokens": k + 1,
                    "P": float(s["a"][k]), "p": float(s["b"][k])}
    return best


def samples_to_see(P, p, advantage: float = 0.5) -> dict:
    """The fewest whole samples (at least one) at which an appearance test reaches
    ``advantage`` (``inf`` if none does), with that test's side, tokens and masses. Each
    set's advantage rises to one peak and falls (both laws end up showing A), so its first
    crossing is found by bisection (on log n) below the peak."""
    P, p = _check(P, p)
    if not 0 < advantage < 1:
        raise ValueError(f"advantage must lie in (0, 1), got {advantage!r}")
    best = {"samples": float("inf"), "side": None, "tokens": 0, "P": 0.0, "p": 0.0}
    for s in _sets(P, p):
        a, b = s["a"], s["b"]
        if not a.size:
            continue
        hi = _first_crossing(a, b, advantage)
        k = int(np.argmin(hi))
        if hi[k] < best["samples"]:
            n = np.floor(hi[k])  # the bisection ends just above the crossing
            whole = n if n >= 1 and _advantage(a[k], b[k], n) >= advantage else np.ceil(hi[k])
            best = {"samples": float(whole), "side": s["side"], "tokens": k + 1,
                    "P": float(a[k]), "p": float(b[k])}
    return best


def _first_crossing(a, b, advantage: float) -> np.ndarray:
    """Per set (masses a, b): the first n ≥ 1 where its advantage reaches ``advantage``, else
    ``inf``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        x = -np.log1p(-np.minimum(np.minimum(a, b), 1.0))  # the rarer law's rate
        y = -np.log1p(-np.minimum(np.maximum(a, b), 1.0))
        peak = np.where(x > 0, (np.log(y) - np.log(x)) / (y - x), np.inf)
    peak = np.maximum(np.nan_to_num(peak, nan=1.0, posinf=np.inf), 1.0)
    out = np.full(a.size, np.inf)
    out[_advantage(a, b, 1.0) >= advantage] = 1.0
    todo = np.flatnonzero((out > 1) & ((_advantage(a, b, peak) >= advantage) | ~np.isfinite(peak)))
    lo, hi = np.ones(todo.size), np.where(np.isfinite(peak[todo]), peak[todo], 2.0)
    for _ in range(DOUBLINGS):
        short = _advantage(a[todo], b[todo], hi) < advantage
        if not short.any():
            break
        hi = np.where(short, 2 * hi, hi)
    reached = _advantage(a[todo], b[todo], hi) >= advantage
    todo, lo, hi = todo[reached], lo[reached], hi[reached]
    for _ in range(BISECTIONS):  # on log n: the crossing to 2^-BISECTIONS of its octaves
        mid = np.sqrt(lo * hi)
        up = _advantage(a[todo], b[todo], mid) >= advantage
        lo, hi = np.where(up, lo, mid), np.where(up, mid, hi)
    out[todo] = hi
    return out
