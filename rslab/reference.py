"""The framework reference sampler of speculative decoding (NumPy), Exact and Fast paths.

``rejection_sample(target_logits, draft_probs, draft_token_ids, *, path, seed, noise, method)``
(Leviathan et al. 2023; Chen et al. 2023). Per request, positions s = 0..S−1 in
order: the draft token x is accepted iff ``q(x) > 0 and u·q(x) < p(x)``; at the
first rejection a token is drawn from the residual ``max(0, p − q)`` and the
request stops; if all S drafts are accepted a bonus token is drawn from row S.
``tokens[r]`` holds the emitted tokens followed by ``-1``; ``num_accepted[r]``
counts the accepted drafts (so ``num_accepted + 1`` tokens are emitted).

Float32 semantics (what a kernel reproduces)
--------------------------------------------
* softmax of a logits row l: ``m = max(l); z = (l − m)·LOG2E; e = exp2(z)``
  (``exp2(−∞) = 0``); ``s = sum(e)`` (NumPy's float32 pairwise sum — a kernel
  sums in another order, so ``p`` may differ in the last bits);
  ``p = e · (1/s)``: the core has no divide, so the normaliser is a reciprocal
  (the SFU's ``vrcp``, a correctly rounded float32 ``1/s``) and a multiply.
* acceptance: ``u·q(x) < p(x)`` with the product rounded to float32.
* residual: ``w = max(p − q, 0)`` in float32; if no ``w`` has a finite ``log2`` — all are 0,
  or, on the Fast path, all below the smallest normal float32, which the SFU log flushes —
  the residual is empty and ``w = p`` (sample from p, with the same residual noise row).
  The race and the inverse CDF see the row their own way: it is empty when no race score
  is positive, or when the float32 total is 0 (:mod:`rslab.draws`).
  ``score_i = log2(w_i) + g_i``.
* bonus: ``score_i = l_i·LOG2E + g_i`` over the raw logits of row S. This is shift-invariant
  only while float32 resolves the score finely: a bonus row whose max logit exceeds
  ``BONUS_LOGIT_LIMIT`` in magnitude is rejected (subtract the row max first).
* a token whose weight is 0 (``w_i = 0``, a ``−∞`` logit) or whose ``log2`` is
  ``−∞`` (the fast log flushes subnormals) scores ``−∞``; scores are never NaN.
* the sample is ``argmax(score)``; ties go to the lowest index.
* ``split=``: the sum ``s`` (and, merged online, ``p``) in the order of a row split over the
  cores of a chip (:mod:`rslab.numerics.split_sum`), instead of NumPy's: the one a split
  kernel computes, bit for bit (a single part is the one-core kernel's own order).
* Gumbel noise in base 2: ``g = −log2(−log2 u)``, which keeps the argmax
  equivalent to ``argmax(ln w + Gumbel)`` since ``log2 = ln / ln 2`` is monotone.

Draw methods (Fast path; :mod:`rslab.numerics.methods`)
-------------------------------------------------------
``method="gumbel"`` (the default) is the Gumbel-max above. ``method="race"`` and
``method="invcdf"`` draw the residual and bonus tokens from the linear weights
instead (:mod:`rslab.draws`): the residual ``w``, and for the bonus row
``exp2((l − max l)·LOG2E)`` (the softmax numerators, the path's exp2). The race
is ``argmax w·rcp(E)`` with ``noise`` ``scaled`` (default) or ``naive``; the
inverse CDF is the first token past ``u·Σw`` in the core's float32 sums with
``noise`` ``wide48`` (default, three words), ``wide`` (two) or ``u24`` (one);
``method="fixed"`` (noise ``u96``) is the inverse CDF over exact fixed-point sums, block
then lane, with a 96-bit uniform for each (:mod:`rslab.numerics.fixed_invcdf`, its χ²
bound). ``noise=None``
selects the method's default (``div8`` for Gumbel). The Exact path draws with
Gumbel-max only. The ``score`` diagnostic is the Gumbel score; the other draws
leave it NaN.

============  =============================================  =====================================
path          exact                                          fast
============  =============================================  =====================================
exp2, log2    ``precise_exp2``, ``precise_log2`` (correctly  ``fast_exp2``, ``DEFAULT_FASTLOG2``
              rounded float32)                               (the SFU models)
noise g(u)    ``−precise_log2(−precise_log2 u)``             ``get_noise(noise)(u)`` (default div8)
generator     Philox4x32-10                                  ``hw_random_words`` (``vrand``)
============  =============================================  =====================================

Random-number layout (both paths; implemented in :mod:`rslab.randomness`)
--------------------------------------------------------------------------
A row of random words is addressed by (seed, request r, position s, purpose);
token i of a row gets one uint32 word; ``u = uniform_from_words(word)``.

=============  ========  ==================  ==========================================
purpose        value     position s          tokens used
=============  ========  ==================  ==========================================
``ACCEPT``     0         0..S−1              token 0 only: the acceptance uniform of (r, s)
``RESIDUAL``   1         0..S−1              0..V−1: Gumbel noise of the residual sample
``BONUS``      2         S                   0..V−1: Gumbel noise of the bonus sample
=============  ========  ==================  ==========================================

The race reads the same words as Gumbel-max (token i's word for token i). The
inverse CDF reads one to three words per row of the ``RESIDUAL`` or ``BONUS``
row: token 0's (``u₁``); for ``wide`` token 1's (``u₂``); for ``wide48`` tokens
1 and 2 (the high and low 24 bits of a 48-bit integer).

===============  ===============================================================================
Exact (Philox)   ``key = (seed & 0xffffffff, seed >> 32)``; ``counter = (c0, s, r, purpose)``;
                 token i: ``c0 = (i // 512)·128 + i % 128``, word ``(i // 128) % 4`` of the
                 four output words. One 128-lane evaluation covers 512 tokens = two packed
                 BF16 vectors: packed vector 2b holds words 0 (low halves) and 1 (high halves),
                 packed vector 2b+1 holds words 2 and 3. Acceptance: ``c0 = 0``, word 0.
Fast (``vrand``)  ``key = fast_key(seed, r, s, purpose)`` (host-side, ``mix32`` chain:
                 ``h = mix32(lo ^ 0x2545F491); h = mix32(h ^ hi); h = mix32(h ^ r);
                 key = mix32(h ^ (s << 2 | purpose))``, lo/hi the seed's 32-bit halves),
                 ``counter = i``: word ``hw_random_words(key, i)``. Acceptance: counter 0.
===============  ===============================================================================

Kernels obtain the same numbers with :func:`random_words` / :func:`random_uniforms`
and the same noise with :func:`gumbel_noise`. Requests are processed in chunks
(every random number depends only on its own (r, s, purpose, i)), so a row's
tokens never depend on its batch-mates or on R.

Validation: bad input raises ``ValueError`` naming the argument; nothing is clamped.
Draft rows must be finite, non-negative and sum to 1 within ``DRAFT_SUM_TOL``
(absolute, sum taken in float64); bonus rows must keep ``|max| ≤ BONUS_LOGIT_LIMIT``.
"""

from dataclasses import dataclass

import numpy as np

from rslab.draws import EMPTY, draw_tokens
from rslab.numerics.fastlog import (
    DEFAULT_FASTLOG2,
    LOG2E,
    fast_exp2,
    precise_exp2,
    precise_log2,
)
from rslab.numerics.gumbel import get_noise
from rslab.numerics.methods import draw, resolve_noise
from rslab.numerics.rng import uniform_from_words
from rslab.numerics.split_sum import SplitSum, split_softmax
from rslab.randomness import (
    ACCEPT,
    BONUS,
    PATHS,
    RESIDUAL,
    check_seed,
    fast_key,
    philox_key,
    philox_slot,
    random_uniforms,
    random_words,
)

__all__ = [
    "ACCEPT", "BONUS", "RESIDUAL", "PATHS", "LOG2E", "DIAGNOSTICS", "DRAFT_SUM_TOL", "SampleResult",
    "rejection_sample", "target_probs", "gumbel_noise", "residual_weights", "sample_scores",
    "softmax_numerators", "residual_draw", "bonus_draw",
    "random_words", "random_uniforms", "fast_key", "philox_key", "philox_slot",
    "BONUS_LOGIT_LIMIT", "uniform_from_words", "path_math", "acceptance_probability",
    "accepted_count_law",
]

DRAFT_SUM_TOL = 1e-3
"""|Σq − 1| allowed per draft row: loose next to float32 rounding of a normalised row
(≈ √V·2^-24 ≈ 2e-5 at V = 154,880), tight enough to catch unnormalised or truncated rows."""
BONUS_SCORE_STEP = 2.0**-14
"""The coarsest float32 step allowed in a bonus score ``l·LOG2E + g``: below the SFU log's error
bound (``DEFAULT_FASTLOG2.error_bound()`` ≈ 8.0e-5), so rounding the raw-logit score (two
roundings, each at most half a step) shifts no token's score more than the hardware log already
may shift its noise."""
NOISE_BOUND = 32.0
"""Every finite noise value the sampler draws lies in an interval around 0 narrower than
NOISE_BOUND (the exact law over the 2^24 lattice spans [−4.64, 23.47], the fast pipelines less;
``naive``'s plateau also gives +inf, which wins whatever the rounding): a winning token's score
and its ``l·LOG2E`` both lie within it of the max logit's."""
BONUS_LOGIT_LIMIT = float((2.0 ** (np.log2(BONUS_SCORE_STEP) + 24) - NOISE_BOUND) / LOG2E)
"""Largest ``|max logit|`` of a bonus row (≈ 687.6): float32 values below 2^(log2 step + 24)
are spaced at most ``BONUS_SCORE_STEP`` apart, and a winning token's score and product stay
within ``NOISE_BOUND`` of the max logit's (below that power of two)."""
CHUNK_ELEMENTS = 1 << 21
"""Requests are processed in chunks of about this many vocabulary entries per row set."""


DIAGNOSTICS = ("m", "sum", "px", "u", "score")
"""The float32 intermediates ``rejection_sample(..., diagnostics=True)`` records: per checked
position (r, s) the row max ``m``, the sum of exponentials ``sum``, ``p(x)`` of the draft
token and the acceptance uniform ``u`` ([R, S], NaN where not checked); per request the
winning ``score`` of its residual or bonus row ([R])."""


@dataclass(frozen=True)
class SampleResult:
    """``tokens`` int64 [R, S+1] (emitted tokens, then −1); ``num_accepted`` int64 [R];
    ``diagnostics`` (name → float32 array, see ``DIAGNOSTICS``) when asked for, else None."""

    tokens: np.ndarray
    num_accepted: np.ndarray
    diagnostics: dict | None = None

    @property
    def num_emitted(self) -> np.ndarray:
        """Tokens emitted per request: ``num_accepted + 1``."""
        return self.num_accepted + 1


@dataclass(frozen=True)
class PathMath:
    """The float32 functions of one path: ``exp2``, ``log2``, ``noise`` (u → g), and
    ``log2_tiny``: the smallest positive float32 whose ``log2`` is finite."""

    path: str
    exp2: object
    log2: object
    noise: object
    log2_tiny: np.float32 = np.float32(2.0**-149)


def path_math(path="exact", noise="div8") -> PathMath:
    """The exp2 / log2 / noise functions of ``path`` (``noise`` is used on the fast path only)."""
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    if not isinstance(noise, str):
        raise ValueError(f"noise must be a noise-variant name, got {noise!r}")
    try:
        pipeline = get_noise(noise)
    except ValueError as exc:
        raise ValueError(f"noise: {exc}") from None
    if path == "exact":
        return PathMath("exact", precise_exp2, precise_log2, get_noise("exact"))
    return PathMath("fast", fast_exp2, DEFAULT_FASTLOG2, pipeline,
                    np.finfo(np.float32).tiny)  # the SFU log flushes subnormals to 0


def _shifted_exp(logits, math: PathMath):
    """``(m, e)``: the row max and ``e = exp2((l − m)·LOG2E)`` (0 where l = −∞)."""
    m = logits.max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", over="ignore"):  # l − m may overflow to −inf: p = 0
        z = (logits - m) * LOG2E
    e = math.exp2(z)
    e[z == -np.inf] = 0
    return m, e


def softmax_parts(logits, math: PathMath):
    """``(m, s, p)``: the row max, the float32 sum of exponentials and the probabilities."""
    m, e = _shifted_exp(logits, math)
    s = e.sum(axis=-1, dtype=np.float32, keepdims=True)
    return m, s, e * (np.float32(1) / s)


def _logits_and_math(logits, path):
    """The float32 ``logits`` as an array (else ``ValueError``) and the path's math."""
    math = path if isinstance(path, PathMath) else path_math(path)
    l = np.asarray(logits)
    if l.dtype != np.float32:
        raise ValueError(f"logits must be float32, got {l.dtype}")
    return l, math


def target_probs(logits, path="exact") -> np.ndarray:
    """Float32 softmax over the last axis, op by op as the kernels compute it."""
    return softmax_parts(*_logits_and_math(logits, path))[2]


def softmax_numerators(logits, path="exact") -> np.ndarray:
    """``e = exp2((l − max l)·LOG2E)`` over the last axis (float32, 0 where l = −∞)."""
    return _shifted_exp(*_logits_and_math(logits, path))[1]


def gumbel_noise(path, seed, requests, positions, purpose, tokens, noise="div8") -> np.ndarray:
    """Float32 base-2 Gumbel noise of ``tokens`` in rows (request, position, purpose)."""
    math = path if isinstance(path, PathMath) else path_math(path, noise)
    u = random_uniforms(math.path, seed, requests, positions, purpose, tokens)
    return math.noise(u)


def residual_weights(p, q, log2_tiny=PathMath.log2_tiny) -> np.ndarray:
    """``max(p − q, 0)`` in float32, replaced by ``p`` in rows where it is empty: no weight
    reaches ``log2_tiny`` (the smallest with a finite log2 on the path, :class:`PathMath`)."""
    w = np.maximum(p - q, np.float32(0))
    empty = ~(w >= log2_tiny).any(axis=-1)
    if empty.any():
        w[empty] = p[empty]
    return w


def sample_scores(log_weights, g) -> np.ndarray:
    """``log_weights + g`` with −∞ wherever the log-weight is −∞ (never NaN)."""
    with np.errstate(invalid="ignore"):
        score = log_weights + g
    score[log_weights == -np.inf] = -np.inf
    return score


def acceptance_probability(p, q) -> np.ndarray:
    """Theory: P(accept) = Σ_x q(x)·min(1, p(x)/q(x)) = Σ_x min(p(x), q(x)) (float64, last axis)."""
    return np.minimum(np.asarray(p, np.float64), np.asarray(q, np.float64)).sum(axis=-1)


def accepted_count_law(alphas) -> np.ndarray:
    """Theory: P(num_accepted = k), k = 0..S, for per-position acceptance probabilities α_s.

    ``P(k) = α_0 ⋯ α_{k−1} (1 − α_k)`` for k < S and ``α_0 ⋯ α_{S−1}`` for k = S.
    """
    a = np.asarray(alphas, np.float64)
    reach = np.concatenate([[1.0], np.cumprod(a)])
    return reach * np.concatenate([1.0 - a, [1.0]])


def _check_dims(name, shape, expected):
    """Each axis of ``shape`` equals what ``target_logits`` has (or implies) for it."""
    for axis, (dim, value, verb) in enumerate(expected):
        if shape[axis] != value:
            raise ValueError(f"{name} has {dim} = {shape[axis]}, target_logits {verb} "
                             f"{dim} = {value}")


def _check_inputs(target_logits, draft_probs, draft_token_ids, gumbel_bonus: bool = True):
    """(R, S, V) of valid inputs, else a ValueError naming the argument; ``gumbel_bonus``: the
    bonus rows are drawn by Gumbel-max over raw logits (their range is then bounded)."""
    l = target_logits
    q = draft_probs
    ids = draft_token_ids
    for name, arr in (("target_logits", l), ("draft_probs", q), ("draft_token_ids", ids)):
        if not isinstance(arr, np.ndarray):
            raise ValueError(f"{name} must be a numpy array, got {type(arr).__name__}")
    if l.dtype != np.float32:
        raise ValueError(f"target_logits must be float32, got {l.dtype}")
    if l.ndim != 3 or l.shape[1] < 1 or l.shape[2] < 1:
        raise ValueError(f"target_logits must have shape [R, S+1, V] with V ≥ 1, got {l.shape}")
    R, S1, V = l.shape
    S = S1 - 1
    if q.dtype != np.float32:
        raise ValueError(f"draft_probs must be float32, got {q.dtype}")
    if q.ndim != 3:
        raise ValueError(f"draft_probs must have shape [R, S, V], got {q.shape}")
    _check_dims("draft_probs", q.shape, (("R", R, "has"), ("S", S, "implies"), ("V", V, "has")))
    if ids.dtype.kind not in "ui":
        raise ValueError(f"draft_token_ids must be integers, got {ids.dtype}")
    if ids.ndim != 2:
        raise ValueError(f"draft_token_ids must have shape [R, S], got {ids.shape}")
    _check_dims("draft_token_ids", ids.shape, (("R", R, "has"), ("S", S, "implies")))
    if np.isnan(l).any():
        raise ValueError("target_logits contains NaN")
    if np.isposinf(l).any():
        raise ValueError("target_logits contains +inf")
    bad = ~np.isfinite(l).any(axis=-1)
    if bad.any():
        r, s = np.argwhere(bad)[0]
        raise ValueError(f"target_logits row [{r}, {s}] has no finite logit")
    if not np.isfinite(q).all():
        raise ValueError("draft_probs contains NaN or inf")
    if (q < 0).any():
        raise ValueError("draft_probs contains negative probabilities")
    if q.size:
        sums = q.sum(axis=-1, dtype=np.float64)
        err = np.abs(sums - 1.0)
        if (err > DRAFT_SUM_TOL).any():
            r, s = np.unravel_index(np.argmax(err), err.shape)
            raise ValueError(f"draft_probs row [{r}, {s}] sums to {sums[r, s]:.6g} "
                             f"(|sum − 1| must be ≤ {DRAFT_SUM_TOL})")
    if gumbel_bonus:
        _check_bonus_rows(l[:, S], S)
    if ids.size and (ids.min() < 0 or ids.max() >= V):
        raise ValueError(f"draft_token_ids must lie in [0, {V}), got range "
                         f"[{ids.min()}, {ids.max()}]")
    return R, S, V


def _check_bonus_rows(bonus, S):
    """Each bonus row's max logit within ``BONUS_LOGIT_LIMIT`` (see its docstring)."""
    if not bonus.size:
        return
    m = np.abs(bonus.max(axis=-1))
    if (m > BONUS_LOGIT_LIMIT).any():
        r = int(np.argmax(m))
        score = float(m[r]) * float(LOG2E) + NOISE_BOUND
        step = float(np.spacing(np.float32(score))) if score < 2.0**128 else np.inf
        raise ValueError(
            f"target_logits bonus row [{r}, {S}] has max logit "
            f"{bonus[r].max():.6g}: its scores l·LOG2E + g round to float32 steps of "
            f"{step:.3g}, coarser than the noise resolves, so the bonus draw would not be "
            f"shift-invariant; |max| must be ≤ {BONUS_LOGIT_LIMIT:.1f} "
            f"(subtract the row max: softmax is shift-invariant)")


def residual_draw(method, noise, math, seed, requests, position, w, p=None):
    """``(tokens, scores)`` of the residual rows ``w``: Gumbel-max (``scores`` its scores),
    or a row draw of :mod:`rslab.draws` (``scores`` None), whose empty rows are drawn from
    ``p`` (with the same words) when it is given."""
    if draw(method).linear:
        tokens = draw_tokens(method, noise, seed, requests, position, RESIDUAL, w)
        empty = tokens == EMPTY
        if p is not None and empty.any():
            tokens[empty] = draw_tokens(method, noise, seed, np.asarray(requests)[empty],
                                        position, RESIDUAL, p[empty])
        return tokens, None
    g = gumbel_noise(math, seed, requests, position, RESIDUAL, np.arange(w.shape[-1]))
    with np.errstate(divide="ignore"):
        lw = math.log2(w)
    scores = sample_scores(lw, g)
    return scores.argmax(axis=-1), scores


def bonus_draw(method, noise, math, seed, requests, position, logits):
    """``(tokens, scores)`` of the bonus rows, as :func:`residual_draw`."""
    if draw(method).linear:
        w = softmax_numerators(logits, math)
        return draw_tokens(method, noise, seed, requests, position, BONUS, w), None
    g = gumbel_noise(math, seed, requests, position, BONUS, np.arange(logits.shape[-1]))
    with np.errstate(invalid="ignore", over="ignore"):  # a far-below logit: −inf
        lw = logits * LOG2E
    scores = sample_scores(lw, g)
    return scores.argmax(axis=-1), scores


def _split_parts(logits, math, split, requests, position) -> tuple:
    """``(m, s, p, px)`` of rows ``logits`` summed in each row's stated order
    (``split(r, s)``), the draft tokens' ``px`` as a function of their indices."""
    n = logits.shape[0]
    m, total = np.empty((n, 1), np.float32), np.empty((n, 1), np.float32)
    p, e = np.empty_like(logits), np.empty_like(logits)
    orders = [split(int(r), position) for r in requests]
    for order in set(orders):
        at = np.array([i for i, o in enumerate(orders) if o == order])
        m[at], total[at], p[at], e[at] = split_softmax(logits[at], math.exp2, order)
    return m, total, p, lambda at, x: e[at, x] * (np.float32(1) / total[at, 0])


def _sample_chunk(rows, l, q, ids, math, seed, out: SampleResult,
                  method_noise=("gumbel", "div8"), split=None):
    """Sample the requests ``rows`` (global indices; their inputs are ``l, q, ids``)."""
    S = q.shape[1]
    live = np.arange(rows.size)  # local indices of requests still drafting
    diag = out.diagnostics
    for s in range(S):
        if live.size == 0:
            return
        x = ids[live, s].astype(np.int64)
        at = np.arange(live.size)
        if split is None:
            m, total, p = softmax_parts(l[live, s], math)
            px = p[at, x]
        else:
            m, total, p, px_of = _split_parts(l[live, s], math, split, rows[live], s)
            px = px_of(at, x)
        qrow = q[live, s]
        qx = qrow[at, x]
        u = random_uniforms(math.path, seed, rows[live], s, ACCEPT, [0])[:, 0]
        if diag is not None:
            for name, value in (("m", m[:, 0]), ("sum", total[:, 0]), ("px", px), ("u", u)):
                diag[name][rows[live], s] = value
        accept = (qx > 0) & (u * qx < px)
        out.tokens[rows[live[accept]], s] = x[accept]
        out.num_accepted[rows[live[accept]]] += 1
        reject = ~accept
        if reject.any():
            pr, qr = p[reject], qrow[reject]
            if draw(method_noise[0]).linear:
                w, keep = np.maximum(pr - qr, np.float32(0)), pr
            else:
                w, keep = residual_weights(pr, qr, math.log2_tiny), None
            _emit(out, rows[live[reject]], s,
                  *residual_draw(*method_noise, math, seed, rows[live[reject]], s, w, keep))
        live = live[accept]
    if live.size:
        _emit(out, rows[live], S, *bonus_draw(*method_noise, math, seed, rows[live], S,
                                              l[live, S]))


def _emit(out: SampleResult, rows, position, tokens, scores):
    """Store the sampled token of each row, and its score (the Gumbel draw's, else NaN)."""
    out.tokens[rows, position] = tokens
    if out.diagnostics is not None and scores is not None:
        out.diagnostics["score"][rows] = scores.max(axis=-1)


def _check_split(split, V):
    """``split`` as a function ``(request, position) -> SplitSum`` (or None)."""
    if split is None:
        return None
    if isinstance(split, SplitSum):
        if split.vocab != V:
            raise ValueError(f"split: its parts cover {split.vocab} tokens, the rows have {V}")
        return lambda r, s: split
    if not callable(split):
        raise ValueError(f"split must be None, a SplitSum or a function (request, position) -> "
                         f"SplitSum, got {type(split).__name__}")

    def checked(r, s):
        order = split(r, s)
        if not isinstance(order, SplitSum) or order.vocab != V:
            raise ValueError(f"split({r}, {s}) must be a SplitSum over {V} tokens, got "
                             f"{order!r}")
        return order
    return checked


def rejection_sample(target_logits, draft_probs, draft_token_ids, *, path="exact", seed=0,
                     noise=None, diagnostics=False, method="gumbel",
                     split=None) -> SampleResult:
    """Speculative-decoding rejection sampling; see the module docstring for the semantics.

    ``target_logits`` float32 [R, S+1, V] (−inf allowed), ``draft_probs`` float32
    [R, S, V] (rows sum to 1), ``draft_token_ids`` int [R, S]; ``path`` "exact" or
    "fast"; ``seed`` an integer in [0, 2^64); ``method`` the Fast path's draw
    (``gumbel``, ``race``, ``invcdf`` or ``fixed``) and ``noise`` its variant (None: the default).
    ``diagnostics=True`` also records the float32 intermediates a kernel reports
    (:attr:`SampleResult.diagnostics`). ``split``: the order of the softmax's sum, a
    :class:`~rslab.numerics.split_sum.SplitSum` for every row or a function ``(request,
    position) -> SplitSum`` (None: NumPy's float32 sum).
    """
    noise = resolve_noise(method, noise)
    d = draw(method)
    if path in PATHS:
        d.check_path(path)
    math = path_math(path, d.pipeline(noise))
    seed = check_seed(seed)
    R, S, V = _check_inputs(target_logits, draft_probs, draft_token_ids, not d.linear)
    split = _check_split(split, V)
    if not isinstance(diagnostics, bool):
        raise ValueError(f"diagnostics must be True or False, got {diagnostics!r}")
    diag = None
    if diagnostics:
        diag = {k: np.full((R, S), np.nan, dtype=np.float32) for k in DIAGNOSTICS[:-1]}
        diag["score"] = np.full(R, np.nan, dtype=np.float32)
    out = SampleResult(np.full((R, S + 1), -1, dtype=np.int64), np.zeros(R, dtype=np.int64),
                       diag)
    chunk = max(1, CHUNK_ELEMENTS // V)
    for start in range(0, R, chunk):
        stop = min(R, start + chunk)
        _sample_chunk(np.arange(start, stop), target_logits[start:stop], draft_probs[start:stop],
                      draft_token_ids[start:stop], math, seed, out, (method, noise), split)
    return out
