"""The three draws side by side: noise-level laws, token-level laws, tails and a Monte Carlo check.

One function per table or figure of the chapter "Beyond the note", each returning
plain data:

* :func:`noise_rows`: for every Gumbel-domain noise (the Gumbel variants, and the
  race's ``−log2 E``), the exact 64-bin λ, ``E[χ²]`` at 10^9 samples, the samples
  a 64-bin χ² test needs, the exact KS distance, the largest finite g and the
  plateau's mass;
* :func:`token_rows`: :func:`rslab.numerics.token_law.token_law` of every
  variant on the three targets (and the Exact path's Gumbel-max);
* :func:`tail_sweep`: the total variation on the peaked target as its tail mass
  varies (the slider);
* :func:`quantisation`: what the 24-bit inverse CDF does to tokens below 2^-24;
* :func:`invcdf_montecarlo`: the one-word inverse CDF's tokens, drawn one row per key as
  the Fast path draws them, against the exact law (the argmax draws are sampled through
  the reference in :mod:`rslab.chapters.beyond`).
"""

from __future__ import annotations

import time

import numpy as np
from scipy import stats as sps

from rslab.numerics import invcdf, targets
from rslab.numerics import montecarlo as mc
from rslab.numerics.detect import samples_to_detect
from rslab.numerics.methods import METHODS, draw, resolve_noise, variant_name
from rslab.numerics.rng import UNIFORM_BITS
from rslab.numerics.search import exact_row
from rslab.numerics.token_law import noise_atoms, token_law
from rslab.randomness import MAX_REQUEST, random_words

ARGMAX_VARIANTS = (("gumbel", "div8"), ("gumbel", "div14"), ("gumbel", "div32"),
                   ("gumbel", "rangered"), ("race", "scaled"), ("race", "naive"))
INVCDF_VARIANTS = (("invcdf", "u24"), ("invcdf", "wide"), ("invcdf", "wide48"))
VARIANTS = ARGMAX_VARIANTS + INVCDF_VARIANTS
NOISE_SAMPLES = 10**9
KEY_CHUNK = 1 << 22
"""Rows (keys) per chunk of :func:`invcdf_montecarlo`."""
TAIL_MASSES = (1e-3, 1e-2, 0.1, 0.3, 0.5)


def parse_variant(name: str) -> tuple[str, str]:
    """``race``, ``race-naive``, ``gumbel-div14``, or a bare Gumbel noise (``rangered``,
    ``div32``) → (method, noise); ``ValueError`` names the unknown part."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"noise variant must be a name, got {name!r}")
    key = name.strip().lower()
    method, _, noise = key.partition("-")
    if method in METHODS and draw(method).score is None:
        raise ValueError(f"noise variant {name!r}: the inverse CDF draws with no noise; its "
                         "token laws are in `python -m rslab bench --only token_laws`")
    if method in METHODS:
        return method, resolve_noise(method, noise or None)
    return "gumbel", resolve_noise("gumbel", key)


def gumbel_domain_noise(method: str, noise: str):
    """The noise ``u → g`` whose Gumbel-max is the draw: a Gumbel pipeline or ``−log2 E``."""
    noise = resolve_noise(method, noise)
    return draw(method).resolve("gumbel_domain")(noise)


def _plateau(method: str, noise: str, u) -> float:
    """Share of the lattice where the plateau bites: the second log returns 0 (Gumbel), or
    E = 0 (the race)."""
    return draw(method).resolve("plateau")(u, noise)


def noise_rows(variants=ARGMAX_VARIANTS, samples: int = NOISE_SAMPLES) -> list[dict]:
    """Exact noise-level figures of each variant over the 2^24 lattice (see the docstring),
    and its smallest g."""
    u = mc.lattice_uniforms()
    rows = []
    for method, noise in variants:
        g = gumbel_domain_noise(method, noise)(u)
        row = exact_row(variant_name(method, noise), g)
        row["g_min"] = float(np.min(g))
        row["expected_chi2"] = mc.N_BINS - 1 + samples * row["lam"]
        row["detect"] = samples_to_detect(row["lam"], mc.N_BINS - 1)
        row["plateau"] = _plateau(method, noise, u)
        rows.append(row)
    return rows


def token_rows(variants=VARIANTS, names=targets.TARGETS, *, vocab: int = targets.VOCAB,
               exact_path: bool = True, progress: bool = False) -> list[dict]:
    """Exact token laws of each variant on each target, with their timings."""
    from tqdm.auto import tqdm

    chosen = {n: targets.target(n, vocab) for n in names}
    jobs = [(m, nz, "fast") for m, nz in variants] + ([("gumbel", "exact", "exact")]
                                                     if exact_path else [])
    rows = []
    with tqdm(total=len(jobs) * len(chosen), desc="token laws", disable=not progress,
              leave=False) as bar:
        for method, noise, path in jobs:
            for t in chosen.values():
                rows.append(token_law(t, method, noise, path=path).to_dict())
                bar.update()
            noise_atoms.cache_clear()
    return rows


def tail_sweep(variants=VARIANTS, tails=TAIL_MASSES, *, vocab: int = targets.VOCAB) -> dict:
    """Total variation, and the samples at which a test sees the bias half the time
    (:attr:`rslab.numerics.token_law.Discrepancy.detect_seen`), on ``peaked(tail)`` for each
    variant and tail mass."""
    out = {}
    for method, noise in variants:
        laws = [token_law(targets.peaked(t, vocab), method, noise) for t in tails]
        out[variant_name(method, noise)] = {"tail": list(tails), "tv": [d.tv for d in laws],
                                            "detect": [d.detect_seen for d in laws]}
        noise_atoms.cache_clear()
    return out


def _rel_range(P, p) -> list[float]:
    return [float(P.min() / p - 1), float(P.max() / p - 1)]


def quantisation(tail: float = 1e-3, vocab: int = targets.VOCAB) -> dict:
    """The inverse CDF's chances for the tail tokens of ``peaked(tail)``: with one 24-bit
    uniform a token below 2^-24 gets 0 or a multiple of 2^-24; ``wide`` resolves it to 2^-24
    of its block (in the head's block, of the head's weight), ``wide48`` to float32's
    resolution of the sums on its side of the block's heaviest lane. Relative errors are
    given over the whole tail, the head's block (``head_block``) and the rest."""
    t = targets.peaked(tail, vocab)
    p = t.run_probs[1]
    out = {"tail": tail, "token_p": float(p), "lattice_step": 2.0**-24}
    for noise in invcdf.INVCDF_NOISES:
        law = invcdf.exact_law(t.row(), noise)
        P = law.probs[1:]
        multiples = np.round(P / 2.0**-24)
        out[noise] = {"zero_share": float(np.mean(P == 0)),
                      "distinct": int(np.unique(P).size),
                      "on_lattice_steps": bool(np.all(multiples * 2.0**-24 == P)),
                      "rel_error_range": _rel_range(P, p),
                      "head_block": _rel_range(P[:invcdf.LANES - 1], p),
                      "rest": _rel_range(P[invcdf.LANES - 1:], p),
                      "tail_total": float(P.sum()), "probs": P}
    return out


def invcdf_montecarlo(target, samples: int, *, seed: int = 1, noise: str = "u24") -> dict:
    """Sample the one-word inverse CDF as the Fast path draws it: one residual row per key.

    Row r = 0..samples−1 (position 0) reads the word of token 0 under its own key
    (:func:`rslab.randomness.random_words`), and its token is a function of that word's
    lattice index, so the draws are the lattice indices' counts summed over each token's
    interval (``drawn``, per token).

    At one position the key is a bijection of the request index and the word of counter 0
    a bijection of the key (both are chains of ``mix32``), so these n words are distinct:
    n draws *without replacement* from the 2^32 words (rows of other positions can repeat
    a word; the check does not draw them). Each token's count is hypergeometric, its
    variance the multinomial one times ``fpc = 1 − n/2^32``, so the null χ² is
    ``fpc · χ²(df)`` and the predicted χ² against the target ``fpc · χ²(df, nλ/fpc)``
    (:func:`rslab.numerics.montecarlo.predicted_chi2`). χ² of the counts against the exact
    law (central: the law is right) and against the target (noncentral with the exact λ:
    the bias). ``null_band`` is the band of that χ² were the draw unbiased (λ = 0), and
    ``separation`` the chance that a 1 % test of "no bias" rejects at the exact λ: how
    well n samples can tell the exact λ from no bias.
    """
    if noise != "u24":
        raise ValueError("noise: the check draws one word per row (u24)")
    samples = int(samples)
    if not 0 < samples <= MAX_REQUEST + 1:
        raise ValueError(f"samples must lie in [1, 2^32], got {samples}")
    start = time.perf_counter()
    law = invcdf.exact_law(target.row(), noise)
    counts = np.zeros(1 << UNIFORM_BITS, np.int64)
    for lo in range(0, samples, KEY_CHUNK):
        rows = np.arange(lo, min(lo + KEY_CHUNK, samples), dtype=np.int64)
        words = random_words("fast", seed, rows, 0, "residual", [0])[:, 0]
        counts += np.bincount(words >> np.uint32(32 - UNIFORM_BITS), minlength=counts.size)
    ends = np.cumsum(law.counts)
    cum = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    drawn = np.diff(cum[np.concatenate([[0], ends])])
    exact = law.probs
    live = exact > 0
    chi_exact = float(((drawn[live] - samples * exact[live]) ** 2 / (samples * exact[live])).sum())
    df = int(live.sum()) - 1
    p = target.probs()
    chi_target = float(((drawn - samples * p) ** 2 / (samples * p)).sum())
    lam = float(((exact - p) ** 2 / p).sum())
    fpc = mc.stream_fpc(samples)
    predicted = mc.predicted_chi2(lam, samples, n_bins=target.vocab, fpc=fpc)
    null = mc.predicted_chi2(0.0, samples, n_bins=target.vocab, fpc=fpc)
    return {"samples": samples, "drawn": drawn,
            "drawn_where_exact_is_zero": int(drawn[~live].sum()),
            "tokens_exact_zero": int((~live).sum()), "fpc": fpc,
            "chi2_exact": chi_exact, "df_exact": df,
            "p_exact": float(sps.chi2.sf(chi_exact / fpc, df)),
            "chi2_target": chi_target, "df_target": target.vocab - 1,
            "predicted_mean": float(predicted.mean()),
            "predicted_band": [float(x) for x in predicted.ppf([0.005, 0.995])],
            "lam": lam, "null_band": [float(x) for x in null.ppf([0.005, 0.995])],
            "separation": float(predicted.sf(null.ppf(0.99))),
            "p_target_null": float(sps.chi2.sf(chi_target / fpc, target.vocab - 1)),
            "seconds": time.perf_counter() - start}
