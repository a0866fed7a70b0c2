"""Which VMEM bytes a run may read and write: a kernel's contract, checked at every access.

``simulate(..., guard=Guard(readable, writable))`` checks each load (``vld``, ``vld.s``,
``sld``) against the readable regions and each store (``vst``, ``vst.s``, ``sst``) against
the writable ones, before it touches memory; an access outside them stops the run with a
``MachineError`` naming the source line, pc and op (a store is also readable where it may
write). A region is ``(start, end, name)`` in bytes, ``end`` excluded; a strided access counts
its span, first lane to last. DMA transfers are not checked. Without a guard nothing is
checked and the access closures are the unguarded ones (no cost).
"""

from __future__ import annotations

from dataclasses import dataclass

from rslab.machine.units import OpFault


def _regions(regions, name: str) -> tuple:
    out = []
    for region in regions:
        if len(region) != 3:
            raise ValueError(f"{name}: a region is (start, end, name), got {region!r}")
        start, end, label = region
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end):
            raise ValueError(f"{name}: region {label!r} needs 0 <= start <= end, got "
                             f"[{start}, {end})")
        out.append((start, end, str(label)))
    return tuple(out)


@dataclass(frozen=True)
class Guard:
    """The VMEM regions a run may read (``readable``) and write (``writable``)."""

    readable: tuple
    writable: tuple

    def __post_init__(self):
        object.__setattr__(self, "writable", _regions(self.writable, "writable"))
        object.__setattr__(self, "readable",
                           _regions(self.readable, "readable") + self.writable)

    @staticmethod
    def _inside(regions, start: int, end: int) -> bool:
        return any(lo <= start and end <= hi for lo, hi, _ in regions)

    def check(self, store: bool, start: int, end: int, text: str) -> None:
        """Raise the run's fault if bytes [start, end) are outside the regions an access of
        this kind (a store, or a load) may touch."""
        regions = self.writable if store else self.readable
        if not self._inside(regions, start, end):
            what = "store to" if store else "load from"
            allowed = ", ".join(f"{name} [{lo}, {hi})" for lo, hi, name in regions) or "none"
            raise OpFault(f"{what} VMEM [{start}, {end}) outside the contract's "
                          f"{'writable' if store else 'readable'} regions ({allowed})", text)
