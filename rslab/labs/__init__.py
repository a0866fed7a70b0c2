"""Kernel labs an instructor can assign, graded in cycles (``rslab grade``).

Each lab is a step the book teaches, with a contract (``rslab grade NAME --spec``): where
its inputs are, what to write where, how the row is padded past V, the starting kernel, the
ladder of cycle thresholds and the task's bound. Submissions are checked against the
reference on every variant — public ones here, hidden ones from the instructor's file
(:mod:`rslab.instructor`) — then scored against the book's kernel built for each variant.

- :mod:`~rslab.labs.sumexp`: the sum-exp loop (pipelining);
- :mod:`~rslab.labs.rowmax`: the packed row max (dataflow);
- :mod:`~rslab.labs.residual`: a residual row with fewer VALU ops;
- :mod:`~rslab.labs.fixedbonus`: the recommended draw's bonus row (its pass).
"""

from rslab.labs import fixedbonus, residual, rowmax, sumexp

LABS = {m.LAB.name: m.LAB for m in (sumexp, rowmax, residual, fixedbonus)}


def get(name: str):
    """The lab called ``name`` (``ValueError`` naming the labs otherwise)."""
    if name not in LABS:
        raise ValueError(f"unknown lab {name!r}; the labs: {', '.join(LABS)}")
    return LABS[name]
