"""The variants a lab is graded on: a seed, a vocabulary V and a machine.

The public variants (:data:`PUBLIC`) are written here and in every lab's contract: a
student can run them. The instructor's hidden ones come from the instructor's file
(:mod:`rslab.instructor`, ``[[variant]]``): other seeds, other V (not only multiples of
256) and other machines, so that a kernel copied from the book, tuned to the public
inputs or to one V does not pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from rslab.machine.config import MachineConfig
from rslab.machine.overrides import apply_overrides

V_MAX = 154_880
"""The largest vocabulary a lab takes (the note's): its regions are laid out for it."""
NOT_FEWER = ("fifo_depth", "vregs", "sregs", "loop_depth", "vmem_bytes", "vmem_banks")
"""Settings a variant's machine may raise but not lower (nor its slots; its lanes stay 128):
a whole program that runs on the book's machine then runs on every variant, and with its
banks its accesses conflict no more than there, so the grading scale (the task's bound, the
book's kernel, the starting kernel) keeps its order."""
PAD_TOKENS = 2048
"""A row is padded to a multiple of this many tokens (8 packed vectors of 256), so that a
loop taking 1, 2, 4 or 8 packed vectors per iteration covers it in whole iterations."""


@dataclass(frozen=True)
class Variant:
    """One grading case: ``seed`` of the inputs, vocabulary ``vocab``, machine changes
    ``machine`` (``(key, value)`` pairs of ``rslab sim --config``), ``public`` or hidden."""

    name: str
    seed: int
    vocab: int
    machine: tuple = ()
    public: bool = True

    def __post_init__(self):
        for field, value, low in (("seed", self.seed, 0), ("vocab", self.vocab, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"variant {self.name!r}: {field} must be an integer ≥ {low}, "
                                 f"got {value!r}")
        if self.vocab > V_MAX:
            raise ValueError(f"variant {self.name!r}: vocab must be at most {V_MAX:,}, "
                             f"got {self.vocab:,}")
        try:
            config = self.config
        except ValueError as exc:
            raise ValueError(f"variant {self.name!r}: machine: {exc}") from None
        book = MachineConfig()
        fewer = [f"{k}_slots" for k, n in config.slots.items() if n < book.slots[k]]
        fewer += [k for k in NOT_FEWER if getattr(config, k) < getattr(book, k)]
        if fewer or config.lanes != book.lanes:
            what = f"{fewer[0]} below" if fewer else "lanes other than"
            raise ValueError(f"variant {self.name!r}: machine: {what} the book's machine (a "
                             "whole program must run on every variant)")
        if config.vmem_banks % book.vmem_banks:
            raise ValueError(f"variant {self.name!r}: machine: vmem_banks must be a multiple of "
                             f"the book's {book.vmem_banks} (other counts make strided accesses "
                             "conflict more)")

    @property
    def config(self) -> MachineConfig:
        return apply_overrides([(k, str(v)) for k, v in self.machine])

    @property
    def packed(self) -> int:
        """Packed vectors of the padded row (a multiple of 8)."""
        return -(-self.vocab // PAD_TOKENS) * PAD_TOKENS // 256

    @property
    def covered(self) -> int:
        """Packed vectors that hold tokens below V (what every correct kernel covers)."""
        return -(-self.vocab // 256)

    @property
    def tail_heavy(self) -> bool:
        """Whether the row's last, partial packed vector is raised and its last token is the
        row's largest logit (every V that is not a multiple of 256)."""
        return self.vocab % 256 != 0

    def describe(self) -> str:
        machine = ", ".join(f"{k}={v}" for k, v in self.machine) or "the book's machine"
        return f"{self.name}: V = {self.vocab:,}, seed {self.seed}, {machine}"


PUBLIC = (
    Variant("public-a", seed=11, vocab=16_384),
    Variant("public-b", seed=12, vocab=10_000),
    Variant("public-c", seed=13, vocab=5_000, machine=(("valu_latency", 4),
                                                       ("sfu_latency", 17))),
)
"""The public variants: one V a multiple of 2048, two that are not multiples of 256 (the
row's last, partial packed vector raised, its largest logit at its last token), one
machine with other latencies."""

KEYS = ("name", "seed", "vocab", "machine", "labs")


def entry_name(entry: dict, i: int) -> str:
    """The name of the instructor's ``i``-th ``[[variant]]`` (0-based): its own, or
    ``hidden-N``."""
    return str(entry.get("name", f"hidden-{i + 1}"))


def hidden(data: dict, lab: str) -> list[Variant]:
    """The instructor's variants (``data`` from :func:`rslab.instructor.read`) of ``lab``."""
    out, where = [], data.get("file", "the variants file")
    for i, entry in enumerate(data.get("variant", [])):
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: variant {i + 1} must be a table")
        unknown = sorted(set(entry) - set(KEYS))
        if unknown:
            raise ValueError(f"{where}: variant {i + 1}: unknown key(s) {unknown}; known: "
                             f"{list(KEYS)}")
        missing = [k for k in ("seed", "vocab") if k not in entry]
        if missing:
            raise ValueError(f"{where}: variant {i + 1}: missing {missing}")
        labs = entry.get("labs")
        if labs is not None and (not isinstance(labs, list) or not all(
                isinstance(x, str) for x in labs)):
            raise ValueError(f"{where}: variant {i + 1}: labs must be a list of lab names")
        if labs is not None and lab not in labs:
            continue
        machine = entry.get("machine", {})
        if not isinstance(machine, dict):
            raise ValueError(f"{where}: variant {i + 1}: machine must be a table")
        try:
            out.append(Variant(entry_name(entry, i), entry["seed"],
                               entry["vocab"], tuple(sorted(machine.items())), public=False))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return out


def variants_for(data: dict, lab: str) -> list[Variant]:
    """The variants ``lab`` is graded on: the instructor's, else (a file without any
    ``[[variant]]``, or none) the public ones. A file whose variants all leave ``lab`` out
    is an error, not a silent fall-back to the inputs the students have."""
    mine = hidden(data, lab)
    if not mine and data.get("variant"):
        raise ValueError(f"{data.get('file', 'the variants file')}: no variant for lab {lab!r} "
                         "(every variant's labs leave it out); add one, or a variant without "
                         "labs")
    return mine or list(PUBLIC)
