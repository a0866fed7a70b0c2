"""The argmax over a block of streams: one running best per lane, and the iteration it came from.

The per-stream update (:mod:`rslab.kernels.ops.argmax`) costs three VALU ops per
stream and float32 vector. Over a block of ``n`` streams one iteration can
instead take the maximum of its ``n`` scores (``n − 1`` ops), then update one
state: ``m = t > best``; ``best = max(best, t)``; ``it = m ? tag : it`` — where
``tag`` is a value unique to the iteration and the lane (its first token, or its
counter). That is ``n + 2`` ops instead of ``3n``, but the state no longer says
which stream won.

After the loop the row's best score G is the maximum of ``best`` over lanes, and
the winning token lies in one iteration: the earliest ``it`` among the lanes with
``best = G`` (strict ``>`` keeps a lane's earliest iteration, and every token of
an earlier iteration is lower). :func:`candidate_ops` recomputes that one
iteration's scores — the same ops, so the same bits — and keeps, per lane, the
lowest token scoring G; the lowest over lanes is the sample (ties → lowest index,
as in the reference).
"""

from rslab.kernels.ops.sumexp import tree_ops
from rslab.schedule import Op


def block_argmax_ops(scores, tag: str) -> list:
    """The update of the loop-carried ``best`` and ``it`` from the iteration's ``scores``."""
    tree, t = tree_ops("vmax.f32", scores, "bt")
    return tree + [Op("vcmpgt.f32", "gm", (t, "best")), Op("vmax.f32", "best", ("best", t)),
                   Op("vsel", "it", ("gm", tag, "it"))]


def candidate_ops(scores, tokens, best: str, inf: str) -> tuple[list, str]:
    """(ops, value): per lane the lowest token (as float32) of ``tokens`` whose score in
    ``scores`` equals the broadcast ``best``, +inf where none does."""
    ops, cands = [], []
    for k, (score, token) in enumerate(zip(scores, tokens, strict=True)):
        ops += [Op("vcmpeq.f32", f"ce{k}", (score, best)), Op("vcvt.u2f", f"cf{k}", (token,)),
                Op("vsel", f"cs{k}", (f"ce{k}", f"cf{k}", inf))]
        cands.append(f"cs{k}")
    tree, low = tree_ops("vmin.f32", cands, "cm")
    return ops + tree, low
