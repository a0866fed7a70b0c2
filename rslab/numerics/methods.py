"""The Fast path's draws, one definition each: their variants, laws, reference rows and kernels.

============  ===============================================  ==========================
method        the draw                                         ``noise=`` (default first)
============  ===============================================  ==========================
``gumbel``    ``argmax log2 w + g`` with g a Gumbel pipeline   ``div8`` or any
              of :mod:`rslab.numerics.gumbel`                  ``get_noise`` name
``race``      ``argmax w · rcp(E)``, E from one fast log       ``scaled``, ``naive``
              (:mod:`rslab.numerics.race`)
``invcdf``    the first token past ``u · Σw`` in the core's    ``wide48``, ``wide``, ``u24``
              float32 prefix sums (:mod:`rslab.numerics.invcdf`)
``fixed``     an exact inverse CDF over fixed-point sums,      ``u96``
              block then lane (:mod:`rslab.numerics.fixed_invcdf`)
============  ===============================================  ==========================

:data:`DRAWS` is the one place a draw is defined: a :class:`Draw` names its
variants, whether it draws from the linear weights (then the bonus row needs its
row max first), and, by dotted name (``module:attribute``, imported when first
used, so the numerics import nothing above them), its exact law on a weight row,
the reference's row draw and the kernel's row. Everything else looks the draw up
here (:func:`draw`); adding a draw is adding an entry.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from rslab.numerics.gumbel import get_noise
from rslab.numerics.invcdf import DEFAULT_INVCDF_NOISE, INVCDF_NOISES
from rslab.numerics.race import DEFAULT_RACE_NOISE, RACE_NOISES


@dataclass(frozen=True)
class Draw:
    """One Fast-path draw (see the module docstring)."""

    method: str
    default_noise: str
    noises: tuple | None
    """The variants, or None: any name :func:`rslab.numerics.gumbel.get_noise` takes."""
    linear: bool
    """Draws from the linear weights ``w`` (else from ``log2 w``; the bonus row: ``l·LOG2E``)."""
    law: str
    """``law(weights, method, noise, resolution) -> TokenBounds`` of one weight row
    (:mod:`rslab.numerics.token_law`; ``resolution`` serves the argmax draws' brackets)."""
    reference_row: str
    """``row(noise, seed, requests, position, purpose, w) -> tokens`` (``EMPTY`` where the
    draw sees no weight); None for the Gumbel draw, which the reference computes itself."""
    kernel_row: str | None
    """The sampler's row class (:mod:`rslab.kernels.sampler`), or None."""
    reproducibility: str
    sampler_noises: tuple = ()
    """The variants the full sampler program takes."""
    score: str | None = None
    """An argmax draw's score: ``add`` (log2 weight + noise) or ``mul`` (weight · noise)."""
    lattice_noise: str | None = None
    """An argmax draw's ``lattice_noise(noise)``: its per-token noise on every lattice uniform."""
    gumbel_domain: str | None = None
    """An argmax draw's noise ``u → g`` whose Gumbel-max it is (a pipeline, or ``−log2 E``)."""
    plateau: str | None = None
    """An argmax draw's ``plateau(u, noise)``: the share of the lattice its plateau bites."""
    paths: tuple = ("fast",)
    """The sampler paths that draw with it (the Exact path: Gumbel-max only)."""

    def check_path(self, path: str) -> None:
        """``ValueError`` naming ``method`` if the draw does not run on ``path``."""
        if path not in self.paths:
            raise ValueError(f"method: the {path!r} path draws with 'gumbel' only, "
                             f"got {self.method!r}")

    def pipeline(self, noise: str) -> str:
        """The Gumbel pipeline the path's math carries: the draw's own noise for a draw in
        the log domain, else the default (``div8``, unused by the draw)."""
        return "div8" if self.linear else noise

    def check_noise(self, noise) -> str:
        """``noise`` if it names a variant, else ``ValueError`` naming the argument."""
        if self.noises is None:
            try:
                return get_noise(noise).name
            except ValueError as exc:
                raise ValueError(f"noise: {exc}") from None
        if noise not in self.noises:
            raise ValueError(f"noise must be one of {self.noises} for method "
                             f"{self.method!r}, got {noise!r}")
        return noise

    def resolve(self, field: str):
        """The object a dotted-name field names (``law``, ``reference_row``, ``kernel_row``)."""
        name = getattr(self, field)
        if name is None:
            raise ValueError(f"method: {self.method!r} has no {field.replace('_', ' ')}")
        module, _, attr = name.partition(":")
        return getattr(importlib.import_module(module), attr)


_ARGMAX = "bit-exact under any split of the row (per-token words, order-free max)"
DRAWS = {
    "gumbel": Draw("gumbel", "div8", None, False, "rslab.numerics.token_law:argmax_row_law",
                   None, "rslab.kernels.sampler.final_rows:FinalRow", _ARGMAX,
                   ("div8", "div32", "rangered"), "add", "rslab.numerics.gumbel:lattice_noise",
                   "rslab.numerics.gumbel:get_noise", "rslab.numerics.gumbel:plateau_share",
                   ("exact", "fast")),
    "race": Draw("race", DEFAULT_RACE_NOISE, RACE_NOISES, True,
                 "rslab.numerics.token_law:argmax_row_law", "rslab.draws:race_tokens",
                 "rslab.kernels.sampler.final_rows:FinalRow", _ARGMAX, ("scaled",), "mul",
                 "rslab.numerics.race:lattice_multiplier", "rslab.numerics.race:RaceNoise",
                 "rslab.numerics.race:plateau_share"),
    "invcdf": Draw("invcdf", DEFAULT_INVCDF_NOISE, INVCDF_NOISES, True,
                   "rslab.numerics.token_law:invcdf_row_law", "rslab.draws:invcdf_tokens",
                   "rslab.kernels.sampler.invcdf_row:InvcdfRow",
                   "bit-exact only with the same summation order (blocks, groups, prefix)",
                   INVCDF_NOISES),
    "fixed": Draw("fixed", "u96", ("u96",), True, "rslab.numerics.token_law:fixed_row_law",
                  "rslab.draws:fixed_tokens", "rslab.kernels.sampler.fixed_row:FixedRow",
                  "bit-exact with the same block sums (the lane-tree float32 sums); every "
                  "later sum is exact", ("u96",)),
}
METHODS = tuple(DRAWS)
DEFAULT_NOISE = {m: d.default_noise for m, d in DRAWS.items()}


def check_method(method) -> str:
    """``method`` if it is one of ``METHODS``, else ``ValueError`` naming the argument."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


def draw(method) -> Draw:
    """The :class:`Draw` of ``method`` (``ValueError`` names an unknown one)."""
    return DRAWS[check_method(method)]


def resolve_noise(method: str, noise=None) -> str:
    """The noise variant of ``method`` (``None``: its default); ``ValueError`` names ``noise``."""
    d = draw(method)
    if noise is None:
        return d.default_noise
    if not isinstance(noise, str):
        raise ValueError(f"noise must be a noise-variant name, got {noise!r}")
    return d.check_noise(noise)


def variant_name(method: str, noise=None) -> str:
    """``gumbel-div8``, ``race-scaled``, ``invcdf-wide`` …"""
    return f"{method}-{resolve_noise(method, noise)}"


def sampler_draws() -> tuple:
    """(method, noise) of every draw the Fast path's sampler program takes."""
    return tuple((m, n) for m, d in DRAWS.items() for n in d.sampler_noises)


RECOMMENDED = ("fixed", "u96")
"""The draw the chapter "Beyond the note" recommends: its χ² bound holds on every row of its
domain (weights in [0, 2^120] with a positive total; :mod:`rslab.numerics.fixed_invcdf`)."""
