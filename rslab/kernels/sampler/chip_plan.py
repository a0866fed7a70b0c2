"""Rows onto cores: which cores of the chip serve which rows, and how each row is split.

The sampler's work is rows: R requests × (S + 1) positions of V tokens. The two modes
expose different parallelism:

* **sequential** (the note's): a request checks its positions in order and stops at the
  first rejection, so only R rows (one per request) are ever ready at once;
* **parallel** (vLLM's): every position of every request is checked at once, each residual
  drawn speculatively, and the first rejection selected after: R·(S + 1) rows are ready.

:func:`plan_rows` gives every ready row a *group* of cores: when the rows outnumber the
cores, a core takes several rows (whole requests in sequential mode, whole rows in parallel
mode), one core per group; when the cores outnumber the rows, each row is split over a
group of K cores, each core taking a slice of the vocabulary in whole units of 512 tokens
(two packed vectors: the loops take two per iteration), the first slices a unit longer
than the last where they cannot all be equal. A row of fewer units than its group's cores
leaves the extra cores idle. The split of a row is a :class:`~rslab.numerics.split_sum.
SplitSum` (its bounds and the sum's merge), which the reference takes to sum as the
kernel does.
"""

from __future__ import annotations

from dataclasses import dataclass

from rslab.numerics.split_sum import MERGES, SplitSum, even_split

MODES = ("sequential", "parallel")
GUESSES = ("reject", "accept")
"""What a split row's check fetches ahead in sequential mode (:mod:`~rslab.kernels.sampler.
chip_program`): its q row (``reject``, the default) or the next position's row (``accept``)."""
UNIT = 512
"""Tokens of the smallest slice of a row: two packed BF16 vectors."""


@dataclass(frozen=True)
class Group:
    """Cores serving rows together: ``cores`` (lane k of the group is core ``cores[k]``),
    the ``rows`` they serve in order ((request, position): in sequential mode each request's
    position 0, standing for the whole request; position S a bonus row in parallel mode)
    and the ``split`` of each row (one slice per core)."""

    index: int
    cores: tuple
    rows: tuple
    split: SplitSum

    @property
    def size(self) -> int:
        return len(self.cores)

    @property
    def requests(self) -> tuple:
        """The requests of a sequential group, in order."""
        return tuple(r for r, _ in self.rows)


@dataclass(frozen=True)
class ChipPlan:
    """The rows of ``R`` requests × (``S`` + 1) positions of ``V`` tokens on ``cores`` cores
    in ``mode``, the sums merged ``merge``: ``groups``; ``guess``: what a split row's check
    fetches ahead (:data:`GUESSES`)."""

    mode: str
    R: int
    S: int
    V: int
    cores: int
    merge: str
    groups: tuple
    guess: str = "reject"

    @property
    def active(self) -> tuple:
        """The cores with work, in order."""
        return tuple(sorted(c for g in self.groups for c in g.cores))

    @property
    def cores_per_row(self) -> int:
        return max(g.size for g in self.groups)

    def split(self, r: int, s: int) -> SplitSum:
        """The split of row (r, s): the reference's ``split`` argument."""
        for g in self.groups:
            if any(rr == r and (self.mode == "sequential" or ss == s) for rr, ss in g.rows):
                return g.split
        raise ValueError(f"row ({r}, {s}) is not in the plan")

    def describe(self) -> str:
        k = sorted({g.size for g in self.groups})
        each = "row" if self.mode == "parallel" else "request"
        if k == [1]:
            n = sorted({len(g.rows) for g in self.groups})
            return (f"{len(self.groups)} cores, {'-'.join(map(str, n))} {each}s per core "
                    f"({self.mode})")
        ahead = ", next row fetched ahead" if self.guess == "accept" else ""
        return (f"{len(self.groups)} {each}s, {'-'.join(map(str, k))} cores per row "
                f"({self.mode}, sums merged {self.merge}{ahead})")


def _shares(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` near-equal shares, the larger first."""
    return [total // parts + (k < total % parts) for k in range(parts)]


def plan_rows(R: int, S: int, V: int, cores: int, mode: str = "sequential",
              merge: str = "max-first", guess: str = "reject") -> ChipPlan:
    """The :class:`ChipPlan` of the module docstring."""
    for name, value, low in (("R", R, 1), ("S", S, 1), ("V", V, 256), ("cores", cores, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer ≥ {low}, got {value!r}")
    if V % 256:
        raise ValueError(f"V must be a multiple of 256 (whole packed vectors), got {V}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if merge not in MERGES:
        raise ValueError(f"merge must be one of {MERGES}, got {merge!r}")
    if guess not in GUESSES:
        raise ValueError(f"guess must be one of {GUESSES}, got {guess!r}")
    rows = ([(r, 0) for r in range(R)] if mode == "sequential"
            else [(r, s) for r in range(R) for s in range(S + 1)])
    units = -(-V // UNIT)
    groups, core = [], 0
    if len(rows) >= cores:
        start = 0
        for g, n in enumerate(_shares(len(rows), cores)):
            groups.append(Group(g, (g,), tuple(rows[start:start + n]), SplitSum((0, V), merge)))
            start += n
    else:
        for g, k in enumerate(_shares(cores, len(rows))):
            k = min(k, units)
            split = even_split(V, k, UNIT, merge)
            groups.append(Group(g, tuple(range(core, core + split.parts)), (rows[g],), split))
            core += k
    return ChipPlan(mode, R, S, V, cores, merge, tuple(groups), guess)
