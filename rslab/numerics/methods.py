"""The Fast path's three ways to draw a token from a row, and what ``noise=`` selects for each.

============  ===============================================  ==========================
method        the draw                                         ``noise=`` (default first)
============  ===============================================  ==========================
``gumbel``    ``argmax log2 w + g`` with g a Gumbel pipeline   ``div8`` or any
              of :mod:`rslab.numerics.gumbel`                  ``get_noise`` name
``race``      ``argmax w · rcp(E)``, E from one fast log       ``scaled``, ``naive``
              (:mod:`rslab.numerics.race`)
``invcdf``    the first token past ``u · Σw`` in the core's    ``wide48``, ``wide``, ``u24``
              float32 prefix sums (:mod:`rslab.numerics.invcdf`)
``fixed``     the first token past ``⌊U·Q/2^96⌋`` in exact     ``u96``
              fixed-point sums (:mod:`rslab.numerics.fixed_invcdf`)
============  ===============================================  ==========================
"""

from __future__ import annotations

from rslab.numerics.gumbel import get_noise
from rslab.numerics.invcdf import DEFAULT_INVCDF_NOISE, check_invcdf_noise
from rslab.numerics.race import DEFAULT_RACE_NOISE, check_race_noise

METHODS = ("gumbel", "race", "invcdf", "fixed")
FIXED_NOISES = ("u96",)
DEFAULT_NOISE = {"gumbel": "div8", "race": DEFAULT_RACE_NOISE, "invcdf": DEFAULT_INVCDF_NOISE,
                 "fixed": "u96"}


def check_method(method) -> str:
    """``method`` if it is one of ``METHODS``, else ``ValueError`` naming the argument."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


def resolve_noise(method: str, noise=None) -> str:
    """The noise variant of ``method`` (``None``: its default); ``ValueError`` names ``noise``."""
    check_method(method)
    if noise is None:
        return DEFAULT_NOISE[method]
    if not isinstance(noise, str):
        raise ValueError(f"noise must be a noise-variant name, got {noise!r}")
    if method == "race":
        return check_race_noise(noise)
    if method == "invcdf":
        return check_invcdf_noise(noise)
    if method == "fixed":
        if noise not in FIXED_NOISES:
            raise ValueError(f"noise must be one of {FIXED_NOISES} for method 'fixed', "
                             f"got {noise!r}")
        return noise
    try:
        return get_noise(noise).name
    except ValueError as exc:
        raise ValueError(f"noise: {exc}") from None


def variant_name(method: str, noise=None) -> str:
    """``gumbel-div8``, ``race-scaled``, ``invcdf-wide`` …"""
    return f"{method}-{resolve_noise(method, noise)}"
