"""The running argmax of a stream of score vectors: per lane the best score and its token.

Each stream k keeps, per lane, ``best{k}`` and its token index ``idx{k}``; the
lane's tokens arrive in increasing order, so a strict ``>`` keeps the first of
equal scores (ties → lowest index). Two updates:

- ``select`` (greater → select): ``m = s > best``; ``best = m ? s : best``;
  ``idx = m ? i : idx``. The recurrence best → compare → select → best is two
  VALU latencies long.
- ``max`` (independent max): ``m = s > best``; ``best = max(best, s)``;
  ``idx = m ? i : idx``. The compare and the max both read the old ``best``,
  so the recurrence is one VALU latency.

**NaN rule.** ``select`` ignores NaN scores (a NaN never compares greater, so it
acts as −∞); ``max`` propagates them (``vmax.f32`` returns NaN). Valid sampler
rows have no NaN score.
"""

from rslab.schedule import Op

VARIANTS = ("select", "max")


def check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    return variant


def argmax_update_ops(k: int, score: str, index: str, variant: str = "max") -> list:
    """Stream k's update of ``best{k}``/``idx{k}`` (loop-carried) from ``score`` at tokens
    ``index``."""
    check_variant(variant)
    mask = Op("vcmpgt.f32", f"gm{k}", (score, f"best{k}"))
    if variant == "select":
        best = Op("vsel", f"best{k}", (f"gm{k}", score, f"best{k}"))
    else:
        best = Op("vmax.f32", f"best{k}", (f"best{k}", score))
    return [mask, best, Op("vsel", f"idx{k}", (f"gm{k}", index, f"idx{k}"))]


def index_step_op(k: int, step_reg: str) -> Op:
    """``i{k} += step``: the token indices of stream k's next vector."""
    return Op("vadd.u32", f"i{k}", (f"i{k}", step_reg))


def argmax_state(streams: int) -> list:
    """The loop-carried values of ``streams`` argmax updates."""
    return [v for k in range(streams) for v in (f"best{k}", f"idx{k}")]
