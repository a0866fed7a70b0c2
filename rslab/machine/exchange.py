"""The chip's exchange: the words its cores share, and the rule that makes a read safe.

Every core's exchange writes (``sxst``, ``xst``) are posted: the NoC multicasts them into the
exchange region of the local memory of every core (Tenstorrent's NoC writes into L1 this
way), and a core reads its own copy (``xld``). The writes land within the one-way latency of
the chip (:meth:`rslab.machine.config.ChipConfig.one_way`); the barrier's release takes two
such trips after the last arrival, so what a core wrote before it arrived at a barrier is in
every copy when the barrier releases. The simulator keeps one copy (the copies agree
whenever a program is race-free) and checks, at every read, that the program is:

*a word written by core i is published to core j by any barrier that i passed after the
write and j passed before the read.* A read of a word that is not yet published to the
reader is a race (the reader's copy might hold either value)
and a ``MachineError`` names both cores. A core always reads its own writes; the host's
words (the exchange's initial contents) are published from the start. Writes are not
checked against writes: the output words several cores write with the same value are
harmless.
"""

from __future__ import annotations

import numpy as np

from rslab.machine.units import OpFault

HOST = -1
"""The writer of a word no core has written."""


class Exchange:
    """``nbytes`` of exchange words shared by ``cores`` cores."""

    def __init__(self, nbytes: int, cores: int):
        n = nbytes // 4
        self.words = np.zeros(n, np.uint32)
        self.writer = np.full(n, HOST, np.int16)
        self.phase = np.zeros(n, np.int32)
        self.passed: list[list[int]] = [[] for _ in range(cores)]
        """Per core, the barrier instances it has passed, in order."""
        self._passed_sets: list[set] = [set() for _ in range(cores)]

    def _span(self, address: int, count: int, text: str) -> slice:
        n = self.words.size
        w = address >> 2
        if address & 3 or address < 0 or w + count > n:
            raise OpFault(f"exchange access [{address}, {address + 4 * count}) is unaligned or "
                          f"outside the exchange ({4 * n} bytes)", text)
        return slice(w, w + count)

    def store(self, core: int, address: int, values: np.ndarray, text: str) -> None:
        """``values`` (uint32) written by ``core`` at byte ``address``."""
        span = self._span(address, values.size, text)
        self.words[span] = values
        self.writer[span] = core
        self.phase[span] = len(self.passed[core])

    def load(self, core: int, address: int, count: int, text: str) -> np.ndarray:
        """``count`` words at byte ``address`` as ``core`` may read them (a race raises)."""
        span = self._span(address, count, text)
        writers, phases = self.writer[span], self.phase[span]
        foreign = (writers != HOST) & (writers != core)
        if foreign.any():
            pairs = set(zip(writers[foreign].tolist(), phases[foreign].tolist(), strict=True))
            for writer, phase in sorted(pairs):
                if not self.published(writer, phase, core):
                    at = span.start + int(np.flatnonzero(foreign & (writers == writer)
                                                         & (phases == phase))[0])
                    raise OpFault(f"race: core {core} reads the exchange word at byte {4 * at}, "
                                  f"which core {writer} wrote and no barrier both passed has "
                                  "published since", text)
        return self.words[span]

    def published(self, writer: int, phase: int, reader: int) -> bool:
        """Whether what ``writer`` wrote after passing ``phase`` barriers is published to
        ``reader``: a barrier the writer passed since, the reader has passed too."""
        seen = self._passed_sets[reader]
        return any(instance in seen for instance in self.passed[writer][phase:])

    def pass_barrier(self, core: int, instance: int) -> None:
        """``core`` passed barrier instance ``instance``."""
        self.passed[core].append(instance)
        self._passed_sets[core].add(instance)
