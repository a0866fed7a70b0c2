"""``Loop``: one loop of a kernel as assembly text, with the figures of how it was made."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Loop:
    """Assembly ``text`` of a loop over ``iterations`` iterations of a body, and its figures.

    ``style`` is how the body became code (:data:`rslab.kernels.loops.emit.STYLES`);
    ``carried`` maps each loop-carried value to its fixed register; for a
    modulo-scheduled loop ``schedule`` and ``expansion`` are kept (else None);
    ``per_iteration`` counts the packed vectors one iteration handles;
    ``body_bundles`` is the bundles of one pass of the kernel (unroll × II when
    pipelined); ``setup_bundles`` the straight-line bundles a program puts before it.
    """

    text: str
    style: str
    iterations: int
    body_bundles: int
    carried: dict = field(default_factory=dict)
    schedule: object | None = None
    expansion: object | None = None
    registers_used: int = 0
    name: str = ""
    per_iteration: int = 1
    setup_bundles: int = 0

    @property
    def ii(self) -> int | None:
        return self.schedule.ii if self.schedule is not None else None

    @property
    def stage_count(self) -> int | None:
        return self.schedule.stage_count if self.schedule is not None else None

    @property
    def cycles_per_vector(self) -> float:
        """Scheduled cycles per packed vector in the steady state (II / per_iteration)."""
        return self.schedule.ii / self.per_iteration

    def register(self, value: str) -> str:
        """The register of a carried value, or of a loop value's first copy."""
        if value in self.carried:
            return self.carried[value]
        return self.expansion.registers[value][0]

    def figures(self, stalls_per_iter: float | None = None) -> dict:
        """II, ResMII, RecMII and stage count when modulo-scheduled (else None), and the stalls
        per iteration a caller measured."""
        b = self.schedule.bounds if self.schedule is not None else None
        return {"ii": self.ii, "res_mii": b.res_mii if b else None,
                "rec_mii": b.rec_mii if b else None, "stage_count": self.stage_count,
                "stalls_per_iter": stalls_per_iter}
