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


def check_settings(data: dict) -> dict:
    """``data`` (:func:`rslab.instructor.read`) with its lab names checked: each variant's
    ``labs``, each ``[ladder.LAB]`` and the variants' names (unique, none a public one), so
    that a typo is an error, not a silent fall-back to the public variants."""
    from rslab.labs.variants import PUBLIC, entry_name

    where = data.get("file", "the variants file")
    for i, entry in enumerate(data.get("variant", [])):
        labs = entry.get("labs") if isinstance(entry, dict) else None
        for name in labs if isinstance(labs, list) else ():
            if name not in LABS:
                raise ValueError(f"{where}: variant {i + 1}: unknown lab {name!r}; the labs: "
                                 f"{', '.join(LABS)}")
    for name, value in data.get("ladder", {}).items():
        if isinstance(value, dict) and name not in LABS:
            raise ValueError(f"{where}: [ladder.{name}]: unknown lab; the labs: "
                             f"{', '.join(LABS)}")
    names = [entry_name(e, i) for i, e in enumerate(data.get("variant", []))
             if isinstance(e, dict)]
    taken = {v.name for v in PUBLIC}
    for name in names:
        if name in taken:
            raise ValueError(f"{where}: variant name {name!r} is used twice or is a public "
                             "variant's; give each hidden variant its own name")
        taken.add(name)
    return data
