"""The HBM the cores of a chip share: at most so many bytes a cycle, the oldest transfer first.

A transfer asks from its start cycle for up to its engine's rate (``dma_bytes_per_cycle``)
each cycle. The HBM serves transfers in the order they start (ties: the lower core), each
taking what the ones before it left of the ``bandwidth`` that cycle: a transfer is never
slowed by a younger one, so serving them one after another in that order, each on the
capacity left by those already served, is exact. Bytes are whole: in a transfer's last cycle
it takes only what it still needs.

:meth:`SharedHBM.serve` returns the cycle after a transfer's last byte and its delivery, the
cycles it got bytes in, as ``(first, end, bytes per cycle)`` runs; the sum of every
transfer's delivery at any cycle is at most the bandwidth (the chip's trace shows it).
"""

from __future__ import annotations

from bisect import bisect_right


class SharedHBM:
    """The HBM's use over time, a step function: ``used[i]`` bytes per cycle are taken from
    cycle ``times[i]`` up to ``times[i + 1]`` (the last step runs on for ever)."""

    def __init__(self, bandwidth: int):
        self.bandwidth = bandwidth
        self.times, self.used = [0], [0]

    def _cut(self, t: int) -> int:
        """The index of the step that starts at cycle ``t`` (split there if need be)."""
        i = bisect_right(self.times, t) - 1
        if self.times[i] != t:
            i += 1
            self.times.insert(i, t)
            self.used.insert(i, self.used[i - 1])
        return i

    def _take(self, first: int, end: int, rate: int) -> None:
        """``rate`` more bytes per cycle taken in cycles ``first`` … ``end − 1``."""
        i, j = self._cut(first), self._cut(end)
        for k in range(i, j):
            self.used[k] += rate

    def serve(self, start: int, nbytes: int, rate: int) -> tuple[int, list]:
        """Serve ``nbytes`` from cycle ``start`` on, at most ``rate`` bytes a cycle out of
        what is left: (the cycle after the last byte, the delivery runs)."""
        if start < self.times[0]:
            raise AssertionError(f"a transfer starting at cycle {start} served after one that "
                                 f"started at {self.times[0]}: served out of order")
        self._forget(start)
        runs, left, t = [], nbytes, start
        i = bisect_right(self.times, t) - 1
        while left > 0:
            end = self.times[i + 1] if i + 1 < len(self.times) else None
            r = min(rate, self.bandwidth - self.used[i])
            if r > 0:
                cycles = left // r
                if end is None or t + cycles < end:
                    if cycles:
                        runs.append((t, t + cycles, r))
                    t += cycles
                    if left - cycles * r:
                        runs.append((t, t + 1, left - cycles * r))
                        t += 1
                    left = 0
                    break
                runs.append((t, end, r))
                left -= r * (end - t)
            t, i = end, i + 1
        for first, stop, r in runs:
            self._take(first, stop, r)
        return t, runs

    def _forget(self, start: int) -> None:
        """Drop the steps that end by ``start``: transfers are served in the order they start,
        so no later one looks before it."""
        i = bisect_right(self.times, start) - 1
        if i > 0:
            del self.times[:i], self.used[:i]
